package planner

import (
	"fmt"
	"math"
	"strconv"
)

// Verdict is the answer to "can I run it?".
type Verdict string

// Verdicts.
const (
	Fits            Verdict = "fits"
	FitsWithOffload Verdict = "fits with offload"
	DoesNotFit      Verdict = "does not fit"
)

// Breakdown is where one device's memory goes.
type Breakdown struct {
	Device        Bytes `json:"device"`         // what the device offers the engine
	Budget        Bytes `json:"budget"`         // the engine's share (utilization × device)
	Weights       Bytes `json:"weights"`        // weights resident on this device
	KVCache       Bytes `json:"kv_cache"`       // KV pool (vLLM/SGLang/TGI) or allocated cells (llama.cpp)
	Activations   Bytes `json:"activations"`    // profile-run peak / warm-up peak
	ComputeBuffer Bytes `json:"compute_buffer"` // llama.cpp compute buffer
	CUDAGraphs    Bytes `json:"cuda_graphs"`
	Runtime       Bytes `json:"runtime"` // context, workspaces, reserve
	Free          Bytes `json:"free"`    // device − everything above
	HostWeights   Bytes `json:"host_weights,omitempty"`
	HostKV        Bytes `json:"host_kv,omitempty"`
	HostBuffers   Bytes `json:"host_buffers,omitempty"`
}

// Used is everything the engine holds on the device.
func (b Breakdown) Used() Bytes {
	return b.Weights + b.KVCache + b.Activations + b.ComputeBuffer + b.CUDAGraphs + b.Runtime
}

// FitResult is the memory answer for one scenario.
type FitResult struct {
	Verdict Verdict  `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`     // why it does not fit, or what was reduced
	Advice  []string `json:"suggestions,omitempty"` // what would make it fit
	Backend Backend  `json:"backend"`
	Devices int      `json:"devices"`
	// Breakdown is per device (all devices are alike under TP).
	Breakdown       Breakdown `json:"breakdown"`
	WeightBytes     Bytes     `json:"weight_bytes"` // whole model
	KVBytesPerToken Bytes     `json:"kv_bytes_per_token"`
	// MaxKVTokens is the KV pool in tokens (what vLLM logs as "GPU KV
	// cache size", llama.cpp's cells).
	MaxKVTokens Tokens `json:"max_kv_tokens"`
	// Context and Concurrency are the configuration evaluated.
	Context     Tokens `json:"context"`
	Concurrency int    `json:"concurrency"`
	// MaxContextAtConcurrency is the longest per-sequence context with
	// Concurrency sequences resident; MaxConcurrencyAtContext the most
	// sequences of Context tokens resident at once.
	MaxContextAtConcurrency Tokens `json:"max_context_at_concurrency"`
	MaxConcurrencyAtContext int    `json:"max_concurrency_at_context"`
	GPULayers               int    `json:"gpu_layers"`
	TotalLayers             int    `json:"total_layers"`
	// CPUMoELayers is llama.cpp --n-cpu-moe: the first N layers keep their
	// expert tensors in system RAM while attention, shared weights and the
	// whole KV cache stay on the device.
	CPUMoELayers int `json:"cpu_moe_layers,omitempty"`
	// OffloadBytes are the weights in system RAM that every step streams
	// (the input embedding, gathered by row, is not among them).
	OffloadBytes Bytes    `json:"offload_bytes,omitempty"`
	Assumptions  []string `json:"assumptions,omitempty"`
	// Flags holds engine settings the fit implies (max_model_len, -c, -np,
	// -ngl, ubatch, block size ...), for launch commands.
	Flags map[string]string `json:"flags,omitempty"`
}

// LayersText says where a GGML engine's layers run: "37 of 37", with the
// layers whose experts stay in system RAM under --n-cpu-moe.
func (r FitResult) LayersText() string {
	t := fmt.Sprintf("%d of %d", r.GPULayers, r.TotalLayers+1)
	if r.CPUMoELayers > 0 {
		t += fmt.Sprintf(", the experts of %d in system RAM (--n-cpu-moe %d)", r.CPUMoELayers, r.CPUMoELayers)
	}
	return t
}

// minUsefulContext is the smallest context worth auto-fitting down to
// (llama.cpp --fit-ctx default 4096 is the engine's own floor; we stop at
// 2048 to still report small-memory fits).
const minUsefulContext Tokens = 2048

// Fit answers "can I run it?" for the scenario.
func Fit(s Scenario) (FitResult, error) {
	if err := s.Validate(); err != nil {
		return FitResult{}, err
	}
	b, _ := s.ResolveBackend()
	rules, ok := rulesFor(s.Engine.Policy)
	if !ok {
		return FitResult{}, invalid("engine %s has unknown memory policy %q", s.Engine.ID, s.Engine.Policy)
	}
	r := rules.fit(s, b)
	r.Backend = b
	r.Devices = s.devices()
	r.TotalLayers = s.Model.Layers
	r.Concurrency = s.concurrency()
	return r, nil
}

// pagedPlan is a paged engine's share of one device and what it keeps
// outside the KV pool; each paged engine's rules make one (vllmPaged,
// sglangPaged, tgiPaged, trtllmPaged).
type pagedPlan struct {
	budget, runtime, act, graphs, weights Bytes
	block                                 int
	batched                               Tokens
	// graphsInBudget: the CUDA graphs are taken out of the budget before
	// the pool (vLLM ≥ 0.21).
	graphsInBudget bool
	// ofRest > 0: the pool is this share of what is left of the device
	// after weights, runtime and activations, not budget minus them
	// (TensorRT-LLM's free_gpu_memory_fraction).
	ofRest float64
}

// pagedBase is what every paged engine holds outside its pool before its
// own terms: the weights of one device and the runtime overhead.
func pagedBase(s Scenario, b Backend) pagedPlan {
	return pagedPlan{
		weights: WeightBytesPerDevice(WeightBytes(s.Model, s.Quant), s.devices()*s.stages()),
		runtime: RuntimeOverhead(b),
		block:   max(s.Engine.BlockSize, 1),
	}
}

// pool returns the KV pool bytes of a paged plan on a device of dev bytes.
func (p pagedPlan) pool(dev Bytes) Bytes {
	used := p.weights + p.runtime + p.act
	if p.graphsInBudget {
		used += p.graphs
	}
	if p.ofRest > 0 {
		return Bytes(p.ofRest * float64(dev-used))
	}
	return p.budget - used
}

// fitPaged sizes a paged KV pool (vLLM, SGLang, TGI, TensorRT-LLM) with
// the engine's plan of the device.
func fitPaged(s Scenario, b Backend, plan func(Scenario, Backend, Tokens) pagedPlan) FitResult {
	tp := s.devices()
	dev := s.deviceMemory()
	kvTok := perStage(KVBytesPerToken(s.Model, s.KV, tp), s.stages())
	auto := s.Context == 0
	maxLen := s.maxModelLen()
	p := plan(s, b, maxLen)
	pool := p.pool(dev)
	r := FitResult{WeightBytes: WeightBytes(s.Model, s.Quant), KVBytesPerToken: kvTok, GPULayers: s.Model.Layers}
	blockBytes := Bytes(p.block) * kvTok
	tokens := Tokens(0)
	if pool > 0 && blockBytes > 0 {
		tokens = Tokens(int64(pool/blockBytes) * int64(p.block))
	}
	r.MaxKVTokens = tokens
	r.Breakdown = Breakdown{
		Device: dev, Budget: p.budget, Weights: p.weights, Activations: p.act,
		Runtime: p.runtime, CUDAGraphs: p.graphs,
	}
	if pool > 0 {
		r.Breakdown.KVCache = Bytes(int64(tokens)) * kvTok
	}
	r.Breakdown.Free = dev - r.Breakdown.Used()
	slack := p.batched
	seqBytes := func(ctx Tokens) Bytes { return perStage(KVBytesForSequence(s.Model, s.KV, tp, ctx, slack), s.stages()) }
	n := s.concurrency()
	if pool <= 0 {
		r.Verdict = DoesNotFit
		need := p.weights + p.runtime + p.act
		r.Reasons = append(r.Reasons, fmt.Sprintf("weights (%s) and overheads (%s) exceed the engine's budget of %s per device, leaving no KV cache",
			p.weights, p.runtime+p.act, p.budget))
		r.Advice = adviceMoreMemory(s, need-p.budget, p.weights, p.runtime+p.act, p.budget)
		return r
	}
	if auto {
		// Like vLLM --max-model-len -1 (auto-fit): the longest context of
		// which the pool holds one sequence, capped at the model maximum.
		maxLen = largestContext(seqBytes, pool, 1, maxLen)
		if maxLen < s.Model.MaxContext {
			r.Reasons = append(r.Reasons, fmt.Sprintf("context reduced from the model's %s to %s so one sequence fits the KV pool", s.Model.MaxContext, maxLen))
		}
	}
	r.Context = maxLen
	r.MaxContextAtConcurrency = largestContext(seqBytes, pool, n, s.Model.MaxContext)
	if one := seqBytes(maxLen); one > 0 {
		r.MaxConcurrencyAtContext = int(pool / one)
	}
	r.Flags = map[string]string{"max_model_len": strconv.FormatInt(int64(maxLen), 10), "block_size": strconv.Itoa(p.block), "max_num_batched_tokens": strconv.FormatInt(int64(p.batched), 10)}
	if !p.graphsInBudget && p.budget+p.graphs > dev && b != CPU {
		r.Verdict = DoesNotFit
		r.Reasons = append(r.Reasons, fmt.Sprintf("CUDA graphs (%s) do not fit in the %s left outside the utilization budget", p.graphs, dev-p.budget))
		r.Advice = append(r.Advice, "lower --gpu-memory-utilization or pass --enforce-eager")
		return r
	}
	if (auto && maxLen < minUsefulContext) || seqBytes(maxLen) > pool {
		r.Verdict = DoesNotFit
		r.Reasons = append(r.Reasons, fmt.Sprintf("the KV pool (%s tokens) cannot hold one %s-token sequence", tokens, maxLen))
		r.Advice = append(r.Advice, fmt.Sprintf("lower the context to %s or less", largestContext(seqBytes, pool, 1, maxLen)))
		r.Advice = append(r.Advice, adviceSmaller(s)...)
		return r
	}
	r.Verdict = Fits
	if r.MaxConcurrencyAtContext < n {
		r.Reasons = append(r.Reasons, fmt.Sprintf("only %d of the %d requested sequences of %s tokens are resident at once; the rest queue", r.MaxConcurrencyAtContext, n, maxLen))
	}
	return r
}

// largestContext is the longest per-sequence context such that n sequences
// fit in pool bytes, capped at limit (binary search, like vLLM's
// estimate of the maximum model length).
func largestContext(seq func(Tokens) Bytes, pool Bytes, n int, limit Tokens) Tokens {
	if limit <= 0 {
		limit = 10_000_000
	}
	if Bytes(n)*seq(limit) <= pool {
		return limit
	}
	lo, hi := Tokens(0), limit
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if Bytes(n)*seq(mid) <= pool {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo / 16 * 16
}

// adviceMoreMemory says what would make weights of `weights` per device
// plus `fixed` per-device overheads fit a budget of `budget` per device,
// `short` bytes over it: how many devices tensor parallel needs, what a
// 4-bit format would weigh, and (vLLM, when the gap is small) a higher
// memory utilization.
func adviceMoreMemory(s Scenario, short, weights, fixed, budget Bytes) []string {
	out := []string{fmt.Sprintf("about %s more memory per device is needed", short)}
	d := max(s.devices(), 1)
	total := float64(weights) * float64(d)
	if s.Quant.LinearBPW > 5 {
		// 4-bit group-quantized linear layers carry ~4.5 bits per weight
		// with their scales (modeling.md §2.3).
		w4 := Bytes(total * 4.5 / s.Quant.LinearBPW / float64(d))
		out = append(out, fmt.Sprintf("a 4-bit format (AWQ/GPTQ, or GGUF Q4_K_M with llama.cpp) cuts weights by about 3/4, to about %s per device", w4))
	}
	if s.Hardware.Kind != KindGPU {
		out = append(out, "a machine with more memory (this device cannot be paired for tensor parallel)")
		return out
	}
	minKV := KVBytesPerToken(s.Model, s.KV, 1) * Bytes(minUsefulContext)
	if n := devicesForWeights(total, fixed, budget, minKV); n > 8 {
		out = append(out, fmt.Sprintf("even 8 of these devices are too small at this format: about %d would hold the weights with room for a KV cache, beyond one node's tensor parallel", n))
	} else if n > d {
		out = append(out, fmt.Sprintf("tensor parallel over %d devices (--devices %d) holds the weights with room for a KV cache", n, n))
	}
	if r, ok := rulesFor(s.Engine.Policy); ok && r.memoryKnob() != "" && float64(short) <= 0.08*float64(s.deviceMemory()) {
		out = append(out, "raise "+r.memoryKnob())
	}
	return out
}

// devicesForWeights is the smallest tensor-parallel degree (a power of
// two, as attention heads divide) at which total weight bytes plus the
// per-device overheads leave a fifth of the budget for the KV cache; 16 or
// more when no degree up to 8 does.
//
// When no degree up to 8 leaves a fifth, the smallest that leaves a KV
// pool for minUsefulContext tokens (minKV bytes) is returned: Llama-3.1-70B
// bf16 on 8 RTX 4090s leaves 2 GiB per device and runs at a 69k context,
// where the advice had said "even 8 of these devices are too small".
func devicesForWeights(total float64, fixed, budget, minKV Bytes) int {
	for n := 1; n <= 8; n *= 2 {
		if total/float64(n)+float64(fixed) <= 0.8*float64(budget) {
			return n
		}
	}
	for n := 1; n <= 8; n *= 2 {
		if total/float64(n)+float64(fixed)+float64(minKV)/float64(n) <= float64(budget) {
			return n
		}
	}
	n := int(math.Ceil(total / (0.8*float64(budget) - float64(fixed))))
	if 0.8*float64(budget) <= float64(fixed) || n < 16 {
		n = 16
	}
	return n
}

func adviceSmaller(s Scenario) []string {
	var out []string
	if s.KV.BytesPerElement >= 2 {
		out = append(out, "an fp8 or q8_0 KV cache halves KV memory")
	}
	if s.Quant.LinearBPW > 5 {
		out = append(out, "a 4-bit weight format frees memory for KV")
	}
	return out
}

// hostAvailable is the system RAM usable for offloaded layers. On unified
// and APU machines the GPU's memory is system RAM, so what the GPU uses is
// taken out (no double counting).
func hostAvailable(s Scenario, gpuUsed Bytes) (Bytes, bool) {
	h := s.HostMemory
	switch s.Hardware.MemoryModel {
	case MemUnified, MemAPU, MemHost:
		if h == 0 {
			h = s.Hardware.Memory
		}
		// Over nodes (llama.cpp RPC) each node has its own RAM and OS,
		// and gpuUsed is the pool of all of them.
		n := Bytes(s.nodes())
		return n*h - gpuUsed - n*osReserve(s, h), true
	}
	if h == 0 {
		return 0, false
	}
	return h - osReserve(s, h), true
}

// osReserve is the memory the OS keeps for itself out of ram: the catalog's
// reserve (4 GiB), but no more than a quarter of a small machine, where a
// desktop OS idles in 1.5-2.5 GB [U] — an 8 GB Mac runs 8B Q4 models that a
// flat 4 GiB reserve on top of Metal's working-set cap ruled out.
func osReserve(s Scenario, ram Bytes) Bytes {
	return min(s.mem().OSReserve, ram/4)
}
