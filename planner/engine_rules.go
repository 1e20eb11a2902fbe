package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// engineRules is what Headroom knows of one family of engines
// (Engine.Policy): what its releases run, how it sizes memory, and the
// server command it starts with. Each rules_*.go file implements it for
// its engine; rulesFor picks one. Code elsewhere asks the rules, never
// the policy's name.
type engineRules interface {
	// supported refuses what the scenario's release cannot run on b (nil:
	// it runs). Supported checks the format, the KV type and the gates
	// every engine shares first.
	supported(s Scenario, b Backend) *UnsupportedError
	// fit sizes the engine's memory for the scenario on b.
	fit(s Scenario, b Backend) FitResult
	// flashAttention reports whether the engine runs flash attention for
	// the scenario (asked for, and a kernel for it in the release).
	flashAttention(s Scenario, b Backend) bool
	// command is the server command of a launch and its notes; it may set
	// in's concurrency and quantization flag and l's environment and
	// files. ErrNoServer where the engine has none.
	command(in *launchIn, l *Launch) (server, []string, error)
	// imageEntrypoint reports whether the engine's image starts the server
	// itself, so that a container passes only its arguments.
	imageEntrypoint() bool
	// quantizesOnLoad reports whether the engine quantizes BF16 weights to
	// the format while loading them (no pre-quantized checkpoint needed).
	quantizesOnLoad(f QuantFamily) bool
	// memoryKnob is the engine setting that gives the KV cache more of the
	// device ("" = none), which advice names when a little is missing.
	memoryKnob() string
	// stepOverheadMs is the fixed cost of one forward step: scheduling,
	// sampling and kernel launches, on backend b in release v ("" = the
	// newest).
	stepOverheadMs(b Backend, v string) float64
	// admitOverheadMs is the engine loop's own work per admitted request
	// (creating it, allocating its blocks, adding it to the running
	// batch), done between forward steps and so serial with them; a
	// burst's admissions lengthen the steps that take them in.
	admitOverheadMs() float64
	// frontEndProcess reports whether release v's API server runs apart
	// from its engine loop (another process), so that every request, a
	// lone one too, waits out the front end's cost per request
	// (request_overhead_ms) before the engine sees it.
	frontEndProcess(v string) bool
	// streamOverheadUs is the host µs per running sequence per step that
	// release v spends streaming tokens to clients in the engine's own
	// process, serial with its steps; paid only by a workload that
	// streams (a served run, not an offline one: perfModel.forWorkload).
	// 0 where another process streams or the fitted seq_overhead_us
	// already covers it.
	streamOverheadUs(v string) float64
	// seqOverheadPriorUs is the host µs per running sequence per step
	// where the fit has none for the engine (PerfParams.SeqOverheadUs):
	// no published row runs it at a batch that shows the cost.
	seqOverheadPriorUs() float64
	// schedLimits are the scheduler's default batch limits for the
	// scenario: its device and the engine's release.
	schedLimits(s Scenario) schedLimits
	// chunkedPrefill reports whether the release splits long prompts into
	// chunks batched with decodes (perf.go).
	chunkedPrefill(s Scenario) bool
	// mixedSteps reports whether a new request's prefill runs in the same
	// forward step as the running decodes (mixed), rather than in a step
	// of its own that pauses them (prefill-first); perf.go's arrival term.
	mixedSteps(s Scenario) bool
	// marlinInt4 reports whether AWQ/GPTQ run on the Marlin kernels where
	// the GPU has them (sm80+), so their speed is one kernel's.
	marlinInt4() bool
	// docker is what the engine's container needs beyond the GPU.
	docker() dockerSpec
	// image is the release's official image for backend b ("" = none).
	image(rel EngineRelease, b Backend) string
	// modelDir is where the image reads or caches weights.
	modelDir() string
	// multiNode is how engine e spans nodes (MultiNodeNone: one node).
	multiNode(e Engine) MultiNodeMode
}

// engineRulesOf is every policy's rules.
var engineRulesOf = map[Policy]engineRules{
	PolicyVLLM: vllmRules{}, PolicySGLang: sglangRules{}, PolicyTGI: tgiRules{}, PolicyTRTLLM: trtllmRules{},
	PolicyLlamaCpp: llamaCppRules{}, PolicyOllama: ollamaRules{}, PolicyTransformers: transformersRules{},
}

// rulesFor is the rules of a policy (false for one Headroom does not
// know: Engine.Validate refuses such engines).
func rulesFor(p Policy) (engineRules, bool) {
	r, ok := engineRulesOf[p]
	return r, ok
}

// ErrNoServer marks an engine Headroom has no launch command for: it is a
// library, not a server.
var ErrNoServer = errors.New("the engine has no server to launch")

// ErrUnsupported marks a scenario an engine cannot run: no kernel for the
// format on the device, a flag or format its release lacks, a container
// image not built for the GPU. Errors from Supported wrap it (and
// ErrInvalid, so callers that check for invalid scenarios still do).
var ErrUnsupported = errors.New("not supported by the engine")

// Reason says which rule refused a scenario.
type Reason string

// Reasons an engine refuses a scenario.
const (
	ReasonBackend           Reason = "backend"            // the engine does not run on the backend
	ReasonFormat            Reason = "format"             // the engine does not load the weight format there
	ReasonKVType            Reason = "kv-type"            // the engine has no such KV-cache type
	ReasonComputeCapability Reason = "compute-capability" // the kernel needs a newer GPU
	ReasonNoKernel          Reason = "no-kernel"          // no kernel for the format on this device or backend
	ReasonImageTarget       Reason = "image-target"       // the engine's build is not made for this GPU
	ReasonRelease           Reason = "release"            // the release lacks what the plan needs
)

// UnsupportedError is a refusal by an engine's rules: which engine and
// release, the rule (Reason) and a sentence that says why and what would
// run instead (Detail).
type UnsupportedError struct {
	Engine  EngineID
	Release Release
	Reason  Reason
	Detail  string
}

// Error names the engine and the reason.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: %s", ErrInvalid, e.Detail)
}

// Unwrap lets errors.Is match ErrUnsupported and ErrInvalid.
func (e *UnsupportedError) Unwrap() []error { return []error{ErrUnsupported, ErrInvalid} }

func refuse(s Scenario, why Reason, format string, a ...any) *UnsupportedError {
	r, _ := ParseRelease(s.EngineVersion)
	return &UnsupportedError{Engine: s.Engine.ID, Release: r, Reason: why, Detail: fmt.Sprintf(format, a...)}
}

// Supported says whether the scenario's engine, at the scenario's release
// (EngineVersion; empty = newest), can run it on its backend: the backend,
// the weight format and KV type the engine loads there, and the engine's
// kernel and build gates (Marlin and bf16 need compute capability 8.0 on
// vLLM, FP8 and NVFP4 kernels, flash-attention coverage per llama.cpp
// build, the GPU targets of the ROCm builds). It returns nil or an
// *UnsupportedError. Scenario.Validate calls it, so fit, flags, the GUI and
// plan refuse the same scenarios the same way.
func Supported(s Scenario) error {
	b, err := s.ResolveBackend()
	if err != nil {
		return err
	}
	if u := supportedOn(s, b); u != nil {
		return u
	}
	return nil
}

// supportedOn is Supported on a resolved backend (nil: supported).
func supportedOn(s Scenario, b Backend) *UnsupportedError {
	if s.Quant.ID != "" && !s.Engine.Loads(b, s.Quant.Family) {
		return refuse(s, ReasonFormat, "%s on %s does not load %s weights (%s family); it loads %v", s.Engine.ID, b, s.Quant.ID, s.Quant.Family, s.Engine.Formats[b])
	}
	if s.KV.ID != "" && !s.Engine.HasKVType(s.KV.ID) {
		return refuse(s, ReasonKVType, "%s has no KV-cache type %q (it has %v)", s.Engine.ID, s.KV.ID, s.Engine.KVTypes)
	}
	if u := commonKernelGate(s, b); u != nil {
		return u
	}
	if r, ok := rulesFor(s.Engine.Policy); ok {
		return r.supported(s, b)
	}
	return nil
}

// flashAttentionOn reports whether the engine runs flash attention for
// the scenario on backend b: as asked (Scenario.FlashAttention; nil = on
// where supported), unless the release has no kernel for it (llama.cpp
// builds before llamaFAFixed for some KV types, Ollama on the CPU before
// 0.11.5). The memory model sizes llama.cpp's compute buffer by it.
func flashAttentionOn(s Scenario, b Backend) bool {
	if s.FlashAttention != nil && !*s.FlashAttention {
		return false
	}
	if r, ok := rulesFor(s.Engine.Policy); ok {
		return r.flashAttention(s, b)
	}
	return true
}

// commonKernelGate holds the format gates every engine shares: FP8 needs
// FP8 hardware except through CUDA's weight-only FP8 Marlin path
// (sm80+), NVFP4 needs Blackwell.
func commonKernelGate(s Scenario, b Backend) *UnsupportedError {
	h, q := s.Hardware, s.Quant
	switch {
	case q.NeedsNative == FP8 && !h.SupportsNative(FP8) && b != CUDA:
		return refuse(s, ReasonNoKernel, "no FP8 kernel for %s on %s (FP8 needs Ada/Hopper/Blackwell or MI300-class)", h.Arch, b)
	case q.NeedsNative == FP8 && !h.SupportsNative(FP8) && b == CUDA && !s.Engine.IsGGML() && cudaBelow(h, 80):
		// vLLM runs FP8 on Ampere through the weight-only FP8 Marlin
		// kernel, which needs sm80 (vllm/model_executor/layers/quantization/
		// fp8.py get_min_capability 80 @ v0.11.0); SGLang and TensorRT-LLM
		// refuse FP8 below Ada in their own rules.
		return refuse(s, ReasonComputeCapability, "FP8 weights need compute capability 8.0+ (weight-only FP8 Marlin on Ampere, native on Ada/Hopper); %s is %s", h.Name, capabilityText(h))
	case q.NeedsNative == FP4 && !h.SupportsNative(FP4) && h.Arch != "blackwell":
		return refuse(s, ReasonNoKernel, "NVFP4 needs Blackwell")
	case s.KV.ID == "fp8" && b == ROCm && !h.SupportsNative(FP8):
		// The ROCm attention kernels of vLLM, SGLang and TGI convert an
		// FP8 KV cache with the GPU's FP8 instructions (fnuz on MI300,
		// OCP on gfx12); RDNA2/3/3.5 and CDNA2 have none.
		return refuse(s, ReasonNoKernel, "no FP8 KV-cache kernel for %s on %s (it needs FP8 hardware: MI300-class or RDNA4)", h.Arch, b)
	}
	return nil
}

// cudaCapability is the device's CUDA compute capability ×10 (89 for
// 8.9), from the catalog's compute_capability or, when that is empty,
// its architecture; 0 when not an NVIDIA GPU or unknown.
func cudaCapability(h Hardware) int {
	if c := strings.TrimSpace(h.Compute); c != "" && !strings.HasPrefix(c, "gfx") {
		if f, err := strconv.ParseFloat(c, 64); err == nil && f > 0 && f < 20 {
			return int(f*10 + 0.5)
		}
	}
	return map[string]int{"volta": 70, "turing": 75, "ampere": 80, "ada": 89, "hopper": 90, "blackwell": 100}[h.Arch]
}

// cudaBelow reports whether h is an NVIDIA GPU of known compute
// capability below cc (×10: 89 for Ada); unknown is not below.
func cudaBelow(h Hardware, cc int) bool {
	c := cudaCapability(h)
	return c > 0 && c < cc
}

func capabilityText(h Hardware) string {
	c := cudaCapability(h)
	if c == 0 {
		return h.Arch
	}
	return fmt.Sprintf("%s (sm%d)", h.Arch, c)
}

// rocmTarget is the device's gfx target ("gfx942"), "" when unknown.
func rocmTarget(h Hardware) string {
	if strings.HasPrefix(h.Compute, "gfx") {
		return h.Compute
	}
	return map[string]string{"cdna2": "gfx90a", "cdna3": "gfx942", "rdna3": "gfx1100", "rdna3.5": "gfx1151", "rdna4": "gfx1201"}[h.Arch]
}

// releaseOf is the scenario's engine release; versions Headroom cannot
// read (published measurements say "2025-08 source build") count as the
// newest, as VersionAtLeast does.
func releaseOf(s Scenario) Release {
	r, err := ParseRelease(s.EngineVersion)
	if err != nil {
		return Release{}
	}
	return r
}
