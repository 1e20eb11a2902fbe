package calibrate

import (
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
)

// HostTerms turns a host benchmark into calibration terms for CPU inference
// (llama.cpp and Ollama on the CPU). Decode streams quantized weights
// through a matrix-vector kernel, so the decode bandwidth is the measured
// GEMV rate (float32, all threads the benchmark used) at efficiency 1;
// prefill runs at the measured SGEMM rate. The Ollama engine test
// (calibrate/enginetest) checks this against a real llama.cpp-on-CPU
// decode.
func HostTerms(res host.Result) planner.Calibrated {
	bw := res.GEMVGBs
	if bw <= 0 {
		bw = res.ReadGBs
	}
	return planner.Calibrated{BandwidthGBs: bw, TFLOPS: res.SgemmGFLOPS / 1000, DecodeEff: 1, PrefillEff: 1,
		GEMVBandwidth: res.GEMVGBs > 0}
}
