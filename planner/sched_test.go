package planner

import (
	"math"
	"strings"
	"testing"
)

// A burst larger than the engine admits waits for slots: mean TTFT grows
// with the burst past the admission cap while throughput levels off, and
// a burst that fits at once has TTFT near its own prefill.
func TestBurstWaitsForSlots(t *testing.T) {
	s := testServer()
	pm := newPerfModel(s, nil)
	base := Workload{Kind: WorkloadBurst, Prompt: 1024, Gen: 128, Serving: true}
	capN := admissionCap(s, base)
	if capN < 2 {
		t.Fatalf("admission cap %d", capN)
	}
	small, big := base, base
	small.Burst, big.Burst = capN/2, 4*capN
	ps, pb := predictBurst(pm, small), predictBurst(pm, big)
	if pb.TTFT <= 2*ps.TTFT {
		t.Errorf("4× the cap waits too little: TTFT %v vs %v at half the cap", pb.TTFT, ps.TTFT)
	}
	if pb.Concurrency != capN {
		t.Errorf("running %d at once, cap %d", pb.Concurrency, capN)
	}
	// Throughput at 4× the cap is within a factor of the cap's own.
	full := base
	full.Burst = capN
	pf := predictBurst(pm, full)
	if r := float64(pb.TotalTPS) / float64(pf.TotalTPS); r < 0.7 || r > 1.4 {
		t.Errorf("throughput at 4× cap is %.2f× that at the cap", r)
	}
	// Median figures of the same burst are positive and finite.
	med := big
	med.Median = true
	if pm := predictBurst(pm, med); !(pm.TTFT > 0) || !(pm.TPOT > 0) {
		t.Errorf("median burst figures %v %v", pm.TTFT, pm.TPOT)
	}
}

// The per-sequence overhead makes large batches' steps slower, never
// one sequence's.
func TestSeqOverheadScalesWithBatch(t *testing.T) {
	s := testServer()
	p := DefaultPerfParams()
	p.SeqOverheadUs = map[string]float64{string(s.Engine.ID): 40}
	with, without := newPerfModel(s, &p), newPerfModel(s, nil)
	for _, c := range []struct {
		b    int
		want float64 // ms added
	}{{1, 0.04}, {1000, 40}} {
		a, _ := with.decodeStep(c.b, 500)
		z, _ := without.decodeStep(c.b, 500)
		if d := a - z; d < c.want*0.99 || d > c.want*1.01 {
			t.Errorf("batch %d: overhead adds %.3f ms, want %.3f", c.b, d, c.want)
		}
	}
}

func TestGGMLEra(t *testing.T) {
	for v, want := range map[string]string{
		"b6918 (2f68ce7cf)": "2025", "b7948 (b828e18c7)": "2026", "b3622 (93bc3839)": "2024", "b1000": "2023",
		"May-2024 master": "2024", "Aug-2025": "2025", "8e672ef (see notes)": "2023", "5143fa8": "2025", "79c1160/5143fa8": "2026", "d05fe1d": "2026", "": "2026", "b": "2026", "8E672EF": "2026", "b3622ab": "2026", "b1000-cuda": "2023",
	} {
		if got := ggmlEra(v); got != want {
			t.Errorf("ggmlEra(%q) = %s, want %s", v, got, want)
		}
	}
}

// A llama.cpp build's year reaches the prefill model as the year
// boundaries it is older than, so an older build carries every feature a
// newer old build does (an unseen older year is predicted at least as
// slow as the oldest seen), and the decode model as one feature per year.
func TestGGMLBuildFeatures(t *testing.T) {
	for era, want := range map[string]string{
		"2023": "ggml-before=2024 ggml-before=2025 ggml-before=2026",
		"2024": "ggml-before=2025 ggml-before=2026",
		"2025": "ggml-before=2026",
		"2026": "",
	} {
		if got := strings.Join(ggmlBuildFeatures(era, false), " "); got != want {
			t.Errorf("prefill features of a %s build = %q, want %q", era, got, want)
		}
		if got := strings.Join(ggmlBuildFeatures(era, true), " "); got != "ggml-era="+era {
			t.Errorf("decode features of a %s build = %q, want ggml-era=%s", era, got, era)
		}
	}
	s := Scenario{Engine: Engine{ID: LlamaCpp, Policy: PolicyLlamaCpp}, EngineVersion: "8e672ef (see notes)"}
	if f := strings.Join(Features(s, Metal, false), " "); !strings.Contains(f, "ggml-before=2024") || strings.Contains(f, "ggml-era=") {
		t.Errorf("prefill features of a 2023 llama.cpp build: %s", f)
	}
	s.Engine = Engine{ID: VLLM, Policy: PolicyVLLM}
	if f := strings.Join(Features(s, CUDA, false), " "); strings.Contains(f, "ggml-") || f != strings.Join(Features(s, CUDA, true), " ") {
		t.Errorf("a vLLM scenario's prefill features differ from its decode ones or carry llama.cpp build features: %s", f)
	}
}

// The scheduler's limits follow the device and the engine's release:
// vLLM V1's API-server defaults by device, V0's 256 sequences with a
// 512-token (before 0.6.5) or 2048-token chunk budget when it chunks, and
// whole prompts, max(max_model_len, 2048), when it does not.
func TestEngineLimits(t *testing.T) {
	hopper := testServer().Hardware
	hopper.Memory = 80 * GiB
	a100 := hopper
	a100.Arch, a100.Compute = "ampere", "8.0"
	ada := hopper
	ada.Arch, ada.Memory = "ada", 24*GiB
	strix := hopper
	strix.Arch, strix.Memory = "rdna3.5", 128*GiB
	long, short := testServer().Model, testServer().Model
	long.MaxContext, short.MaxContext = 131072, 8192
	cases := []struct {
		policy, release string
		hw              Hardware
		model           Model
		seqs, budget    int
	}{
		{"vllm", "", hopper, long, 1024, 8192},
		{"vllm", "0.11.0", a100, long, 256, 2048}, // A100 keeps the small defaults
		{"vllm", "0.11.0", ada, long, 256, 2048},
		{"vllm", "0.8.2", hopper, long, 1024, 8192},
		{"vllm", "0.7.1", hopper, long, 256, 2048},  // V0 chunks past 32K, 2048 from 0.6.5
		{"vllm", "0.6.0", a100, long, 256, 512},     // ... 512 before it
		{"vllm", "0.6.0", hopper, short, 256, 8192}, // whole prompts: max(max_model_len, 2048)
		{"vllm", "0.4.3", a100, long, 256, 131072},  // no chunking before 0.5.3
		{"trtllm", "", hopper, long, 2048, 8192},
		{"llamacpp", "", strix, long, 4, 2048},
	}
	for _, c := range cases {
		s := testServer()
		s.Engine.Policy, s.EngineVersion, s.Hardware, s.Model = Policy(c.policy), c.release, c.hw, c.model
		s.Concurrency = 0 // a GGML server on auto
		if l := limitsFor(s); l.maxSeqs != c.seqs || l.budget != c.budget {
			t.Errorf("%s %s on %s (%s context): %+v, want %d seqs %d tokens", c.policy, c.release, c.hw.Arch, c.model.MaxContext, l, c.seqs, c.budget)
		}
		// The memory plan profiles the same defaults the scheduler runs.
		if c.policy == "vllm" {
			if n, tok := vllmBatchDefaults(s, s.maxModelLen()); n != c.seqs || int(tok) != c.budget || vllmMaxSeqs(s) != c.seqs {
				t.Errorf("vllm %s: profile run %d seqs %d tokens, scheduler %d/%d", c.release, n, tok, c.seqs, c.budget)
			}
		}
	}
}

func TestReleaseLine(t *testing.T) {
	for v, want := range map[string]string{
		"v0.11.0": "0.11", "0.6.1.post2": "0.6", "0.4.3": "0.4", "v0.5.3rc0": "0.5", "v1.2.0rc1": "1.2",
		"MLPerf v4.1 submission": "", "2025-08 source build": "", "docs@00f3768 (~v1.0)": "", "": "", "v.1": "",
	} {
		if got := releaseLine(v); got != want {
			t.Errorf("releaseLine(%q) = %q, want %q", v, got, want)
		}
	}
}

// A Python engine loop admits a burst's requests between its steps
// (admitOverheadMs): a wave of N prompts ends N·cost later and its mean
// TTFT grows by (N+1)/2·cost; TensorRT-LLM's C++ executor pays none. Row
// inversion in FitPerf leaves the cost out, the fitted parameters it
// returns put it back.
func TestBurstAdmissionIsSerial(t *testing.T) {
	s := testServer()
	pm := newPerfModel(s, nil)
	if pm.admitOvh != pythonAdmitMs {
		t.Fatalf("vLLM admission %v ms, want %v", pm.admitOvh, pythonAdmitMs)
	}
	w := Workload{Kind: WorkloadBurst, Prompt: 256, Gen: 64, Serving: true}
	w.Burst = min(admissionCap(s, w), 200)
	free := pm
	free.admitOvh = 0
	with, without := predictBurst(pm, w), predictBurst(free, w)
	n, gen := float64(w.Burst), float64(w.Gen)
	span := func(p Prediction) float64 { return n * gen / float64(p.TotalTPS) * 1000 }
	if d, want := span(with)-span(without), n*pythonAdmitMs; d < want*0.99 || d > want*1.01 {
		t.Errorf("%d admissions lengthen the burst by %.1f ms, want %.1f", w.Burst, d, want)
	}
	if d, want := float64(with.TTFT-without.TTFT), (n+1)/2*pythonAdmitMs; d < want*0.99 || d > want*1.01 {
		t.Errorf("mean TTFT grows %.1f ms, want %.1f", d, want)
	}
	trt := s
	trt.Engine.ID, trt.Engine.Policy = "trtllm", "trtllm"
	if a := newPerfModel(trt, nil).admitOvh; a != 0 {
		t.Errorf("TensorRT-LLM admission %v ms, want 0", a)
	}
	p := DefaultPerfParams()
	p.inverting = true
	if a := newPerfModel(s, &p).admitOvh; a != 0 {
		t.Errorf("inverting rows with an admission cost of %v ms", a)
	}
	if fitted := FitPerf(&Catalog{}, nil, FitOptions{Rounds: 1}); fitted.inverting {
		t.Error("FitPerf returns parameters that leave the admission cost out")
	}
}

// Where the API server runs apart from the engine loop (vLLM V1,
// SGLang, TensorRT-LLM), every served request waits one front-end cost
// before the engine sees it, a lone one too; vLLM V0 steps in the API
// server's own loop and llama-server is one process, so theirs do not.
// A llama-bench row is not served and never pays it.
func TestLoneRequestPaysFrontEnd(t *testing.T) {
	w := Workload{Prompt: 512, Gen: 64, Concurrency: 1, Serving: true}
	p := DefaultPerfParams()
	p.RequestOverheadMs = map[string]float64{"vllm": 16, "llama.cpp": 16}
	for _, c := range []struct {
		engine, policy, version string
		serving                 bool
		want                    float64
	}{
		{"vllm", "vllm", "0.11.0", true, 16},
		{"vllm", "vllm", "", true, 16},
		{"vllm", "vllm", "0.6.3", true, 0},
		{"llama.cpp", "llamacpp", "", true, 0},
		{"vllm", "vllm", "0.11.0", false, 0},
	} {
		s := testServer()
		s.Engine.ID, s.Engine.Policy, s.EngineVersion = EngineID(c.engine), Policy(c.policy), c.version
		ww := w
		ww.Serving = c.serving
		with := predictWith(newPerfModel(s, &p), ww)
		without := predictWith(newPerfModel(s, nil), ww)
		if d := float64(with.TTFT - without.TTFT); d < c.want-1e-9 || d > c.want+1e-9 {
			t.Errorf("%s %q serving=%v: TTFT +%.3f ms, want +%g", c.engine, c.version, c.serving, d, c.want)
		}
	}
}

// trtllm-serve streams each token from the executor's own process, so a
// served TensorRT-LLM run pays trtllmServeStreamUs per running sequence
// per step: its TPOT at b sequences grows by b × that, once, in a closed
// loop and in a burst alike. An offline run (trtllm-bench takes outputs
// whole), an MLPerf harness and vLLM (another process streams) do not.
func TestServedTRTLLMStreamsInProcess(t *testing.T) {
	const b = 64
	closed := Workload{Kind: WorkloadClosed, Prompt: 256, Gen: 128, Concurrency: b, Serving: true}
	offline := closed
	offline.Kind = WorkloadOffline
	burst := closed
	burst.Kind, burst.Burst = WorkloadBurst, b
	for _, c := range []struct {
		name, engine, version string
		w                     Workload
		want                  float64 // ms added to one step at b sequences
	}{
		{"trtllm-serve, clients", "trtllm", "1.2.0", closed, b * trtllmServeStreamUs / 1000},
		{"trtllm-serve, newest", "trtllm", "", closed, b * trtllmServeStreamUs / 1000},
		{"trtllm-bench offline", "trtllm", "1.2.0", offline, 0},
		{"MLPerf harness", "trtllm", "MLPerf v4.1 submission", closed, 0},
		{"vLLM V1", "vllm", "0.11.0", closed, 0},
	} {
		s := testServer()
		s.Engine.ID, s.Engine.Policy, s.EngineVersion = EngineID(c.engine), Policy(c.engine), c.version
		pm := newPerfModel(s, nil)
		step, _ := pm.decodeStep(b, 320)
		streamed, _ := pm.forWorkload(c.w).decodeStep(b, 320)
		if d := streamed - step; math.Abs(d-c.want) > 1e-9 {
			t.Errorf("%s: a step at %d sequences grows %.3f ms, want %.3f", c.name, b, d, c.want)
		}
		twice, _ := pm.forWorkload(c.w).forWorkload(c.w).decodeStep(b, 320)
		if twice != streamed {
			t.Errorf("%s: the streaming cost is paid twice when passed on (%.3f vs %.3f ms)", c.name, twice, streamed)
		}
	}
	// Through the predictions: a served TensorRT-LLM burst's TPOT is
	// longer than the same burst's without the streaming cost.
	s := testServer()
	s.Engine.ID, s.Engine.Policy = "trtllm", "trtllm"
	pm := newPerfModel(s, nil)
	free := pm
	free.streamOvh = 0
	if with, without := predictBurst(pm, burst), predictBurst(free, burst); !(with.TPOT > without.TPOT) {
		t.Errorf("a trtllm-serve burst's TPOT %.2f ms is not above %.2f without streaming", with.TPOT, without.TPOT)
	}
}

// An engine the fit has no per-sequence cost for takes its rules' prior:
// TGI's Python shard decodes every request's token each step, so a TGI
// step at b sequences costs b × tgiShardSeqUs more than at none; a fitted
// value replaces the prior, and an engine without one (Ollama) pays 0.
func TestSeqOverheadPrior(t *testing.T) {
	s := testServer()
	s.Engine.ID, s.Engine.Policy = "tgi", "tgi"
	if got, want := firstOf(seqCosts(nil, s)), tgiShardSeqUs/1000; math.Abs(got-want) > 1e-12 {
		t.Errorf("TGI without a fitted value: %v ms per sequence, want %v", got, want)
	}
	p := DefaultPerfParams()
	p.SeqOverheadUs = map[string]float64{"tgi": 40}
	if got := firstOf(seqCosts(&p, s)); math.Abs(got-0.04) > 1e-12 {
		t.Errorf("TGI with a fitted 40 µs: %v ms, want 0.04", got)
	}
	o := s
	o.Engine.ID, o.Engine.Policy = "ollama", "ollama"
	if got := firstOf(seqCosts(nil, o)); got != 0 {
		t.Errorf("Ollama: %v ms per sequence, want 0", got)
	}
	pm := newPerfModel(s, nil)
	one, _ := pm.decodeStep(1, 320)
	many, _ := pm.decodeStep(65, 320)
	free := pm
	free.seqOvh = 0
	oneFree, _ := free.decodeStep(1, 320)
	manyFree, _ := free.decodeStep(65, 320)
	if d := (many - one) - (manyFree - oneFree); math.Abs(d-64*tgiShardSeqUs/1000) > 1e-9 {
		t.Errorf("64 more TGI sequences add %.3f ms of host work per step, want %.3f", d, 64*tgiShardSeqUs/1000)
	}
}

// firstOf is a pair's first value.
func firstOf(a, _ float64) float64 { return a }
