package host

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// vec views a slice as a unit-stride BLAS vector.
func vec(x []float32) blas32.Vector { return blas32.Vector{N: len(x), Inc: 1, Data: x} }

// allocate makes the three arrays and writes every element from the thread
// that will read it (first touch places pages near that thread's core and
// keeps untouched zero pages from being "read" at cache speed).
func (r *runner) allocate(time.Time) {
	n := r.opt.ArrayMiB << 20 / 4
	r.a, r.b, r.c = make([]float32, n), make([]float32, n), make([]float32, n)
	// Touch in small pieces: a first touch can be slow (page faults, a
	// virtual machine's host backing its memory), so check the stop flag
	// often.
	r.parallel(n, r.opt.Threads, chunk/16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r.a[i], r.b[i], r.c[i] = 1, 0.5+float32(i%5)*0.125, 0.25
		}
	})
	r.tick()
}

// triad measures STREAM triad traffic with all threads: a += s·c in place
// (two reads and one write per element, 12 bytes counted).
func (r *runner) triad(deadline time.Time) {
	d, ok := r.best(deadline, r.triadPass)
	if ok {
		r.res.TriadGBs = gbs(12*float64(len(r.a)), d)
	}
}

// triadPass is one triad pass over the arrays.
func (r *runner) triadPass() bool {
	return r.parallel(len(r.a), r.opt.Threads, chunk, func(lo, hi int) {
		blas32.Axpy(1e-3, vec(r.c[lo:hi]), vec(r.a[lo:hi]))
	})
}

// readPass reads a and b once with a dot product on threads goroutines.
func (r *runner) readPass(threads int) bool {
	return r.parallel(len(r.a), threads, chunk, func(lo, hi int) {
		s := blas32.Dot(vec(r.a[lo:hi]), vec(r.b[lo:hi]))
		r.mu.Lock()
		r.sink += s
		r.mu.Unlock()
	})
}

// read measures read-only bandwidth with all threads (8 bytes per element).
func (r *runner) read(deadline time.Time) {
	d, ok := r.best(deadline, func() bool { return r.readPass(r.opt.Threads) })
	if ok {
		r.res.ReadGBs = gbs(8*float64(len(r.a)), d)
	}
}

// readOne measures the read kernel on one thread.
func (r *runner) readOne(deadline time.Time) {
	d, ok := r.best(deadline, func() bool { return r.readPass(1) })
	if ok {
		r.res.SingleThreadBandwidthGBs = gbs(8*float64(len(r.a)), d)
	}
}

// vectorRead measures what SIMD code can read from memory with all
// threads: the Go runtime's vectorized byte count (AVX2 assembly on amd64,
// NEON on arm64) over array a, which does almost no arithmetic per byte.
// llama.cpp's CPU decode reads weights with such kernels (ggml's AVX2/FMA
// dot products on F16 and quantized blocks), while gonum's float32 GEMV is
// compute-bound below memory speed on one core: on the 2-core EPYC CI
// machine, one thread read 26-29 GB/s this way and 15 GB/s through
// blas32.Gemv, and Ollama v0.6.5 decoded an F16 model at about 29 GB/s of
// weights (calibrate/enginetest).
func (r *runner) vectorRead(deadline time.Time) {
	d, ok := r.best(deadline, r.vectorReadPass)
	if ok {
		r.res.VectorReadGBs = gbs(4*float64(len(r.a)), d)
	}
}

// vectorReadPass counts a byte value over array a's bytes on all threads.
func (r *runner) vectorReadPass() bool {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(r.a))), 4*len(r.a))
	return r.parallel(len(raw), r.opt.Threads, 4*chunk, func(lo, hi int) {
		n := bytes.Count(raw[lo:hi], []byte{0xA5})
		r.mu.Lock()
		r.sink += float32(n)
		r.mu.Unlock()
	})
}

// gemvCols is the row length of the decode-like matrix (a 4096-wide
// projection, as in a 7B model's attention).
const gemvCols = 4096

// gemvRowChunk is the rows between two stop checks (4 MiB of matrix).
const gemvRowChunk = chunk / gemvCols

// gemv measures y = A·x over array a viewed as a rows×4096 float32 matrix,
// rows split across threads: matrix bytes per second.
func (r *runner) gemv(deadline time.Time) {
	rows := len(r.a) / gemvCols
	if rows == 0 {
		return
	}
	y := make([]float32, rows)
	d, ok := r.best(deadline, func() bool { return r.gemvPass(y) })
	if ok {
		r.res.GEMVGBs = gbs(4*float64(rows*gemvCols), d)
	}
}

// gemvPass is one y = A·x over array a (len(y) rows of 4096), x taken from
// array b.
func (r *runner) gemvPass(y []float32) bool {
	x := vec(r.b[:gemvCols])
	return r.parallel(len(y), r.opt.Threads, gemvRowChunk, func(lo, hi int) {
		m := blas32.General{Rows: hi - lo, Cols: gemvCols, Stride: gemvCols, Data: r.a[lo*gemvCols : hi*gemvCols]}
		blas32.Gemv(blas.NoTrans, 1, m, x, 0, vec(y[lo:hi]))
	})
}

// gemvCached runs the same kernel on a 256 KiB matrix per thread, repeated
// 256 times per pass, so the data stays in each core's cache.
func (r *runner) gemvCached(deadline time.Time) {
	const rows, reps = 16, 256
	// More goroutines than GOMAXPROCS would only share cores (and memory).
	per := make([][]float32, max(1, min(r.opt.Threads, runtime.GOMAXPROCS(0))))
	for t := range per {
		per[t] = make([]float32, rows*gemvCols+gemvCols+rows)
		for i := range per[t] {
			per[t][i] = 0.5 + float32(i%3)*0.25
		}
	}
	d, ok := r.best(deadline, func() bool {
		var wg sync.WaitGroup
		for t := range per {
			wg.Add(1)
			go func(buf []float32) {
				defer wg.Done()
				m := blas32.General{Rows: rows, Cols: gemvCols, Stride: gemvCols, Data: buf[:rows*gemvCols]}
				x, y := vec(buf[rows*gemvCols:rows*gemvCols+gemvCols]), vec(buf[rows*gemvCols+gemvCols:])
				for i := 0; i < reps && !r.stop.Load(); i++ {
					blas32.Gemv(blas.NoTrans, 1, m, x, 0, y)
				}
			}(per[t])
		}
		wg.Wait()
		return !r.stop.Load()
	})
	if ok {
		r.res.GEMVCachedGBs = gbs(4*float64(rows*gemvCols*reps*len(per)), d)
	}
}

// gemmSizes are the square GEMM sizes, smallest first; a size is skipped
// when the previous rate says it would not fit in the time left.
var gemmSizes = []int{256, 512, 1024, 2048}

// gemmRowBlock is the rows of C computed between two stop checks.
const gemmRowBlock = 128

// sgemm measures float32 GEMM (gonum blas32, parallel over GOMAXPROCS).
func (r *runner) sgemm(deadline time.Time) {
	r.free() // the memory arrays are not needed any more
	r.gemmSizes(deadline, "fp32", r.sgemmPass, &r.res.SgemmGFLOPS)
}

// sgemmPass allocates n×n operands and returns one multiply C = A·B, in
// row blocks with a stop check between them.
func (r *runner) sgemmPass(n int) func() bool {
	a, b, c := fill32(n*n), fill32(n*n), make([]float32, n*n)
	return func() bool {
		for i := 0; i < n; i += gemmRowBlock {
			if r.stop.Load() {
				return false
			}
			rows := min(gemmRowBlock, n-i)
			blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas32.General{Rows: rows, Cols: n, Stride: n, Data: a[i*n : (i+rows)*n]},
				blas32.General{Rows: n, Cols: n, Stride: n, Data: b}, 0,
				blas32.General{Rows: rows, Cols: n, Stride: n, Data: c[i*n : (i+rows)*n]})
		}
		return true
	}
}

// dgemm measures float64 GEMM (gonum blas64).
func (r *runner) dgemm(deadline time.Time) {
	r.gemmSizes(deadline, "fp64", r.dgemmPass, &r.res.DgemmGFLOPS)
}

// dgemmPass is sgemmPass in float64.
func (r *runner) dgemmPass(n int) func() bool {
	a, b, c := fill64(n*n), fill64(n*n), make([]float64, n*n)
	return func() bool {
		for i := 0; i < n; i += gemmRowBlock {
			if r.stop.Load() {
				return false
			}
			rows := min(gemmRowBlock, n-i)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: rows, Cols: n, Stride: n, Data: a[i*n : (i+rows)*n]},
				blas64.General{Rows: n, Cols: n, Stride: n, Data: b}, 0,
				blas64.General{Rows: rows, Cols: n, Stride: n, Data: c[i*n : (i+rows)*n]})
		}
		return true
	}
}

// gemmSizes runs one GEMM precision over gemmSizes, giving each size an
// equal share of the time left, and records every rate and the best.
func (r *runner) gemmSizes(deadline time.Time, prec string, setup func(n int) func() bool, bestRate *float64) {
	var rate float64 // GFLOP/s of the previous size
	for i, n := range gemmSizes {
		flop := 2 * float64(n) * float64(n) * float64(n)
		left := time.Until(deadline)
		if rate > 0 && time.Duration(flop/rate)*time.Nanosecond > left {
			r.note("%s gemm %d skipped: one multiply would take longer than the time left", prec, n)
			break
		}
		share := time.Now().Add(left / time.Duration(len(gemmSizes)-i))
		pass := setup(n)
		d, ok := r.best(share, pass)
		if !ok {
			return
		}
		rate = flop / d.Seconds() / 1e9
		r.res.GEMM = append(r.res.GEMM, GEMMPoint{Precision: prec, N: n, GFLOPS: rate})
		*bestRate = max(*bestRate, rate)
	}
}

func fill32(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 0.5 + float32(i%7)*0.0625
	}
	return x
}

func fill64(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 0.5 + float64(i%7)*0.0625
	}
	return x
}

// String summarizes a result in a few lines.
func (res Result) String() string {
	s := fmt.Sprintf("memory bandwidth  %7.1f GB/s (triad %.1f, read %.1f; %d threads, %d MiB arrays)\n", res.MemBandwidthGBs, res.TriadGBs, res.ReadGBs, res.Threads, res.ArrayMiB)
	s += fmt.Sprintf("one thread        %7.1f GB/s\n", res.SingleThreadBandwidthGBs)
	s += fmt.Sprintf("SIMD read         %7.1f GB/s\n", res.VectorReadGBs)
	s += fmt.Sprintf("gemv (decode)     %7.1f GB/s (in cache %.1f GB/s)\n", res.GEMVGBs, res.GEMVCachedGBs)
	s += fmt.Sprintf("gemm              %7.1f GFLOP/s fp32, %.1f GFLOP/s fp64\n", res.SgemmGFLOPS, res.DgemmGFLOPS)
	for _, p := range res.GEMM {
		s += fmt.Sprintf("  %s n=%-5d %7.1f GFLOP/s\n", p.Precision, p.N, p.GFLOPS)
	}
	s += fmt.Sprintf("took %.1f s on %s/%s, GOMAXPROCS %d\n", res.Duration.Seconds(), res.GOOS, res.GOARCH, res.GOMAXPROCS)
	for _, n := range res.Notes {
		s += "note: " + n + "\n"
	}
	return s
}
