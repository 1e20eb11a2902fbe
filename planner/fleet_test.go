package planner_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

func TestParseNodeLink(t *testing.T) {
	for _, tc := range []struct {
		in      string
		kind    string
		gbps    float64
		latency time.Duration
		bad     bool
	}{
		{in: "ib400", kind: "ib", gbps: 400, latency: 10 * time.Microsecond},
		{in: "RoCE200", kind: "roce", gbps: 200, latency: 10 * time.Microsecond},
		{in: "eth25", kind: "eth", gbps: 25, latency: 50 * time.Microsecond},
		{in: "eth", bad: true},
		{in: "ib0", bad: true},
		{in: "wifi6", bad: true},
		{in: "ibNaN", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			l, err := planner.ParseNodeLink(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("ParseNodeLink(%q) = %v, want an error", tc.in, l)
				}
				return
			}
			if err != nil || l.Kind != tc.kind || l.Gbps != tc.gbps || l.Latency != tc.latency {
				t.Fatalf("ParseNodeLink(%q) = %+v, %v; want %s %g Gb/s %s", tc.in, l, err, tc.kind, tc.gbps, tc.latency)
			}
		})
	}
}

// Datacenter GPUs (an NVLink or xGMI domain) get 400 Gb/s InfiniBand by
// default, everything else 10 Gb/s Ethernet; both are marked assumed.
func TestDefaultNodeLink(t *testing.T) {
	c := catalog(t)
	for _, tc := range []struct {
		hw   string
		kind string
		gbps float64
	}{
		{"nvidia-h100-sxm5-80gb", "ib", 400},
		{"nvidia-rtx-4090", "eth", 10},
		{"amd-ryzen-ai-max-395", "eth", 10},
	} {
		h, err := c.FindHardware(tc.hw)
		if err != nil {
			t.Fatal(err)
		}
		l := planner.DefaultNodeLink(h)
		if l.Kind != tc.kind || l.Gbps != tc.gbps || !l.Assumed {
			t.Errorf("%s: default link %+v, want assumed %s%g", tc.hw, l, tc.kind, tc.gbps)
		}
	}
}

// ReplicasFor is the fewest replicas that keep each under the ceiling:
// replicas × capacity × ceiling ≥ rate, and one fewer would not be.
func TestReplicasFor(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rate, capacity float64
		devs, want     int
	}{
		{"under one", 10, 43.1, 1, 1},
		{"exactly at the ceiling", 80, 100, 2, 1},
		{"just over", 80.5, 100, 2, 2},
		{"rate 500 on 43.1", 500, 43.1, 1, 15},
		{"rate 500 on 16-GPU replicas", 500, 7.3, 16, 86},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp, ok := planner.ReplicasFor(tc.rate, tc.capacity, planner.MaxPlannedUtilization, tc.devs)
			if !ok || rp.Replicas != tc.want {
				t.Fatalf("ReplicasFor(%g, %g) = %+v, %v; want %d replicas", tc.rate, tc.capacity, rp, ok, tc.want)
			}
			checkReplicas(t, rp, tc.rate)
		})
	}
	if _, ok := planner.ReplicasFor(10, 0, 0.8, 1); ok {
		t.Error("a zero capacity gave a replica count")
	}
}

func checkReplicas(t *testing.T, rp planner.ReplicaPlan, rate float64) {
	t.Helper()
	const tol = 1e-9
	n, c, u := float64(rp.Replicas), rp.CapacityReqPerS, rp.Ceiling
	if n*c*u < rate*(1-tol) {
		t.Errorf("%d replicas × %.4g req/s × %.2f = %.4g < rate %.4g", rp.Replicas, c, u, n*c*u, rate)
	}
	if rp.Replicas > 1 && (n-1)*c*u >= rate*(1+tol) {
		t.Errorf("%d replicas would do: %.4g ≥ %.4g", rp.Replicas-1, (n-1)*c*u, rate)
	}
	if rp.Utilization > u+tol || math.Abs(rp.Utilization-rate/(n*c)) > tol {
		t.Errorf("utilization %.4g, want rate/(replicas × capacity) = %.4g ≤ %.2f", rp.Utilization, rate/(n*c), u)
	}
	if rp.Devices != rp.Replicas*rp.DevicesPerReplica {
		t.Errorf("devices %d ≠ %d × %d", rp.Devices, rp.Replicas, rp.DevicesPerReplica)
	}
}

// A rate no single server takes (500 req/s of Llama-3.1-8B on one H100):
// the best configuration carries a fleet consistent with its own capacity,
// whose replicas meet the SLO at their share of the rate.
func TestPlanFleetForRate(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	h, _ := c.FindHardware("nvidia-h100-sxm5-80gb")
	const rate = 500
	slo := planner.SLO{TTFT: 2000, TPOT: 100}
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, SLO: slo,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Rate: rate}})
	best, ok := res.Best()
	if !ok || best.Fleet == nil {
		t.Fatalf("no fleet for %d req/s: %+v", rate, best)
	}
	f := best.Fleet
	if f.CapacityReqPerS != best.CapacityReqPerS || f.Ceiling != planner.MaxPlannedUtilization || f.DevicesPerReplica != best.ReplicaDevices() {
		t.Errorf("fleet %+v does not replicate the best (capacity %.4g, %d devices)", f.ReplicaPlan, best.CapacityReqPerS, best.ReplicaDevices())
	}
	checkReplicas(t, f.ReplicaPlan, rate)
	if f.Replicas < 2 || !f.MeetsSLO {
		t.Errorf("fleet %+v: want several replicas, each within the SLO", f.ReplicaPlan)
	}
	if got := f.Pred.ReqPerS * float64(f.Replicas); math.Abs(got-rate)/rate > 0.01 {
		t.Errorf("replicas complete %.4g req/s together, want the rate %d ±1%%", got, rate)
	}
}

// bestOn plans model on nodes × devs of hardware with the given formats and
// engines and returns the best candidate.
func bestOn(t *testing.T, model, hw string, nodes, devs int, link planner.NodeLink, quants []string, engines []planner.EngineID, w planner.Workload) (planner.Candidate, bool) {
	t.Helper()
	c := catalog(t)
	m, err := c.FindModel(model)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.FindHardware(hw)
	if err != nil {
		t.Fatal(err)
	}
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: devs, Nodes: nodes, NodeLink: link, Model: m,
		Quants: quants, Engines: engines, Workload: w})
	return res.Best()
}

// The two models the issue names, on 2 nodes × 8 H100: each fits as TP8 ×
// PP2 at FP8 where one node cannot hold it (DeepSeek-R1) or only just
// (Llama-3.1-405B), and the predicted latencies are within sanity bounds:
// TTFT of a 1024-token prompt between 20 ms and 5 s, TPOT between 3 ms
// (faster than 16 H100s could stream the active weights) and 300 ms.
func TestMultiNodeBigModels(t *testing.T) {
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 16}
	vllm := []planner.EngineID{planner.VLLM}
	for _, tc := range []struct {
		model        string
		fitsOneNode  bool
		minTPOTms    float64
		maxTPOTms    float64
		maxTTFTms    float64
		weightsPerGP float64 // GiB per device on 2 nodes, ±10%
	}{
		// 671B parameters at ~1 byte: ~42 GiB of 80 per device on 16.
		{"deepseek-ai/DeepSeek-R1", false, 3, 300, 5000, 40},
		// 405B at 1 byte: ~24 GiB per device on 16.
		{"meta-llama/Llama-3.1-405B", true, 3, 300, 5000, 24},
	} {
		t.Run(tc.model, func(t *testing.T) {
			one, ok1 := bestOn(t, tc.model, "nvidia-h100-sxm5-80gb", 1, 8, planner.NodeLink{}, []string{"fp8"}, vllm, w)
			if ok1 != tc.fitsOneNode {
				t.Errorf("one node of 8: fits %v (%s), want %v", ok1, one.Label(), tc.fitsOneNode)
			}
			two, ok := bestOn(t, tc.model, "nvidia-h100-sxm5-80gb", 2, 8, planner.NodeLink{}, []string{"fp8"}, vllm, w)
			if !ok {
				t.Fatal("nothing fits 2 × 8 H100")
			}
			if two.Nodes != 2 || two.Devices != 8 || two.ReplicaDevices() != 16 {
				t.Errorf("best %s: want TP8 × PP2 (16 devices)", two.Label())
			}
			gib := float64(two.Fit.Breakdown.Weights) / float64(planner.GiB)
			if math.Abs(gib-tc.weightsPerGP)/tc.weightsPerGP > 0.1 {
				t.Errorf("weights per device %.1f GiB, want %.0f ±10%%", gib, tc.weightsPerGP)
			}
			ttft, tpot := float64(two.Pred.TTFT), float64(two.Pred.TPOT)
			if ttft < 20 || ttft > tc.maxTTFTms || tpot < tc.minTPOTms || tpot > tc.maxTPOTms {
				t.Errorf("%s: TTFT %s, TPOT %s outside [20 ms, %g ms] / [%g ms, %g ms]", two.Label(), two.Pred.TTFT, two.Pred.TPOT, tc.maxTTFTms, tc.minTPOTms, tc.maxTPOTms)
			}
			t.Logf("%s on 2×8 H100: %s, %d users, TTFT %s, TPOT %s", tc.model, two.Label(), two.Concurrency, two.Pred.TTFT, two.Pred.TPOT)
		})
	}
}

// The node link is in the step model: the same configuration over 10 Gb/s
// Ethernet is slower per token than over 400 Gb/s InfiniBand, and the
// pipeline over InfiniBand costs under 5% of one node's TPOT for a model
// that fits both ways (Llama-3.1-405B FP8, TP8).
func TestNodeLinkInStep(t *testing.T) {
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}
	vllm := []planner.EngineID{planner.VLLM}
	ib, _ := planner.ParseNodeLink("ib400")
	eth, _ := planner.ParseNodeLink("eth10")
	const model = "meta-llama/Llama-3.1-405B"
	one, ok1 := bestOn(t, model, "nvidia-h100-sxm5-80gb", 1, 8, planner.NodeLink{}, []string{"fp8"}, vllm, w)
	overIB, ok2 := bestOn(t, model, "nvidia-h100-sxm5-80gb", 2, 8, ib, []string{"fp8"}, vllm, w)
	overEth, ok3 := bestOn(t, model, "nvidia-h100-sxm5-80gb", 2, 8, eth, []string{"fp8"}, vllm, w)
	if !ok1 || !ok2 || !ok3 {
		t.Fatal("a configuration does not fit")
	}
	if !(overEth.Pred.TPOT > overIB.Pred.TPOT) || !(overIB.Pred.TPOT >= one.Pred.TPOT) {
		t.Errorf("TPOT one node %s, PP2 over ib400 %s, over eth10 %s: want increasing", one.Pred.TPOT, overIB.Pred.TPOT, overEth.Pred.TPOT)
	}
	if r := float64(overIB.Pred.TPOT) / float64(one.Pred.TPOT); r > 1.05 {
		t.Errorf("PP2 over ib400 costs %.0f%% of TPOT, want under 5%%", 100*(r-1))
	}
	// Over eth10 a 1-token step sends 16384 × 2 bytes: 50 µs + 29 µs.
	if d := float64(overEth.Pred.TPOT - one.Pred.TPOT); d < 0.05 || d > 0.2 {
		t.Errorf("eth10 adds %.3f ms per step, want 0.05–0.2 ms", d)
	}
}

// Engines that stay on one node are not planned across nodes; llama.cpp
// spans them with RPC workers over all 16 devices.
func TestMultiNodeEngines(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-3.1-405B")
	h, _ := c.FindHardware("nvidia-h100-sxm5-80gb")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 8, Nodes: 2, Model: m,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}})
	seen := map[planner.EngineID]bool{}
	for _, cand := range res.Ranked {
		seen[cand.Engine] = true
		if planner.MultiNode(cand.Scenario.Engine) == planner.MultiNodeNone {
			t.Errorf("%s planned over 2 nodes", cand.Label())
		}
		if cand.Engine == planner.LlamaCpp && cand.ReplicaDevices() != 16 {
			t.Errorf("%s: llama.cpp RPC should split over 16 devices", cand.Label())
		}
	}
	for _, e := range []planner.EngineID{planner.VLLM, planner.SGLang, planner.LlamaCpp} {
		if !seen[e] {
			t.Errorf("%s: no multi-node plan", e)
		}
	}
}

// The launch command of a 2-node plan carries the pipeline flags (for
// llama.cpp the --rpc list of the other node's 8 devices), and
// every option is in the flag table of each release it is for: vLLM
// --pipeline-parallel-size; SGLang --nnodes, --node-rank, --dist-init-addr
// and (0.5.3 and later) --pp-size, with a note on releases without it.
func TestMultiNodeLaunchFlags(t *testing.T) {
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 8}
	for _, e := range []planner.EngineID{planner.VLLM, planner.SGLang, planner.LlamaCpp} {
		model, quant := "deepseek-ai/DeepSeek-R1", "fp8"
		if e == planner.LlamaCpp {
			model, quant = "meta-llama/Llama-3.1-405B", "q4_k_m"
		}
		cand, ok := bestOn(t, model, "nvidia-h100-sxm5-80gb", 2, 8, planner.NodeLink{}, []string{quant}, []planner.EngineID{e}, w)
		if !ok {
			t.Fatalf("%s: nothing fits", e)
		}
		checked := 0
		for _, rel := range planner.Releases(e) {
			o := planner.LaunchOptions{Release: rel.Release.String()}
			if rel.Release.IsNewest() {
				o.Release = ""
			}
			l, err := planner.LaunchFor(cand, o)
			if err != nil {
				continue // the release cannot run the plan (FP8 MoE kernels): refused, not flagged
			}
			checked++
			checkArgs(t, rel, l.Argv)
			argv := strings.Join(l.Argv, " ")
			switch {
			case e == planner.LlamaCpp && strings.Count(argv, "<node2>:") != 8:
				t.Errorf("%s: want 8 RPC servers on node 2: %s", rel.Name, argv)
			case e == planner.VLLM && !strings.Contains(argv, "--pipeline-parallel-size 2"):
				t.Errorf("%s: %s", rel.Name, argv)
			case e == planner.SGLang && !strings.Contains(argv, "--nnodes 2 --node-rank 0 --dist-init-addr"):
				t.Errorf("%s: %s", rel.Name, argv)
			case e == planner.SGLang && rel.Has("--pp-size") != strings.Contains(argv, "--pp-size 2"):
				t.Errorf("%s: --pp-size in table %v, in command: %s", rel.Name, rel.Has("--pp-size"), argv)
			case e == planner.SGLang && !rel.Has("--pp-size") && !strings.Contains(strings.Join(l.Notes, " "), "no --pp-size"):
				t.Errorf("%s: no note on the missing --pp-size: %v", rel.Name, l.Notes)
			}
		}
		if checked < 2 {
			t.Errorf("%s: only %d releases launch the plan", e, checked)
		}
	}
}

// The cluster people build from unified-memory machines: Llama-3.1-405B
// at 4 bits does not fit one Strix Halo (128 GB) but splits its layers
// over 4 of them with llama.cpp RPC, each node's RAM and OS counted once.
// A token reads all ~230 GB of weights, the nodes in turn at 256 GB/s
// each, so TPOT is between 0.5 and 5 s.
func TestRPCOverUnifiedMemoryNodes(t *testing.T) {
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}
	ll := []planner.EngineID{planner.LlamaCpp}
	if one, ok := bestOn(t, "meta-llama/Llama-3.1-405B", "amd-ryzen-ai-max-395", 1, 1, planner.NodeLink{}, []string{"q4_k_m"}, ll, w); ok && one.Fit.Verdict == planner.Fits {
		t.Errorf("405B Q4_K_M fits one Strix Halo: %s", one.Label())
	}
	four, ok := bestOn(t, "meta-llama/Llama-3.1-405B", "amd-ryzen-ai-max-395", 4, 1, planner.NodeLink{}, []string{"q4_k_m"}, ll, w)
	if !ok {
		t.Fatal("405B Q4_K_M does not fit 4 Strix Halo nodes")
	}
	if four.ReplicaDevices() != 4 || four.Nodes != 4 {
		t.Errorf("%s: want 4 devices over 4 nodes", four.Label())
	}
	if tpot := float64(four.Pred.TPOT); tpot < 500 || tpot > 5000 {
		t.Errorf("TPOT %s outside 0.5–5 s", four.Pred.TPOT)
	}
}
