package planner_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

func catalog(t testing.TB) *planner.Catalog {
	t.Helper()
	c, probs, err := profiles.Load(profiles.Options{})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	return c
}

// modelOn looks up a catalog model and hardware, failing the test if
// either is missing.
func modelOn(t testing.TB, c *planner.Catalog, model, hw string) (planner.Model, planner.Hardware) {
	t.Helper()
	m, err := c.FindModel(model)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.FindHardware(hw)
	if err != nil {
		t.Fatal(err)
	}
	return m, h
}

func scenario(t testing.TB, c *planner.Catalog, model, hw, engine, quant, kv string) planner.Scenario {
	t.Helper()
	m, h := modelOn(t, c, model, hw)
	e, err := c.FindEngine(engine)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.FindQuant(quant)
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.FindKVType(kv)
	if err != nil {
		t.Fatal(err)
	}
	return planner.Scenario{Hardware: h, Devices: 1, Engine: e, Model: m, Quant: q, KV: k, Concurrency: 1, Mem: c.Memory}
}

func pct(got, want float64) float64 { return (got - want) / want * 100 }

// The seeds' KV capacities (happy_vllm model cards, seeds 000 and 001).
//
// Those cards print benchmark_llm_serving's estimate floored to a multiple
// of 25k tokens: make_readmes.py computes int(25 * (max_tokens // 25000))
// and prints "~%dk" (France-Travail/benchmark_llm_serving,
// src/benchmark_llm_serving/make_readmes.py, get_max_tokens_in_kv_cache and
// add_summary_section). "~125k" therefore means an estimate in
// [125000, 150000). The check is that the card would print the same figure
// for our prediction: floor(predicted / 25k) × 25k equals the seed.
func TestSeedKVCapacity(t *testing.T) {
	c := catalog(t)
	cases := []struct {
		name, model, hw, version string
		maxLen                   planner.Tokens
		seed                     float64
	}{
		{"CodeLlama-7B A100-80GB vLLM 0.4.3 ~100k", "codellama/CodeLlama-7b-Instruct-hf", "nvidia-a100-sxm4-80gb", "0.4.3", 0, 100000},
		// The seed says "H100" without the variant; the 80 GB H100 is
		// checked here (the image encoder's profile run, 8.4 GiB,
		// VLLMVisionProfilePeak, is what brings it into the interval).
		{"Phi-3-vision H100-80GB vLLM 0.6.3 ~125k", "microsoft/Phi-3-vision-128k-instruct", "nvidia-h100-sxm5-80gb", "0.6.3.post1", 100000, 125000},
		// Same language model without the image encoder, on the card the
		// same tool ran it on (measurements.csv, France-Travail A100 run).
		{"Phi-3-mini-128k A100-80GB vLLM 0.6.0 ~125k", "microsoft/Phi-3-mini-128k-instruct", "nvidia-a100-sxm4-80gb", "0.6.0", 0, 125000},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := seedFit(t, c, cs.model, cs.hw, cs.version, cs.maxLen)
			printed := 25000 * math.Floor(float64(r.MaxKVTokens)/25000)
			t.Logf("predicted %d tokens; the card would print ~%.0fk (seed ~%.0fk)", r.MaxKVTokens, printed/1000, cs.seed/1000)
			if printed != cs.seed {
				t.Errorf("KV tokens %d would print as ~%.0fk, seed says ~%.0fk", r.MaxKVTokens, printed/1000, cs.seed/1000)
			}
		})
	}
	// Known gap, kept visible: measurements.csv maps this seed to the 94 GB
	// H100 NVL like the source's other H100 runs. There we predict ~181k,
	// above the card's [125k, 150k) interval; about 13-22 GiB of that card's
	// non-KV memory is unexplained (docs/modeling.md §1.2). This bound only
	// guards against the gap growing.
	t.Run("Phi-3-vision H100-NVL known gap", func(t *testing.T) {
		r := seedFit(t, c, "microsoft/Phi-3-vision-128k-instruct", "nvidia-h100-nvl-94gb", "0.6.3.post1", 100000)
		if e := pct(float64(r.MaxKVTokens), 137500); e < 0 || e > 40 {
			t.Errorf("H100 NVL: %d tokens, %+.1f%% from the interval's midpoint 137.5k (known gap is +32%%)", r.MaxKVTokens, e)
		}
	})
}

// seedFit fits a model with vLLM defaults (bf16 weights and KV) at the
// given engine version and max_model_len (0: the model's own).
func seedFit(t *testing.T, c *planner.Catalog, model, hw, version string, maxLen planner.Tokens) planner.FitResult {
	t.Helper()
	s := scenario(t, c, model, hw, "vllm", "bf16", "bf16")
	s.EngineVersion = version
	s.Context = maxLen
	if s.Context == 0 {
		s.Context = s.Model.MaxContext
	}
	r, err := planner.Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Seed 002: Llama-2-7B f16 on Strix Halo 128 GB with vLLM at
// --gpu-memory-utilization 0.75 and llama.cpp -np 16 --kv-unified.
func TestSeedStrixHaloFit(t *testing.T) {
	c := catalog(t)
	s := scenario(t, c, "meta-llama/Llama-2-7b-chat-hf", "amd-ryzen-ai-max-395", "vllm", "f16", "f16")
	s.GPUMemoryUtilization = 0.75
	s.Concurrency = 16
	r, err := planner.Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != planner.Fits || r.Backend != planner.ROCm {
		t.Fatalf("vLLM verdict %s on %s: %v", r.Verdict, r.Backend, r.Reasons)
	}
	// "0.75 = just about bang on 90GiB on my setup (120GiB GTT)".
	if r.Breakdown.Budget != 90*planner.GiB {
		t.Errorf("budget %s, want 90 GiB", r.Breakdown.Budget)
	}
	// 90 GiB − 12.6 GiB weights − overheads, at 512 KiB/token.
	if r.MaxKVTokens < 130000 || r.MaxKVTokens > 160000 {
		t.Errorf("vLLM KV pool %d tokens, want 130k-160k", r.MaxKVTokens)
	}
	if r.Context != 4096 || r.MaxConcurrencyAtContext < 30 {
		t.Errorf("context %d, %d sequences of 4096", r.Context, r.MaxConcurrencyAtContext)
	}

	l := scenario(t, c, "meta-llama/Llama-2-7b-chat-hf", "amd-ryzen-ai-max-395", "llama.cpp", "f16", "f16")
	l.Concurrency = 16
	l.UnifiedKV = true
	l.TotalContext = 4096 // no -c: n_ctx_train of Llama-2
	lr, err := planner.Fit(l)
	if err != nil {
		t.Fatal(err)
	}
	if lr.Verdict != planner.Fits || lr.MaxKVTokens != 4096 || lr.GPULayers != 33 {
		t.Fatalf("llama.cpp: %s, %d cells, %d layers: %v", lr.Verdict, lr.MaxKVTokens, lr.GPULayers, lr.Reasons)
	}
	if lr.Breakdown.KVCache != 2*planner.GiB {
		t.Errorf("llama.cpp KV %s, want 2 GiB (32 × 4096 × 4096 × 2 × 2 B)", lr.Breakdown.KVCache)
	}
	// 16 slots share 4096 cells: 256 tokens each when all are busy.
	if lr.MaxContextAtConcurrency > 256 {
		t.Errorf("16 sequences should get ≤256 tokens each, got %d", lr.MaxContextAtConcurrency)
	}
}

// Fits with offload and does not fit: a 70B model on one 24 GB card.
func TestOffloadVerdicts(t *testing.T) {
	c := catalog(t)
	s := scenario(t, c, "meta-llama/Llama-3.3-70B-Instruct", "nvidia-rtx-4090", "llama.cpp", "q4_k_m", "f16")
	s.Context = 8192
	s.HostMemory = 64 * planner.GiB
	r, err := planner.Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != planner.FitsWithOffload || r.GPULayers < 20 || r.GPULayers > 60 {
		t.Fatalf("70B q4_k_m on 4090: %s with %d layers on GPU: %v", r.Verdict, r.GPULayers, r.Reasons)
	}
	s.HostMemory = 16 * planner.GiB
	r, _ = planner.Fit(s)
	if r.Verdict != planner.DoesNotFit {
		t.Errorf("with 16 GiB of RAM it cannot fit, got %s", r.Verdict)
	}
	v := scenario(t, c, "meta-llama/Llama-3.3-70B-Instruct", "nvidia-rtx-4090", "vllm", "bf16", "bf16")
	r, _ = planner.Fit(v)
	if r.Verdict != planner.DoesNotFit || len(r.Advice) == 0 {
		t.Errorf("vLLM bf16 70B on a 4090 must not fit and must advise: %+v", r)
	}
}

// An MoE too big for the card keeps expert tensors, not whole layers, in
// system RAM under llama-server (--n-cpu-moe): every layer stays on the
// device, and the experts of the fewest layers that make room go to RAM.
// Ollama, which has no such option, offloads layers; a model that fits
// streams nothing from RAM (the input embedding is gathered, not read).
func TestCPUMoEPlacement(t *testing.T) {
	c := catalog(t)
	s := scenario(t, c, "openai/gpt-oss-120b", "nvidia-rtx-4090", "llama.cpp", "mxfp4", "f16")
	s.HostMemory = 64 * planner.GiB
	r, err := planner.Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	layers := s.Model.Layers
	if r.Verdict != planner.FitsWithOffload || r.CPUMoELayers <= 0 || r.CPUMoELayers > layers || r.GPULayers != layers+1 {
		t.Fatalf("gpt-oss-120b on a 4090: %s, --n-cpu-moe %d, -ngl %d of %d: %v", r.Verdict, r.CPUMoELayers, r.GPULayers, layers+1, r.Reasons)
	}
	if r.Breakdown.Free < 0 || r.Breakdown.HostKV != 0 || r.Flags["n_cpu_moe"] != fmt.Sprint(r.CPUMoELayers) {
		t.Errorf("device free %s, KV in RAM %s, flags %v", r.Breakdown.Free, r.Breakdown.HostKV, r.Flags)
	}
	// One layer fewer would not fit: the count is the smallest.
	bpw := s.Quant.ExpertBPW
	if bpw == 0 {
		bpw = s.Quant.LinearBPW
	}
	perExpertLayer := float64(s.Model.ExpertParams()) * bpw / 8 / float64(layers)
	if float64(r.Breakdown.Free) >= perExpertLayer {
		t.Errorf("%s free on the device: a layer's experts (%.2f GiB) would fit back", r.Breakdown.Free, perExpertLayer/float64(planner.GiB))
	}
	// --n-cpu-moe as given: all experts in RAM leaves the card mostly free.
	all := s
	all.CPUMoELayers = layers
	if ra, _ := planner.Fit(all); ra.CPUMoELayers != layers || ra.GPULayers != layers+1 || ra.OffloadBytes <= r.OffloadBytes || ra.Breakdown.Free <= r.Breakdown.Free {
		t.Errorf("--n-cpu-moe %d: got %d, -ngl %d, %s streamed (auto %s), %s free (auto %s)", layers, ra.CPUMoELayers, ra.GPULayers, ra.OffloadBytes, r.OffloadBytes, ra.Breakdown.Free, r.Breakdown.Free)
	}
	o := scenario(t, c, "openai/gpt-oss-120b", "nvidia-rtx-4090", "ollama", "mxfp4", "f16")
	o.HostMemory = 64 * planner.GiB
	if r, _ := planner.Fit(o); r.CPUMoELayers != 0 || r.GPULayers > layers {
		t.Errorf("Ollama: --n-cpu-moe %d, -ngl %d; want layer offload", r.CPUMoELayers, r.GPULayers)
	}
	d := scenario(t, c, "meta-llama/Llama-3.3-70B-Instruct", "nvidia-rtx-4090", "llama.cpp", "q4_k_m", "f16")
	d.HostMemory = 64 * planner.GiB
	if r, _ := planner.Fit(d); r.CPUMoELayers != 0 {
		t.Errorf("a dense model got --n-cpu-moe %d", r.CPUMoELayers)
	}
	small := scenario(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090", "llama.cpp", "q4_k_m", "f16")
	if r, _ := planner.Fit(small); r.Verdict != planner.Fits || r.OffloadBytes != 0 {
		t.Errorf("8B on a 4090: %s with %s streamed from RAM", r.Verdict, r.OffloadBytes)
	}
}

// A model that fits on the card is bound by the card: a plan once charged
// every llama.cpp step for reading the CPU-side input embedding from RAM,
// doubling the predicted TPOT of an 8B model on a 4090.
func TestPlanFullyOnDeviceIsNotHostBound(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	h, _ := c.FindHardware("nvidia-rtx-4090")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{"llama.cpp"},
		Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}})
	if len(res.Ranked) == 0 {
		t.Fatal("no llama.cpp plan for an 8B model on a 4090")
	}
	for _, x := range res.Ranked {
		if x.Pred.Bound != "memory" && x.Pred.Bound != "compute" {
			t.Errorf("%s: bound by %q", x.Label(), x.Pred.Bound)
		}
	}
	// q4_k_m weights (~4.6 GiB) at ~1 TB/s: well under 10 ms per token.
	if tpot := res.Ranked[0].Pred.TPOT; tpot > 10 {
		t.Errorf("%s: TPOT %s", res.Ranked[0].Label(), tpot)
	}
}

// Contradictions give ErrInvalid with an explanation, never a panic.
func TestInvalidScenarios(t *testing.T) {
	c := catalog(t)
	base := scenario(t, c, "meta-llama/Llama-2-7b-chat-hf", "amd-ryzen-ai-max-395", "vllm", "f16", "f16")
	q4, _ := c.FindQuant("q4_k_m")
	q8kv, _ := c.FindKVType("q8_0")
	cases := map[string]func(s *planner.Scenario){
		"GGUF with vLLM on ROCm": func(s *planner.Scenario) { s.Quant = q4 },
		"q8_0 KV in vLLM":        func(s *planner.Scenario) { s.KV = q8kv },
		"negative context":       func(s *planner.Scenario) { s.Context = -5 },
		"absurd concurrency":     func(s *planner.Scenario) { s.Concurrency = 1_000_000 },
		"utilization 1.5":        func(s *planner.Scenario) { s.GPUMemoryUtilization = 1.5 },
		"metal on an APU":        func(s *planner.Scenario) { s.Backend = planner.Metal },
		"100 devices":            func(s *planner.Scenario) { s.Devices = 100 },
		"TP 3 with 32 heads":     func(s *planner.Scenario) { s.Devices = 3 },
		"context 100× the model": func(s *planner.Scenario) { s.Context = 409600 },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			s := base
			mod(&s)
			_, err := planner.Fit(s)
			if err == nil || !strings.Contains(err.Error(), "invalid scenario") {
				t.Fatalf("want an invalid-scenario error, got %v", err)
			}
		})
	}
}

// In-sample accuracy on the embedded published measurements (1,045 rows
// with their scenario columns) with the embedded fitted profile. The
// guards are the earlier issue's targets (ttft 25, tpot 20, total_out 20)
// and margins over the rest; the fit of 2026-11-28 (with the engine
// loop's admission cost and a lone request's front-end cost) reaches tg
// 7.5, pp 10.2, total_out 16.8, ttft 24.2, tpot 19.2, kv 8.5%. The fit is deterministic, so a guard near its
// figure is not a flaky test: a change that moves TPOT past 20 in-sample
// fails here. This guards against
// regressions; `headroom validate` prints the full report and
// docs/predictions.md the leave-one-source-out figures.
func TestValidateTargets(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	rep := planner.Validate(c, rows, c.Perf)
	targets := map[planner.Metric]float64{
		planner.MetricTG: 10, planner.MetricPP: 14, planner.MetricTotalOut: 20,
		planner.MetricTTFT: 25, planner.MetricTPOT: 20, planner.MetricKV: 10,
	}
	total, pred := 0, 0
	for m, r := range rep.Metrics {
		total += r.Rows
		pred += r.Predicted
		if tgt, ok := targets[m]; ok {
			t.Logf("%s: MdAPE %.1f%% (target %g), %d/%d predicted", m, r.MdAPE, tgt, r.Predicted, r.Rows)
			if r.MdAPE > tgt {
				t.Errorf("%s MdAPE %.1f%% above target %g%%", m, r.MdAPE, tgt)
			}
		}
	}
	if float64(pred) < 0.95*float64(total) {
		t.Errorf("only %d of %d rows predicted", pred, total)
	}
}

// Seed 000: CodeLlama-7B on A100 80GB, prefill ≈ 13.5k tok/s and ≈ 41 tok/s
// per request at 10 parallel requests (1024 in, 128 out). The card was
// written by benchmark_llm_serving, whose per-request speed counts from
// sending the request (TTFT included): RequestTPS.
func TestSeedCodeLlamaSpeed(t *testing.T) {
	c := catalog(t)
	s := scenario(t, c, "codellama/CodeLlama-7b-Instruct-hf", "nvidia-a100-sxm4-80gb", "vllm", "bf16", "bf16")
	s.EngineVersion = "0.4.3"
	p := planner.Predict(s, planner.Workload{Prompt: 1024, Gen: 128, Concurrency: 10, Serving: true}, c.Perf)
	pp := planner.Predict(s, planner.Workload{Prompt: 2048, Gen: 1, Concurrency: 1}, c.Perf)
	t.Logf("prefill %.0f tok/s (seed 13500), decode %.1f tok/s per request at c=10 (seed 41)", float64(pp.PrefillTPS), float64(p.RequestTPS))
	if e := pct(float64(pp.PrefillTPS), 13500); e < -25 || e > 25 {
		t.Errorf("prefill %+.0f%% off", e)
	}
	if e := pct(float64(p.RequestTPS), 41); e < -25 || e > 25 {
		t.Errorf("decode %+.0f%% off", e)
	}
}

func BenchmarkFit(b *testing.B) {
	c := catalog(b)
	s := scenario(b, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090", "vllm", "bf16", "bf16")
	for b.Loop() {
		_, _ = planner.Fit(s)
	}
}

// BenchmarkPlanAllDevices plans one model on every catalog device: all
// engines, formats, KV types, concurrency 1-512 and TP 1-8.
func BenchmarkPlanAllDevices(b *testing.B) {
	c := catalog(b)
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	req := planner.PlanRequest{Catalog: c, Devices: 8, Model: m, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 512}}
	devs := make([]int, len(c.Hardware))
	for i := range devs {
		devs[i] = 8
	}
	for b.Loop() {
		rows := planner.Compare(req, c.Hardware, devs)
		fits := 0
		for _, r := range rows {
			if r.Fits {
				fits++
			}
		}
		if fits < len(rows)/2 {
			b.Fatalf("only %d of %d devices fit an 8B model", fits, len(rows))
		}
	}
}

// A throughput row whose steps are bound by compute (MLPerf Offline,
// TensorRT-LLM FP8 on 8×H200) cannot be reproduced by any decode
// efficiency, so the decode pass skips it and the prefill pass fits the
// compute efficiency it implies, which then reproduces the row. Before,
// such rows informed neither efficiency.
func TestComputeBoundRowInformsPrefill(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	var row *planner.Measurement
	for i, m := range rows {
		if m.Hardware == "nvidia-h200-sxm-141gb" && m.Engine == "trtllm" && m.Metric == planner.MetricTotalOut {
			row = &rows[i]
			break
		}
	}
	if row == nil {
		t.Fatal("no H200 TensorRT-LLM total_out_tps row in the measurements")
	}
	// At the priors (before any fit) its steps are compute-bound.
	p := planner.DefaultPerfParams()
	if _, ok := planner.RowEfficiency(c, *row, &p, true); ok {
		t.Fatalf("decode pass inverted a compute-bound row: %+v", *row)
	}
	effP, ok := planner.RowEfficiency(c, *row, &p, false)
	if !ok || effP <= 0 || effP > 2 {
		t.Fatalf("prefill pass: efficiency %g, ok %v", effP, ok)
	}
	// Every prefill rate folds into the fit through its features; check
	// the inversion itself: a fit whose only prefill effect is this
	// efficiency reproduces the row.
	p.Prefill = planner.Effects{Intercept: math.Log(effP), Terms: map[string]float64{}}
	got, err := planner.PredictMeasurement(c, *row, &p)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got/row.Value-1) > 0.01 {
		t.Errorf("with η_p %.3f the row predicts %.0f, measured %.0f", effP, got, row.Value)
	}
	// A decode-bound row is left to the decode pass.
	for _, m := range rows {
		if m.Metric == planner.MetricTG && m.Hardware == "nvidia-rtx-4090" {
			if _, ok := planner.RowEfficiency(c, m, &p, false); ok {
				t.Errorf("prefill pass took a decode-bound tg row: %+v", m)
			}
			break
		}
	}
}

// Every engine has a label that fits a table column ("TGI", not "Text
// Generation Inference").
func TestEngineLabels(t *testing.T) {
	for _, e := range catalog(t).Engines {
		if l := e.Label(); l == "" || len([]rune(l)) > 14 {
			t.Errorf("engine %s: label %q (want 1 to 14 characters; set short in engines.toml)", e.ID, l)
		}
	}
}

// TestFindHardwareByMac: issue 15 found that `-H "mac studio"` suggested
// nothing; the Apple entries now name the Macs they ship in.
func TestFindHardwareByMac(t *testing.T) {
	c := catalog(t)
	cases := []struct {
		query   string
		want    string   // resolved id, or "" when an error is wanted
		matches []string // ids the ambiguity or not-found error must list
	}{
		{"M3 Ultra 80c", "apple-m3-ultra-80c", nil},
		{"Mac Studio M3 Ultra 256GB", "", []string{"apple-m3-ultra-60c-256gb", "apple-m3-ultra-80c-256gb"}},
		{"Mac Studio M3 Ultra", "", []string{"apple-m3-ultra-60c", "apple-m3-ultra-80c"}},
		{"mac studio", "", []string{"apple-m1-max-32c", "apple-m2-ultra-76c", "apple-m3-ultra-80c", "apple-m4-max-40c"}},
		{"mac stuido m3 ultra", "", []string{"apple-m3-ultra-60c"}},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			h, err := c.FindHardware(tc.query)
			if tc.want != "" {
				if err != nil || h.ID != tc.want {
					t.Fatalf("got %q, %v; want %s", h.ID, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("resolved to %s; want an error", h.ID)
			}
			for _, id := range tc.matches {
				if !strings.Contains(err.Error(), id) {
					t.Errorf("error %q does not offer %s", err, id)
				}
			}
		})
	}
}

// TestM3UltraPricedPerMemory: issue 15 found the 512 GB M3 Ultra priced at
// the 96 GB base model's $3,999.
func TestM3UltraPricedPerMemory(t *testing.T) {
	c := catalog(t)
	prev := 0.0
	for _, id := range []string{"apple-m3-ultra-60c", "apple-m3-ultra-60c-256gb", "apple-m3-ultra-80c-256gb", "apple-m3-ultra-80c"} {
		h, err := c.FindHardware(id)
		if err != nil {
			t.Fatal(err)
		}
		if h.PriceUSD <= prev {
			t.Errorf("%s (%s) at $%.0f, not above the smaller configuration's $%.0f", id, h.Memory, h.PriceUSD, prev)
		}
		prev = h.PriceUSD
	}
	if h, _ := c.FindHardware("apple-m3-ultra-60c"); h.PriceUSD != 3999 || h.Memory != 96*planner.GiB {
		t.Errorf("base Mac Studio M3 Ultra: %s at $%.0f, want 96 GiB at $3999", h.Memory, h.PriceUSD)
	}
}

// A CPU backend on an APU or SoC computes on the host cores, not the
// GPU the catalog's rates describe: vLLM on an M4 Max's CPU had the same
// prompt speed as llama.cpp on its 40-core GPU and ranked first there.
func TestCPUBackendOfSoCIsNotItsGPU(t *testing.T) {
	c := catalog(t)
	w := planner.Workload{Prompt: 1024, Gen: 128, Concurrency: 1}
	gpu := scenario(t, c, "Qwen/Qwen3-8B", "apple-m4-max-40c", "llama.cpp", "q8_0", "f16")
	gpu.Backend = planner.Metal
	cpu := gpu
	cpu.Backend = planner.CPU
	g, h := planner.Predict(gpu, w, c.Perf), planner.Predict(cpu, w, c.Perf)
	if !(g.PrefillTPS > 0) || !(h.PrefillTPS > 0) {
		t.Fatalf("prefill: metal %v, cpu %v tok/s", g.PrefillTPS, h.PrefillTPS)
	}
	if ratio := float64(g.PrefillTPS / h.PrefillTPS); ratio < 3 {
		t.Errorf("prefill on the M4 Max: metal %.0f tok/s, its CPU %.0f tok/s (%.1f×); want the GPU well ahead", g.PrefillTPS, h.PrefillTPS, ratio)
	}
}
