package planner_test

import (
	"math"
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
}
