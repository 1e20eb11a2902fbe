package planner_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// fitCase is one configuration, fitted and turned into a candidate.
type fitCase struct {
	model, hw, quant, kv string
	engine               planner.EngineID
	ctx                  planner.Tokens
	users, devices       int
	unified              bool
	version              string
}

// candidate fits the case and returns it as a plan row would carry it.
func (f fitCase) candidate(t *testing.T, c *planner.Catalog) (planner.Candidate, error) {
	t.Helper()
	m, h := modelOn(t, c, f.model, f.hw)
	e, err := c.FindEngine(string(f.engine))
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.FindQuant(f.quant)
	if err != nil {
		t.Fatal(err)
	}
	kvID := f.kv
	if kvID == "" {
		kvID = "f16"
	}
	kv, err := c.FindKVType(kvID)
	if err != nil {
		t.Fatal(err)
	}
	s := planner.Scenario{Hardware: h, Devices: max(f.devices, 1), Engine: e, EngineVersion: f.version, Model: m, Quant: q, KV: kv,
		Context: f.ctx, Concurrency: max(f.users, 1), UnifiedKV: f.unified}
	r, err := planner.Fit(s)
	if err != nil {
		return planner.Candidate{}, err
	}
	b, _ := s.ResolveBackend()
	s.Backend = b
	return planner.Candidate{Scenario: &s, Engine: e.ID, Backend: b, Quant: q.ID, KVType: kv.ID, Devices: s.Devices, Fit: r,
		Concurrency: max(f.users, 1)}, nil
}

func (f fitCase) launch(t *testing.T, c *planner.Catalog, o planner.LaunchOptions) planner.Launch {
	t.Helper()
	cand, err := f.candidate(t, c)
	if err != nil {
		t.Fatalf("%+v: %v", f, err)
	}
	l, err := planner.LaunchFor(cand, o)
	if err != nil {
		t.Fatalf("%+v: %v", f, err)
	}
	return l
}

func hasArg(argv []string, flag string) bool {
	for _, a := range argv {
		if a == flag {
			return true
		}
	}
	return false
}

// Issue 18's defects 1-16, each on the configuration the issue names.
func TestLaunchIssue18Defects(t *testing.T) {
	c := catalog(t)
	llama8 := "meta-llama/Llama-3.1-8B-Instruct"
	t.Run("1 kv-unified -c is the planned pool, -np kept", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 16384, users: 4, unified: true}
		cand, err := f.candidate(t, c)
		if err != nil {
			t.Fatal(err)
		}
		l := f.launch(t, c, planner.LaunchOptions{})
		if got := atoi(t, flagValue(t, l.Argv, "-c")); got != int64(cand.Fit.MaxKVTokens) {
			t.Errorf("-c %d, the plan's pool is %d cells", got, cand.Fit.MaxKVTokens)
		}
		if np := flagValue(t, l.Argv, "-np"); np != "4" || !hasArg(l.Argv, "--kv-unified") {
			t.Errorf("-np %s, --kv-unified %v: want 4 slots sharing one pool", np, hasArg(l.Argv, "--kv-unified"))
		}
		split := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 4096, users: 4}
		if l := split.launch(t, c, planner.LaunchOptions{}); hasArg(l.Argv, "--kv-unified") {
			t.Errorf("--kv-unified on a split plan: %v", l.Argv)
		}
	})
	t.Run("2 Marlin only on CUDA sm80+", func(t *testing.T) {
		for _, x := range []struct{ hw, quant, want string }{
			{"nvidia-t4", "awq-int4", "awq"},
			{"amd-mi300x", "gptq-int4", "gptq"},
			{"nvidia-v100-sxm2-32gb", "gptq-int4", "gptq"},
			{"nvidia-l40s", "awq-int4", "awq_marlin"},
		} {
			l := fitCase{model: llama8, hw: x.hw, quant: x.quant, engine: planner.VLLM, ctx: 4096, users: 4}.launch(t, c, planner.LaunchOptions{})
			if got := flagValue(t, l.Argv, "--quantization"); got != x.want {
				t.Errorf("%s %s: --quantization %s, want %s", x.hw, x.quant, got, x.want)
			}
		}
		_, err := fitCase{model: llama8, hw: "nvidia-v100-sxm2-32gb", quant: "awq-int4", engine: planner.VLLM, ctx: 4096}.candidate(t, c)
		var u *planner.UnsupportedError
		if !errors.As(err, &u) || u.Reason != planner.ReasonComputeCapability {
			t.Errorf("AWQ on V100 (sm70, AWQ needs 7.5): %v", err)
		}
	})
	t.Run("3 no bf16 on vLLM below sm80", func(t *testing.T) {
		_, err := fitCase{model: llama8, hw: "nvidia-v100-sxm2-32gb", quant: "bf16", engine: planner.VLLM, ctx: 4096}.candidate(t, c)
		if !errors.Is(err, planner.ErrUnsupported) || !errors.Is(err, planner.ErrInvalid) {
			t.Errorf("bf16 on V100: %v", err)
		}
		if best := planFor(t, c, llama8, "nvidia-v100-sxm2-32gb", 1, 4, planner.VLLM); best.Quant == "bf16" || best.KVType == "bf16" {
			t.Errorf("V100 best plan is %s with %s KV", best.Quant, best.KVType)
		}
	})
	t.Run("4 checkpoints: real repo, or a placeholder no engine loads", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-l40s", quant: "awq-int4", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if m := l.Argv[2]; !strings.HasPrefix(m, "<") || !strings.Contains(m, "AWQ") || m == llama8 {
			t.Errorf("AWQ plan loads %q", m)
		}
		l = fitCase{model: llama8, hw: "nvidia-l40s", quant: "awq-int4", engine: planner.VLLM, ctx: 4096}.launch(t, c,
			planner.LaunchOptions{Checkpoint: "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"})
		if l.Argv[2] != "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4" {
			t.Errorf("given checkpoint not used: %v", l.Argv)
		}
		g := fitCase{model: llama8, hw: "nvidia-l40s", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if m := flagValue(t, g.Argv, "-m"); strings.HasSuffix(m, ".gguf") || !strings.HasPrefix(m, "<") {
			t.Errorf("GGUF plan -m %q: a made-up file name", m)
		}
	})
	t.Run("5 images per backend", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "amd-mi300x", quant: "bf16", engine: planner.SGLang, ctx: 4096}.launch(t, c, planner.LaunchOptions{Docker: true})
		if s := l.String(); !strings.Contains(s, "-rocm630-mi30x") || strings.Contains(s, "--gpus") {
			t.Errorf("SGLang on MI300X:\n%s", s)
		}
		l = fitCase{model: llama8, hw: "amd-mi300x", quant: "bf16", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{Docker: true})
		if s := l.String(); !strings.Contains(s, "vllm/vllm-openai-rocm:v0.11.0") || strings.Contains(s, "rocm/vllm") {
			t.Errorf("vLLM on MI300X:\n%s", s)
		}
		for _, e := range []planner.EngineID{planner.SGLang, planner.TGI} {
			_, err := fitCase{model: llama8, hw: "amd-rx-7900-xtx", quant: "bf16", engine: e, ctx: 4096}.candidate(t, c)
			var u *planner.UnsupportedError
			if !errors.As(err, &u) || u.Reason != planner.ReasonImageTarget {
				t.Errorf("%s on RX 7900 XTX (gfx1100): %v", e, err)
			}
		}
	})
	t.Run("6 SGLang compressed-tensors from 0.5.4", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "w8a8-int8", engine: planner.SGLang, ctx: 4096}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "0.5.3"}); hasArg(l.Argv, "compressed-tensors") {
			t.Errorf("0.5.3: %v", l.Argv)
		}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "0.5.4"}); flagValue(t, l.Argv, "--quantization") != "compressed-tensors" {
			t.Errorf("0.5.4: %v", l.Argv)
		}
	})
	t.Run("7 vLLM CPU KV space", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "cpu-ryzen-9-7950x-ddr5", quant: "bf16", engine: planner.VLLM, ctx: 32768}
		cand, err := f.candidate(t, c)
		if err != nil {
			t.Fatal(err)
		}
		l := f.launch(t, c, planner.LaunchOptions{})
		gib := atoi(t, l.Env["VLLM_CPU_KVCACHE_SPACE"])
		if need := float64(cand.Fit.MaxKVTokens) * float64(cand.Fit.KVBytesPerToken) / float64(planner.GiB); float64(gib) < need || gib <= 4 {
			t.Errorf("VLLM_CPU_KVCACHE_SPACE=%d GiB for a %.1f GiB pool", gib, need)
		}
		if !strings.Contains(l.String(), "VLLM_CPU_KVCACHE_SPACE=") {
			t.Errorf("not in the command:\n%s", l.String())
		}
		if d := f.launch(t, c, planner.LaunchOptions{Docker: true}); strings.Contains(d.String(), "docker run") {
			t.Errorf("the CUDA image for a CPU plan:\n%s", d.String())
		}
	})
	t.Run("8 engine version selects -fa syntax", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 4096}
		old := f.launch(t, c, planner.LaunchOptions{Release: "b6000"})
		if hasArg(old.Argv, "on") || !hasArg(old.Argv, "-fa") || !strings.Contains(old.Version, "b6000") {
			t.Errorf("b6000: %v (%s)", old.Argv, old.Version)
		}
		if now := f.launch(t, c, planner.LaunchOptions{Release: "b6500"}); flagValue(t, now.Argv, "-fa") != "on" {
			t.Errorf("b6500: %v", now.Argv)
		}
		f.version = "b6000" // the scenario's version is the default
		if l := f.launch(t, c, planner.LaunchOptions{}); hasArg(l.Argv, "on") {
			t.Errorf("scenario at b6000: %v", l.Argv)
		}
	})
	t.Run("9 TensorRT-LLM fp8 KV through the options file", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.TRTLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if flagValue(t, l.Argv, "--extra_llm_api_options") != "extra-llm-api-options.yaml" || len(l.Files) != 1 ||
			!strings.Contains(l.Files[0].Content, "dtype: fp8") {
			t.Errorf("%v %+v", l.Argv, l.Files)
		}
		if s := l.String(); !strings.Contains(s, "cat > extra-llm-api-options.yaml <<'HEADROOM_EOF'") || l.Argv[1] != llama8 {
			t.Errorf("script:\n%s", s)
		}
	})
	t.Run("10 TGI limits it enforces", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-l40s", quant: "bf16", engine: planner.TGI, ctx: 4096, users: 2}.launch(t, c, planner.LaunchOptions{Users: 16})
		if hasArg(l.Argv, "--max-batch-total-tokens") {
			t.Errorf("--max-batch-total-tokens is ignored for flash-attention models: %v", l.Argv)
		}
		if n := flagValue(t, l.Argv, "--max-concurrent-requests"); n != "16" {
			t.Errorf("--max-concurrent-requests %s: 16 users would get 429s", n)
		}
	})
	t.Run("11 SGLang keeps Marlin", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "awq-int4", engine: planner.SGLang, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if q := flagValue(t, l.Argv, "--quantization"); q != "awq_marlin" {
			t.Errorf("--quantization %s", q)
		}
	})
	t.Run("12 flash-attention coverage per build", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", kv: "bf16", engine: planner.LlamaCpp, ctx: 4096}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "b6500"}); flagValue(t, l.Argv, "-fa") != "off" {
			t.Errorf("b6500 bf16 KV on CUDA: %v", l.Argv)
		}
		if l := f.launch(t, c, planner.LaunchOptions{}); flagValue(t, l.Argv, "-fa") != "on" {
			t.Errorf("master bf16 KV on CUDA: %v", l.Argv)
		}
		g := fitCase{model: "openai/gpt-oss-20b", hw: "nvidia-l40s", quant: "mxfp4", kv: "q8_0", engine: planner.LlamaCpp, ctx: 4096, version: "b6500"}
		if _, err := g.candidate(t, c); !errors.Is(err, planner.ErrUnsupported) {
			t.Errorf("gpt-oss q8_0 KV at b6500: %v", err)
		}
	})
	t.Run("13 context has room for the chat template", func(t *testing.T) {
		m, h := modelOn(t, c, llama8, "nvidia-l40s")
		res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Model: m, Engines: []planner.EngineID{planner.VLLM},
			Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4}})
		best, ok := res.Best()
		if !ok {
			t.Fatal("no plan")
		}
		l, err := planner.LaunchCommand(best, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := atoi(t, flagValue(t, l.Argv, "--max-model-len")); n < 1280+128 || n != int64(planner.WorkloadContext(1024, 256)) {
			t.Errorf("--max-model-len %d for 1280 tokens of prompt and output; WorkloadContext %d", n, planner.WorkloadContext(1024, 256))
		}
		// A context the user set is launched as set.
		l = fitCase{model: llama8, hw: "nvidia-l40s", quant: "bf16", engine: planner.VLLM, ctx: 8192}.launch(t, c, planner.LaunchOptions{})
		if n := flagValue(t, l.Argv, "--max-model-len"); n != "8192" {
			t.Errorf("-c 8192 launched as --max-model-len %s", n)
		}
	})
	t.Run("14 format notes", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "fp8", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if l.Argv[2] != llama8 || flagValue(t, l.Argv, "--quantization") != "fp8" {
			t.Errorf("dynamic FP8 from the BF16 repo: %v", l.Argv)
		}
		l = fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "fp8", engine: planner.VLLM, ctx: 4096}.launch(t, c,
			planner.LaunchOptions{Checkpoint: "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"})
		if hasArg(l.Argv, "--quantization") {
			t.Errorf("a pre-quantized FP8 checkpoint (compressed-tensors) with --quantization fp8: %v", l.Argv)
		}
		l = fitCase{model: llama8, hw: "nvidia-l40s", quant: "bnb-nf4", engine: planner.TGI, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if flagValue(t, l.Argv, "--model-id") != llama8 || strings.Contains(strings.Join(l.Notes, " "), "checkpoint of") {
			t.Errorf("TGI quantizes bitsandbytes on load: %v %v", l.Argv, l.Notes)
		}
		l = fitCase{model: "openai/gpt-oss-20b", hw: "nvidia-h100-sxm5-80gb", quant: "mxfp4", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if l.Argv[2] != "openai/gpt-oss-20b" || strings.Contains(strings.Join(l.Notes, " "), "placeholder") {
			t.Errorf("gpt-oss is published in MXFP4: %v %v", l.Argv, l.Notes)
		}
	})
	t.Run("15 vLLM admits the workload's users", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "awq-int4", engine: planner.VLLM, ctx: 32768, users: 6}.launch(t, c, planner.LaunchOptions{Users: 32})
		if n := flagValue(t, l.Argv, "--max-num-seqs"); n != "32" {
			t.Errorf("--max-num-seqs %s for 32 users", n)
		}
	})
	t.Run("16 TGI docker shares the HF cache at /data", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-l40s", quant: "bf16", engine: planner.TGI, ctx: 4096}.launch(t, c, planner.LaunchOptions{Docker: true})
		if s := l.String(); !strings.Contains(s, `-v "$HOME/.cache/huggingface:/data"`) {
			t.Errorf("TGI docker:\n%s", s)
		}
	})
}

// Issue 18's "missing what an expert would add".
func TestLaunchExpertDefaults(t *testing.T) {
	c := catalog(t)
	llama8 := "meta-llama/Llama-3.1-8B-Instruct"
	t.Run("images pinned to the release", func(t *testing.T) {
		for _, id := range []planner.EngineID{planner.VLLM, planner.LlamaCpp, planner.Ollama, planner.SGLang, planner.TGI, planner.TRTLLM} {
			for _, r := range planner.Releases(id) {
				if r.Release.IsNewest() {
					continue // main/master has no release tag
				}
				for _, img := range []string{r.Image, r.ROCmImage} {
					if img != "" && (strings.HasSuffix(img, ":latest") || !strings.Contains(img, strings.TrimPrefix(r.Release.String(), "v"))) {
						t.Errorf("%s %s: image %s not pinned to the release", id, r.Release, img)
					}
				}
			}
		}
	})
	t.Run("ports on 127.0.0.1, ROCm devices, HF_TOKEN", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "amd-mi300x", quant: "bf16", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{Docker: true})
		s := l.String()
		for _, want := range []string{"-p 127.0.0.1:8000:8000", "--device /dev/kfd", "--device /dev/dri", "--group-add video",
			"--cap-add=SYS_PTRACE", "--security-opt seccomp=unconfined", "-e HF_TOKEN"} {
			if !strings.Contains(s, want) {
				t.Errorf("no %q in\n%s", want, s)
			}
		}
		n := fitCase{model: llama8, hw: "nvidia-l40s", quant: "bf16", engine: planner.VLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
		if s := n.String(); !strings.Contains(s, "HF_TOKEN") || flagValue(t, n.Argv, "--host") != "127.0.0.1" {
			t.Errorf("native vLLM:\n%s", s)
		}
	})
	t.Run("--jinja where the build has it", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-rtx-3060-12gb", quant: "q4_k_m", engine: planner.LlamaCpp, ctx: 4096}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "b5000"}); !hasArg(l.Argv, "--jinja") {
			t.Errorf("b5000: %v", l.Argv)
		}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "b4000"}); hasArg(l.Argv, "--jinja") {
			t.Errorf("b4000 has no --jinja: %v", l.Argv)
		}
	})
	t.Run("trtllm-serve host, port and NVIDIA's image", func(t *testing.T) {
		l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "bf16", engine: planner.TRTLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{Docker: true, Release: "1.0.0"})
		if s := l.String(); !strings.Contains(s, "nvcr.io/nvidia/tensorrt-llm/release:1.0.0") || !strings.Contains(s, "--host 0.0.0.0") || !strings.Contains(s, "--port 8000") {
			t.Errorf("trtllm docker:\n%s", s)
		}
	})
	t.Run("trtllm-serve: a 16-bit KV plan of ModelOpt formats says the checkpoint's FP8 KV wins", func(t *testing.T) {
		for _, tc := range []struct {
			quant, kv string
			note      bool
		}{{"fp8", "f16", true}, {"fp8", "fp8", false}, {"bf16", "f16", false}} {
			l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: tc.quant, kv: tc.kv, engine: planner.TRTLLM, ctx: 4096}.launch(t, c, planner.LaunchOptions{})
			got := strings.Contains(strings.Join(l.Notes, "\n"), "kv_cache_qformat fp8")
			if got != tc.note {
				t.Errorf("%s weights, %s KV: note %v, want %v: %q", tc.quant, tc.kv, got, tc.note, l.Notes)
			}
		}
	})
	t.Run("trtllm-serve at many users names what its streaming costs and the option that moves it", func(t *testing.T) {
		for _, tc := range []struct {
			users int
			note  bool
		}{{1, false}, {32, false}, {128, true}} {
			l := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "bf16", engine: planner.TRTLLM, ctx: 4096, users: tc.users}.launch(t, c, planner.LaunchOptions{})
			notes := strings.Join(l.Notes, "\n")
			if got := strings.Contains(notes, "--num_postprocess_workers"); got != tc.note {
				t.Errorf("%d users: note %v, want %v: %q", tc.users, got, tc.note, l.Notes)
			}
			if tc.note && !strings.Contains(notes, "at 128 users that is about 23 ms of every step") {
				t.Errorf("%d users: the note does not say what a step pays: %q", tc.users, l.Notes)
			}
			if hasArg(l.Argv, "--num_postprocess_workers") {
				t.Errorf("%d users: the command sets --num_postprocess_workers, which the plan's TPOT does not assume: %v", tc.users, l.Argv)
			}
		}
	})
	t.Run("sglang serve on main, launch_server before", func(t *testing.T) {
		f := fitCase{model: llama8, hw: "nvidia-h100-sxm5-80gb", quant: "bf16", engine: planner.SGLang, ctx: 4096}
		if l := f.launch(t, c, planner.LaunchOptions{}); l.Argv[0] != "sglang" || l.Argv[1] != "serve" {
			t.Errorf("main: %v", l.Argv)
		}
		if l := f.launch(t, c, planner.LaunchOptions{Release: "0.5.4"}); l.Argv[2] != "sglang.launch_server" {
			t.Errorf("0.5.4: %v", l.Argv)
		}
	})
}

// fit, flags and plan refuse FP8 on RDNA3.5 alike (issue 14): Validate
// runs the engine's rules.
func TestFP8OnStrixHaloRefusedEverywhere(t *testing.T) {
	c := catalog(t)
	f := fitCase{model: "meta-llama/Llama-3.3-70B-Instruct", hw: "amd-ryzen-ai-max-395", quant: "fp8", engine: planner.VLLM, ctx: 8192}
	_, err := f.candidate(t, c)
	var u *planner.UnsupportedError
	if !errors.As(err, &u) || u.Reason != planner.ReasonNoKernel || u.Engine != planner.VLLM {
		t.Fatalf("fit: %v", err)
	}
	m, h := modelOn(t, c, f.model, f.hw)
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Model: m, Engines: []planner.EngineID{planner.VLLM},
		Quants: []string{"fp8"}, Workload: planner.Workload{Prompt: 2048, Gen: 512, Concurrency: 1}})
	if len(res.Ranked) != 0 || len(res.Dropped) == 0 || !strings.Contains(res.Dropped[0].Why, u.Detail) {
		t.Errorf("plan: ranked %d, dropped %+v; fit said %q", len(res.Ranked), res.Dropped, u.Detail)
	}
}

// TensorRT-LLM has no MXFP4 MoE kernel below Hopper ("WFP4A16 MoE is
// unsupported on SM80"): gpt-oss on an A100 or an RTX 4090 is refused
// there, and runs on an H100.
func TestTRTLLMMXFP4NeedsHopper(t *testing.T) {
	c := catalog(t)
	for hw, ok := range map[string]bool{"nvidia-a100-sxm4-80gb": false, "nvidia-rtx-4090": false, "nvidia-h100-sxm5-80gb": true} {
		_, err := fitCase{model: "openai/gpt-oss-20b", hw: hw, quant: "mxfp4", engine: planner.TRTLLM, ctx: 4096}.candidate(t, c)
		var u *planner.UnsupportedError
		if refused := errors.As(err, &u) && u.Reason == planner.ReasonComputeCapability; refused == ok {
			t.Errorf("%s: %v", hw, err)
		}
	}
}

// FP8 weights below Ada: SGLang and TensorRT-LLM stop at load on an A100
// (GPUStack's logs), vLLM runs them through weight-only FP8 Marlin.
func TestFP8OnAmpereOnlyVLLM(t *testing.T) {
	c := catalog(t)
	for _, tc := range []struct {
		engine planner.EngineID
		hw     string
		ok     bool
	}{
		{planner.SGLang, "nvidia-a100-sxm4-80gb", false}, {planner.TRTLLM, "nvidia-a100-sxm4-80gb", false},
		{planner.VLLM, "nvidia-a100-sxm4-80gb", true}, {planner.SGLang, "nvidia-h100-sxm5-80gb", true}, {planner.TRTLLM, "nvidia-h100-sxm5-80gb", true},
	} {
		_, err := fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: tc.hw, quant: "fp8", engine: tc.engine, ctx: 4096}.candidate(t, c)
		var u *planner.UnsupportedError
		if refused := errors.As(err, &u) && u.Reason == planner.ReasonComputeCapability; refused == tc.ok {
			t.Errorf("%s on %s: %v", tc.engine, tc.hw, err)
		}
	}
}

// --ctx-size (total cells) with -n 4 keeps 4 sequences resident, split or
// unified: flags used to cut -np to 1 (issue 18, defect 1).
func TestCtxSizeKeepsSlots(t *testing.T) {
	c := catalog(t)
	for _, unified := range []bool{false, true} {
		m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-3060-12gb")
		e, _ := c.FindEngine("llama.cpp")
		q, _ := c.FindQuant("q4_k_m")
		kv, _ := c.FindKVType("f16")
		s := planner.Scenario{Hardware: h, Devices: 1, Engine: e, Model: m, Quant: q, KV: kv, TotalContext: 16384, Concurrency: 4, UnifiedKV: unified}
		r, err := planner.Fit(s)
		if err != nil {
			t.Fatal(err)
		}
		if r.MaxConcurrencyAtContext < 4 || r.MaxKVTokens != 16384 {
			t.Errorf("unified %v: --ctx-size 16384 -n 4 holds %d sequences, %d cells", unified, r.MaxConcurrencyAtContext, r.MaxKVTokens)
		}
	}
}

// q8_0 KV only where it saves something: 8B at 4 users × 2.5k tokens fits
// a 4090 with f16 KV, so the plan keeps f16 and says why q8_0 was not
// chosen; at 131k tokens on a 12 GB card q8_0 may still win.
func TestQuantizedKVOnlyWhereItSaves(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-4090")
	res := planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
		Workload: planner.Workload{Prompt: 2048, Gen: 512, Concurrency: 4}, Engines: []planner.EngineID{planner.LlamaCpp}})
	for _, r := range res.Ranked {
		if r.KVType == "q8_0" || r.KVType == "q4_0" {
			t.Errorf("ranked %s with %s KV where f16 holds 4 users", r.Quant, r.KVType)
		}
	}
	why := false
	for _, d := range res.Dropped {
		why = why || strings.Contains(d.Why, "q8_0 KV saves nothing")
	}
	if !why {
		t.Errorf("no dropped row says why q8_0 KV was not used: %+v", res.Dropped)
	}
	m, h = modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-rtx-3060-12gb")
	res = planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m,
		Workload: planner.Workload{Prompt: 60000, Gen: 1000, Concurrency: 4}, Engines: []planner.EngineID{planner.LlamaCpp}})
	q8 := false
	for _, r := range res.Ranked {
		q8 = q8 || r.KVType == "q8_0"
	}
	if !q8 {
		t.Errorf("4 × 61k tokens on 12 GB: no q8_0 KV row, where it saves memory")
	}
}

// An Ollama release loads only the architectures it has (read at the
// tags): Qwen3 MoE from 0.6.6, gpt-oss from 0.11.0.
func TestOllamaReleaseLoadsArchitecture(t *testing.T) {
	c := catalog(t)
	for _, x := range []struct {
		model, version string
		ok             bool
	}{
		{"Qwen/Qwen3-30B-A3B", "0.6.5", false},
		{"Qwen/Qwen3-30B-A3B", "0.6.6", true},
		{"openai/gpt-oss-20b", "0.10.0", false},
		{"openai/gpt-oss-20b", "0.11.0", true},
		{"meta-llama/Llama-3.1-8B-Instruct", "0.6.0", true},
		{"openai/gpt-oss-20b", "", true},
	} {
		quant := "q4_k_m"
		if x.model == "openai/gpt-oss-20b" {
			quant = "mxfp4"
		}
		_, err := fitCase{model: x.model, hw: "nvidia-rtx-4090", quant: quant, engine: planner.Ollama, ctx: 4096, version: x.version}.candidate(t, c)
		var u *planner.UnsupportedError
		if refused := errors.As(err, &u) && u.Reason == planner.ReasonRelease; refused == x.ok {
			t.Errorf("%s on Ollama %q: %v", x.model, x.version, err)
		}
	}
}

// An FP8 KV cache on ROCm needs FP8 hardware: refused on Strix Halo
// (RDNA3.5), run on MI300X.
func TestFP8KVOnROCm(t *testing.T) {
	c := catalog(t)
	_, err := fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "amd-ryzen-ai-max-395", quant: "bf16", kv: "fp8", engine: planner.VLLM, ctx: 4096}.candidate(t, c)
	var u *planner.UnsupportedError
	if !errors.As(err, &u) || u.Reason != planner.ReasonNoKernel {
		t.Errorf("fp8 KV on RDNA3.5: %v", err)
	}
	if _, err := (fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "amd-mi300x", quant: "bf16", kv: "fp8", engine: planner.VLLM, ctx: 4096}).candidate(t, c); err != nil {
		t.Errorf("fp8 KV on MI300X: %v", err)
	}
}

// vLLM before V1 (0.8) refuses --max-num-batched-tokens below
// --max-model-len: a plan made for the newest release, launched for 0.6,
// raises it.
func TestVLLMBatchedTokensPerRelease(t *testing.T) {
	c := catalog(t)
	f := fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-l40s", quant: "bf16", engine: planner.VLLM, ctx: 8192, users: 4}
	old := f.launch(t, c, planner.LaunchOptions{Release: "0.6.0"})
	if n := atoi(t, flagValue(t, old.Argv, "--max-num-batched-tokens")); n < 8192 {
		t.Errorf("vLLM 0.6.0: --max-num-batched-tokens %d below --max-model-len 8192", n)
	}
	now := f.launch(t, c, planner.LaunchOptions{})
	if n := atoi(t, flagValue(t, now.Argv, "--max-num-batched-tokens")); n != 2048 {
		t.Errorf("vLLM 0.11: --max-num-batched-tokens %d, the V1 default for a 48 GB card is 2048", n)
	}
	// Past 32K, V0 chunks prefills by itself: the budget stays a chunk's,
	// not the 64K context (whose activations the profile run would take
	// from the KV pool).
	long := f
	long.ctx = 65536
	if n := atoi(t, flagValue(t, long.launch(t, c, planner.LaunchOptions{Release: "0.6.0"}).Argv, "--max-num-batched-tokens")); n > 8192 {
		t.Errorf("vLLM 0.6.0 at a 64K context chunks prefills: --max-num-batched-tokens %d", n)
	}
}

// Ollama's default context follows the release (envconfig/config.go at
// the tags): 2048 at 0.6.5, 4096 at 0.6.7, a VRAM tier (32k on 24 GB) on
// the newest.
func TestOllamaDefaultContextPerRelease(t *testing.T) {
	c := catalog(t)
	for version, want := range map[string]planner.Tokens{"0.6.5": 2048, "0.6.7": 4096, "0.12.0": 4096, "": 32768} {
		f := fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-rtx-4090", quant: "q4_k_m", engine: planner.Ollama, version: version}
		cand, err := f.candidate(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if cand.Fit.Context != want {
			t.Errorf("Ollama %q: default context %d, want %d", version, cand.Fit.Context, want)
		}
	}
}

// A planned setting a release cannot express is refused, not dropped:
// TGI 2.0 has no --kv-cache-dtype.
func TestTGIReleaseLacksKVDtype(t *testing.T) {
	c := catalog(t)
	f := fitCase{model: "meta-llama/Llama-3.1-8B-Instruct", hw: "nvidia-h100-sxm5-80gb", quant: "bf16", kv: "fp8", engine: planner.TGI, ctx: 4096}
	cand, err := f.candidate(t, c)
	if err != nil {
		t.Fatal(err)
	}
	var u *planner.UnsupportedError
	if _, err := planner.LaunchFor(cand, planner.LaunchOptions{Release: "2.0.0"}); !errors.As(err, &u) || u.Reason != planner.ReasonRelease {
		t.Errorf("TGI 2.0.0 with fp8 KV: %v", err)
	}
	if l, err := planner.LaunchFor(cand, planner.LaunchOptions{Release: "2.4.1"}); err != nil || flagValue(t, l.Argv, "--kv-cache-dtype") != "fp8_e4m3fn" {
		t.Errorf("TGI 2.4.1 with fp8 KV: %v", err)
	}
}

// A ModelOpt checkpoint that names its KV cache type (hf_quant_config.json
// kv_cache_quant_algo, read into Model.CheckpointKV): TensorRT-LLM caches
// in it whatever kv_cache_config says, so its plans have only that KV
// type and say why the 16-bit one is gone; vLLM, whose auto is the model
// dtype at the releases Headroom knows, keeps both. Read from the
// checkpoint, a format with no KV type named carries no hedging note.
func TestCheckpointKVTypeBindsTensorRTLLM(t *testing.T) {
	c := catalog(t)
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-h100-sxm5-80gb")
	q, err := c.FindQuant("fp8")
	if err != nil {
		t.Fatal(err)
	}
	m.FileQuant, m.NativeDType = "fp8", "fp8"
	plan := func(m planner.Model) planner.PlanResult {
		return planner.Plan(planner.PlanRequest{Catalog: c, Hardware: h, Devices: 1, Model: m, Quants: []string{q.ID},
			Engines: []planner.EngineID{planner.TRTLLM, planner.VLLM}, Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 64}})
	}
	kvOf := func(res planner.PlanResult) map[planner.EngineID][]string {
		out := map[planner.EngineID][]string{}
		for _, x := range res.Ranked {
			if !slices.Contains(out[x.Engine], x.KVType) {
				out[x.Engine] = append(out[x.Engine], x.KVType)
			}
		}
		return out
	}
	named := m
	named.CheckpointKV = "fp8"
	res := plan(named)
	got := kvOf(res)
	if !slices.Equal(got[planner.TRTLLM], []string{"fp8"}) {
		t.Errorf("TensorRT-LLM plans KV %v of a checkpoint naming FP8, want only fp8", got[planner.TRTLLM])
	}
	if !slices.Contains(got[planner.VLLM], "f16") && !slices.Contains(got[planner.VLLM], "bf16") {
		t.Errorf("vLLM lost its 16-bit KV plans: %v", got[planner.VLLM])
	}
	why := ""
	for _, d := range res.Dropped {
		if d.Engine == planner.TRTLLM && strings.Contains(d.Why, "kv_cache_quant_algo") {
			why = d.Why
		}
	}
	if !strings.Contains(why, "FP8") || !strings.Contains(why, "ModelOpt quantization config") {
		t.Errorf("no dropped TensorRT-LLM row says the checkpoint's KV type binds: %q", why)
	}
	s := planner.Scenario{Hardware: h, Devices: 1, Model: named, Quant: q, Concurrency: 1}
	s.Engine, _ = c.FindEngine(string(planner.TRTLLM))
	s.KV, _ = c.FindKVType("f16")
	if err := planner.Supported(s); err == nil || !strings.Contains(err.Error(), "kv_cache_quant_algo") {
		t.Errorf("Supported of a 16-bit KV: %v", err)
	}
	// vLLM's 16-bit-KV launch says what builds past 0.11 do with it; its
	// fp8-KV launch says nothing of it.
	for _, x := range res.Ranked {
		if x.Engine != planner.VLLM {
			continue
		}
		l, err := planner.LaunchFor(x, planner.LaunchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(l.Notes, "\n"), "PR #29980"); got != (x.KVType != "fp8") {
			t.Errorf("vLLM %s KV: note of PR #29980 %v: %q", x.KVType, got, l.Notes)
		}
	}
	// Read from its files and naming no KV type: both KV types, and the
	// 16-bit one's launch carries no "if the checkpoint names FP8" note.
	res = plan(m)
	if got := kvOf(res)[planner.TRTLLM]; !slices.Contains(got, "f16") && !slices.Contains(got, "bf16") {
		t.Fatalf("TensorRT-LLM of a checkpoint naming no KV type: KV %v, want a 16-bit one too", got)
	}
	for _, x := range res.Ranked {
		if x.Engine != planner.TRTLLM || x.KVType == "fp8" {
			continue
		}
		l, err := planner.LaunchFor(x, planner.LaunchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Join(l.Notes, "\n"); strings.Contains(n, "kv_cache_qformat") {
			t.Errorf("a checkpoint read from its files carries the hedging note: %q", n)
		}
		break
	}
}
