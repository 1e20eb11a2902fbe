package planner

import (
	"math"
	"testing"
)

// testServer is a 70B FP8 model on one 141 GB Hopper device with vLLM,
// built from literals so the test needs no catalog.
func testServer() Scenario {
	h := Hardware{ID: "h", Kind: KindGPU, Vendor: "NVIDIA", Memory: 141 * GiB, MemoryModel: MemDiscrete,
		BandwidthGBs: 4800, Arch: "hopper", Backends: []Backend{CUDA},
		TFLOPS: map[Precision]float64{FP16: 989, BF16: 989, FP8: 1979}}
	m := Model{ID: "m", Params: 70e9, ActiveParams: 70e9, Layers: 80, Hidden: 8192, FFN: 28672, Heads: 64,
		KVHeads: 8, HeadDim: 128, Vocab: 32000, GatedMLP: true, MaxContext: 4096}
	e := Engine{ID: "vllm", Policy: "vllm", BlockSize: 16, Backends: []Backend{CUDA},
		Formats: map[Backend][]QuantFamily{CUDA: {"fp8"}}, KVTypes: []string{"f16"}}
	q := Quant{ID: "fp8", Family: "fp8", LinearBPW: 8, EmbedBPW: 16, HeadBPW: 16, Compute: FP8}
	return Scenario{Hardware: h, Devices: 1, Engine: e, Model: m, Quant: q, KV: KVType{ID: "f16", BytesPerElement: 2}, Concurrency: 1}
}

// Little's law: below capacity the server completes what arrives, so the
// predicted request rate equals the offered rate and the batch in flight
// grows with it; TTFT under Poisson arrivals stays near one prefill plus a
// step or two, far below the closed-loop wave of the saturated batch.
func TestOpenLoopArrivals(t *testing.T) {
	s := testServer()
	w := Workload{Prompt: 300, Gen: 300, Saturate: true, Serving: true, VariableLengths: true}
	sat := predictSaturated(s, w, nil, 0, 0, false)
	if sat.ReqPerS <= 0 {
		t.Fatalf("saturated capacity %v", sat.ReqPerS)
	}
	alone := Predict(s, Workload{Prompt: 300, Gen: 300, Concurrency: 1}, nil)
	var prevN int
	for _, frac := range []float64{0.2, 0.5} {
		ww := w
		ww.Rate = frac * sat.ReqPerS
		pr := predictSaturated(s, ww, nil, 0, 0, false)
		if math.Abs(pr.ReqPerS-ww.Rate)/ww.Rate > 0.1 {
			t.Errorf("at %.0f%% load: %.2f req/s completed, %.2f offered", frac*100, pr.ReqPerS, ww.Rate)
		}
		if pr.Concurrency <= prevN {
			t.Errorf("at %.0f%% load the batch %d did not grow past %d", frac*100, pr.Concurrency, prevN)
		}
		prevN = pr.Concurrency
		if pr.TTFT >= sat.TTFT {
			t.Errorf("at %.0f%% load TTFT %v is not below the saturated %v", frac*100, pr.TTFT, sat.TTFT)
		}
		if lim := alone.TTFT + 3*pr.StepMs; pr.TTFT > lim {
			t.Errorf("TTFT %v above one request's prefill plus three steps (%v)", pr.TTFT, lim)
		}
	}
	// Offered more than it can serve, it serves its capacity.
	over := w
	over.Rate = 10 * sat.ReqPerS
	if pr := predictSaturated(s, over, nil, 0, 0, false); pr.ReqPerS > 1.1*sat.ReqPerS {
		t.Errorf("overloaded: %.2f req/s above capacity %.2f", pr.ReqPerS, sat.ReqPerS)
	}
}

// Just past capacity a server runs its full batch and serves what it
// can: the prediction 2% above capacity stays near the one 2% below it
// (MLPerf's server runs sit there), rather than jumping to a closed
// loop's queue. A run of stated length adds the backlog it builds,
// (n−1)/2·(1/μ − 1/λ), and only then does TTFT grow with the rate.
func TestRateDegradesSmoothlyPastCapacity(t *testing.T) {
	s := testServer()
	w := Workload{Prompt: 300, Gen: 300, Saturate: true, Serving: true, VariableLengths: true}
	pm := newPerfModel(s, nil)
	capN := saturatedBatch(s, w)
	_, capacity, _ := operatingPoint(pm, w, 0, capN)
	mu := capacity.ReqPerS
	below, _, up := operatingPoint(pm, w, 0.98*mu, capN)
	if !up {
		t.Fatalf("at 98%% of capacity (%.2f req/s) the server does not keep up", mu)
	}
	past, _, up := operatingPoint(pm, w, 1.02*mu, capN)
	if up {
		t.Fatalf("at 102%% of capacity the server keeps up")
	}
	if r := float64(past.TTFT) / float64(below.TTFT); r < 0.5 || r > 2 {
		t.Errorf("TTFT jumps from %v (98%%) to %v (102%%)", below.TTFT, past.TTFT)
	}
	if math.Abs(past.ReqPerS-mu)/mu > 1e-9 || past.TotalTPS != capacity.TotalTPS {
		t.Errorf("past capacity it completes %.3f req/s, %v tok/s; capacity is %.3f, %v", past.ReqPerS, past.TotalTPS, mu, capacity.TotalTPS)
	}
	far, _, _ := operatingPoint(pm, w, 3*mu, capN)
	if far.TTFT != past.TTFT {
		t.Errorf("a run of unknown length: TTFT %v at 3× capacity, %v at 1.02×; no backlog is predictable", far.TTFT, past.TTFT)
	}
	run := w
	run.Requests = 1000
	prev := past.TTFT
	for _, x := range []float64{1.02, 1.5, 3} {
		pr, _, _ := operatingPoint(pm, run, x*mu, capN)
		want := float64(past.TTFT) + 999.0/2*(1/mu-1/(x*mu))*1000
		if math.Abs(float64(pr.TTFT)-want)/want > 1e-9 {
			t.Errorf("1000 requests at %.2f× capacity: TTFT %v, want %.1f ms", x, pr.TTFT, want)
		}
		if pr.TTFT <= prev {
			t.Errorf("1000 requests at %.2f× capacity: TTFT %v not above %v", x, pr.TTFT, prev)
		}
		prev = pr.TTFT
	}
}

func TestRunBacklog(t *testing.T) {
	for _, c := range []struct {
		n        int
		rate, mu float64
		want     float64 // ms
	}{
		{0, 20, 10, 0},        // unknown length
		{1, 20, 10, 0},        // one request waits for nobody
		{1001, 10, 10, 0},     // keeps up
		{1001, 5, 10, 0},      // below capacity
		{1001, 20, 10, 25000}, // 500 × (0.1 − 0.05) s
		{3, 1e9, 1, 1000},     // all at once: 1 × (1 − 0) s
		{1001, 20, 0, 0},      // no capacity figure
		{1001, 20, math.NaN(), 0},
	} {
		if got := runBacklog(c.n, c.rate, c.mu); math.Abs(got-c.want) > 1e-6*math.Max(c.want, 1) {
			t.Errorf("runBacklog(%d, %g, %g) = %g ms, want %g", c.n, c.rate, c.mu, got, c.want)
		}
	}
}

// A multi-device MLPerf system takes the tensor-parallel layout with the
// best throughput; it can never be worse than one replica per device.
func TestSaturatedLayoutChoice(t *testing.T) {
	s := testServer()
	s.Devices = 8
	w := Workload{Prompt: 300, Gen: 300, Saturate: true, Serving: true}
	best := predictSaturated(s, w, nil, 0, 0, true)
	one := s
	one.Devices = 1
	per := predictSaturated(one, w, nil, 0, 0, false)
	if float64(best.TotalTPS) < 8*float64(per.TotalTPS)*0.999 {
		t.Errorf("best layout %v tok/s below 8 replicas of one device (%v)", best.TotalTPS, 8*per.TotalTPS)
	}
}

func TestDieLinkFeature(t *testing.T) {
	s := testServer()
	has := func(f []string) bool {
		for _, x := range f {
			if x == "die-link=ultrafusion" {
				return true
			}
		}
		return false
	}
	if has(Features(s, CUDA, true)) {
		t.Error("single-die device got a die-link feature")
	}
	s.Hardware.DieLink = "ultrafusion"
	if !has(Features(s, CUDA, true)) {
		t.Error("Ultra device lacks the die-link feature")
	}
}

// Whether an engine chunks prefills by default decides how new requests
// queue (queueKey). vLLM's V0 rule is in arg_utils.create_engine_config.
func TestChunkedPrefill(t *testing.T) {
	long := testServer()
	long.Model.MaxContext = 131072
	short := testServer() // 4k context
	sliding := long
	sliding.Model.SlidingWindow = 4096
	vision := long
	vision.Model.Vision = &VisionEncoder{}
	withLen := long
	withLen.Context = 8192 // --max-model-len 8192
	engine := func(s Scenario, policy, version string) Scenario {
		s.Engine.Policy, s.Engine.ID, s.EngineVersion = Policy(policy), EngineID(policy), version
		return s
	}
	// chunked: prompts split into chunks; mixed: a new prefill shares the
	// decodes' step (mixedSteps). SGLang chunks but runs each chunk before
	// the decodes (prefill-first); TensorRT-LLM does not chunk by default
	// but batches context and generation requests in one step.
	for _, tc := range []struct {
		name           string
		s              Scenario
		chunked, mixed bool
	}{
		{"vLLM 0.4.3, 128k model", engine(long, "vllm", "0.4.3"), false, false},
		{"vLLM 0.5.3.post1, 128k model", engine(long, "vllm", "0.5.3.post1"), true, true},
		{"vLLM 0.6.0, 4k model", engine(short, "vllm", "0.6.0"), false, false},
		{"vLLM 0.6.0, 128k model at --max-model-len 8192", engine(withLen, "vllm", "0.6.0"), false, false},
		{"vLLM 0.6.3, sliding window", engine(sliding, "vllm", "0.6.3"), false, false},
		{"vLLM 0.6.0, vision model", engine(vision, "vllm", "0.6.0"), true, true},
		{"vLLM 0.6.3, vision model", engine(vision, "vllm", "0.6.3"), false, false},
		{"vLLM 0.8.2 (V1), 4k model", engine(short, "vllm", "0.8.2"), true, true},
		{"vLLM unstated (current)", engine(short, "vllm", ""), true, true},
		{"SGLang 0.4", engine(short, "sglang", "0.4.0"), true, false},
		{"SGLang 0.5.4", engine(short, "sglang", "0.5.4"), true, false},
		{"TensorRT-LLM", engine(short, "trtllm", "1.0.0"), false, true},
		{"llama-server", engine(short, "llamacpp", "b6000"), true, true},
		{"Ollama", engine(short, "ollama", "0.6.5"), true, true},
		{"TGI 2.4", engine(short, "tgi", "2.4.0"), false, false},
		{"TGI 3.0", engine(short, "tgi", "3.0.1"), true, true},
		{"transformers", engine(short, "transformers", ""), false, false},
	} {
		if got := chunkedPrefill(tc.s); got != tc.chunked {
			t.Errorf("%s: chunked %v, want %v", tc.name, got, tc.chunked)
		}
		if got := mixedSteps(tc.s); got != tc.mixed {
			t.Errorf("%s: mixed steps %v, want %v", tc.name, got, tc.mixed)
		}
	}
	// A prefill-first engine's arriving request waits half a step for the
	// one in flight; a mixed engine's also spends the step its prefill
	// shares with the decodes. The cycle's other terms do not move.
	for _, w := range []Workload{{Prompt: 512, Gen: 128, Concurrency: 8, Serving: true}, {Prompt: 512, Gen: 128, Concurrency: 8, Serving: true, Rate: 2}} {
		pm := newPerfModel(engine(short, "vllm", ""), nil)
		pm.mixed = true
		mixed := predictWith(pm, w)
		pm.mixed = false
		first := predictWith(pm, w)
		if d := float64(mixed.TTFT - first.TTFT); math.Abs(d-float64(mixed.StepMs)) > 1e-9 {
			t.Errorf("rate %g: mixed TTFT %s − prefill-first %s = %.3f ms, want one step %s", w.Rate, mixed.TTFT, first.TTFT, d, mixed.StepMs)
		}
		if mixed.TPOT != first.TPOT {
			t.Errorf("rate %g: TPOT moved with the arrival term: %s vs %s", w.Rate, mixed.TPOT, first.TPOT)
		}
	}
	// In a burst, requests that have their first token decode during the
	// wave's remaining prefill steps only where the engine mixes; a
	// prefill-first engine pauses them, so their TPOT (first to last
	// token) is longer. TTFT does not move, nor does the wave's end (its
	// last request gets its first token when the prefill is done either
	// way), so neither does throughput.
	burst := Workload{Prompt: 2000, Gen: 100, Burst: 64, Serving: true}
	pm := newPerfModel(engine(short, "sglang", ""), nil)
	pm.mixed = true
	mixedBurst := predictBurst(pm, burst)
	pm.mixed = false
	firstBurst := predictBurst(pm, burst)
	if !(firstBurst.TPOT > mixedBurst.TPOT) || firstBurst.TotalTPS != mixedBurst.TotalTPS {
		t.Errorf("burst: prefill-first TPOT %s, %s total; mixed %s, %s: want a longer TPOT and the same throughput", firstBurst.TPOT, firstBurst.TotalTPS, mixedBurst.TPOT, mixedBurst.TotalTPS)
	}
	if firstBurst.TTFT != mixedBurst.TTFT {
		t.Errorf("burst: TTFT moved with the decode pause: %s vs %s", firstBurst.TTFT, mixedBurst.TTFT)
	}
	if k := queueKey(engine(long, "vllm", "0.6.1"), true); k != "vllm/chunked/variable" {
		t.Errorf("queueKey = %q", k)
	}
	// A regime the fit never saw falls back to the engine's share.
	p := DefaultPerfParams()
	p.QueueFactor["vllm"] = 0.7
	if q := queueFactor(&p, engine(long, "vllm", "0.6.1"), false); q != 0.7 {
		t.Errorf("unfitted chunked vLLM got queue share %g, want the engine's 0.7", q)
	}
	if q := queueFactor(&p, engine(long, "sglang", ""), false); q != 0.5 {
		t.Errorf("unfitted SGLang (chunked) got queue share %g, want the chunked waves' 0.5", q)
	}
	// With no fitted share, the scheduling sets it: whole prompts batched
	// together keep a fixed-length loop in step, and every request waits
	// for its wave's whole prefill.
	if q := queueFactor(&p, engine(short, "trtllm", ""), false); q != 1 {
		t.Errorf("unfitted TensorRT-LLM (whole prompts) got queue share %g, want the lock-step waves' 1", q)
	}
	if q := queueFactor(&p, engine(short, "trtllm", ""), true); q != 0.25 {
		t.Errorf("unfitted TensorRT-LLM with varied lengths got queue share %g, want 0.25", q)
	}
}

// In a closed loop the other clients' prefills cost the same GPU time per
// cycle whether a request waits for them before its first token or
// between tokens: the queue share moves time from TPOT to TTFT, never
// changes throughput, and TTFT rises with it.
func TestQueueShareKeepsCycle(t *testing.T) {
	s := testServer()
	w := Workload{Prompt: 1024, Gen: 128, Concurrency: 16, Serving: true}
	key := queueKey(s, false)
	var prev Prediction
	for i, sigma := range []float64{0, 0.3, 0.7, 1, 1.5} {
		p := DefaultPerfParams()
		p.QueueFactor[key] = sigma
		pr := Predict(s, w, &p)
		if i == 0 {
			prev = pr
			continue
		}
		if d := math.Abs(float64(pr.TotalTPS-prev.TotalTPS)) / float64(prev.TotalTPS); d > 1e-9 {
			t.Errorf("σ=%g changed throughput %v → %v", sigma, prev.TotalTPS, pr.TotalTPS)
		}
		if sigma <= 1 && !(pr.TTFT > prev.TTFT && pr.TPOT < prev.TPOT) {
			t.Errorf("σ=%g: TTFT %v (was %v), TPOT %v (was %v)", sigma, pr.TTFT, prev.TTFT, pr.TPOT, prev.TPOT)
		}
		if sigma > 1 && pr.TTFT != prev.TTFT {
			t.Errorf("σ=%g is not clamped to 1: TTFT %v vs %v", sigma, pr.TTFT, prev.TTFT)
		}
		prev = pr
	}
}

// testCPU is a 100M-parameter F16 llama on one CPU with Ollama, built from
// literals (the shape of calibrate/enginetest's hr-100m).
func testCPU() Scenario {
	h := Hardware{ID: "cpu", Kind: KindCPU, Memory: 16 * GiB, MemoryModel: MemHost, BandwidthGBs: 20,
		Arch: "cpu", Backends: []Backend{CPU}, TFLOPS: map[Precision]float64{FP32: 0.1}}
	m := Model{ID: "m", Params: 94e6, ActiveParams: 94e6, Layers: 14, Hidden: 768, FFN: 2048, Heads: 12,
		KVHeads: 4, HeadDim: 64, Vocab: 4096, GatedMLP: true, MaxContext: 2048}
	e := Engine{ID: "ollama", Policy: "ollama", Backends: []Backend{CPU},
		Formats: map[Backend][]QuantFamily{CPU: {"gguf"}}, KVTypes: []string{"f16"}}
	q := Quant{ID: "f16", Family: "gguf", LinearBPW: 16, EmbedBPW: 16, HeadBPW: 16, Compute: FP16}
	return Scenario{Hardware: h, Devices: 1, Engine: e, Model: m, Quant: q, KV: KVType{ID: "f16", BytesPerElement: 2}, Concurrency: 1}
}

// A host calibration whose bandwidth came from a GEMV kernel bounds a
// one-sequence decode step by that bandwidth alone: the portable SGEMM
// rate (here 19 GFLOP/s, which alone would make the step compute-bound)
// does not apply to a matrix-vector step. Batches of two or more are
// matrix products and still see the SGEMM rate.
func TestGEMVCalibrationBoundsOneSequence(t *testing.T) {
	for _, gemv := range []bool{false, true} {
		pm := newPerfModel(testCPU(), nil)
		pm.applyCalibration(Calibrated{BandwidthGBs: 25, TFLOPS: 0.019, DecodeEff: 1, PrefillEff: 1, GEMVBandwidth: gemv}, pm.s.Model.ID)
		bytes := pm.wt.bytes(pm.s.Model, 1) + 100*pm.kvTok
		memMs := pm.ovh + bytes/25e9*1000
		step1, bound1 := pm.decodeStep(1, 100)
		_, bound4 := pm.decodeStep(4, 100)
		if bound4 != "compute" {
			t.Errorf("gemv=%v: batch 4 bound by %s, want compute", gemv, bound4)
		}
		if gemv {
			if bound1 != "memory" || math.Abs(step1-memMs) > 1e-9 {
				t.Errorf("gemv: batch 1 step %.3f ms (%s), want the memory time %.3f ms", step1, bound1, memMs)
			}
		} else if bound1 != "compute" || step1 <= memMs*1.2 {
			t.Errorf("portable GEMM only: batch 1 step %.3f ms (%s), want compute-bound above %.3f ms", step1, bound1, memMs)
		}
	}
}

// In a GGML engine an MoE expert's matrix product sees the tokens routed
// to it, b·k/E_touched(b), so a batch's expert compute runs at the
// small-batch efficiency of those few columns; dense models and engines
// with batched GEMMs are unchanged.
func TestMoEExpertColumns(t *testing.T) {
	s := testCPU()
	s.Hardware.TFLOPS = map[Precision]float64{FP16: 30, FP32: 30}
	dense := newPerfModel(s, nil)
	moe := s
	moe.Model.Experts, moe.Model.TopK = 32, 4
	pmMoE := newPerfModel(moe, nil)
	ex := math.Min(float64(moe.Model.ExpertParams())*4/32, float64(moe.Model.active()))
	if ex <= 0 {
		t.Fatal("test model has no expert parameters")
	}
	for _, b := range []int{16, 32} {
		cols := float64(b) * 4 / expertsTouched(32, 4, b)
		rate := pmMoE.peak * pmMoE.effP
		want := ((2*(float64(moe.Model.active())-ex)+4*float64(moe.Model.Layers)*attnDim(moe.Model)*10)*float64(b)/(rate*smallBatchGEMM(moe.Engine, float64(b))) +
			2*ex*float64(b)/(rate*smallBatchGEMM(moe.Engine, cols))) * 1000
		if got := pmMoE.decodeCompute(b, 10); math.Abs(got-want) > 1e-9*want {
			t.Errorf("b=%d: MoE compute %.4f ms, want %.4f", b, got, want)
		}
		if cols >= float64(b)/2 || pmMoE.decodeCompute(b, 10) <= dense.decodeCompute(b, 10) {
			t.Errorf("b=%d: %.1f columns per expert; MoE %.3f ms vs dense %.3f ms", b, cols, pmMoE.decodeCompute(b, 10), dense.decodeCompute(b, 10))
		}
	}
	// A non-GGML engine's GEMMs carry their small-batch cost in the fit.
	v := moe
	v.Engine = Engine{ID: "vllm", Policy: "vllm"}
	pv := newPerfModel(v, nil)
	want := (2*float64(v.Model.active()) + 4*float64(v.Model.Layers)*attnDim(v.Model)*10) * 32 / (pv.peak * pv.effP) * 1000
	if got := pv.decodeCompute(32, 10); math.Abs(got-want) > 1e-6*want {
		t.Errorf("vllm MoE compute %.4f ms, want %.4f (no column factor)", got, want)
	}
}

// A prompt's expert products in a GGML engine see the tokens of one
// ubatch routed to each expert, ub·k/E_touched(ub) columns, so an MoE
// prefill runs its experts at that small-batch efficiency (a 128-expert
// top-8 model: 32 columns, two thirds of the large-batch rate); a dense
// model and a vLLM prefill count 2·N_act FLOPs per token as before.
func TestMoEPrefillExpertColumns(t *testing.T) {
	s := testCPU()
	s.Hardware.TFLOPS = map[Precision]float64{FP16: 30, FP32: 30}
	dense := newPerfModel(s, nil)
	act := float64(s.Model.active())
	for _, n := range []float64{64, 512, 4096} {
		if got := dense.linearPrefillFLOPs(n); math.Abs(got-2*act*n) > 1e-9*got {
			t.Errorf("dense, %g tokens: %.4g FLOPs, want 2·N_act·n = %.4g", n, got, 2*act*n)
		}
	}
	moe := s
	moe.Model.Experts, moe.Model.TopK = 128, 8
	pm := newPerfModel(moe, nil)
	mact := float64(moe.Model.active())
	ex := math.Min(float64(moe.Model.ExpertParams())*8/128, mact)
	if ex <= 0 {
		t.Fatal("test model has no expert parameters")
	}
	for _, c := range []struct{ n, ub float64 }{{512, 512}, {4096, 512}, {100, 100}} {
		cols := c.ub * 8 / expertsTouched(128, 8, int(c.ub))
		want := 2*(mact-ex)*c.n + 2*ex*c.n*(cols+16)/cols
		if got := pm.linearPrefillFLOPs(c.n); math.Abs(got-want) > 1e-9*want {
			t.Errorf("MoE, %g tokens: %.4g FLOPs, want %.4g (%.1f columns per expert)", c.n, got, want, cols)
		}
		if got := pm.linearPrefillFLOPs(c.n); got <= 2*mact*c.n {
			t.Errorf("MoE, %g tokens: %.4g FLOPs, not above the large-batch count %.4g", c.n, got, 2*mact*c.n)
		}
	}
	if cols := 512.0 * 8 / expertsTouched(128, 8, 512); cols < 31 || cols > 33 {
		t.Errorf("a 512-token ubatch on a 128-expert top-8 model gives %.1f columns per expert, want about 32", cols)
	}
	v := moe
	v.Engine = Engine{ID: "vllm", Policy: "vllm"}
	if got := newPerfModel(v, nil).linearPrefillFLOPs(512); math.Abs(got-2*mact*512) > 1e-9*got {
		t.Errorf("vllm MoE prefill: %.4g FLOPs, want %.4g (no column factor)", got, 2*mact*512)
	}
}

// Weights left in system RAM on a discrete GPU: a decode step below
// ggml's op-offload batch (32) runs them on the CPU, reading the dense
// weights and only the experts its tokens touch; from 32 tokens on each
// step copies them all over the host link, and a prompt does so once per
// 512-token ubatch.
func TestOffloadTerms(t *testing.T) {
	s := testServer()
	s.Engine = Engine{ID: "llama.cpp", Policy: "llamacpp", Backends: []Backend{CUDA}}
	s.Model.Experts, s.Model.TopK = 64, 4
	s.OffloadBytes = 100 * GiB
	s.HostBandwidthGBs = 80
	pm := newPerfModel(s, nil)
	off := float64(100 * GiB)
	share := pm.wt.bytes(s.Model, 1) / (pm.wt.streamed + pm.wt.experts)
	if share <= 0 || share >= 0.5 {
		t.Fatalf("one token reads %.2f of an MoE's weights", share)
	}
	if got, want := pm.offloadMs(1), off*share/(80e9*0.7)*1000; math.Abs(got-want) > 1e-9*want {
		t.Errorf("b=1: offload %.1f ms, want %.1f (CPU reads the touched share)", got, want)
	}
	link := off / (hostLinkGBs(s.Hardware) * 1e9) * 1000
	if got := pm.offloadMs(32); math.Abs(got-link) > 1e-9*link {
		t.Errorf("b=32: offload %.1f ms, want %.1f (all weights over the host link)", got, link)
	}
	if got := pm.prefillOffloadMs(1024); math.Abs(got-2*link) > 1e-9*link {
		t.Errorf("1024-token prompt: %.1f ms, want two ubatch copies, %.1f", got, 2*link)
	}
	if got, want := pm.prefillOffloadMs(520), link+pm.offloadMs(8); math.Abs(got-want) > 1e-9*want {
		t.Errorf("520-token prompt: %.1f ms, want one copy and an 8-token CPU pass, %.1f", got, want)
	}
	s.OffloadBytes = 0
	if pm := newPerfModel(s, nil); pm.offloadMs(1) != 0 || pm.prefillOffloadMs(1024) != 0 {
		t.Error("no offload, yet offload time")
	}
}

func TestHostLinkGBs(t *testing.T) {
	for _, c := range []struct {
		ic   Interconnect
		arch string
		want float64
	}{
		{Interconnect{Kind: "pcie4", GBs: 25}, "ada", 25},
		{Interconnect{Kind: "pcie5", GBs: 50}, "blackwell", 50},
		{Interconnect{Kind: "nvlink3", GBs: 300}, "ampere", 25},
		{Interconnect{Kind: "nvlink4", GBs: 450}, "hopper", 50},
		{Interconnect{Kind: "xgmi", GBs: 224}, "cdna3", 50},
	} {
		if got := hostLinkGBs(Hardware{Interconnect: c.ic, Arch: c.arch}); got != c.want {
			t.Errorf("%s %s: %g GB/s, want %g", c.ic.Kind, c.arch, got, c.want)
		}
	}
}
