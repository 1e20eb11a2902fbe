package planner

import (
	"errors"
	"fmt"
	"math"
)

// Scenario is one configuration to evaluate: hardware × devices × engine ×
// backend × model × weight format × KV type × context × concurrency.
// Zero values mean "the engine's default".
type Scenario struct {
	Hardware Hardware
	Devices  int // tensor-parallel degree (1 = single device)
	// Nodes is how many machines the configuration spans (0 or 1 = one).
	// For vLLM and SGLang each node holds Devices devices under tensor
	// parallel and 1/Nodes of the layers (pipeline parallel); for
	// llama.cpp (RPC workers) Devices counts the devices of every node.
	Nodes int
	// NodeLink is the network between nodes (zero = DefaultNodeLink).
	NodeLink NodeLink
	Engine   Engine
	// EngineVersion keys version-dependent rules (empty = current).
	EngineVersion string
	Backend       Backend // empty = best backend both support
	Model         Model
	Quant         Quant
	KV            KVType
	// Context is the per-sequence context (vLLM --max-model-len,
	// llama-server per-slot context). Zero = the largest that fits, up to
	// the model's maximum.
	Context Tokens
	// TotalContext overrides llama.cpp's -c (total KV cells); zero =
	// Context × Concurrency.
	TotalContext Tokens
	// Concurrency is the number of sequences served at once (vLLM
	// --max-num-seqs for capacity, llama-server -np slots).
	Concurrency int
	// GPUMemoryUtilization overrides vLLM's --gpu-memory-utilization or
	// SGLang's --mem-fraction-static (0 = engine default).
	GPUMemoryUtilization float64
	// MaxBatchedTokens overrides vLLM --max-num-batched-tokens / the prefill
	// chunk (0 = engine default).
	MaxBatchedTokens Tokens
	// MaxNumSeqs overrides vLLM --max-num-seqs for the profile run
	// (0 = engine default).
	MaxNumSeqs int
	// GPULayers is llama.cpp -ngl (-1 or 0 = auto: as many as fit).
	GPULayers int
	// UnifiedKV is llama-server --kv-unified.
	UnifiedKV bool
	// FlashAttention toggles llama.cpp -fa (nil = on where supported).
	FlashAttention *bool
	// UsableMemory overrides what one device can allocate (from the
	// probe); HostMemory is the system RAM available for offload (0 =
	// unknown).
	UsableMemory Bytes
	HostMemory   Bytes
	// OffloadBytes are weights resident in system RAM (partial offload);
	// each decode step reads them at HostBandwidthGBs.
	OffloadBytes Bytes
	// CPUMoELayers is llama.cpp --n-cpu-moe N: for Fit, the layers whose
	// expert tensors stay in system RAM (0: as many as needed); after
	// WithPlacement, set only when the offloaded bytes are experts alone,
	// which a step reads for the experts its tokens route to.
	CPUMoELayers int
	// HostBandwidthGBs is system RAM bandwidth (0 = 60 GB/s, dual-channel
	// DDR5 [U]).
	HostBandwidthGBs float64
	// Mem holds fitted memory constants (nil = DefaultMemoryParams).
	Mem *MemoryParams
}

// MemoryParams are the fitted constants of the memory model. Their values
// and fit quality live in profiles/catalog/fitted.toml.
type MemoryParams struct {
	// VLLMActivationFactor multiplies the physical activation estimate of
	// vLLM's profile run (VLLMActivationPeak).
	VLLMActivationFactor float64 `toml:"vllm_activation_factor" json:"vllm_activation_factor"`
	// VLLMReserve is memory vLLM's profiler attributes to neither weights,
	// activations nor KV: allocator fragmentation, NCCL, sampler buffers.
	VLLMReserve Bytes `toml:"vllm_reserve" json:"vllm_reserve"`
	// OSReserve is memory an OS keeps on unified-memory machines.
	OSReserve Bytes `toml:"os_reserve" json:"os_reserve"`
}

// DefaultMemoryParams are used when no fitted profile is loaded.
var DefaultMemoryParams = MemoryParams{
	VLLMActivationFactor: 2.0,
	VLLMReserve:          2 * GiB,
	OSReserve:            4 * GiB,
}

func (s Scenario) mem() MemoryParams {
	if s.Mem != nil {
		return *s.Mem
	}
	return DefaultMemoryParams
}

// ErrInvalid marks a scenario that contradicts itself or has absurd numbers.
var ErrInvalid = errors.New("invalid scenario")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// backendPreference orders backends when the user names none.
var backendPreference = []Backend{CUDA, ROCm, Metal, Vulkan, SYCL, CPU}

// ResolveBackend picks the backend: the scenario's own if set and valid,
// else the first of CUDA, ROCm, Metal, Vulkan, SYCL, CPU that both the
// hardware and the engine support.
func (s Scenario) ResolveBackend() (Backend, error) {
	if s.Backend != "" {
		if !s.Hardware.HasBackend(s.Backend) && s.Backend != CPU {
			return "", invalid("%s has no %s backend (it has %v)", s.Hardware.ID, s.Backend, s.Hardware.Backends)
		}
		if !s.Engine.HasBackend(s.Backend) {
			return "", invalid("%s does not run on %s (it runs on %v)", s.Engine.ID, s.Backend, s.Engine.Backends)
		}
		return s.Backend, nil
	}
	for _, b := range backendPreference {
		if s.Hardware.HasBackend(b) && s.Engine.HasBackend(b) {
			return b, nil
		}
	}
	return "", invalid("%s runs on %v but %s offers %v", s.Engine.ID, s.Engine.Backends, s.Hardware.ID, s.Hardware.Backends)
}

// Validate checks numbers and combinations, returning an error that says
// what is wrong and what would be accepted.
func (s Scenario) Validate() error {
	if s.Hardware.ID == "" {
		return invalid("no hardware given")
	}
	if s.Model.Layers <= 0 || s.Model.Hidden <= 0 || s.Model.Params <= 0 {
		return invalid("model %q lacks layers, hidden size or parameter count", s.Model.ID)
	}
	if s.Devices < 0 || s.Devices > 64 {
		return invalid("devices = %d: use 1 to 64", s.Devices)
	}
	if s.Nodes < 0 || s.Nodes > 64 {
		return invalid("nodes = %d: use 1 to 64", s.Nodes)
	}
	if s.Nodes > 1 && MultiNode(s.Engine) == MultiNodeNone {
		return invalid("%s is planned on one node only; vLLM and SGLang (pipeline parallel) and llama.cpp (RPC) span nodes", s.Engine.ID)
	}
	if s.Context < 0 || s.Context > 10_000_000 {
		return invalid("context = %d tokens: use 1 to 10M", s.Context)
	}
	if s.Concurrency < 0 || s.Concurrency > 100_000 {
		return invalid("concurrency = %d: use 1 to 100000", s.Concurrency)
	}
	u := s.GPUMemoryUtilization
	if u < 0 || u > 1 || math.IsNaN(u) {
		return invalid("gpu memory utilization = %g: use a fraction in (0, 1]", u)
	}
	if s.Hardware.UsableGPUMemory() <= 0 && s.UsableMemory <= 0 {
		return invalid("%s has no memory size", s.Hardware.ID)
	}
	b, err := s.ResolveBackend()
	if err != nil {
		return err
	}
	if u := supportedOn(s, b); u != nil {
		return u
	}
	if s.KV.BytesPerElement <= 0 {
		return invalid("KV-cache type %q has no element size", s.KV.ID)
	}
	if s.Model.Context() > 0 && s.Context > 0 && s.Context > s.Model.Context()*4 {
		return invalid("context %d is over 4× the model's maximum of %d tokens", s.Context, s.Model.Context())
	}
	if s.Devices > 1 && s.Model.Heads > 0 && s.Model.Heads%s.Devices != 0 && !s.Engine.IsGGML() {
		return invalid("tensor parallel %d does not divide the model's %d attention heads", s.Devices, s.Model.Heads)
	}
	return nil
}

// Context returns the model's maximum context (0 if unknown).
func (m Model) Context() Tokens { return m.MaxContext }

func (s Scenario) devices() int {
	if s.Devices < 1 {
		return 1
	}
	return s.Devices
}

func (s Scenario) concurrency() int {
	if s.Concurrency < 1 {
		return 1
	}
	return s.Concurrency
}

// maxModelLen is the longest sequence the server is started for: the
// scenario's context, else the model's, else 4096.
func (s Scenario) maxModelLen() Tokens {
	switch {
	case s.Context > 0:
		return s.Context
	case s.Model.MaxContext > 0:
		return s.Model.MaxContext
	}
	return 4096
}

// deviceMemory is what one device offers to a GPU engine.
func (s Scenario) deviceMemory() Bytes {
	if s.UsableMemory > 0 {
		return s.UsableMemory
	}
	return s.Hardware.UsableGPUMemory()
}

// WithPlacement returns s with the weight placement a fit chose (weights
// left in system RAM, experts kept on the CPU), which the speed model
// charges for.
func (s Scenario) WithPlacement(fr FitResult) Scenario {
	s.OffloadBytes, s.CPUMoELayers = fr.OffloadBytes, 0
	if fr.GPULayers > fr.TotalLayers {
		// Every layer on the device: what is in RAM is experts only.
		s.CPUMoELayers = fr.CPUMoELayers
	}
	return s
}
