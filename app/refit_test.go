package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// refit --hold-overheads keeps the profile's host overheads and fits only
// the efficiencies; the profile says which it did.
func TestRefitHoldsOverheads(t *testing.T) {
	a := testApp(t, "")
	ms, err := LoadMeasurements("")
	if err != nil {
		t.Fatal(err)
	}
	// A slice of the collection keeps the test quick: the llama.cpp and
	// vLLM rows (single, closed and burst scenarios among them).
	var sub Measurements
	sub.Name = "test rows"
	for _, m := range ms.Rows {
		if m.Engine == "llama.cpp" || m.Engine == "vllm" {
			sub.Rows = append(sub.Rows, m)
		}
	}
	if len(sub.Rows) < 100 {
		t.Fatalf("only %d llama.cpp and vLLM rows", len(sub.Rows))
	}
	held := *a.Catalog().Perf
	r := a.Refit(sub, RefitOptions{Ridge: planner.DefaultRidge, InteractionRidge: planner.DefaultInteractionRidge, HoldOverheads: true, Date: "2026-11-24"})
	for name, got := range map[string][2]map[string]float64{
		"layer_overhead_us":   {r.Perf.LayerOverheadUs, held.LayerOverheadUs},
		"seq_overhead_us":     {r.Perf.SeqOverheadUs, held.SeqOverheadUs},
		"request_overhead_ms": {r.Perf.RequestOverheadMs, held.RequestOverheadMs},
	} {
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: %v after the refit, %v held", name, got[0], got[1])
		}
	}
	if !strings.Contains(r.Perf.Fitted, "host overheads held from the previous profile") {
		t.Errorf("the profile does not say its overheads were held: %q", r.Perf.Fitted)
	}
	if r.Perf.Decode.Intercept == 0 || reflect.DeepEqual(r.Perf.Decode.Terms, held.Decode.Terms) {
		t.Errorf("the efficiencies were not refitted on the %d rows", len(sub.Rows))
	}
	if rep := r.InSample.Metrics[planner.MetricTG]; rep.Predicted == 0 || !(rep.MdAPE < 50) {
		t.Errorf("in-sample decode after the held refit: %+v", rep)
	}
}
