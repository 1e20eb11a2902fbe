package app

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// --engine-version for plan and compare: which engine each release
// belongs to, and the refusals that name what is wrong.
func TestEngineReleases(t *testing.T) {
	c := testApp(t, "").Catalog()
	for _, tc := range []struct {
		spec, emit string
		engines    []string
		want       map[planner.EngineID]string
		err        string // substring of the usage error; "" = none
	}{
		{spec: "", want: nil},
		{spec: "vllm=0.6.0", want: map[planner.EngineID]string{planner.VLLM: "0.6.0"}},
		{spec: "vllm=0.6.0, llama-server=b4000", want: map[planner.EngineID]string{planner.VLLM: "0.6.0", planner.LlamaCpp: "b4000"}},
		{spec: "0.6.0", emit: "vllm", want: map[planner.EngineID]string{planner.VLLM: "0.6.0"}},
		{spec: "0.5.4", engines: []string{"sglang"}, want: map[planner.EngineID]string{planner.SGLang: "0.5.4"}},
		{spec: "b4000", want: map[planner.EngineID]string{planner.LlamaCpp: "b4000"}},
		{spec: "latest", emit: "tgi", want: map[planner.EngineID]string{planner.TGI: "latest"}},
		{spec: "0.6.0", err: "could be a release of more than one"},
		{spec: "0.6.0", engines: []string{"vllm", "sglang"}, err: "could be a release of more than one"},
		{spec: "vllm=b4000", err: "not builds"},
		{spec: "vllm=0.6.0,vllm=0.7.0", err: "already has release 0.6.0"},
		{spec: "nosuch=1.0", err: "unknown engine"},
		{spec: "vllm=v9.x", err: "bad engine version"},
		{spec: "vllm=", err: "no release after ="},
	} {
		got, err := EngineReleases(c, tc.spec, tc.emit, tc.engines)
		if tc.err != "" {
			if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("EngineReleases(%q, emit %q, %v) = %v, %v; want a usage error with %q", tc.spec, tc.emit, tc.engines, got, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("EngineReleases(%q, emit %q, %v) = %v, %v; want %v", tc.spec, tc.emit, tc.engines, got, err, tc.want)
		}
	}
}

// A plan's predictions follow the release named for an engine, and only
// that engine's: vLLM 0.6 (before the V1 engine) decodes Llama-3.1-8B more
// slowly on an H100 than the newest release, while llama.cpp's figures do
// not move. plan had taken --engine-version for the launch command only.
func TestPlanFollowsEngineRelease(t *testing.T) {
	a := testApp(t, "")
	ctx := context.Background()
	req := PlanRequest{Model: "meta-llama/Llama-3.1-8B-Instruct", Hardware: "nvidia-h100-sxm5-80gb", Engines: []string{"vllm", "llama.cpp"},
		Quants: []string{"bf16", "q8_0"}, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}}
	newest, err := a.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.EngineVersion = "vllm=0.6.0"
	old, err := a.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Release(planner.VLLM); got != "0.6.0" {
		t.Errorf("Release(vllm) = %q, want 0.6.0", got)
	}
	tpot := func(ans PlanAnswer, e planner.EngineID) planner.Milliseconds {
		t.Helper()
		c, ok := ans.Best(e)
		if !ok {
			t.Fatalf("no %s configuration ranked", e)
		}
		return c.Pred.TPOT
	}
	if n, o := tpot(newest, planner.VLLM), tpot(old, planner.VLLM); !(o > n*1.03) {
		t.Errorf("vLLM TPOT at 0.6.0 = %s, newest %s: want the older release slower by more than 3%%", o, n)
	}
	if n, o := tpot(newest, planner.LlamaCpp), tpot(old, planner.LlamaCpp); n != o {
		t.Errorf("llama.cpp TPOT moved with a vLLM release: %s → %s", n, o)
	}
}

// EngineReleases never panics, and what it accepts it accepts whole: every
// release it returns parses and belongs to an engine of the catalog.
func FuzzEngineReleases(f *testing.F) {
	for _, s := range []string{"vllm=0.6.0,llama.cpp=b4000", "0.6.0", "b4000", "=", "vllm==1", ",,", "sglang=0.5.4rc1", "tgi=3.3.5-rocm"} {
		f.Add(s, "")
		f.Add(s, "vllm")
	}
	c := testApp(f, "").Catalog()
	f.Fuzz(func(t *testing.T, spec, emit string) {
		got, err := EngineReleases(c, spec, emit, nil)
		if err != nil {
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("EngineReleases(%q, %q): %v is not a usage error", spec, emit, err)
			}
			return
		}
		for id, v := range got {
			if _, err := c.FindEngine(string(id)); err != nil {
				t.Fatalf("EngineReleases(%q): engine %q not in the catalog", spec, id)
			}
			if _, err := planner.ParseRelease(v); err != nil {
				t.Fatalf("EngineReleases(%q): release %q of %s does not parse: %v", spec, v, id, err)
			}
		}
	})
}
