package app

import (
	"context"
	"errors"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// testApp is an App over the embedded catalog with no user directories and
// an empty calibration directory, probing root ("" = this machine).
func testApp(t testing.TB, root string) *App {
	t.Helper()
	a, err := Open(Options{NoUserDirs: true, CalibrationDir: t.TempDir(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Every catalog model passes the model check that guards fitting.
func TestCatalogModelsPassCheck(t *testing.T) {
	a := testApp(t, "")
	for _, m := range a.Catalog().Models {
		if err := m.Check(); err != nil {
			t.Errorf("%s: %v", m.ID, err)
		}
	}
}

// A model with no attention heads is refused before fitting (it came out
// FITS, exit 0), as a usage error.
func TestFitRefusesBrokenModel(t *testing.T) {
	a := testApp(t, "")
	m, err := a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	m.Heads = 0
	_, err = a.Fit(context.Background(), ScenarioRequest{ModelValue: &m, Hardware: "nvidia-rtx-4090"})
	if !errors.Is(err, ErrUsage) || !errors.Is(err, planner.ErrInvalid) {
		t.Fatalf("Fit = %v, want a usage error", err)
	}
}

// On the 96 GB carve-out Strix Halo fixture, `probe` and `fit -e vllm`
// agree on what vLLM can allocate: fit used llama.cpp's 111 GiB (carve-out
// plus GTT through Vulkan) for every engine.
func TestProbedUsableMemoryIsPerEngine(t *testing.T) {
	a := testApp(t, "../probe/testdata/strix-halo-96-carveout")
	ctx := context.Background()
	_, devs, err := a.ProbeReport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	probed := map[string]planner.Bytes{}
	for _, d := range devs {
		for _, u := range d.Usable {
			probed[u.Policy] = u.Bytes
		}
	}
	if probed["vllm"] == 0 || probed["llamacpp"] == 0 || probed["vllm"] == probed["llamacpp"] {
		t.Fatalf("fixture's per-engine usable memory: %v", probed)
	}
	// The probe lists each engine with its default backend on this device:
	// vLLM on ROCm, llama.cpp on Vulkan (which sums carve-out and GTT).
	for _, c := range []struct{ engine, backend, policy string }{{"vllm", "", "vllm"}, {"llama.cpp", "vulkan", "llamacpp"}} {
		ans, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-2-7b-chat-hf", Engine: c.engine, Backend: c.backend})
		if err != nil {
			t.Fatalf("%s: %v", c.engine, err)
		}
		if got := ans.Scenario.UsableMemory; got != probed[c.policy] {
			t.Errorf("fit -e %s plans against %s; probe says %s can allocate %s", c.engine, got, c.engine, probed[c.policy])
		}
	}
}

// The four verdicts: a request for more users than fit reads "fits with
// limits", not a green "fits".
func TestFitVerdictStates(t *testing.T) {
	a := testApp(t, "")
	ctx := context.Background()
	cases := []struct {
		name string
		req  ScenarioRequest
		want planner.Verdict
	}{
		{"fits", ScenarioRequest{Model: "meta-llama/Llama-3.1-8B-Instruct", Hardware: "nvidia-rtx-4090", Context: 8192, Concurrency: 4}, planner.Fits},
		{"fewer users than asked", ScenarioRequest{Model: "meta-llama/Llama-3.1-8B-Instruct", Hardware: "nvidia-rtx-4090", Engine: "vllm", Context: 16384, Concurrency: 16}, planner.FitsWithLimits},
		{"weights in system RAM", ScenarioRequest{Model: "meta-llama/Llama-3.3-70B-Instruct", Hardware: "nvidia-rtx-4090", Engine: "llama.cpp", Quant: "q4_k_m", Context: 8192, HostMemory: 64 << 30}, planner.FitsWithOffload},
		{"does not fit", ScenarioRequest{Model: "meta-llama/Llama-3.3-70B-Instruct", Hardware: "nvidia-rtx-4090", Engine: "vllm", Quant: "bf16"}, planner.DoesNotFit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans, err := a.Fit(ctx, c.req)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Fit.Verdict != c.want {
				t.Fatalf("verdict %q, want %q (reasons %v)", ans.Fit.Verdict, c.want, ans.Fit.Reasons)
			}
			if (c.want == planner.FitsWithLimits) != (len(ans.Limits) > 0) {
				t.Errorf("limits %v with verdict %q", ans.Limits, ans.Fit.Verdict)
			}
			if c.want.Runs() && !(ans.Speed.DecodeTPS > 0) {
				t.Errorf("no speed for a configuration that runs: %+v", ans.Speed)
			}
		})
	}
}

// A generic id the probe printed (`headroom probe` → generic-…) is a
// hardware the other commands accept: it is found on the probed machine.
func TestGenericHardwareIDResolves(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ root, id string }{
		{"../probe/testdata/win-rtx2070s", "generic-nvidia-10de-1e84"},
		{"../probe/testdata/no-gpu-server", "generic-cpu"},
	} {
		a := testApp(t, c.root)
		ans, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-3.2-3B-Instruct", Hardware: c.id, Quant: "q4_k_m", Engine: "llama.cpp", Context: 4096})
		if err != nil {
			t.Fatalf("-H %s on %s: %v", c.id, c.root, err)
		}
		if ans.Scenario.Hardware.ID != c.id || !ans.Machine.Probed {
			t.Errorf("-H %s: planned for %q (probed %v)", c.id, ans.Scenario.Hardware.ID, ans.Machine.Probed)
		}
	}
	a := testApp(t, "../probe/testdata/no-gpu-server")
	if _, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-3.2-3B-Instruct", Hardware: "generic-amd-1002-ffff"}); !errors.Is(err, ErrUsage) {
		t.Errorf("a generic id this machine lacks: %v, want a usage error", err)
	}
}

// --free plans against what is free now, and says what others hold; a
// catalog machine has nothing probed to be free.
func TestFitFreeNow(t *testing.T) {
	ctx := context.Background()
	a := testApp(t, "../probe/testdata/strix-halo-96-carveout")
	ans, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm", Free: true})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Free == nil || ans.Scenario.UsableMemory != ans.Free.Free || ans.Free.Free > ans.Free.Idle {
		t.Fatalf("free now %+v, scenario usable %s", ans.Free, ans.Scenario.UsableMemory)
	}
	if _, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-3.1-8B-Instruct", Hardware: "nvidia-rtx-4090", Free: true}); !errors.Is(err, ErrUsage) {
		t.Errorf("--free on a catalog machine: %v, want a usage error", err)
	}
}

// A configuration that does not fit a probed APU says what setup could
// give the engine (here: not enough even with the carve-out moved to GTT).
func TestFitSetupAdviceOnAPU(t *testing.T) {
	a := testApp(t, "../probe/testdata/strix-halo-96-carveout")
	ans, err := a.Fit(context.Background(), ScenarioRequest{Model: "meta-llama/Llama-3.3-70B-Instruct", Engine: "vllm", Quant: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Fit.Verdict != planner.DoesNotFit || ans.Setup == nil || ans.Setup.Max <= ans.Setup.Have || ans.Setup.Need <= ans.Setup.Max {
		t.Fatalf("verdict %q, setup %+v: want advice saying the most this APU can give vLLM, below the need", ans.Fit.Verdict, ans.Setup)
	}
	b := testApp(t, "")
	if ans, _ := b.Fit(context.Background(), ScenarioRequest{Model: "meta-llama/Llama-3.3-70B-Instruct", Hardware: "nvidia-rtx-4090", Engine: "vllm", Quant: "bf16"}); ans.Setup != nil {
		t.Errorf("setup advice for a catalog GPU: %+v", ans.Setup)
	}
}

// Plans on a probed machine give each engine its own usable memory, as
// fit does: on the 96 GB carve-out Strix Halo vLLM's plan is sized to the
// 96 GiB torch on ROCm reports, llama.cpp's (HIP) to the carve-out's free
// 95.7 GiB; the plan used llama.cpp's figure for every engine.
func TestPlanUsesEachEnginesUsableMemory(t *testing.T) {
	a := testApp(t, "../probe/testdata/strix-halo-96-carveout")
	ctx := context.Background()
	seen := map[planner.Bytes]bool{}
	for _, c := range []struct{ engine, backend string }{{"vllm", ""}, {"llama.cpp", ""}} {
		fit, err := a.Fit(ctx, ScenarioRequest{Model: "meta-llama/Llama-2-7b-chat-hf", Engine: c.engine, Backend: c.backend, Quant: "f16"})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := a.Plan(ctx, PlanRequest{Model: "meta-llama/Llama-2-7b-chat-hf", Engines: []string{c.engine}, Quants: []string{"f16"}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cand := range plan.Result.Ranked {
			if cand.Backend == fit.Fit.Backend && cand.Devices == 1 && cand.Scenario != nil {
				found = true
				if cand.Scenario.UsableMemory != fit.Scenario.UsableMemory {
					t.Errorf("%s on %s: plan sized to %s, fit to %s", c.engine, cand.Backend, cand.Scenario.UsableMemory, fit.Scenario.UsableMemory)
				}
				seen[cand.Scenario.UsableMemory] = true
			}
		}
		if !found {
			t.Errorf("%s: no ranked candidate on %s", c.engine, fit.Fit.Backend)
		}
	}
	if len(seen) != 2 {
		t.Errorf("the two engines were planned against %d distinct memory sizes, want 2", len(seen))
	}
}
