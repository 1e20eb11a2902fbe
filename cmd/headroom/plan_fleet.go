package main

import (
	"fmt"
	"io"

	"github.com/headroom-planner/headroom/planner"
)

// shapeText names the machine a plan is for: "8 × NVIDIA H100 SXM5 80GB",
// or "2 nodes × 8 × NVIDIA H100 SXM5 80GB".
func shapeText(req planner.PlanRequest) string {
	s := fmt.Sprintf("%d × %s", max(req.Devices, 1), req.Hardware.Name)
	if req.Nodes > 1 {
		s = fmt.Sprintf("%d nodes × %s", req.Nodes, s)
	}
	return s
}

// printFleet prints the replicas the best configuration needs for a rate.
func printFleet(w io.Writer, c planner.Candidate) {
	f := c.Fleet
	if f == nil {
		return
	}
	slo := "within the SLO"
	if !f.MeetsSLO {
		slo = "missing the SLO"
	}
	fmt.Fprintf(w, "  Fleet: %d %s × %s = %d devices, each at %.0f%% of its %.3g req/s (ceiling %.0f%%): TTFT %s, TPOT %s per replica, %s\n",
		f.Replicas, plural(f.Replicas, "replica", "replicas"), planner.Plural(f.DevicesPerReplica, "device"), f.Devices, 100*f.Utilization, f.CapacityReqPerS, 100*f.Ceiling, f.Pred.TTFT, f.Pred.TPOT, slo)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
