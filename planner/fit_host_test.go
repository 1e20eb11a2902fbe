package planner_test

import (
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// On a CPU-only machine the default context is the largest that fits in
// system RAM beside the weights, as on a device: Llama-3.1-8B at q4_k_m on
// a 16 GB i5 said DOES NOT FIT at its 131072-token maximum.
func TestCPUDefaultContextFitsRAM(t *testing.T) {
	c := catalog(t)
	s := scenario(t, c, "meta-llama/Llama-3.1-8B-Instruct", "cpu-core-i5-9500-ddr4", "llama.cpp", "q4_k_m", "f16")
	r, err := planner.Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != planner.Fits || r.Context >= s.Model.MaxContext || r.Context < 4096 {
		t.Fatalf("verdict %q at context %d (model max %d): want fits at a lower context; reasons %v", r.Verdict, r.Context, s.Model.MaxContext, r.Reasons)
	}
	if !strings.Contains(strings.Join(r.Reasons, " "), "to fit in system RAM") {
		t.Errorf("the lowered context is not explained: %v", r.Reasons)
	}
	// An explicit context is the user's: it is not lowered.
	s.Context = 131072
	r, _ = planner.Fit(s)
	if r.Verdict != planner.DoesNotFit {
		t.Errorf("an explicit 128k context on 16 GB: %q, want does not fit", r.Verdict)
	}
}

// Unknown system RAM is not unlimited RAM: a configuration that would keep
// hundreds of GiB in RAM on a catalog GPU with no --host-memory does not
// fit (DeepSeek-R1 behind a 4090 came out FITS WITH OFFLOAD needing
// 48.84 TiB in one report), while one that needs a workstation's worth
// still fits with offload, saying what it assumes.
func TestUnknownHostRAMIsBounded(t *testing.T) {
	c := catalog(t)
	big := scenario(t, c, "deepseek-ai/DeepSeek-R1", "nvidia-rtx-4090", "llama.cpp", "q4_k_m", "f16")
	big.Context = 4096
	r, err := planner.Fit(big)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != planner.DoesNotFit || !strings.Contains(strings.Join(r.Reasons, " "), "--host-memory") {
		t.Fatalf("DeepSeek-R1 q4 on a 4090 with RAM unknown: %q %v; want does not fit, naming --host-memory", r.Verdict, r.Reasons)
	}
	big.HostMemory = 512 * planner.GiB
	if r, _ = planner.Fit(big); r.Verdict != planner.FitsWithOffload {
		t.Errorf("with --host-memory 512GiB: %q, want fits with offload (%v)", r.Verdict, r.Reasons)
	}
	small := scenario(t, c, "meta-llama/Llama-3.3-70B-Instruct", "nvidia-rtx-4090", "llama.cpp", "q4_k_m", "f16")
	small.Context = 8192
	if r, _ = planner.Fit(small); r.Verdict != planner.FitsWithOffload || len(r.Assumptions) == 0 {
		t.Errorf("70B q4 on a 4090 with RAM unknown: %q, assumptions %v; want fits with offload, saying what RAM it needs", r.Verdict, r.Assumptions)
	}
}
