package planner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// TestLeaveOneSourceOutFolds runs the source folds on a few small sources
// (seed documents and two community threads): every row is held out once,
// and the folds run in parallel yet give the same results twice, with a
// finite error within each source for every metric they report.
func TestLeaveOneSourceOutFolds(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	var sub []planner.Measurement
	for _, m := range rows {
		k := planner.SourceKey(m)
		if len(keep) < 5 && !keep[k] && (m.Engine == "llama.cpp" || m.Engine == "vllm") {
			keep[k] = true
		}
		if keep[k] {
			sub = append(sub, m)
		}
	}
	if len(keep) < 3 || len(sub) < 20 {
		t.Fatalf("only %d sources, %d rows to fold", len(keep), len(sub))
	}
	opt := planner.FitOptions{Ridge: planner.DefaultRidge, InteractionRidge: planner.DefaultInteractionRidge}
	a := planner.LeaveOneSourceOut(c, sub, opt, *c.Perf)
	b := planner.LeaveOneSourceOut(c, sub, opt, *c.Perf)
	if a.Folds != len(keep) || len(a.Results) != len(sub) {
		t.Fatalf("%d folds, %d results; want %d folds, %d results", a.Folds, len(a.Results), len(keep), len(sub))
	}
	for i := range a.Results {
		if a.Results[i].Row != b.Results[i].Row || a.Results[i].Predicted != b.Results[i].Predicted {
			t.Fatalf("result %d differs between two runs: %+v vs %+v", i, a.Results[i], b.Results[i])
		}
	}
	if len(a.WithinGroup) == 0 {
		t.Fatal("no within-source figures")
	}
	for m, within := range a.WithinGroup {
		if _, ok := a.Metrics[m]; !ok || !(within >= 0) || math.IsInf(within, 0) {
			t.Errorf("%s: within-source MdAPE %v for a metric the folds report as %+v", m, within, a.Metrics[m])
		}
	}
	// Calibrated on one run: the same rows twice (calibrated and not),
	// fewer than all (the first runs are not scored), at least one setup
	// calibrated, and every calibrated metric also reported plain.
	cal := a.Calibrated
	if cal == nil || cal.Setups == 0 || len(cal.Results) == 0 || len(cal.Results) >= len(sub) {
		t.Fatalf("calibrated on one run: %+v; want some setups and fewer than %d rows", cal, len(sub))
	}
	for m, r := range cal.Metrics {
		pl, ok := cal.Plain[m]
		if !ok || pl.Rows != r.Rows || !(r.MdAPE >= 0) || math.IsInf(r.MdAPE, 0) {
			t.Errorf("%s: calibrated %+v, plain %+v", m, r, pl)
		}
	}
	if h := planner.LeaveOneHardwareOut(c, sub[:20], opt, *c.Perf); h.Calibrated != nil {
		t.Error("held out by hardware, a calibrated figure: it is for held-out sources")
	}
}

// With FoldRequestOverheads a fold searches the front end's cost per
// request on its own rows instead of holding the full fit's: held at an
// absurd 500 ms, every served vLLM V1 request of GPUStack's held-out fold
// waits that long for its first token, while a fold trained on
// France-Travail's vLLM V0 rows alone, which no front-end cost moves,
// searches none.
func TestFoldRequestOverheads(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	var sub []planner.Measurement
	for _, m := range rows {
		k := planner.SourceKey(m)
		gpustack := k == "gpustack/gpustack" && m.Engine == "vllm" && m.Scenario == planner.WorkloadClosed
		if gpustack || strings.HasPrefix(k, "France-Travail/") {
			sub = append(sub, m)
		}
	}
	held := *c.Perf
	held.RequestOverheadMs = map[string]float64{"vllm": 500}
	opt := planner.FitOptions{Ridge: planner.DefaultRidge, InteractionRidge: planner.DefaultInteractionRidge}
	ttfts := func(cv planner.CrossValidation) []float64 {
		var out []float64
		for _, r := range cv.Results {
			if planner.SourceKey(r.Row) == "gpustack/gpustack" && r.Row.Metric == planner.MetricTTFT && r.Err == "" {
				out = append(out, r.Predicted)
			}
		}
		return out
	}
	heldTTFT := ttfts(planner.LeaveOneSourceOut(c, sub, opt, held))
	opt.FoldRequestOverheads = true
	foldTTFT := ttfts(planner.LeaveOneSourceOut(c, sub, opt, held))
	if len(heldTTFT) == 0 || len(heldTTFT) != len(foldTTFT) {
		t.Fatalf("GPUStack TTFT rows predicted: %d held, %d searched", len(heldTTFT), len(foldTTFT))
	}
	for i := range heldTTFT {
		if heldTTFT[i] < 500 || foldTTFT[i] >= 500 {
			t.Errorf("row %d: TTFT %.0f ms with the held 500 ms front end, %.0f ms with the fold's own search", i, heldTTFT[i], foldTTFT[i])
		}
	}
}
