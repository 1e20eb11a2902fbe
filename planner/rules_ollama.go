package planner

import "fmt"

// Ollama's rules. Ollama takes its server settings from the environment
// (envconfig/config.go); the lines are where each variable is read at the
// tag. OLLAMA_CONTEXT_LENGTH defaults to 2048 at v0.6.x, 4096 at v0.12.0
// and a VRAM tier (0) at v0.32; OLLAMA_NUM_PARALLEL to 0 (auto, 4 or 1)
// at v0.6 and 1 since v0.12; OLLAMA_FLASH_ATTENTION is a boolean until it
// becomes BoolWithDefault (auto) in v0.32. KV types: f16, q8_0, q4_0
// (ml/backend and llm/memory kvCacheTypeFromStr).
func ollamaReleases() []EngineRelease {
	kv := []string{"f16", "q8_0", "q4_0"}
	env := func(host, fa, kvt, ctx, par int) map[string]FlagSpec {
		return map[string]FlagSpec{
			"OLLAMA_HOST":            {Line: host},
			"OLLAMA_FLASH_ATTENTION": {Values: []string{"1", "0", "true", "false"}, Line: fa},
			"OLLAMA_KV_CACHE_TYPE":   {Values: kv, Line: kvt},
			"OLLAMA_CONTEXT_LENGTH":  {Line: ctx},
			"OLLAMA_NUM_PARALLEL":    {Line: par},
		}
	}
	return sortReleases(Ollama,
		EngineRelease{Release: MustRelease("0.6.0"), Name: "Ollama 0.6.0",
			Checked: CheckedAtTag,
			Source:  "ollama/ollama envconfig/config.go @ v0.6.0 (aee2850)", Image: "ollama/ollama:0.6.0", ROCmImage: "ollama/ollama:0.6.0-rocm",
			Flags: env(22, 156, 158, 172, 207)},
		EngineRelease{Release: MustRelease("0.6.5"), Name: "Ollama 0.6.5",
			Checked: CheckedAtTag,
			Source:  "ollama/ollama envconfig/config.go @ v0.6.5 (0f3f9e3)", Image: "ollama/ollama:0.6.5", ROCmImage: "ollama/ollama:0.6.5-rocm",
			Flags: env(22, 156, 158, 172, 207)},
		EngineRelease{Release: MustRelease("0.12.0"), Name: "Ollama 0.12.0",
			Checked: CheckedAtTag,
			Source:  "ollama/ollama envconfig/config.go @ v0.12.0 (9f3a37f)", Image: "ollama/ollama:0.12.0", ROCmImage: "ollama/ollama:0.12.0-rocm",
			Flags: env(22, 180, 182, 196, 233)},
		EngineRelease{Release: MustRelease("0.32.15"), Name: "Ollama 0.32.15",
			Checked: CheckedAtTag,
			Source:  "ollama/ollama envconfig/config.go @ v0.32.15 (b7871fc)", Image: "ollama/ollama:0.32.15", ROCmImage: "ollama/ollama:0.32.15-rocm",
			Flags: env(25, 216, 222, 230, 275)},
	)
}

// ollamaEnv is the server environment of a plan: parallel slots, the
// context of each (Ollama sizes KV as num_parallel × num_ctx), flash
// attention (a quantized KV cache needs it) and the KV type.
func ollamaEnv(in launchIn) (map[string]string, server, []string) {
	s := in.s
	kv := s.KV.ID
	if kv == "" {
		kv = "f16"
	}
	fa := "1"
	if !flashAttentionOn(s, in.b) {
		fa = "0"
	}
	env := map[string]string{
		"OLLAMA_NUM_PARALLEL":    fmt.Sprint(in.conc),
		"OLLAMA_CONTEXT_LENGTH":  fmt.Sprint(int64(in.ctx)),
		"OLLAMA_FLASH_ATTENTION": fa,
		"OLLAMA_KV_CACHE_TYPE":   kv,
		"OLLAMA_HOST":            in.host + ":11434",
	}
	notes := []string{
		ollamaCreateNote(in),
		fmt.Sprintf("KV is sized for %d parallel requests × %d tokens each", in.conc, in.ctx),
	}
	return env, server{prog: []string{"ollama", "serve"}}, notes
}

// ollamaCreateNote says how to register the GGUF with Ollama: natively
// from this folder, or inside the container ("ollama", this folder
// mounted at /models).
func ollamaCreateNote(in launchIn) string {
	name := shortName(in.s.Model.ID)
	if in.image != "" {
		return fmt.Sprintf("then: docker exec ollama ollama create %s -f /models/Modelfile  (Modelfile in this folder: FROM /models/%s)", name, in.model)
	}
	return fmt.Sprintf("then: ollama create %s -f Modelfile  (Modelfile: FROM %s)", name, in.model)
}

// ollamaCPUFlashAttention is the first Ollama release that runs flash
// attention on the CPU: until v0.11.4 GpuInfoList.FlashAttentionSupported
// (discover/types.go:172 @ v0.6.5) accepts only metal, cuda (driver 7+)
// and rocm, and the server turns OLLAMA_FLASH_ATTENTION off ("flash
// attention enabled but not supported by gpu", llm/server.go:173); commit
// 8f4ec9a adds the CPU, first tagged in v0.11.5.
var ollamaCPUFlashAttention = MustRelease("0.11.5")

// ollamaFlashAttention reports whether Ollama runs flash attention for
// the scenario on backend b.
func ollamaFlashAttention(s Scenario, b Backend) bool {
	return b != CPU || releaseOf(s).AtLeast(ollamaCPUFlashAttention)
}

// ollamaSupported: a quantized KV cache needs flash attention; without
// it Ollama falls back to f16 ("quantized kv cache requested but flash
// attention disabled", llm/server.go:196 @ v0.6.5), twice the planned KV.
func ollamaSupported(s Scenario, b Backend) *UnsupportedError {
	if u := ollamaArchSupported(s); u != nil {
		return u
	}
	if s.KV.NeedsFlashAttention && !ollamaFlashAttention(s, b) {
		return refuse(s, ReasonNoKernel, "Ollama %s runs flash attention only on GPUs (CPU from 0.11.5), and a %s KV cache needs it: use f16 KV", releaseOf(s), s.KV.ID)
	}
	return nil
}

// ollamaArchSince is the first Ollama release that loads each model
// architecture (Model.Arch) added after 0.6.0, read at the tags: its own
// engine's model/models/<name> directory or the GGUF architecture in the
// vendored llama/llama.cpp/src/llama-arch.cpp. Architectures not listed
// load in every release with rules (llama, qwen2, phi3, mistral,
// deepseek2, starcoder2, gemma3 from 0.6.0) or are not known.
var ollamaArchSince = map[string]Release{
	"mistral3":   MustRelease("0.6.5"),  // model/models/mistral3 @ v0.6.5
	"llama4":     MustRelease("0.6.6"),  // llama-arch.cpp "llama4" @ v0.6.6
	"qwen3_moe":  MustRelease("0.6.6"),  // llama-arch.cpp "qwen3moe" @ v0.6.6
	"qwen3":      MustRelease("0.6.6"),  // llama-arch.cpp "qwen3" @ v0.6.6
	"gpt_oss":    MustRelease("0.11.0"), // model/models/gptoss @ v0.11.0
	"minimax_m2": MustRelease("0.13.2"), // llama-arch.cpp "minimax-m2" @ v0.13.2
}

// ollamaArchSupported refuses a model the release cannot load.
func ollamaArchSupported(s Scenario) *UnsupportedError {
	since, ok := ollamaArchSince[s.Model.Arch]
	if rel := releaseOf(s); ok && !rel.AtLeast(since) {
		return refuse(s, ReasonRelease, "Ollama %s cannot load %s models (%s architecture): Ollama %s added it", rel, s.Model.ID, s.Model.Arch, since)
	}
	return nil
}

// Ollama's default context (OLLAMA_CONTEXT_LENGTH unset, no num_ctx) by
// release, read at the tags in envconfig/config.go: 2048 through v0.6.6,
// 4096 from v0.6.7, and from v0.15.5 0, which the server turns into a
// tier by VRAM (ollamaDefaultContext).
var (
	ollamaCtx4096   = MustRelease("0.6.7")
	ollamaCtxByVRAM = MustRelease("0.15.5")
)

// ollamaAutoContext is the per-request context Ollama allocates when none
// is asked for, at the scenario's release, for vram of device memory.
func ollamaAutoContext(s Scenario, vram Bytes) Tokens {
	rel := releaseOf(s)
	switch {
	case !rel.AtLeast(ollamaCtx4096):
		return 2048
	case !rel.AtLeast(ollamaCtxByVRAM):
		return 4096
	}
	return ollamaDefaultContext(vram)
}

// ollamaRules are Ollama's rules (PolicyOllama): llama.cpp's memory model
// with Ollama's scheduler and settings.
type ollamaRules struct{}

func (ollamaRules) supported(s Scenario, b Backend) *UnsupportedError { return ollamaSupported(s, b) }
func (ollamaRules) fit(s Scenario, b Backend) FitResult               { return fitLlamaCpp(s, b) }
func (ollamaRules) flashAttention(s Scenario, b Backend) bool         { return ollamaFlashAttention(s, b) }
func (ollamaRules) imageEntrypoint() bool                             { return true }
func (ollamaRules) quantizesOnLoad(QuantFamily) bool                  { return false }
func (ollamaRules) memoryKnob() string                                { return "" }

func (ollamaRules) command(in *launchIn, l *Launch) (server, []string, error) {
	env, cmd, notes := ollamaEnv(*in)
	l.Env = env
	return cmd, notes, nil
}

// stepOverheadMs: Ollama's Go runner around llama.cpp's kernels [U].
func (ollamaRules) stepOverheadMs(Backend, string) float64 { return 1 }

// admitOverheadMs: Ollama's Go runner hands a request to a llama.cpp slot;
// no published burst measures it [U].
func (ollamaRules) admitOverheadMs() float64 { return 0 }

// frontEndProcess: the Ollama server proxies to a runner subprocess per
// model over HTTP.
func (ollamaRules) frontEndProcess(string) bool { return true }

// streamOverheadUs: the Ollama server streams from its own process, apart
// from the runner's slot loop.
func (ollamaRules) streamOverheadUs(string) float64 { return 0 }

// seqOverheadPriorUs: none: no published Ollama row runs more than one
// request at a time, and its Go runner's per-slot work is unmeasured [U].
func (ollamaRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: OLLAMA_NUM_PARALLEL 4 [U] and the runner's -b 2048.
func (ollamaRules) schedLimits(Scenario) schedLimits {
	return schedLimits{maxSeqs: 4, budget: 2048}
}

// mixedSteps: as llama-server, the runner's batch mixes prompt tokens and
// decodes.
func (ollamaRules) mixedSteps(Scenario) bool { return true }

// chunkedPrefill: the runner batches prompt tokens with other slots'
// decodes.
func (ollamaRules) chunkedPrefill(Scenario) bool { return true }

func (ollamaRules) marlinInt4() bool { return false }

// docker: a named container (the model is created inside it), the
// Ollama volume, and the GGUF and its Modelfile in this folder at /models.
func (ollamaRules) docker() dockerSpec {
	return dockerSpec{run: []string{"--name", "ollama", "-p", "127.0.0.1:11434:11434", "-v", "ollama:/root/.ollama", "-v", "$PWD:/models"}}
}

// image: ollama/ollama (CPU and CUDA in one), its -rocm tag on ROCm.
func (ollamaRules) image(rel EngineRelease, b Backend) string {
	if b == ROCm {
		return rel.ROCmImage
	}
	return rel.Image
}

// modelDir: GGUF files mounted at /models.
func (ollamaRules) modelDir() string { return "/models" }

// multiNode: Ollama serves from one node.
func (ollamaRules) multiNode(Engine) MultiNodeMode { return MultiNodeNone }
