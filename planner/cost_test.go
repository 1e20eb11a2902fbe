package planner_test

import (
	"math"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// CostOf bills every device around the clock and divides by the output
// the plan delivers: the fleet's rate × gen for a rate plan, one
// replica's total throughput otherwise.
func TestCostOf(t *testing.T) {
	const tol = 1e-9
	for _, tc := range []struct {
		name       string
		cand       planner.Candidate
		w          planner.Workload
		usd        float64
		devices    int
		perMillion float64
		util       float64
	}{
		{
			// 1000 tok/s on 8 devices at $2: $384/day over 86.4M tokens.
			name: "closed loop TP8", cand: planner.Candidate{Devices: 8, Pred: planner.Prediction{TotalTPS: 1000}},
			w: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 64}, usd: 2, devices: 8, perMillion: 384 / 86.4, util: 1,
		},
		{
			// 500 req/s × 256 tokens on 31 devices at $2.99.
			name: "rate fleet", cand: planner.Candidate{Devices: 1, Fleet: &planner.Fleet{ReplicaPlan: planner.ReplicaPlan{Replicas: 31, DevicesPerReplica: 1, Devices: 31, Utilization: 0.798}}},
			w: planner.Workload{Prompt: 1024, Gen: 256, Rate: 500}, usd: 2.99, devices: 31, perMillion: 31 * 24 * 2.99 / (500 * 256 * 86400) * 1e6, util: 0.798,
		},
		{
			// TP8 × PP2: 16 devices per replica.
			name: "two nodes", cand: planner.Candidate{Devices: 8, Nodes: 2, Pred: planner.Prediction{TotalTPS: 2000}},
			w: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 64}, usd: 3, devices: 16, perMillion: 16 * 24 * 3 / (2000 * 86400.0) * 1e6, util: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := planner.CostOf(tc.cand, tc.w, tc.usd, "given")
			if !ok {
				t.Fatal("no cost")
			}
			if c.Devices != tc.devices || c.DeviceHoursPerDay != float64(tc.devices)*24 {
				t.Errorf("devices %d (%g h/day), want %d", c.Devices, c.DeviceHoursPerDay, tc.devices)
			}
			if math.Abs(c.USDPerMillionOutput-tc.perMillion)/tc.perMillion > tol {
				t.Errorf("$%.6g per million, want $%.6g", c.USDPerMillionOutput, tc.perMillion)
			}
			if math.Abs(c.Utilization-tc.util) > tol || math.Abs(c.BusyDeviceHoursPerDay-c.DeviceHoursPerDay*tc.util) > tol {
				t.Errorf("utilization %g, busy %g h", c.Utilization, c.BusyDeviceHoursPerDay)
			}
		})
	}
	if _, ok := planner.CostOf(planner.Candidate{Pred: planner.Prediction{TotalTPS: 1}}, planner.Workload{}, 0, ""); ok {
		t.Error("a zero price gave a cost")
	}
}

// The catalog's cloud prices carry a date and a source, and are marked
// unverified where they were not re-read.
func TestCatalogCloudPrices(t *testing.T) {
	c := catalog(t)
	n := 0
	for _, h := range c.Hardware {
		p := h.CloudPrice
		if p == nil {
			continue
		}
		n++
		usd, src, ok := planner.CatalogPrice(h)
		if !ok || usd <= 0 || usd > 100 || p.Date == "" || p.Source == "" || src == "" {
			t.Errorf("%s: cloud price %+v", h.ID, p)
		}
	}
	if n < 2 {
		t.Errorf("%d cloud prices in the catalog, want at least 2", n)
	}
}
