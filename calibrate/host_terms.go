package calibrate

import (
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
)

// HostTerms turns a host benchmark into calibration terms for CPU inference
// (llama.cpp and Ollama on the CPU). Decode streams weights through
// ggml's SIMD matrix-vector kernels, which on x86-64-v3 and arm64 run at
// memory speed; so the decode bandwidth is the faster of the measured
// float32 GEMV and the SIMD read of the same threads (gonum's GEMV alone is
// compute-bound on one core: 15 GB/s against 26-29 GB/s of SIMD read and
// about 29 GB/s of weights read by Ollama on the CI machine), at
// efficiency 1; prefill runs at the measured SGEMM rate. The Ollama engine
// test (calibrate/enginetest) checks this against a real llama.cpp-on-CPU
// decode.
func HostTerms(res host.Result) planner.Calibrated {
	bw := max(res.GEMVGBs, res.VectorReadGBs)
	if bw <= 0 {
		bw = res.ReadGBs
	}
	return planner.Calibrated{BandwidthGBs: bw, TFLOPS: res.SgemmGFLOPS / 1000, DecodeEff: 1, PrefillEff: 1,
		GEMVBandwidth: res.GEMVGBs > 0 || res.VectorReadGBs > 0}
}
