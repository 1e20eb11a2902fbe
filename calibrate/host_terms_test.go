package calibrate

import (
	"testing"

	"github.com/headroom-planner/headroom/calibrate/host"
)

// TestHostTermsDecodeBandwidth checks which host figure sets CPU decode.
// On the CI machine's EPYC core gonum's float32 GEMV is compute-bound at
// 15 GB/s while SIMD code reads 26-29 GB/s and Ollama decodes at about
// 29 GB/s of weights: taking the GEMV alone predicted Ollama's decode
// 36-43% low (issue: host calibration −40%).
func TestHostTermsDecodeBandwidth(t *testing.T) {
	cases := []struct {
		name     string
		res      host.Result
		wantBW   float64
		wantGEMV bool
	}{
		{"SIMD read above a compute-bound GEMV", host.Result{GEMVGBs: 15.2, VectorReadGBs: 27.5, ReadGBs: 14, SgemmGFLOPS: 40}, 27.5, true},
		{"GEMV at memory speed", host.Result{GEMVGBs: 40, VectorReadGBs: 38, ReadGBs: 35, SgemmGFLOPS: 400}, 40, true},
		{"no GEMV (old result file)", host.Result{ReadGBs: 20, SgemmGFLOPS: 40}, 20, false},
		{"only the SIMD read", host.Result{VectorReadGBs: 12, SgemmGFLOPS: 40}, 12, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := HostTerms(c.res)
			if got.BandwidthGBs != c.wantBW || got.GEMVBandwidth != c.wantGEMV {
				t.Errorf("HostTerms = bandwidth %.1f GB/s, gemv %v; want %.1f, %v", got.BandwidthGBs, got.GEMVBandwidth, c.wantBW, c.wantGEMV)
			}
			if got.TFLOPS != c.res.SgemmGFLOPS/1000 || got.DecodeEff != 1 || got.PrefillEff != 1 {
				t.Errorf("HostTerms = %+v", got)
			}
		})
	}
}
