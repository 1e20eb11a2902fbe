package planner_test

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func planAtRate(t *testing.T, c *planner.Catalog, rate float64, slo planner.SLO) planner.PlanResult {
	t.Helper()
	m, err := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.FindHardware("nvidia-rtx-4090")
	if err != nil {
		t.Fatal(err)
	}
	return planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, SLO: slo,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Rate: rate}})
}

// A plan for requests arriving at random at a fixed rate: the best
// configuration completes what arrives (Little's law: req/s = rate, output
// tok/s = rate × gen), keeps a fifth of its capacity in reserve, and gets
// more slots than the mean batch so bursts do not queue.
func TestPlanAtRate(t *testing.T) {
	c := catalog(t)
	slo := planner.SLO{TTFT: 2000, TPOT: 100}
	for _, rate := range []float64{0.5, 1, 2} {
		res := planAtRate(t, c, rate, slo)
		best, ok := res.Best()
		if !ok || !best.MeetsSLO {
			t.Fatalf("rate %g: no plan meets the SLO: %+v", rate, best.Why)
		}
		if e := math.Abs(best.Pred.ReqPerS-rate) / rate; e > 0.1 {
			t.Errorf("rate %g: predicted %.3g req/s completed, want the offered rate ±10%%", rate, best.Pred.ReqPerS)
		}
		if e := math.Abs(float64(best.Pred.TotalTPS)-rate*256) / (rate * 256); e > 0.1 {
			t.Errorf("rate %g: %s output, want %.0f tok/s ±10%%", rate, best.Pred.TotalTPS, rate*256)
		}
		if best.Utilization > planner.MaxPlannedUtilization || best.Utilization <= 0 {
			t.Errorf("rate %g: utilization %.2f outside (0, %.1f]", rate, best.Utilization, planner.MaxPlannedUtilization)
		}
		if math.Abs(best.Utilization*best.CapacityReqPerS-rate) > 1e-9*rate {
			t.Errorf("rate %g: utilization %.3f × capacity %.3f ≠ rate", rate, best.Utilization, best.CapacityReqPerS)
		}
		if best.Concurrency <= best.Pred.Concurrency || best.Concurrency > best.Fit.MaxConcurrencyAtContext {
			t.Errorf("rate %g: %d slots for a mean batch of %d (KV pool holds %d)", rate, best.Concurrency, best.Pred.Concurrency, best.Fit.MaxConcurrencyAtContext)
		}
		// Ranking: every candidate that meets comes first, fewest devices
		// first among them; the others each say why.
		met := true
		for i, cand := range res.Ranked {
			if cand.MeetsSLO && !met {
				t.Errorf("rate %g: #%d %s meets but ranks below one that does not", rate, i+1, cand.Label())
			}
			met = met && cand.MeetsSLO
			if i > 0 && cand.Why == "" {
				t.Errorf("rate %g: #%d %s has no reason", rate, i+1, cand.Label())
			}
		}
		checkRateFront(t, rate, res)
	}
	// The same configuration works harder at a higher rate; a GGML
	// server, whose slots are sized for the rate, gets at least as many.
	lo, hi := planAtRate(t, c, 0.5, slo), planAtRate(t, c, 1, slo)
	for _, a := range lo.Ranked {
		for _, b := range hi.Ranked {
			if a.Label() != b.Label() {
				continue
			}
			if b.Scenario.Concurrency < a.Scenario.Concurrency {
				t.Errorf("%s: %d slots at 1 req/s, %d at 0.5", a.Label(), b.Scenario.Concurrency, a.Scenario.Concurrency)
			}
			if b.Scenario.Concurrency == a.Scenario.Concurrency && !(b.Utilization > a.Utilization) {
				t.Errorf("%s: utilization %.2f at 1 req/s not above %.2f at 0.5", a.Label(), b.Utilization, a.Utilization)
			}
		}
	}
}

// checkRateFront checks the Pareto front at a rate: its members keep up
// and none dominates another in (capacity, per-user tok/s), and every
// configuration that keeps up is on it or dominated by a member.
func checkRateFront(t *testing.T, rate float64, res planner.PlanResult) {
	t.Helper()
	if len(res.Pareto) == 0 {
		t.Fatalf("rate %g: empty front", rate)
	}
	dominates := func(a, b planner.Candidate) bool {
		return a.CapacityReqPerS >= b.CapacityReqPerS && a.Pred.DecodeTPS >= b.Pred.DecodeTPS &&
			(a.CapacityReqPerS > b.CapacityReqPerS || a.Pred.DecodeTPS > b.Pred.DecodeTPS)
	}
	for i, a := range res.Pareto {
		if a.Utilization >= 1 {
			t.Errorf("rate %g: front member %s cannot keep up", rate, a.Label())
		}
		for j, b := range res.Pareto {
			if i != j && dominates(b, a) {
				t.Errorf("rate %g: front member %s dominated by %s", rate, a.Label(), b.Label())
			}
		}
	}
	for _, c := range res.Ranked {
		if c.Utilization >= 1 || c.CapacityReqPerS <= 0 {
			continue
		}
		covered := false
		for _, f := range res.Pareto {
			covered = covered || f.Label() == c.Label() && f.Concurrency == c.Concurrency || dominates(f, c)
		}
		if !covered {
			t.Errorf("rate %g: %s (%.3g req/s, %.1f tok/s) is neither on the front nor dominated", rate, c.Label(), c.CapacityReqPerS, float64(c.Pred.DecodeTPS))
		}
	}
}

// A rate no single server can take gets what would: replicas of the
// highest-capacity configuration.
func TestPlanAtRateOverload(t *testing.T) {
	res := planAtRate(t, catalog(t), 500, planner.SLO{})
	if len(res.Ranked) == 0 {
		t.Fatal("nothing ranked")
	}
	for _, cand := range res.Ranked {
		if cand.MeetsSLO || !strings.Contains(cand.Why, "cannot keep up") {
			t.Fatalf("%s at 500 req/s: meets=%v why=%q", cand.Label(), cand.MeetsSLO, cand.Why)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "replicas") {
		t.Errorf("no advice on replicas: %q", res.Notes)
	}
}

// An SLO no configuration meets says by how much and what would help.
func TestPlanImpossibleSLOAdvice(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	h, _ := c.FindHardware("nvidia-rtx-4090")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}, SLO: planner.SLO{TTFT: 5, TPOT: 1}})
	best, ok := res.Best()
	if !ok || best.MeetsSLO || !strings.Contains(best.Why, "TPOT") {
		t.Fatalf("best %s: meets=%v why=%q", best.Label(), best.MeetsSLO, best.Why)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"the SLO needs", "fewer bits per weight", "prompts of about"} {
		if !strings.Contains(notes, want) {
			t.Errorf("advice lacks %q: %s", want, notes)
		}
	}
}

// Engines are only offered where their builds have kernels: TGI's ROCm
// image is compiled for Instinct gfx90a/gfx942 (Dockerfile_amd), so an
// RDNA APU gets no TGI plan but the MI300X does; TensorRT-LLM's FP8 KV
// cache needs FP8 hardware, so Ampere gets none and Ada does; vLLM's CPU
// backend quantized paths are x86-only.
func TestEngineBuildsLimitOffers(t *testing.T) {
	c := catalog(t)
	m, err := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	offered := func(hw string, keep func(planner.Candidate) bool) (ranked []planner.Candidate, dropped []planner.Rejection) {
		h, err := c.FindHardware(hw)
		if err != nil {
			t.Fatal(err)
		}
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
			Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4}})
		for _, x := range res.Ranked {
			if keep(x) {
				ranked = append(ranked, x)
			}
		}
		for _, x := range res.Dropped {
			if keep(planner.Candidate{Engine: x.Engine, Backend: x.Backend, Quant: x.Quant, KVType: x.KVType, Devices: x.Devices}) {
				dropped = append(dropped, x)
			}
		}
		return ranked, dropped
	}
	tgi := func(x planner.Candidate) bool { return x.Engine == "tgi" }
	r, d := offered("amd-ryzen-ai-max-395", tgi)
	if len(r) > 0 {
		t.Errorf("Strix Halo: TGI offered (%s)", r[0].Label())
	}
	instinct := false
	for _, x := range d {
		instinct = instinct || strings.Contains(x.Why, "Instinct")
	}
	if !instinct {
		t.Errorf("Strix Halo: no TGI candidate dropped for want of an Instinct build: %+v", d)
	}
	if r, _ := offered("amd-mi300x", tgi); len(r) == 0 {
		t.Error("MI300X: TGI not offered")
	}
	trtFP8 := func(x planner.Candidate) bool { return x.Engine == "trtllm" && x.KVType == "fp8" }
	if r, d := offered("nvidia-rtx-3090", trtFP8); len(r) > 0 || len(d) == 0 {
		t.Errorf("RTX 3090: TensorRT-LLM with FP8 KV offered %d times, dropped %d", len(r), len(d))
	}
	if r, _ := offered("nvidia-rtx-4090", trtFP8); len(r) == 0 {
		t.Error("RTX 4090 (Ada): TensorRT-LLM with FP8 KV not offered")
	}
	// vLLM's CPU backend loads 4-bit and INT8 checkpoints on x86 only; on
	// Apple silicon it had ranked GPTQ on the CPU above llama.cpp on Metal.
	vllmCPUQuant := func(x planner.Candidate) bool {
		return x.Engine == "vllm" && x.Backend == planner.CPU && (x.Quant == "gptq-int4" || x.Quant == "awq-int4")
	}
	if r, d := offered("apple-m4-max-40c", vllmCPUQuant); len(r) > 0 || len(d) == 0 {
		t.Errorf("M4 Max: vLLM CPU 4-bit offered %d times, dropped %d", len(r), len(d))
	}
	if r, _ := offered("cpu-ryzen-9-7950x-ddr5", vllmCPUQuant); len(r) == 0 {
		t.Error("Ryzen 9 7950X (x86): vLLM CPU 4-bit not offered")
	}
}

// An 8 GB Mac runs an 8B model at 4 bits: Metal's working-set cap already
// leaves the OS its share, so only a quarter of a small machine is held
// back for it, not a flat 4 GiB on top.
func TestSmallMacRunsEightBAtFourBits(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "apple-m1-7c")
	if h.Memory > 8*planner.GiB {
		t.Fatalf("apple-m1-7c has %s; this test wants an 8 GB machine", h.Memory)
	}
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}})
	best, ok := res.Best()
	if !ok {
		t.Fatalf("nothing fits an 8 GB Mac: %v", res.Dropped)
	}
	if q, _ := c.FindQuant(best.Quant); q.LinearBPW > 5 {
		t.Errorf("best on 8 GB is %s; only ~4-bit formats fit", best.Label())
	}
}

// When nothing fits, compare names the configuration that came closest
// (fewest weight bits), and an offloaded best says how much RAM it needs.
func TestCompareExplainsMemory(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("deepseek-ai/DeepSeek-R1")
	var hws []planner.Hardware
	for _, id := range []string{"apple-m1-7c", "nvidia-rtx-3090"} {
		h, err := c.FindHardware(id)
		if err != nil {
			t.Fatal(err)
		}
		hws = append(hws, h)
	}
	rows := planner.Compare(planner.PlanRequest{Catalog: c, Model: m, Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}}, hws, []int{1, 1})
	// The fewest bits tried: Q2_K, from the sub-4-bit fallback.
	if rows[0].Fits || !strings.Contains(rows[0].Why, "q2_k: does not fit") {
		t.Errorf("8 GB Mac: want the Q2_K reason, got fits=%v %q", rows[0].Fits, rows[0].Why)
	}
	if !rows[1].Fits || !strings.Contains(rows[1].Why, "of RAM free") {
		t.Errorf("3090 with the rest in RAM: fits=%v, note %q", rows[1].Fits, rows[1].Why)
	}
}

// Compare skips the runner-ups' reasons; its rows must still match the
// full plan's best, including the best's own reason when it misses the SLO.
func TestCompareMatchesPlanBest(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	var hws []planner.Hardware
	for _, id := range []string{"nvidia-rtx-4090", "amd-ryzen-ai-max-395", "cpu-core-i5-9500-ddr4"} {
		h, err := c.FindHardware(id)
		if err != nil {
			t.Fatal(err)
		}
		hws = append(hws, h)
	}
	req := planner.PlanRequest{Catalog: c, Model: m, Devices: 1, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 8}, SLO: planner.SLO{MinUserTPS: 20}}
	rows := planner.Compare(req, hws, nil)
	missed := false
	for i, h := range hws {
		r := req
		r.Hardware = h
		best, ok := planner.Plan(r).Best()
		if !ok {
			t.Fatalf("%s: nothing fits", h.ID)
		}
		if rows[i].Best != best.Label() || rows[i].TTFT != best.Pred.TTFT {
			t.Errorf("%s: compare %q TTFT %v, plan %q TTFT %v", h.ID, rows[i].Best, rows[i].TTFT, best.Label(), best.Pred.TTFT)
		}
		if !maps.Equal(rows[i].ErrorBand, best.ErrorBand) || rows[i].ErrorBandWorkload != planner.WorkloadClosed || !strings.Contains(rows[i].ErrorBandText(), "for closed loops of users") {
			t.Errorf("%s: compare's band %v of %q (%q), plan's %v", h.ID, rows[i].ErrorBand, rows[i].ErrorBandWorkload, rows[i].ErrorBandText(), best.ErrorBand)
		}
		if !best.MeetsSLO {
			missed = true
			if rows[i].Why == "" || rows[i].Why != best.Why {
				t.Errorf("%s misses the SLO: compare says %q, plan %q", h.ID, rows[i].Why, best.Why)
			}
		}
	}
	if !missed {
		t.Error("no machine misses 20 tok/s per user; the test wants one that does (the i5-9500)")
	}
}

// Weights kept in system RAM are read at the RAM's bandwidth: a faster
// host speeds an offloaded plan up and leaves a plan on the card as it is.
func TestPlanHostBandwidth(t *testing.T) {
	c := catalog(t)
	h, _ := c.FindHardware("nvidia-rtx-4090")
	tpot := func(model string, gbs float64) planner.Milliseconds {
		m, _ := c.FindModel(model)
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{planner.LlamaCpp},
			HostMemory: 128 * planner.GiB, HostBandwidthGBs: gbs, Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}})
		best, ok := res.Best()
		if !ok {
			t.Fatalf("%s: nothing fits", model)
		}
		return best.Pred.TPOT
	}
	slow, fast := tpot("openai/gpt-oss-120b", 40), tpot("openai/gpt-oss-120b", 120)
	if !(fast < slow*0.8) {
		t.Errorf("gpt-oss-120b with experts in RAM: TPOT %v at 40 GB/s, %v at 120 GB/s", slow, fast)
	}
	if a, b := tpot("meta-llama/Llama-3.1-8B-Instruct", 40), tpot("meta-llama/Llama-3.1-8B-Instruct", 120); a != b {
		t.Errorf("8B on the card: TPOT %v vs %v with another RAM speed", a, b)
	}
}

// A model that fits nowhere at 4 bits falls back to the sub-4-bit GGUF
// formats, with a note on their quality (Qwen3-235B runs at Q3_K_XL on
// Strix Halo in the published measurements); a model that fits at 4 bits
// is never offered them.
func TestPlanFallsBackToLowBits(t *testing.T) {
	c := catalog(t)
	plan := func(model, hw string) planner.PlanResult {
		m, h := modelOn(t, c, model, hw)
		return planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}})
	}
	low := map[string]bool{"q3_k_xl": true, "q3_k_m": true, "q2_k": true}
	res := plan("Qwen/Qwen3-235B-A22B-Instruct-2507", "amd-ryzen-ai-max-395")
	best, ok := res.Best()
	if !ok || !low[best.Quant] {
		t.Fatalf("Qwen3-235B on Strix Halo: best %q (ok=%v); want a sub-4-bit GGUF", best.Quant, ok)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "sub-4-bit") {
		t.Errorf("no quality note: %v", res.Notes)
	}
	for _, x := range plan("meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090").Ranked {
		if low[x.Quant] {
			t.Errorf("8B on a 4090 offered %s", x.Label())
		}
	}
}

// A dropped configuration is a Rejection with a typed reason, which the
// closest-miss note and front ends branch on (the words may change).
func TestDroppedHaveTypedReasons(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.3-70B-Instruct", "amd-ryzen-ai-max-395")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4}})
	seen := map[planner.DropReason]bool{}
	for _, d := range res.Dropped {
		if d.Reason == "" || d.Why == "" {
			t.Errorf("%s dropped without a typed reason or words: %+v", d.Label(), d)
		}
		seen[d.Reason] = true
		if d.Reason == planner.DropMemory && d.Fit.Verdict != planner.DoesNotFit {
			t.Errorf("%s dropped for memory with verdict %q", d.Label(), d.Fit.Verdict)
		}
	}
	for _, want := range []planner.DropReason{planner.DropNoKernel, planner.DropMemory} {
		if !seen[want] {
			t.Errorf("70B on Strix Halo: no configuration dropped for %q (saw %v)", want, seen)
		}
	}
}

// plan takes the workloads validate predicts: a burst of prompts sent at
// once is planned as a burst (the engine admits up to its cap and what the
// pool holds, the rest wait, so TTFT exceeds one request's), and an offline
// run as the largest batch (more sequences and more throughput than one
// user), not as N users in a loop or one user.
// A GGML server runs as many sequences as it has slots, and the plan's
// launch command sets them (llama-server -np). A burst of 100 prompts for
// llama.cpp had been predicted at the 4 slots of -np auto while its KV
// cache was sized for 100 (-c 153600 over -np 4, 38,400 tokens a slot);
// an offline batch was predicted at 4 slots with memory for one.
func TestPlanGGMLRunsTheSlotsItIsSizedFor(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090")
	for _, tc := range []struct {
		workload string
		min      int
	}{{"prompt=1024,gen=256,burst=100", 5}, {"prompt=1024,gen=256,offline", 4}} {
		wl, err := planner.ParseWorkload(tc.workload)
		if err != nil {
			t.Fatal(err)
		}
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: wl,
			Engines: []planner.EngineID{planner.LlamaCpp}, Quants: []string{"q4_k_m"}})
		best, ok := res.Best()
		if !ok {
			t.Fatalf("%s: nothing fits", tc.workload)
		}
		if best.Concurrency < tc.min || best.Concurrency != best.Scenario.Concurrency {
			t.Errorf("%s: runs %d sequences, memory sized for %d; want them equal and at least %d", tc.workload, best.Concurrency, best.Scenario.Concurrency, tc.min)
		}
		l, err := planner.LaunchCommand(best, false)
		if err != nil {
			t.Fatal(err)
		}
		np := ""
		for i, a := range l.Argv {
			if a == "-np" && i+1 < len(l.Argv) {
				np = l.Argv[i+1]
			}
		}
		if np != fmt.Sprint(best.Concurrency) {
			t.Errorf("%s: launch -np %q for %d sequences predicted", tc.workload, np, best.Concurrency)
		}
	}
}

// planOne plans model on one device of hw for a workload, with one
// weight format and the given engines.
func planOne(t *testing.T, model, hw, workload, quant string, engines ...planner.EngineID) planner.PlanResult {
	t.Helper()
	c := catalog(t)
	m, h := modelOn(t, c, model, hw)
	wl, err := planner.ParseWorkload(workload)
	if err != nil {
		t.Fatal(err)
	}
	return planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: wl, Engines: engines, Quants: []string{quant}})
}

// A burst larger than a GGML server's memory holds slots for runs as
// many at once as fit the way one slot does, and the rest wait: sized
// for all 1000 prompts, Qwen3-8B on an RTX 4090 moved 30 of its 37
// layers to system RAM to make room for 1.5M KV cells.
func TestPlanGGMLBurstKeepsTheModelOnTheDevice(t *testing.T) {
	res := planOne(t, "Qwen/Qwen3-8B", "nvidia-rtx-4090", "prompt=1k,gen=256,burst=1000", "q4_k_m", planner.LlamaCpp, planner.Ollama)
	if len(res.Ranked) == 0 {
		t.Fatalf("nothing fits: %+v", res.Dropped)
	}
	for _, r := range res.Ranked {
		if r.Fit.Verdict != planner.Fits || r.Fit.OffloadBytes > 0 {
			t.Errorf("%s: %s with %s in system RAM for %d slots", r.Label(), r.Fit.Verdict, r.Fit.OffloadBytes, r.Scenario.Concurrency)
		}
		if n := r.Scenario.Concurrency; n < 8 || n >= 1000 || r.Concurrency != n {
			t.Errorf("%s: %d slots, %d at once; want some, sized to the device", r.Label(), n, r.Concurrency)
		}
		if mk := r.Pred.Makespan(1000); !(mk > 0) {
			t.Errorf("%s: no time to the last answer", r.Label())
		}
	}
}

// At a rate a GGML server needs the slots the arrivals keep in flight,
// and it runs only those its launch gives it: plan sizes them for the
// rate, within what the memory holds. Sized for one user, Qwen3-30B-A3B
// on an RTX 4090 at 2 req/s had llama.cpp run one request at a time
// (capacity 0.56 req/s, five replicas) on a card whose KV room holds a
// dozen, and dropped q8_0 KV, which holds twice as many, as "saving
// nothing".
func TestPlanGGMLRateSizesSlotsForTheRate(t *testing.T) {
	res := planOne(t, "Qwen/Qwen3-30B-A3B", "nvidia-rtx-4090", "prompt=2k,gen=512,rate=2", "q4_k_m", planner.LlamaCpp)
	byKV := map[string]planner.Candidate{}
	for _, r := range res.Ranked {
		byKV[r.KVType] = r
	}
	f16, ok := byKV["f16"]
	if !ok {
		t.Fatalf("no f16 KV row: %+v", res.Dropped)
	}
	if f16.Scenario.Concurrency < 4 || f16.Fit.Verdict != planner.Fits {
		t.Fatalf("f16 KV: %d slots, %s; want memory-sized slots on the device", f16.Scenario.Concurrency, f16.Fit.Verdict)
	}
	if f16.Fit.MaxConcurrencyAtContext < f16.Scenario.Concurrency {
		t.Errorf("f16 KV: %d slots but the cells hold %d", f16.Scenario.Concurrency, f16.Fit.MaxConcurrencyAtContext)
	}
	if one := f16.Curve[0]; !(f16.CapacityReqPerS > one.ReqPerS) {
		t.Errorf("f16 KV: capacity %.3g req/s with %d slots, not above one slot's %.3g", f16.CapacityReqPerS, f16.Scenario.Concurrency, one.ReqPerS)
	}
	q8, ok := byKV["q8_0"]
	if f16.Utilization > planner.MaxPlannedUtilization {
		if !ok {
			t.Fatalf("f16 KV runs at %.0f%% of its capacity but q8_0 KV was dropped: %+v", 100*f16.Utilization, res.Dropped)
		}
		if q8.Scenario.Concurrency <= f16.Scenario.Concurrency || !(q8.CapacityReqPerS > f16.CapacityReqPerS) {
			t.Errorf("q8_0 KV: %d slots, %.3g req/s; f16 KV: %d slots, %.3g req/s", q8.Scenario.Concurrency, q8.CapacityReqPerS, f16.Scenario.Concurrency, f16.CapacityReqPerS)
		}
	}
	l, err := planner.LaunchCommand(f16, false)
	if err != nil {
		t.Fatal(err)
	}
	np, ctx := 0, 0
	for i := 0; i+1 < len(l.Argv); i++ {
		switch l.Argv[i] {
		case "-np":
			fmt.Sscan(l.Argv[i+1], &np)
		case "-c":
			fmt.Sscan(l.Argv[i+1], &ctx)
		}
	}
	if np < 2 || np > f16.Scenario.Concurrency || int64(ctx) > int64(f16.Fit.MaxKVTokens) {
		t.Errorf("launch -np %d -c %d; plan sized %d slots in %d cells: %v", np, ctx, f16.Scenario.Concurrency, f16.Fit.MaxKVTokens, l.Argv)
	}
	// A rate the card takes gets the slots it needs, not all it could
	// hold: each slot's cells are memory, and past the rate's needs more
	// slots only lengthen requests.
	low := planOne(t, "Qwen/Qwen3-30B-A3B", "nvidia-rtx-4090", "prompt=2k,gen=512,rate=0.25", "q4_k_m", planner.LlamaCpp)
	lb, ok := low.Best()
	if !ok || lb.KVType != "f16" {
		t.Fatalf("rate 0.25: best %s %s KV (%v); want f16 KV", lb.Quant, lb.KVType, ok)
	}
	if lb.Utilization > planner.MaxPlannedUtilization || lb.Scenario.Concurrency >= f16.Scenario.Concurrency {
		t.Errorf("rate 0.25: %d slots at %.0f%% of capacity; rate 2 had %d", lb.Scenario.Concurrency, 100*lb.Utilization, f16.Scenario.Concurrency)
	}
	// ... and where f16 keeps up, q8_0 KV is dropped, saying so.
	said := false
	for _, d := range low.Dropped {
		if d.KVType == "q8_0" && d.Reason == planner.DropKVSavesNothing {
			said = strings.Contains(d.Why, "already keep up with 0.25 req/s")
			if !said {
				t.Errorf("rate 0.25: q8_0 KV dropped with %q", d.Why)
			}
		}
	}
	if !said {
		t.Errorf("rate 0.25: q8_0 KV not dropped as saving nothing: %+v", low.Dropped)
	}
}

// FP8 (8.002 bits with its scales) and W8A8-INT8 (8.004) are both 8-bit:
// at a fixed rate the faster one ranks first, and no runner-up is said to
// have "fewer weight bits (8 vs 8)".
func TestPlanEightBitFormatsTieOnBits(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-h100-sxm5-80gb")
	for _, wl := range []string{"prompt=1024,gen=200,rate=8", "prompt=1024,gen=200,users=16"} {
		w, err := planner.ParseWorkload(wl)
		if err != nil {
			t.Fatal(err)
		}
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: w,
			Engines: []planner.EngineID{planner.VLLM}, Quants: []string{"fp8", "w8a8-int8"}})
		var fp8, int8 *planner.Candidate
		for i := range res.Ranked {
			r := &res.Ranked[i]
			if strings.Contains(r.Why, "fewer weight bits") {
				t.Errorf("%s: %s %s: %q", wl, r.Quant, r.KVType, r.Why)
			}
			switch {
			case r.Quant == "fp8" && fp8 == nil:
				fp8 = r
			case r.Quant == "w8a8-int8" && int8 == nil:
				int8 = r
			}
		}
		if fp8 == nil || int8 == nil || !fp8.MeetsSLO || !int8.MeetsSLO {
			t.Fatalf("%s: want both 8-bit formats planned", wl)
		}
		first, second := fp8, int8
		if w.Rate > 0 && int8.Pred.TPOT < fp8.Pred.TPOT || w.Rate == 0 && int8.Pred.TotalTPS > fp8.Pred.TotalTPS {
			first, second = int8, fp8
		}
		if res.Ranked[0].Quant != first.Quant {
			t.Errorf("%s: %s ranked first; %s is faster (TPOT %v vs %v, total %v vs %v)", wl, res.Ranked[0].Quant, first.Quant,
				first.Pred.TPOT, second.Pred.TPOT, first.Pred.TotalTPS, second.Pred.TotalTPS)
		}
	}
}

func TestPlanBurstAndOffline(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-h100-sxm5-80gb")
	plan := func(w string) planner.Candidate {
		t.Helper()
		wl, err := planner.ParseWorkload(w)
		if err != nil {
			t.Fatal(err)
		}
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Workload: wl,
			Engines: []planner.EngineID{planner.VLLM}, Quants: []string{"fp8"}})
		best, ok := res.Best()
		if !ok {
			t.Fatalf("%s: nothing fits", w)
		}
		return best
	}
	one := plan("prompt=1024,gen=256,users=1")
	burst := plan("prompt=1024,gen=256,burst=1000")
	if burst.Concurrency < 2 || burst.Concurrency > 1000 {
		t.Errorf("burst admitted %d of 1000", burst.Concurrency)
	}
	if burst.Pred.TTFT <= 2*one.Pred.TTFT || burst.Pred.TotalTPS <= 10*one.Pred.TotalTPS {
		t.Errorf("burst TTFT %v, total %v vs one user's %v, %v: want the queue and the batch", burst.Pred.TTFT, burst.Pred.TotalTPS, one.Pred.TTFT, one.Pred.TotalTPS)
	}
	off := plan("prompt=1024,gen=256,offline")
	if off.Concurrency < 64 || off.Pred.TotalTPS <= 10*one.Pred.TotalTPS {
		t.Errorf("offline: %d sequences at %v tok/s, one user %v: want the largest batch", off.Concurrency, off.Pred.TotalTPS, one.Pred.TotalTPS)
	}
	w, _ := planner.ParseWorkload("prompt=1024,gen=256,offline")
	s := *off.Scenario
	if direct := planner.Predict(s, w, c.Perf); math.Abs(float64(direct.TotalTPS-off.Pred.TotalTPS)) > 0.02*float64(direct.TotalTPS) {
		t.Errorf("plan's offline %v tok/s differs from Predict's %v", off.Pred.TotalTPS, direct.TotalTPS)
	}
}
