package app

import (
	"context"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// compare's single-user column is one request on an idle server whatever
// the arrival pattern asked for: under a rate, a burst or an offline batch
// it had shown the whole workload's output throughput (Qwen3-8B on an
// H100 at burst=500: "1-USER TOK/S 4800").
func TestCompareSingleUserIsOneRequestForEveryPattern(t *testing.T) {
	a := testApp(t, "")
	ctx := context.Background()
	machines := []MachineSpec{{Hardware: "nvidia-h100-sxm5-80gb"}, {Hardware: "nvidia-a100-sxm4-80gb"}}
	compare := func(wl string) CompareAnswer {
		t.Helper()
		w, err := planner.ParseWorkload(wl)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := a.Compare(ctx, CompareRequest{Model: "Qwen/Qwen3-8B", Machines: machines, Workload: w})
		if err != nil {
			t.Fatalf("%s: %v", wl, err)
		}
		if len(ans.Rows) != len(machines) {
			t.Fatalf("%s: %d rows for %d machines", wl, len(ans.Rows), len(machines))
		}
		return ans
	}
	one := compare("prompt=1k,gen=200,users=1")
	for _, wl := range []string{"prompt=1k,gen=200,users=8", "prompt=1k,gen=200,rate=2", "prompt=1k,gen=200,burst=500", "prompt=1k,gen=200,offline"} {
		ans := compare(wl)
		for i, r := range ans.Rows {
			if !r.Fits {
				t.Fatalf("%s on %s: does not fit (%s)", wl, r.ID, r.Why)
			}
			want := one.Rows[i].SingleUserTPS
			if !(want > 0) || r.SingleUserTPS != want {
				t.Errorf("%s on %s: single-user %.1f tok/s, want the users=1 figure %.1f", wl, r.ID, r.SingleUserTPS, want)
			}
			if wl != "prompt=1k,gen=200,rate=2" && !(r.TotalTPS > 2*r.SingleUserTPS) {
				t.Errorf("%s on %s: total %.0f tok/s is not above one user's %.1f", wl, r.ID, r.TotalTPS, r.SingleUserTPS)
			}
			// Each row says what its count counts.
			if w, _ := planner.ParseWorkload(wl); r.Workload != w.Pattern() {
				t.Errorf("%s on %s: row's workload %+v, want %+v", wl, r.ID, r.Workload, w.Pattern())
			}
		}
	}
}
