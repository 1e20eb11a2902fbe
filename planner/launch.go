package planner

import (
	"fmt"
	"sort"
	"strings"
)

// LaunchVersions names the engine releases whose flag names the launch
// commands use (flags from modeling.md §5).
var LaunchVersions = map[EngineID]string{
	VLLM:     "vLLM 0.11 (vllm serve)",
	LlamaCpp: "llama.cpp b6500+ (llama-server, -fa on|off|auto syntax)",
	TGI:      "text-generation-inference 3.3",
	SGLang:   "SGLang 0.5 (sglang.launch_server)",
	Ollama:   "Ollama 0.12",
	TRTLLM:   "TensorRT-LLM 0.20 (trtllm-serve)",
}

// Launch is the command that starts an engine for a plan.
type Launch struct {
	Engine  EngineID          `json:"engine"`
	Version string            `json:"flags_for"`
	Env     map[string]string `json:"env,omitempty"`
	// Prefix is a wrapper (docker run …) printed on the first line.
	Prefix []string `json:"prefix,omitempty"`
	Argv   []string `json:"argv"`
	Notes  []string `json:"notes,omitempty"`
}

// String renders env, argv and notes as a shell snippet.
func (l Launch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", l.Version)
	for _, n := range l.Notes {
		fmt.Fprintf(&b, "# %s\n", n)
	}
	for _, k := range sortedKeys(l.Env) {
		fmt.Fprintf(&b, "%s=%s ", k, shellQuote(l.Env[k]))
	}
	for i, a := range l.Prefix {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(shellQuote(a))
	}
	if len(l.Prefix) > 0 && len(l.Argv) > 0 {
		b.WriteString(" \\\n    ")
	}
	for i, a := range l.Argv {
		if i > 0 {
			// One flag per line, after the program and its first operand.
			if i > 1 && strings.HasPrefix(a, "--") || (i > 1 && strings.HasPrefix(a, "-") && len(a) <= 4 && l.Argv[i-1] != "python") {
				b.WriteString(" \\\n    ")
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	// $HOME and $PWD are meant to expand: double quotes.
	if strings.HasPrefix(s, "$HOME") || strings.HasPrefix(s, "$PWD") {
		if !strings.ContainsAny(s, "\"`\\") {
			return `"` + s + `"`
		}
	}
	if strings.ContainsAny(s, " \t\"'$`\\|&;<>()*?[]{}!#~") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// LaunchCommand returns the command that starts c's engine with the plan's
// settings: memory share, context, concurrency, format, KV type and tensor
// parallel. With docker it wraps the official image.
func LaunchCommand(c Candidate, docker bool) (Launch, error) {
	if c.Scenario == nil {
		// Dropped candidates (Plan's Dropped) carry no scenario.
		return Launch{}, fmt.Errorf("no launch command for %s %s: it was not planned (%s)", c.Engine, c.Quant, c.Why)
	}
	s := *c.Scenario
	model := s.Model.ID
	conc := max(c.Concurrency, 1)
	ctx := c.Fit.Context
	if ctx <= 0 {
		ctx = s.Context
	}
	l := Launch{Engine: c.Engine, Version: LaunchVersions[c.Engine]}
	switch s.Engine.Policy {
	case "vllm":
		l.Argv = vllmArgs(c, model, ctx, conc)
	case "llamacpp":
		l.Argv, l.Notes = llamaServerArgs(c, ctx, conc)
	case "ollama":
		l.Env, l.Argv, l.Notes = ollamaEnv(c, ctx, conc)
	case "tgi":
		l.Argv = tgiArgs(c, model, ctx, conc)
	case "sglang":
		l.Argv = sglangArgs(c, model, ctx, conc)
	case "trtllm":
		l.Argv = []string{"trtllm-serve", model, "--tp_size", fmt.Sprint(c.Devices), "--max_batch_size", fmt.Sprint(conc),
			"--max_seq_len", fmt.Sprint(int64(ctx)), "--kv_cache_free_gpu_memory_fraction", "0.9"}
	default:
		return l, fmt.Errorf("no launch command for engine %s", c.Engine)
	}
	if q := s.Quant; s.Engine.IsGGML() && q.Family != FamilyGGUF {
		// MXFP4 and float formats reach llama.cpp as GGUF conversions too.
		l.Notes = append(l.Notes, fmt.Sprintf("use a %s GGUF of %s (%s)", q.Name, model, ggufName(s)))
	} else if q.Family != FamilyFloat && q.Family != FamilyGGUF && !strings.Contains(strings.ToLower(model), q.ID) {
		l.Notes = append(l.Notes, fmt.Sprintf("use a %s checkpoint of %s (a repo with its quantization_config)", q.Name, model))
	}
	if docker {
		l = dockerize(l, s)
	}
	return l, nil
}

func vllmArgs(c Candidate, model string, ctx Tokens, conc int) []string {
	s := *c.Scenario
	util := s.GPUMemoryUtilization
	if util == 0 {
		util = s.Engine.GPUMemoryUtilization
	}
	a := []string{"vllm", "serve", model,
		"--gpu-memory-utilization", fmt.Sprintf("%.2f", util),
		"--max-model-len", fmt.Sprint(int64(ctx)),
		"--max-num-seqs", fmt.Sprint(conc),
		"--max-num-batched-tokens", c.Fit.Flags["max_num_batched_tokens"],
	}
	if c.Devices > 1 {
		a = append(a, "--tensor-parallel-size", fmt.Sprint(c.Devices))
	}
	if f := s.Quant.EngineFlag; f != "" && s.Quant.Family != FamilyFloat {
		a = append(a, "--quantization", f)
	}
	if s.Quant.Family == FamilyFloat {
		a = append(a, "--dtype", map[string]string{"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[s.Quant.ID])
	}
	if s.KV.ID == "fp8" {
		a = append(a, "--kv-cache-dtype", "fp8")
	}
	return append(a, "--host", "127.0.0.1", "--port", "8000")
}

func llamaServerArgs(c Candidate, ctx Tokens, conc int) ([]string, []string) {
	s := *c.Scenario
	file := ggufName(s)
	cells := Tokens(int64(ctx) * int64(conc))
	a := []string{"llama-server", "-m", file,
		"-ngl", fmt.Sprint(c.Fit.GPULayers),
		"-c", fmt.Sprint(int64(cells)),
		"-np", fmt.Sprint(conc),
		"-fa", "on",
	}
	if n := c.Fit.CPUMoELayers; n > 0 {
		a = append(a, "--n-cpu-moe", fmt.Sprint(n))
	}
	if conc > 1 {
		a = append(a, "--kv-unified")
	}
	if s.KV.ID != "f16" {
		a = append(a, "-ctk", s.KV.ID, "-ctv", s.KV.ID)
	}
	a = append(a, "-b", "2048", "-ub", "512", "--host", "127.0.0.1", "--port", "8080")
	notes := []string{fmt.Sprintf("-c %d cells shared by %s: %d tokens per slot when all are busy", cells, Plural(conc, "slot"), ctx)}
	switch {
	case c.Fit.CPUMoELayers > 0:
		notes = append(notes, fmt.Sprintf("the expert tensors of the first %d layers stay in system RAM (--n-cpu-moe, llama.cpp since b6100, PR #15077); all layers' attention and KV stay on the device", c.Fit.CPUMoELayers))
	case c.Fit.Verdict == FitsWithOffload:
		notes = append(notes, fmt.Sprintf("partial offload: %d of %d layers on the device", c.Fit.GPULayers, c.Fit.TotalLayers+1))
	}
	if c.Fit.OffloadBytes > 0 && c.Fit.GPULayers > 0 {
		notes = append(notes, "weights in system RAM are copied to the device once per prompt ubatch: a larger -ub (1024-4096) cuts that cost for long prompts, for a larger compute buffer")
	}
	return a, notes
}

// ggufName is the conventional file name of the model in the plan's format.
func ggufName(s Scenario) string {
	base := s.Model.ID
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	return fmt.Sprintf("%s.%s.gguf", base, strings.ToUpper(s.Quant.ID))
}

func ollamaEnv(c Candidate, ctx Tokens, conc int) (map[string]string, []string, []string) {
	s := *c.Scenario
	env := map[string]string{
		"OLLAMA_NUM_PARALLEL":    fmt.Sprint(conc),
		"OLLAMA_CONTEXT_LENGTH":  fmt.Sprint(int64(ctx)),
		"OLLAMA_FLASH_ATTENTION": "1",
		"OLLAMA_KV_CACHE_TYPE":   s.KV.ID,
		"OLLAMA_HOST":            "127.0.0.1:11434",
	}
	notes := []string{
		ollamaCreateNote(s, false),
		fmt.Sprintf("KV is sized for %d parallel requests × %d tokens each", conc, ctx),
	}
	return env, []string{"ollama", "serve"}, notes
}

// ollamaCreateNote says how to register the GGUF with Ollama: natively
// from this folder, or inside the container ("ollama", this folder
// mounted at /models).
func ollamaCreateNote(s Scenario, docker bool) string {
	if docker {
		return fmt.Sprintf("then: docker exec ollama ollama create %s -f /models/Modelfile  (Modelfile in this folder: FROM /models/%s)",
			shortName(s.Model.ID), ggufName(s))
	}
	return fmt.Sprintf("then: ollama create %s -f Modelfile  (Modelfile: FROM ./%s)", shortName(s.Model.ID), ggufName(s))
}

func shortName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.ToLower(id)
}

func tgiArgs(c Candidate, model string, ctx Tokens, conc int) []string {
	s := *c.Scenario
	in := s.Context - 1
	if ctx > 0 {
		in = ctx - 1
	}
	a := []string{"text-generation-launcher", "--model-id", model,
		"--num-shard", fmt.Sprint(c.Devices),
		"--max-concurrent-requests", fmt.Sprint(conc),
		"--max-input-tokens", fmt.Sprint(int64(in)),
		"--max-total-tokens", fmt.Sprint(int64(ctx)),
		"--max-batch-prefill-tokens", fmt.Sprint(int64(max(ctx, 4096))),
		"--max-batch-total-tokens", fmt.Sprint(int64(c.Fit.MaxKVTokens)),
	}
	if q := tgiQuantize(s.Quant); q != "" {
		a = append(a, "--quantize", q)
	}
	if s.KV.ID == "fp8" {
		a = append(a, "--kv-cache-dtype", "fp8_e4m3fn")
	}
	return append(a, "--hostname", "127.0.0.1", "--port", "8080")
}

func tgiQuantize(q Quant) string {
	switch q.Family {
	case FamilyAWQ:
		return "awq"
	case FamilyGPTQ:
		return "gptq"
	case FamilyFP8:
		return "fp8"
	case FamilyINT8:
		return "compressed-tensors"
	case FamilyBNB:
		return "bitsandbytes-nf4"
	}
	return ""
}

func sglangArgs(c Candidate, model string, ctx Tokens, conc int) []string {
	s := *c.Scenario
	f := s.GPUMemoryUtilization
	if f == 0 {
		f = SGLangMemFractionStatic(s.deviceMemory(), c.Devices)
	}
	a := []string{"python", "-m", "sglang.launch_server", "--model-path", model,
		"--tp", fmt.Sprint(c.Devices),
		"--mem-fraction-static", fmt.Sprintf("%.3f", f),
		"--max-running-requests", fmt.Sprint(conc),
		"--context-length", fmt.Sprint(int64(ctx)),
	}
	if fl := s.Quant.EngineFlag; fl != "" && s.Quant.Family != FamilyFloat {
		a = append(a, "--quantization", strings.TrimSuffix(strings.TrimSuffix(fl, "_marlin"), "-tensors")+map[bool]string{true: "-tensors", false: ""}[s.Quant.Family == FamilyINT8])
	}
	if s.KV.ID == "fp8" {
		a = append(a, "--kv-cache-dtype", "fp8_e4m3")
	}
	return append(a, "--host", "127.0.0.1", "--port", "30000")
}

// dockerize wraps a launch in the engine's official container image.
func dockerize(l Launch, s Scenario) Launch {
	img := s.Engine.Docker
	if img == "" {
		l.Notes = append(l.Notes, "no official container image; run natively")
		return l
	}
	b, _ := s.ResolveBackend()
	if b == Metal {
		l.Notes = append(l.Notes, "containers on macOS cannot reach the Metal GPU; run natively")
		return l
	}
	gpu := []string{"--gpus", "all"}
	switch b {
	case ROCm:
		gpu = []string{"--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video"}
	case Vulkan, SYCL:
		gpu = []string{"--device", "/dev/dri"}
	case CPU:
		gpu = nil
	}
	img = backendImage(img, s.Engine.Policy, b)
	d := append([]string{"docker", "run", "--rm"}, gpu...)
	d = append(d, "--ipc=host", "-v", "$HOME/.cache/huggingface:/root/.cache/huggingface")
	switch s.Engine.Policy {
	case "vllm", "tgi", "sglang":
		// They download weights from the Hub, where many repos
		// (meta-llama/…) are gated: pass the shell's token through
		// (huggingface_hub reads HF_TOKEN; unset, it is simply empty).
		d = append(d, "-e", "HF_TOKEN")
	}
	if s.Engine.Policy == "ollama" {
		// Inside the container the server must listen on all interfaces
		// for -p to reach it, as the other engines' --host 0.0.0.0 do.
		env := map[string]string{}
		for k, v := range l.Env {
			env[k] = v
		}
		env["OLLAMA_HOST"] = "0.0.0.0:11434"
		l.Env = env
	}
	for _, k := range sortedKeys(l.Env) { // one plan, one command
		d = append(d, "-e", k+"="+l.Env[k])
	}
	args := l.Argv
	switch s.Engine.Policy {
	case "vllm":
		d = append(d, "-p", "8000:8000", img)
		args = append([]string{"--model"}, args[2:]...) // image entrypoint is the server
		args = replaceFlag(args, "--host", "0.0.0.0")
	case "tgi":
		d = append(d, "--shm-size", "1g", "-p", "8080:80", img)
		args = replaceFlag(args[1:], "--hostname", "0.0.0.0")
		args = replaceFlag(args, "--port", "80")
	case "sglang":
		d = append(d, "--shm-size", "32g", "-p", "30000:30000", img)
		args = replaceFlag(args, "--host", "0.0.0.0")
	case "llamacpp":
		d = append(d, "-p", "8080:8080", "-v", "$PWD:/models", img)
		args = replaceFlag(args[1:], "--host", "0.0.0.0")
		// The GGUF is in the mounted folder (llama.cpp docs/docker.md:
		// -m /models/…), not in the image's working directory.
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-m" && !strings.HasPrefix(args[i+1], "/") {
				args[i+1] = "/models/" + strings.TrimPrefix(args[i+1], "./")
			}
		}
	case "ollama":
		// The GGUF and its Modelfile are in this folder, mounted at
		// /models; the model is created inside the named container.
		d = append(d, "--name", "ollama", "-p", "11434:11434", "-v", "ollama:/root/.ollama", "-v", "$PWD:/models", img)
		args = nil
		notes := make([]string, 0, len(l.Notes))
		for _, n := range l.Notes {
			if n == ollamaCreateNote(s, false) {
				n = ollamaCreateNote(s, true)
			}
			notes = append(notes, n)
		}
		l.Notes = notes
	}
	l.Env = nil
	l.Prefix = d
	l.Argv = args
	return l
}

// backendImage picks the engine's image built for the backend: ROCm
// builds are separate images (rocm/vllm; ollama/ollama:rocm, Ollama's
// docs/docker.md; TGI's <version>-rocm, its quick tour), and llama.cpp
// publishes server-cuda, server-rocm, server-vulkan and server-intel
// (docs/docker.md), its plain :server being the CPU build, in which -ngl
// offloads nothing.
func backendImage(img, policy string, b Backend) string {
	switch policy {
	case "llamacpp":
		if suffix := map[Backend]string{CUDA: "-cuda", ROCm: "-rocm", Vulkan: "-vulkan", SYCL: "-intel"}[b]; suffix != "" && strings.HasSuffix(img, ":server") {
			return img + suffix
		}
	case "vllm":
		if b == ROCm {
			return "rocm/vllm:latest"
		}
	case "ollama":
		if b == ROCm {
			return strings.TrimSuffix(img, ":latest") + ":rocm"
		}
	case "tgi":
		if b == ROCm && !strings.HasSuffix(img, "-rocm") {
			return img + "-rocm"
		}
	}
	return img
}

// sortedKeys lists an environment's names in order, so that one plan
// prints one command (Go's map order is random).
func sortedKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func replaceFlag(a []string, flag, val string) []string {
	out := append([]string{}, a...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == flag {
			out[i+1] = val
		}
	}
	return out
}
