package endpoint

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// quick are options for runs against the fake servers: small, fast steps.
func quick(url string) Options {
	return Options{
		URL: url, Budget: 20 * time.Second, GenTokens: 32, Repeats: 2,
		PromptLengths: []planner.Tokens{64, 256}, MaxConcurrency: 4,
		StallTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second,
	}
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func TestRunEngines(t *testing.T) {
	tests := []struct {
		engine     string
		wantEngine planner.EngineID
		wantAPI    API
		wantSource string // rate source of prefill and decode
	}{
		{"ollama", planner.Ollama, APIOllama, SourceServer},
		{"llama.cpp", planner.LlamaCpp, APILlamaCpp, SourceServer},
		{"tgi", planner.TGI, APITGI, SourceClient},
		{"vllm", planner.VLLM, APICompletions, SourceClient},
		{"chat-only", "", APIChat, SourceClient},
	}
	for _, tc := range tests {
		t.Run(tc.engine, func(t *testing.T) {
			f := newFake(t, tc.engine)
			url := f.start()
			var calls, lastDone, lastTotal int
			s, err := Run(context.Background(), quick(url), func(done, total int, _ string) {
				calls++
				if done < lastDone || done > total {
					t.Errorf("progress went %d/%d after %d/%d", done, total, lastDone, lastTotal)
				}
				lastDone, lastTotal = done, total
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.Engine != tc.wantEngine || s.API != tc.wantAPI {
				t.Errorf("engine %q api %q, want %q %q", s.Engine, s.API, tc.wantEngine, tc.wantAPI)
			}
			if lastDone != lastTotal || calls == 0 {
				t.Errorf("progress ended at %d/%d after %d calls", lastDone, lastTotal, calls)
			}
			// 2 prompt lengths; concurrency 1, 2, 4.
			if len(s.Prefill) != 2 || len(s.Decode) != 3 {
				t.Fatalf("%d prefill and %d decode samples, want 2 and 3; notes %q", len(s.Prefill), len(s.Decode), s.Notes)
			}
			checkPromptCounts(t, f, s)
			for _, p := range s.Prefill {
				if p.RateSource != tc.wantSource || p.Rate <= 0 {
					t.Errorf("prefill %d: rate %v from %q, want > 0 from %q", p.Target, p.Rate, p.RateSource, tc.wantSource)
				}
				// Server timings are exactly 20 µs per token: 50000 tok/s.
				if tc.wantSource == SourceServer && !within(float64(p.Rate), 50000, 0.01) {
					t.Errorf("prefill %d: server rate %v, want 50000 ±1%%", p.Target, p.Rate)
				}
			}
			for _, d := range s.Decode {
				if d.RateSource != tc.wantSource || d.Rate <= 0 || d.TotalRate <= 0 || d.GenTokens != 32 {
					t.Errorf("decode ×%d: rate %v total %v from %q, %d tokens", d.Concurrency, d.Rate, d.TotalRate, d.RateSource, d.GenTokens)
				}
				// 1 ms per token: the server's timings say 1000 tok/s exactly
				// (±1%). The client sees the sleeps plus scheduling delays,
				// which on a loaded test machine can be several times the
				// sleep, so its rate must only be at most 1000 (+5%) and
				// more than 100.
				if tc.wantSource == SourceServer && !within(float64(d.Rate), 1000, 0.01) ||
					tc.wantSource == SourceClient && (d.Rate > 1050 || d.Rate < 100) {
					t.Errorf("decode ×%d: rate %v, want 1000 (server ±1%%, client 100..1050)", d.Concurrency, d.Rate)
				}
				if d.Overlap <= d.Concurrency/2 {
					t.Errorf("decode ×%d: overlap %d, want more than half at once", d.Concurrency, d.Overlap)
				}
			}
		})
	}
}

// checkPromptCounts checks that every prompt length in the samples is one
// the server reported (not the requested one), and that prompt sizing hit
// the target within 15%.
func checkPromptCounts(t *testing.T, f *fakeServer, s Samples) {
	t.Helper()
	rep := f.reported()
	for _, p := range s.Prefill {
		for _, r := range p.Requests {
			if !rep[int(r.PromptTokens)] {
				t.Errorf("prefill %d: prompt tokens %d were not reported by the server (%v)", p.Target, r.PromptTokens, rep)
			}
		}
		if !within(float64(p.PromptTokens), float64(p.Target), 0.15) {
			t.Errorf("prefill target %d: server counted %d", p.Target, p.PromptTokens)
		}
	}
}

func TestBaseURLWithV1(t *testing.T) {
	f := newFake(t, "vllm")
	url := f.start()
	s, err := Run(context.Background(), quick(url+"/v1/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Engine != planner.VLLM {
		t.Errorf("engine %q, want vllm", s.Engine)
	}
}

func TestRunFindsServerParallelLimit(t *testing.T) {
	f := newFake(t, "ollama")
	f.parallel = 2
	f.tokenDelay = 2 * time.Millisecond
	opt := quick(f.start())
	opt.MaxConcurrency = 16
	s, err := Run(context.Background(), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ServerParallel != 2 {
		t.Errorf("server parallel %d, want 2", s.ServerParallel)
	}
	last := s.Decode[len(s.Decode)-1].Concurrency
	if last != 4 {
		t.Errorf("sweep went to concurrency %d, want it to stop at 4 (the first showing queueing)", last)
	}
	if !hasNote(s, "concurrency 8: dropped") || !hasNote(s, "concurrency 16: dropped") {
		t.Errorf("notes %q do not say 8 and 16 were dropped", s.Notes)
	}
}

func TestRunCapsPromptToContext(t *testing.T) {
	f := newFake(t, "ollama")
	f.numCtx = 512
	opt := quick(f.start())
	opt.PromptLengths = []planner.Tokens{64, 1024}
	s, err := Run(context.Background(), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ContextLength != 512 || s.Quant != "q8_0" {
		t.Errorf("context %d quant %q, want 512 q8_0", s.ContextLength, s.Quant)
	}
	lastP := s.Prefill[len(s.Prefill)-1]
	if lastP.PromptTokens >= 512 || lastP.Target >= 512 {
		t.Errorf("largest prefill target %d counted %d, want below the context of 512", lastP.Target, lastP.PromptTokens)
	}
	if !hasNote(s, "capped") {
		t.Errorf("notes %q do not say the prompt was capped", s.Notes)
	}
}

func TestRunDropsStepsToKeepBudget(t *testing.T) {
	f := newFake(t, "llama.cpp")
	f.tokenDelay = 5 * time.Millisecond
	f.prefillPerToken = 2 * time.Millisecond
	opt := quick(f.start())
	// Warm-up, prefill 64 and decode ×1 need about 1 s, so they fit even on
	// a machine loaded three times over; prefill 1024 alone needs 4 s.
	opt.Budget = 4 * time.Second
	opt.PromptLengths = []planner.Tokens{64, 256, 1024}
	start := time.Now()
	s, err := Run(context.Background(), opt, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > opt.Budget+time.Second {
		t.Errorf("run took %v, budget %v", took, opt.Budget)
	}
	if len(s.Prefill) == 0 || len(s.Decode) == 0 {
		t.Fatalf("want at least one prefill and one decode sample, got %d and %d", len(s.Prefill), len(s.Decode))
	}
	if !hasNote(s, "dropped") && !hasNote(s, "repeats to stay within") && !hasNote(s, "budget ran out") {
		t.Errorf("a %v budget cannot hold every step, yet notes %q say nothing was dropped", opt.Budget, s.Notes)
	}
}

func TestRunBudgetTooShort(t *testing.T) {
	f := newFake(t, "ollama")
	f.tokenDelay = 50 * time.Millisecond
	opt := quick(f.start())
	opt.Budget = 500 * time.Millisecond
	_, err := Run(context.Background(), opt, nil)
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("err = %v, want one about the budget", err)
	}
}

func TestMeasurements(t *testing.T) {
	f := newFake(t, "ollama")
	s, err := Run(context.Background(), quick(f.start()), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := s.Measurements("rtx-4090", "", "")
	count := map[planner.Metric]int{}
	for _, m := range rows {
		count[m.Metric]++
		if m.Hardware != "rtx-4090" || m.Model != "tiny:latest" || m.Engine != "ollama" || m.Quant != "q8_0" || m.Source != "calibrate endpoint" {
			t.Errorf("row %+v: wrong identity", m)
		}
		if m.Value <= 0 || m.PromptTokens <= 0 || m.Concurrency < 1 || !strings.Contains(m.Notes, s.URL) {
			t.Errorf("row %+v: bad value, counts or notes", m)
		}
	}
	want := map[planner.Metric]int{
		planner.MetricPP: 2, planner.MetricTTFT: 2 + 3, planner.MetricTG: 3,
		planner.MetricTotalOut: 3, planner.MetricTPOT: 3, planner.MetricITL: 3,
	}
	for m, n := range want {
		if count[m] != n {
			t.Errorf("%d %s rows, want %d", count[m], m, n)
		}
	}
	for _, m := range rows {
		if m.Metric == planner.MetricPP && !within(m.Value, 50000, 0.01) {
			t.Errorf("pp_tps %v, want the server's 50000", m.Value)
		}
	}
	if rows := s.Measurements("cpu", "my-model", "llama.cpp"); rows[0].Model != "my-model" || rows[0].Engine != "llama.cpp" {
		t.Errorf("model and engine arguments not used: %+v", rows[0])
	}
}

func TestConcurrencyLevels(t *testing.T) {
	tests := []struct {
		limit int
		want  string
	}{
		{1, "[1]"}, {2, "[1 2]"}, {3, "[1 2 3]"}, {12, "[1 2 4 8 12]"}, {16, "[1 2 4 8 16]"}, {32, "[1 2 4 8 16 32]"},
	}
	for _, tc := range tests {
		if got := fmt.Sprint(concurrencyLevels(tc.limit)); got != tc.want {
			t.Errorf("levels(%d) = %s, want %s", tc.limit, got, tc.want)
		}
	}
}

func hasNote(s Samples, sub string) bool {
	for _, n := range s.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
