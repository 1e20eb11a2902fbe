// Package host measures this machine's CPU with short microbenchmarks, so
// that CPU inference (llama.cpp or Ollama without a GPU) can be predicted
// from what the machine does rather than from its spec sheet.
//
// Decode on a CPU streams every weight once per token: its speed is set by
// how fast all cores together read memory, and by how fast the matrix-
// vector kernel runs when memory is not the limit. Prefill is matrix-matrix
// work: its speed is set by the FLOP/s of a blocked GEMM. Run measures, in
// a fixed order and within a time budget (15 s by default, never more than
// 20 s):
//
//   - memory bandwidth with all threads, best of several passes over arrays
//     far larger than the last-level cache (256 MiB each by default):
//     TriadGBs has STREAM triad traffic (two reads, one write per element;
//     STREAM counts 12 bytes per float32 element, write-allocate traffic
//     not included) and ReadGBs a read-only dot product (8 bytes per
//     element); MemBandwidthGBs is the higher of the two;
//   - VectorReadGBs, the same arrays read by the Go runtime's vectorized
//     byte count (AVX2/NEON assembly) with all threads: what SIMD kernels
//     such as ggml's pull from memory when gonum's GEMV is compute-bound;
//   - SingleThreadBandwidthGBs, the read kernel on one thread (what one
//     core can pull; with few threads decode is limited by it);
//   - GEMVGBs, y = A·x in float32 over a matrix as large as one array, rows
//     split across threads: the shape of llama.cpp's CPU decode, reported
//     as matrix bytes per second; GEMVCachedGBs is the same kernel on a
//     matrix that fits in cache (the kernel's own ceiling);
//   - MatMulGFLOPS, the best float32 GEMM rate (gonum blas32 Sgemm) over
//     sizes 256 to 2048 (2·n³ FLOP per multiply), and the float64 rate
//     (blas64 Dgemm) beside it.
//
// The kernels are gonum's (its SIMD dot and axpy on amd64 and arm64); pure
// Go loops would measure the compiler, not the memory. Memory kernels run
// on Options.Threads goroutines; the GEMMs use gonum's own parallelism over
// GOMAXPROCS. Cancelling the context stops the run between chunks of work
// (a few milliseconds) and Run returns ctx.Err().
package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Limits and defaults of Options.
const (
	DefaultBudget = 15 * time.Second
	MaxBudget     = 20 * time.Second
	// MinBudget is the shortest budget that measures anything: below it
	// each step runs once on arrays still in cache, and the result is the
	// cache's speed, not the memory's (a 1 ns budget saved a 30 ms run).
	MinBudget       = 2 * time.Second
	DefaultArrayMiB = 256
	minArrayMiB     = 1
	maxArrayMiB     = 4096
)

// Options control a run. Zero values take the defaults.
type Options struct {
	// Budget is the time the run may take (default 15 s, at most 20 s).
	// Every step runs at least once; steps repeat while their share lasts.
	Budget time.Duration
	// Threads is the number of goroutines of the memory kernels (default
	// runtime.NumCPU()).
	Threads int
	// ArrayMiB is the size of each of the three memory arrays (default
	// 256 MiB, so 768 MiB in all); it should be far larger than the
	// last-level cache.
	ArrayMiB int
}

// GEMMPoint is the rate of one matrix multiply size.
type GEMMPoint struct {
	Precision string  `toml:"precision" json:"precision"` // fp32 or fp64
	N         int     `toml:"n" json:"n"`                 // n×n by n×n
	GFLOPS    float64 `toml:"gflops" json:"gflops"`       // 2·n³ / best time
}

// Result is what a run measured. Bandwidths are in GB/s (1e9 bytes per
// second), rates in GFLOP/s; zero means the step did not run.
type Result struct {
	Threads  int `toml:"threads" json:"threads"`
	ArrayMiB int `toml:"array_mib" json:"array_mib"`
	// MemBandwidthGBs is the higher of TriadGBs and ReadGBs: what the
	// memory system sustained with all threads.
	MemBandwidthGBs float64 `toml:"mem_bandwidth_gb_s" json:"mem_bandwidth_gb_s"`
	// TriadGBs counts 12 bytes per element (two reads, one write).
	TriadGBs float64 `toml:"triad_gb_s" json:"triad_gb_s"`
	// ReadGBs is a read-only dot product of two arrays, 8 bytes per element.
	ReadGBs float64 `toml:"read_gb_s" json:"read_gb_s"`
	// VectorReadGBs is array bytes per second read by the runtime's
	// vectorized byte count, all threads (see runner.vectorRead).
	VectorReadGBs float64 `toml:"vector_read_gb_s" json:"vector_read_gb_s"`
	// SingleThreadBandwidthGBs is the read kernel on one thread.
	SingleThreadBandwidthGBs float64 `toml:"single_thread_bandwidth_gb_s" json:"single_thread_bandwidth_gb_s"`
	// GEMVGBs is float32 matrix-vector over an ArrayMiB matrix, all threads,
	// in matrix bytes per second: the decode-like rate.
	GEMVGBs float64 `toml:"gemv_gb_s" json:"gemv_gb_s"`
	// GEMVCachedGBs is the same kernel on a per-thread matrix that fits in
	// cache: the ceiling of the kernel itself.
	GEMVCachedGBs float64 `toml:"gemv_cached_gb_s" json:"gemv_cached_gb_s"`
	// MatMulGFLOPS is the best float32 GEMM rate; SgemmGFLOPS equals it and
	// DgemmGFLOPS is the best float64 rate.
	MatMulGFLOPS float64     `toml:"matmul_gflops" json:"matmul_gflops"`
	SgemmGFLOPS  float64     `toml:"sgemm_gflops" json:"sgemm_gflops"`
	DgemmGFLOPS  float64     `toml:"dgemm_gflops" json:"dgemm_gflops"`
	GEMM         []GEMMPoint `toml:"gemm" json:"gemm"`
	// GOOS, GOARCH and GOMAXPROCS describe where it ran.
	GOOS       string `toml:"goos" json:"goos"`
	GOARCH     string `toml:"goarch" json:"goarch"`
	GOMAXPROCS int    `toml:"gomaxprocs" json:"gomaxprocs"`
	// Duration is the wall time of the run.
	Duration time.Duration `toml:"duration" json:"duration_ns"`
	// Notes say what was skipped or limited (budget, GOMAXPROCS).
	Notes []string `toml:"notes,omitempty" json:"notes,omitempty"`
	// Steps say how many passes each timed step made and how far its
	// median pass was from its best: the run's noise.
	Steps []StepStat `toml:"steps,omitempty" json:"steps,omitempty"`
}

// StepStat is the repeatability of one timed step.
type StepStat struct {
	Name   string `toml:"name" json:"name"`
	Passes int    `toml:"passes" json:"passes"`
	// Spread is (median − best) / best over the passes: 0 when every pass
	// took the same time; a busy machine makes it large.
	Spread float64 `toml:"spread" json:"spread"`
}

// Step returns the statistics of the step called name, and whether it ran.
func (r Result) Step(name string) (StepStat, bool) {
	for _, s := range r.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return StepStat{}, false
}

// ErrBadOptions says an option is out of range.
var ErrBadOptions = errors.New("invalid options")

// normalize applies defaults and checks ranges.
func (o Options) normalize() (Options, error) {
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.Budget < 0 {
		return o, fmt.Errorf("budget %v: %w", o.Budget, ErrBadOptions)
	}
	if o.Budget < MinBudget {
		return o, fmt.Errorf("budget %v is too short to measure memory (at least %v): %w", o.Budget, MinBudget, ErrBadOptions)
	}
	o.Budget = min(o.Budget, MaxBudget)
	if o.Threads == 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Threads < 0 || o.Threads > 4096 {
		return o, fmt.Errorf("threads %d: %w", o.Threads, ErrBadOptions)
	}
	if o.ArrayMiB == 0 {
		o.ArrayMiB = DefaultArrayMiB
	}
	if o.ArrayMiB < minArrayMiB || o.ArrayMiB > maxArrayMiB {
		return o, fmt.Errorf("array size %d MiB (want %d to %d): %w", o.ArrayMiB, minArrayMiB, maxArrayMiB, ErrBadOptions)
	}
	return o, nil
}

// step is one measurement of the run, with its share of the budget.
type step struct {
	name   string
	weight float64
	run    func(r *runner, deadline time.Time)
}

// steps is the fixed order of a run. Weights sum to 1.
var steps = []step{
	{"memory: allocate and touch arrays", 0.06, (*runner).allocate},
	{"memory: triad, all threads", 0.17, (*runner).triad},
	{"memory: read, all threads", 0.12, (*runner).read},
	{"memory: SIMD read, all threads", 0.08, (*runner).vectorRead},
	{"memory: read, one thread", 0.07, (*runner).readOne},
	{"gemv: float32, all threads", 0.14, (*runner).gemv},
	{"gemv: in cache", 0.06, (*runner).gemvCached},
	{"gemm: sgemm", 0.20, (*runner).sgemm},
	{"gemm: dgemm", 0.10, (*runner).dgemm},
}

// Run measures this machine. progress, when not nil, is called with the
// current step and the fraction of the run done (0 to 1). A cancelled ctx
// stops the run within a chunk of work and Run returns ctx.Err().
func Run(ctx context.Context, opt Options, progress func(step string, frac float64)) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	opt, err := opt.normalize()
	if err != nil {
		return Result{}, err
	}
	if progress == nil {
		progress = func(string, float64) {}
	}
	r := &runner{opt: opt, progress: progress, start: time.Now()}
	r.res = Result{Threads: opt.Threads, ArrayMiB: opt.ArrayMiB, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if opt.Threads > r.res.GOMAXPROCS {
		r.note("%d threads asked but GOMAXPROCS is %d: at most %d run at once", opt.Threads, r.res.GOMAXPROCS, r.res.GOMAXPROCS)
	}
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
			r.stop.Store(true)
		case <-stopWatch:
		}
	}()
	hardEnd := r.start.Add(MaxBudget)
	done := 0.0
	for _, s := range steps {
		deadline := r.start.Add(time.Duration((done + s.weight) * float64(opt.Budget)))
		r.step, r.stepFrom, r.stepWeight, r.stepEnd = s.name, done, s.weight, deadline
		progress(s.name, done)
		if time.Now().After(hardEnd) {
			r.note("%s skipped: the run reached %v", s.name, MaxBudget)
		} else {
			s.run(r, deadline)
		}
		if r.stop.Load() {
			return Result{}, ctx.Err()
		}
		done += s.weight
	}
	r.free()
	progress("done", 1)
	r.res.Duration = time.Since(r.start)
	r.res.MemBandwidthGBs = max(r.res.TriadGBs, r.res.ReadGBs)
	r.res.MatMulGFLOPS = r.res.SgemmGFLOPS
	return r.res, nil
}

// runner holds the state of one run.
type runner struct {
	opt      Options
	res      Result
	progress func(string, float64)
	start    time.Time
	stop     atomic.Bool
	a, b, c  []float32
	sink     float32 // keeps results of read kernels alive
	mu       sync.Mutex

	step                 string
	stepFrom, stepWeight float64
	stepEnd              time.Time
}

func (r *runner) note(format string, a ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, a...))
}

func (r *runner) free() { r.a, r.b, r.c = nil, nil, nil }

// tick reports progress within the current step.
func (r *runner) tick() {
	span := r.stepEnd.Sub(r.start).Seconds() - r.stepFrom*r.opt.Budget.Seconds()
	frac := 1.0
	if span > 0 {
		el := time.Since(r.start).Seconds() - r.stepFrom*r.opt.Budget.Seconds()
		frac = min(max(el/span, 0), 1)
	}
	r.progress(r.step, r.stepFrom+r.stepWeight*frac)
}

// maxReps bounds the repeats of one step (best of at most this many); the
// step's share of the budget is the usual limit. Many short passes make the
// best one robust to other programs taking the CPU for a while.
const maxReps = 100

// best runs pass until the step's deadline would pass (at least once, at
// most maxReps times) and returns the shortest complete pass; ok is false
// when no pass completed (stopped).
func (r *runner) best(deadline time.Time, pass func() bool) (time.Duration, bool) {
	var bestD time.Duration
	var all []time.Duration
	ok := false
	for i := 0; i < maxReps && !r.stop.Load(); i++ {
		t0 := time.Now()
		if !pass() {
			break
		}
		d := time.Since(t0)
		all = append(all, d)
		if !ok || d < bestD {
			bestD, ok = d, true
		}
		r.tick()
		if time.Now().Add(d).After(deadline) {
			break
		}
	}
	if ok {
		r.record(all)
	}
	return bestD, ok
}

// record adds the passes of the current step to Result.Steps; a step that
// times several sizes (the GEMMs) keeps its fewest passes and largest
// spread.
func (r *runner) record(passes []time.Duration) {
	st := StepStat{Name: r.step, Passes: len(passes), Spread: spread(passes)}
	for i := range r.res.Steps {
		if s := &r.res.Steps[i]; s.Name == st.Name {
			s.Passes, s.Spread = min(s.Passes, st.Passes), max(s.Spread, st.Spread)
			return
		}
	}
	r.res.Steps = append(r.res.Steps, st)
}

// spread is (median − min) / min of the passes.
func spread(passes []time.Duration) float64 {
	s := slices.Clone(passes)
	slices.Sort(s)
	if len(s) == 0 || s[0] <= 0 {
		return 0
	}
	return float64(s[len(s)/2]-s[0]) / float64(s[0])
}

// chunk is the work between two checks of the stop flag: 1 Mi elements
// (4 MiB of float32).
const chunk = 1 << 20

// parallel splits [0, n) into one contiguous part per thread and calls fn
// on pieces of at most step indexes; it returns false when stopped.
func (r *runner) parallel(n, threads, step int, fn func(lo, hi int)) bool {
	threads = max(1, min(threads, n))
	per := (n + threads - 1) / threads
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		lo, hi := t*per, min((t+1)*per, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := lo; c < hi; c += step {
				if r.stop.Load() {
					return
				}
				fn(c, min(c+step, hi))
			}
		}()
	}
	wg.Wait()
	return !r.stop.Load()
}

// gbs converts bytes moved in d to GB/s.
func gbs(bytes float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return bytes / d.Seconds() / 1e9
}
