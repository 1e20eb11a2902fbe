package planner_test

import (
	"sort"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// A row's prediction comes from its columns alone: blanking every row's
// notes and source changes no prediction (issue 17: meaning is typed, not
// parsed from prose).
func TestPredictionsIgnoreNotesAndSource(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, m := range rows {
		want, werr := planner.PredictMeasurement(c, m, c.Perf)
		blank := m
		blank.Notes, blank.Source = "", ""
		got, gerr := planner.PredictMeasurement(c, blank, c.Perf)
		if (werr == nil) != (gerr == nil) || got != want {
			t.Errorf("row %d (%s %s %s): %v (%v) with notes, %v (%v) without", i, m.Hardware, m.Model, m.Metric, want, werr, got, gerr)
		}
		if werr == nil {
			compared++
		}
	}
	if compared < len(rows)*9/10 {
		t.Errorf("only %d of %d rows predicted", compared, len(rows))
	}
}

// The rows issue 17 names, predicted in-sample from their scenario
// columns alone: TensorRT-LLM's offline throughput table, the bursts of
// 1000 prompts and SGLang's request-rate runs. The guard is the median
// absolute error of each group over all its metrics: the 30%, or
// tighter where the model reaches it with margin (docs/predictions.md has
// the figures: 22.9, 29.5 and 21.6% with the fit of 2026-11-28).
func TestNamedScenarioGroups(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	groups := []struct {
		name  string
		in    func(planner.Measurement) bool
		guard float64
	}{
		{"trtllm offline", func(m planner.Measurement) bool {
			return m.Engine == "trtllm" && m.Scenario == planner.WorkloadOffline
		}, 30},
		{"1000-prompt bursts", func(m planner.Measurement) bool {
			return m.Scenario == planner.WorkloadBurst && m.Concurrency >= 900
		}, 30},
		{"sglang request rate", func(m planner.Measurement) bool {
			return m.Engine == "sglang" && m.Scenario == planner.WorkloadRate
		}, 30},
	}
	for _, g := range groups {
		var sel []planner.Measurement
		for _, m := range rows {
			if g.in(m) {
				sel = append(sel, m)
			}
		}
		rep := planner.Validate(c, sel, c.Perf)
		var all []float64
		for _, r := range rep.Results {
			if r.Err == "" {
				all = append(all, r.APE)
			}
		}
		if len(all) < len(sel)*9/10 || len(sel) == 0 {
			t.Errorf("%s: %d of %d rows predicted", g.name, len(all), len(sel))
			continue
		}
		md := median(all)
		t.Logf("%s: %d rows, median absolute error %.1f%%", g.name, len(sel), md)
		if md > g.guard {
			t.Errorf("%s: median absolute error %.1f%% above %g%%", g.name, md, g.guard)
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Which efficiency a published serving row teaches the fit: a burst of 500
// prompts of 4,000 tokens spends its time in prefill and teaches η_p; the
// same release's 4-client run of short prompts is decode and teaches η_d.
// Read as decode, the bursts had pulled vLLM's η_d on an H100 to 0.39 and
// its single-client TPOT for Qwen3-8B to 12.6 ms against 7.3 measured.
func TestServingRowsTeachTheEfficiencyTheyMeasure(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	find := func(pred func(planner.Measurement) bool) planner.Measurement {
		t.Helper()
		for _, m := range rows {
			if pred(m) {
				return m
			}
		}
		t.Fatal("row not in the published data")
		return planner.Measurement{}
	}
	burst := find(func(m planner.Measurement) bool {
		return m.Engine == "vllm" && m.Hardware == "nvidia-h100-sxm5-80gb" && m.Model == "openai/gpt-oss-20b" &&
			m.Scenario == planner.WorkloadBurst && m.PromptTokens == 4000 && m.Metric == planner.MetricTotalOut
	})
	closed := find(func(m planner.Measurement) bool {
		return m.Engine == "vllm" && m.Hardware == "nvidia-h100-sxm5-80gb" && m.Model == "Qwen/Qwen3-8B" &&
			m.Scenario == planner.WorkloadClosed && m.Concurrency == 4 && m.Metric == planner.MetricTPOT
	})
	single := find(func(m planner.Measurement) bool {
		return m.Engine == "vllm" && m.Scenario == planner.WorkloadSingle && m.Metric == planner.MetricTG
	})
	for _, tc := range []struct {
		name string
		m    planner.Measurement
		pre  bool
	}{{"500-prompt burst of 4000 tokens", burst, true}, {"4 clients, short prompts", closed, false}, {"single stream", single, false}} {
		if got := planner.PrefillBound(c, tc.m, c.Perf); got != tc.pre {
			t.Errorf("%s: prefill-bound = %v, want %v", tc.name, got, tc.pre)
		}
		_, dec := planner.RowEfficiency(c, tc.m, c.Perf, true)
		effP, pre := planner.RowEfficiency(c, tc.m, c.Perf, false)
		if dec == pre || dec == tc.pre {
			t.Errorf("%s: informs η_d %v, η_p %v; want only η_%s", tc.name, dec, pre, map[bool]string{true: "p", false: "d"}[tc.pre])
		}
		if pre && (effP <= 0.003 || effP >= 2) {
			t.Errorf("%s: η_p = %.3f at the search bounds", tc.name, effP)
		}
	}
}
