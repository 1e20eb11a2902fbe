package planner_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// flagValue returns the value after flag in argv.
func flagValue(t *testing.T, argv []string, flag string) string {
	t.Helper()
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag {
			return argv[i+1]
		}
	}
	t.Fatalf("flag %s missing from %v", flag, argv)
	return ""
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func planFor(t *testing.T, c *planner.Catalog, model, hw string, devs, users int, engine planner.EngineID) planner.Candidate {
	t.Helper()
	m, _ := c.FindModel(model)
	h, _ := c.FindHardware(hw)
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: devs, Model: m,
		Workload: planner.Workload{Prompt: 2048, Gen: 512, Concurrency: users}, Engines: []planner.EngineID{engine}})
	best, ok := res.Best()
	if !ok {
		t.Fatalf("no %s plan for %s on %s: %+v", engine, model, hw, res.Dropped)
	}
	return best
}

// The flags of each engine agree with the plan: KV capacity behind
// --max-num-seqs × --max-model-len, per-slot context of -c/-np, TGI's token
// limits, Ollama's parallel × context.
func TestLaunchFlagsMatchPlan(t *testing.T) {
	c := catalog(t)
	t.Run("vllm", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-a100-sxm4-80gb", 1, 64, planner.VLLM)
		l, err := planner.LaunchCommand(p, false)
		if err != nil {
			t.Fatal(err)
		}
		seqs, maxLen := atoi(t, flagValue(t, l.Argv, "--max-num-seqs")), atoi(t, flagValue(t, l.Argv, "--max-model-len"))
		if seqs*maxLen > int64(p.Fit.MaxKVTokens) {
			t.Errorf("--max-num-seqs %d × --max-model-len %d exceeds the KV pool of %d tokens", seqs, maxLen, p.Fit.MaxKVTokens)
		}
		// The plan's 2560 tokens plus room for the chat template (256,
		// rounded to 256).
		if maxLen != 2816 || seqs != int64(p.Concurrency) {
			t.Errorf("max-model-len %d, seqs %d; plan context 2560 (+256 for the template), concurrency %d", maxLen, seqs, p.Concurrency)
		}
	})
	t.Run("vllm tensor parallel", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.3-70B-Instruct", "nvidia-h100-sxm5-80gb", 4, 32, planner.VLLM)
		l, _ := planner.LaunchCommand(p, false)
		if tp := flagValue(t, l.Argv, "--tensor-parallel-size"); tp != strconv.Itoa(p.Devices) || p.Devices < 2 {
			t.Errorf("tensor parallel flag %s, plan TP %d", tp, p.Devices)
		}
	})
	t.Run("llama-server", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-2-7b-chat-hf", "amd-ryzen-ai-max-395", 1, 8, planner.LlamaCpp)
		l, _ := planner.LaunchCommand(p, false)
		cells, np := atoi(t, flagValue(t, l.Argv, "-c")), atoi(t, flagValue(t, l.Argv, "-np"))
		if cells/np != 2816 {
			t.Errorf("-c %d / -np %d = %d tokens per slot, want the 2560-token context + 256 for the template", cells, np, cells/np)
		}
		if ngl := atoi(t, flagValue(t, l.Argv, "-ngl")); ngl != int64(p.Fit.GPULayers) {
			t.Errorf("-ngl %d, plan %d", ngl, p.Fit.GPULayers)
		}
	})
	t.Run("llama-server MoE experts in RAM", func(t *testing.T) {
		p := planFor(t, c, "openai/gpt-oss-120b", "nvidia-rtx-4090", 1, 1, planner.LlamaCpp)
		l, _ := planner.LaunchCommand(p, false)
		if p.Fit.CPUMoELayers <= 0 {
			t.Fatalf("gpt-oss-120b on a 4090 planned without --n-cpu-moe: %v", p.Fit.Reasons)
		}
		if n := atoi(t, flagValue(t, l.Argv, "--n-cpu-moe")); n != int64(p.Fit.CPUMoELayers) {
			t.Errorf("--n-cpu-moe %d, plan %d", n, p.Fit.CPUMoELayers)
		}
		if ngl := atoi(t, flagValue(t, l.Argv, "-ngl")); ngl != int64(p.Scenario.Model.Layers+1) {
			t.Errorf("-ngl %d: every layer's attention stays on the device under --n-cpu-moe", ngl)
		}
		if !strings.Contains(strings.Join(l.Notes, "\n"), "-ub") {
			t.Errorf("no note on -ub for weights in RAM: %v", l.Notes)
		}
	})
	t.Run("tgi", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-l40s", 1, 16, planner.TGI)
		l, _ := planner.LaunchCommand(p, false)
		total, in := atoi(t, flagValue(t, l.Argv, "--max-total-tokens")), atoi(t, flagValue(t, l.Argv, "--max-input-tokens"))
		if in != total-1 || total != 2816 {
			t.Errorf("max-input %d, max-total %d", in, total)
		}
		if n := atoi(t, flagValue(t, l.Argv, "--max-concurrent-requests")); n != int64(p.Concurrency) {
			t.Errorf("max-concurrent-requests %d, plan %d", n, p.Concurrency)
		}
	})
	t.Run("ollama", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090", 1, 4, planner.Ollama)
		l, _ := planner.LaunchCommand(p, false)
		if l.Env["OLLAMA_NUM_PARALLEL"] != strconv.Itoa(p.Concurrency) || l.Env["OLLAMA_CONTEXT_LENGTH"] != "2816" {
			t.Errorf("ollama env %v for concurrency %d", l.Env, p.Concurrency)
		}
	})
	t.Run("sglang docker", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-h100-sxm5-80gb", 1, 32, planner.SGLang)
		l, _ := planner.LaunchCommand(p, true)
		s := l.String()
		if !strings.Contains(s, "docker run") || !strings.Contains(s, "lmsysorg/sglang") || !strings.Contains(s, "--mem-fraction-static") {
			t.Errorf("docker command:\n%s", s)
		}
		if !strings.Contains(s, " -e HF_TOKEN ") {
			t.Errorf("docker command does not pass HF_TOKEN for gated repos:\n%s", s)
		}
	})
	t.Run("llama-server docker", func(t *testing.T) {
		for _, x := range []struct{ hw, image, device string }{
			{"nvidia-rtx-4090", "llama.cpp:server-cuda ", "--gpus all"},
			{"amd-ryzen-ai-max-395", "llama.cpp:server-rocm ", "--device /dev/kfd"},
			{"nvidia-rtx-4090", "llama.cpp:server-cuda-b6500 ", "--gpus all"},
		} {
			p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", x.hw, 1, 4, planner.LlamaCpp)
			rel := ""
			if strings.Contains(x.image, "-b6500") {
				rel = "b6500"
			}
			l, _ := planner.LaunchFor(p, planner.LaunchOptions{Docker: true, Release: rel})
			s := l.String() + " "
			if !strings.Contains(s, x.image) || !strings.Contains(s, x.device) || !strings.Contains(s, "-m '/models/<a "+strings.ToUpper(p.Quant)+" GGUF") ||
				!strings.Contains(s, `-v "$PWD:/models"`) || !strings.Contains(s, "--host 0.0.0.0") {
				t.Errorf("%s: docker command:\n%s", x.hw, s)
			}
		}
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "apple-m4-max-40c", 1, 4, planner.LlamaCpp)
		if l, _ := planner.LaunchCommand(p, true); strings.Contains(l.String(), "docker run") || !strings.Contains(l.String(), "Metal") {
			t.Errorf("Apple silicon: docker command or no note:\n%s", l.String())
		}
	})
	t.Run("ROCm images", func(t *testing.T) {
		for _, x := range []struct {
			hw     string
			engine planner.EngineID
			image  string
		}{
			{"amd-ryzen-ai-max-395", planner.Ollama, " ollama/ollama:0.32.15-rocm"},
			{"amd-mi300x", planner.TGI, "text-generation-inference:3.3.5-rocm "},
			{"amd-mi300x", planner.VLLM, " vllm/vllm-openai-rocm:v0.11.0 "},
			{"nvidia-h100-sxm5-80gb", planner.TGI, "text-generation-inference:3.3.5 "},
		} {
			p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", x.hw, 1, 4, x.engine)
			l, _ := planner.LaunchCommand(p, true)
			if s := l.String() + " "; !strings.Contains(s, x.image) {
				t.Errorf("%s on %s: want image %q in\n%s", x.engine, x.hw, x.image, s)
			}
		}
	})
	t.Run("ollama docker is one command", func(t *testing.T) {
		p := planFor(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090", 1, 4, planner.Ollama)
		l, _ := planner.LaunchCommand(p, true)
		first := l.String()
		if !strings.Contains(first, "docker exec ollama ollama create") || !strings.Contains(first, "FROM /models/") ||
			!strings.Contains(first, "--name ollama") || !strings.Contains(first, `-v "$PWD:/models"`) || strings.Contains(first, "FROM ./") {
			t.Errorf("ollama docker: the model must be created inside the container from the mounted folder:\n%s", first)
		}
		if strings.Contains(first, "HF_TOKEN") || !strings.Contains(first, "-e OLLAMA_CONTEXT_LENGTH=") ||
			!strings.Contains(first, "-e OLLAMA_HOST=0.0.0.0:11434 ") || !strings.Contains(first, "-p 127.0.0.1:11434:11434") {
			t.Errorf("ollama docker command:\n%s", first)
		}
		// The environment goes out sorted, not in Go's random map order.
		if a, b := strings.Index(first, "OLLAMA_CONTEXT_LENGTH"), strings.Index(first, "OLLAMA_NUM_PARALLEL"); a < 0 || b < a {
			t.Errorf("environment not sorted:\n%s", first)
		}
		for i := 0; i < 20; i++ {
			if l, _ := planner.LaunchCommand(p, true); l.String() != first {
				t.Fatalf("run %d printed another command:\n%s\nvs\n%s", i, l.String(), first)
			}
		}
	})
}

// Plans never recommend what has no kernel: W8A8-INT8 on RDNA3.5, GGUF in
// vLLM, FP8 on an APU without FP8.
func TestPlanDropsMissingKernels(t *testing.T) {
	c := catalog(t)
	m, _ := c.FindModel("meta-llama/Llama-2-7b-chat-hf")
	h, _ := c.FindHardware("amd-ryzen-ai-max-395")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
		Workload: planner.Workload{Prompt: 278, Gen: 174, Concurrency: 16}})
	for _, r := range res.Ranked {
		if r.Quant == "w8a8-int8" || r.Quant == "fp8" || (r.Engine == planner.VLLM && strings.HasPrefix(r.Quant, "q")) {
			t.Errorf("ranked %s %s on Strix Halo", r.Engine, r.Quant)
		}
	}
	found := false
	for _, d := range res.Dropped {
		if d.Quant == "w8a8-int8" && strings.Contains(d.Why, "RDNA3.5") {
			found = true
		}
	}
	if !found {
		t.Error("W8A8-INT8 should be dropped with the RDNA3.5 reason")
	}
	if len(res.Ranked) == 0 || len(res.Pareto) == 0 {
		t.Fatal("nothing ranked")
	}
	for i := 1; i < len(res.Ranked); i++ {
		if res.Ranked[i].Why == "" {
			t.Errorf("runner-up %d (%s) has no explanation", i, res.Ranked[i].Label())
		}
	}
}

// Seed 002 table: vLLM and llama.cpp on Strix Halo at c=1/8/16. The
// predictions are printed; TPOT must be within 25% for vLLM f16.
func TestSeedStrixHaloTable(t *testing.T) {
	c := catalog(t)
	cases := []struct {
		engine, quant    string
		conc             int
		ttft, tpot, outs float64
	}{
		{"vllm", "f16", 1, 121.23, 115.88, 8.61},
		{"vllm", "f16", 8, 536.74, 135.23, 49.41},
		{"vllm", "f16", 16, 871.62, 162.64, 72.17},
		{"vllm", "gptq-int4", 16, 787.02, 90.31, 148.91},
		{"llama.cpp", "f16", 1, 200.52, 76.32, 12.75},
		{"llama.cpp", "q8_0", 16, 395.97, 71.05, 161.34},
		{"llama.cpp", "q4_k_m", 16, 381.53, 64.94, 178.68},
	}
	for _, cs := range cases {
		s := scenario(t, c, "meta-llama/Llama-2-7b-chat-hf", "amd-ryzen-ai-max-395", cs.engine, cs.quant, "f16")
		w := planner.Workload{Prompt: 278, Gen: 174, Concurrency: cs.conc, Serving: true, VariableLengths: true}
		if cs.engine == "llama.cpp" {
			w.Prompt = 37 // the llama.cpp runs report fewer input tokens (chat template off)
		}
		p := planner.Predict(s, w, c.Perf)
		t.Logf("%-9s %-9s c=%-2d TTFT %6.0f (seed %6.0f)  TPOT %5.1f (seed %5.1f)  out %6.1f tok/s (seed %6.1f)",
			cs.engine, cs.quant, cs.conc, float64(p.TTFT), cs.ttft, float64(p.TPOT), cs.tpot, float64(p.TotalTPS), cs.outs)
		if cs.engine == "vllm" && cs.quant == "f16" {
			if e := pct(float64(p.TPOT), cs.tpot); e > 25 || e < -25 {
				t.Errorf("vLLM TPOT at c=%d off by %+.0f%%", cs.conc, e)
			}
		}
	}
}
