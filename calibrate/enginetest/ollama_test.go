//go:build linux

package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/calibrate/endpoint"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/gguf"
)

func TestParams(t *testing.T) {
	// Sizes are named for their parameter counts; keep them within 15%.
	want := []int64{5_000_000, 25_000_000, 100_000_000}
	for i, s := range Sizes {
		p := Params(s)
		if float64(p) < 0.85*float64(want[i]) || float64(p) > 1.15*float64(want[i]) {
			t.Errorf("%s: %d parameters, want %d ±15%%", s.Name, p, want[i])
		}
	}
}

// TestOllamaCalibrate calibrates a real Ollama server on three model sizes
// and checks the samples are sane: server timings used, server prompt
// counts used, rates positive, decode slower on the larger model.
func TestOllamaCalibrate(t *testing.T) {
	url, names := ServeModels(t, Sizes...)
	decode := map[string]planner.TokensPerSecond{}
	for i, name := range names {
		opt := endpoint.Options{
			URL: url, Model: name, Budget: 40 * time.Second, MaxConcurrency: 8,
			GenTokens: 32, StallTimeout: 30 * time.Second,
		}
		start := time.Now()
		s, err := endpoint.Run(context.Background(), opt, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		took := time.Since(start)
		checkSamples(t, name, s)
		// The run stops starting work at its budget; under load the last
		// request and the server's answer can lag, so the bound is
		// loose: it catches a run that ignores its budget, not jitter.
		if took > opt.Budget*3/2 {
			t.Errorf("%s: run took %v, budget %v", name, took, opt.Budget)
		}
		logSamples(t, Sizes[i], s, took)
		decode[name] = s.Decode[0].Rate
	}
	small, large := decode[names[0]], decode[names[len(names)-1]]
	if small <= large {
		t.Errorf("decode at concurrency 1: %s %v, %s %v; want the smaller model faster", names[0], small, names[len(names)-1], large)
	}
}

// TestOllamaDefaultBudget runs a default calibration (as `headroom
// calibrate endpoint --url` does) and checks it ends within the default
// budget of 60 s.
func TestOllamaDefaultBudget(t *testing.T) {
	url, names := ServeModels(t, Sizes[1])
	start := time.Now()
	s, err := endpoint.Run(context.Background(), endpoint.Options{URL: url}, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != names[0]+":latest" {
		t.Errorf("model %q, want the only one, %s", s.Model, names[0])
	}
	checkSamples(t, names[0], s)
	logSamples(t, Sizes[1], s, took)
	if took > endpoint.DefaultBudget*3/2 || s.Elapsed > endpoint.DefaultBudget*5/4 {
		t.Errorf("default run took %v (samples say %v), want within %v", took, s.Elapsed, endpoint.DefaultBudget)
	}
}

// checkSamples checks one run against Ollama.
func checkSamples(t *testing.T, name string, s endpoint.Samples) {
	t.Helper()
	if s.Engine != planner.Ollama || s.API != endpoint.APIOllama || s.Quant != "f16" || s.ContextLength != NumCtx {
		t.Errorf("%s: engine %q api %q quant %q context %d, want ollama, ollama, f16, %d", name, s.Engine, s.API, s.Quant, s.ContextLength, NumCtx)
	}
	if len(s.Prefill) == 0 || len(s.Decode) == 0 {
		t.Fatalf("%s: %d prefill and %d decode samples; notes %q", name, len(s.Prefill), len(s.Decode), s.Notes)
	}
	for _, p := range s.Prefill {
		if p.Rate <= 0 || p.RateSource != endpoint.SourceServer || p.TTFT <= 0 {
			t.Errorf("%s: prefill %d: rate %v from %q, ttft %v", name, p.Target, p.Rate, p.RateSource, p.TTFT)
		}
		// The prompt length is Ollama's prompt_eval_count, and prompt sizing
		// from the warm-up's tokens per word lands near the target.
		for _, r := range p.Requests {
			if r.PromptTokens <= 0 || r.PromptTokens != r.ServerPrefillTokens {
				t.Errorf("%s: prefill %d: prompt tokens %d, server prompt_eval_count %d", name, p.Target, r.PromptTokens, r.ServerPrefillTokens)
			}
		}
		if d := float64(p.PromptTokens)/float64(p.Target) - 1; d > 0.3 || d < -0.3 {
			t.Errorf("%s: prefill target %d, server counted %d (more than 30%% off)", name, p.Target, p.PromptTokens)
		}
	}
	for _, d := range s.Decode {
		if d.Rate <= 0 || d.TotalRate <= 0 || d.TPOT <= 0 || d.RateSource != endpoint.SourceServer || d.GenTokens < 2 {
			t.Errorf("%s: decode ×%d: rate %v total %v tpot %v from %q, %d tokens", name, d.Concurrency, d.Rate, d.TotalRate, d.TPOT, d.RateSource, d.GenTokens)
		}
	}
	if s.ServerParallel > NumParallel {
		t.Errorf("%s: saw %d requests at once, the server allows %d", name, s.ServerParallel, NumParallel)
	}
	if rows := s.Measurements("cpu", "", ""); len(rows) < 2 {
		t.Errorf("%s: %d measurement rows", name, len(rows))
	}
}

func logSamples(t *testing.T, spec gguf.LlamaSpec, s endpoint.Samples, took time.Duration) {
	t.Helper()
	t.Logf("%s (%.1fM params, %s), run %.1fs:\n%s", spec.Name, float64(Params(spec))/1e6, spec.Type, took.Seconds(), s.Table())
}
