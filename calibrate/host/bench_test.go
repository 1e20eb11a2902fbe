package host

import (
	"testing"
	"time"
)

// benchRunner allocates and touches 3×64 MiB arrays with all CPUs.
func benchRunner(b *testing.B) *runner {
	b.Helper()
	opt, err := Options{ArrayMiB: 64, Budget: MinBudget}.normalize()
	if err != nil {
		b.Fatal(err)
	}
	r := &runner{opt: opt, progress: func(string, float64) {}, start: time.Now()}
	r.allocate(time.Time{})
	b.ResetTimer()
	return r
}

// The memory benchmarks report MB/s with the byte counts Run uses.

func BenchmarkTriad(b *testing.B) {
	r := benchRunner(b)
	b.SetBytes(12 * int64(len(r.a)))
	for b.Loop() {
		r.triadPass()
	}
}

func BenchmarkRead(b *testing.B) {
	r := benchRunner(b)
	b.SetBytes(8 * int64(len(r.a)))
	for b.Loop() {
		r.readPass(r.opt.Threads)
	}
}

func BenchmarkReadOneThread(b *testing.B) {
	r := benchRunner(b)
	b.SetBytes(8 * int64(len(r.a)))
	for b.Loop() {
		r.readPass(1)
	}
}

func BenchmarkGEMV(b *testing.B) {
	r := benchRunner(b)
	y := make([]float32, len(r.a)/gemvCols)
	b.SetBytes(4 * int64(len(y)*gemvCols))
	for b.Loop() {
		r.gemvPass(y)
	}
}

// benchGEMM reports GFLOP/s of one n×n multiply.
func benchGEMM(b *testing.B, n int, setup func(*runner, int) func() bool) {
	r := &runner{progress: func(string, float64) {}}
	pass := setup(r, n)
	b.ResetTimer()
	for b.Loop() {
		pass()
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm512(b *testing.B)  { benchGEMM(b, 512, (*runner).sgemmPass) }
func BenchmarkSgemm1024(b *testing.B) { benchGEMM(b, 1024, (*runner).sgemmPass) }
func BenchmarkDgemm512(b *testing.B)  { benchGEMM(b, 512, (*runner).dgemmPass) }
