package planner

import (
	"fmt"
)

// llamaUbatch is llama-server's default -ub (tools/server/README.md).
const llamaUbatch Tokens = 512

// ollamaDefaultContext is Ollama's VRAM-tiered default num_ctx since
// 2026-02: ≥47 GiB total VRAM → 262144, ≥23 GiB → 32768, else 4096
// (server/routes.go @ fb30760; modeling.md §1.6).
func ollamaDefaultContext(vram Bytes) Tokens {
	switch {
	case vram >= 47*GiB:
		return 262144
	case vram >= 23*GiB:
		return 32768
	}
	return 4096
}

// llamaLayerBytes splits weights into the input embedding (always on the
// CPU in llama.cpp), the output head (offloaded first in 2026 builds) and
// equal repeating blocks (src/llama-model.cpp i_gpu_start; modeling.md
// §1.3 "Layer offload").
func llamaLayerBytes(m Model, q Quant) (embed, head, perLayer Bytes) {
	total := WeightBytes(m, q)
	emb := Params(m.Vocab) * Params(m.Hidden)
	embed = Bytes(float64(emb) * q.EmbedBPW / 8)
	if m.TiedEmbeddings {
		// The output reuses token_embd; llama.cpp keeps a copy on the
		// device that runs the output layer.
		head = Bytes(float64(emb) * q.EmbedBPW / 8)
	} else {
		head = Bytes(float64(emb) * q.HeadBPW / 8)
	}
	rest := total - embed
	if !m.TiedEmbeddings {
		rest -= head
	}
	if rest < 0 {
		rest = 0
	}
	return embed, head, rest / Bytes(max(m.Layers, 1))
}

// expertBytesPerLayer is one layer's share of the routed-expert weights.
func expertBytesPerLayer(m Model, q Quant) Bytes {
	if !m.IsMoE() || m.Layers <= 0 {
		return 0
	}
	return Bytes(float64(m.ExpertParams())*q.expertBPW()/8) / Bytes(m.Layers)
}

// cpuMoELayers is llama.cpp's --n-cpu-moe for an MoE whose full placement
// is over bytes too big for the device: the fewest layers whose expert
// tensors, kept in system RAM, make room, or 0 when that is not the
// engine's way or not enough. llama-server has --n-cpu-moe since PR #15077
// (2025-08) and its default --fit places MoE expert tensors on the CPU
// before it lowers -ngl; a discrete GPU keeps attention and the KV cache
// in VRAM that way and reads from RAM only the experts each token routes
// to. Ollama has no such option; an APU's GPU memory is system RAM.
func cpuMoELayers(s Scenario, b Backend, over Bytes) int {
	el := expertBytesPerLayer(s.Model, s.Quant)
	if s.Engine.Policy != PolicyLlamaCpp || b == CPU || el <= 0 || over <= 0 ||
		s.Hardware.MemoryModel != MemDiscrete {
		return 0
	}
	n := int((over + el - 1) / el)
	if n > s.Model.Layers {
		return 0
	}
	return n
}

// fitLlamaCpp sizes llama.cpp / llama-server and Ollama: weights, KV cells,
// compute buffer, and partial offload when the device is too small. The
// steps are small functions over one llamaFit: the context (llamaFit.
// context), what the device would need (need), where the layers go
// (place), the memory breakdown (breakdown) and the verdict (verdict).
func fitLlamaCpp(s Scenario, b Backend) FitResult {
	lf := newLlamaFit(s, b)
	r := FitResult{WeightBytes: WeightBytes(s.Model, s.Quant), KVBytesPerToken: KVBytesPerToken(s.Model, s.KV, 1)}
	perSeq, lowered := lf.context()
	nd := lf.need(perSeq)
	r.MaxKVTokens = nd.cells
	r.Context = nd.slot
	if lf.unified {
		r.Context = min(nd.cells, lf.m.MaxContext)
	}
	pl := lf.place(nd)
	r.GPULayers, r.CPUMoELayers = pl.gl, pl.moe
	r.Breakdown, r.OffloadBytes = lf.breakdown(nd, pl)
	r.Flags = lf.flags(nd, pl)
	lf.capacity(&r, nd, perSeq)
	if lowered != contextKept {
		r.Reasons = append(r.Reasons, lf.contextReason(lowered, perSeq, pl))
	}
	lf.verdict(&r, nd, pl)
	return r
}

// llamaFit is one llama.cpp or Ollama scenario's fixed inputs: the model,
// the backend's buffers, and the per-layer sizes every step uses.
type llamaFit struct {
	s                     Scenario
	b                     Backend
	m                     Model
	n                     int   // slots (-np)
	dev                   Bytes // device memory; -sm layer pools devices
	fa                    bool  // flash attention on
	ollama, unified       bool
	cpuOnly               bool
	runtime               Bytes
	embed, head, perLayer Bytes
	ub                    Tokens
	streams               int
	expertLayer           Bytes // expert tensors per layer (MoE)
	forcedMoE             int   // --n-cpu-moe as given
}

// newLlamaFit gathers a scenario's inputs (runtime buffers per backend:
// Ollama reserves its minimum on CUDA and ROCm, the CPU none).
func newLlamaFit(s Scenario, b Backend) llamaFit {
	lf := llamaFit{s: s, b: b, m: s.Model, n: s.concurrency(), dev: s.deviceMemory() * Bytes(s.devices()),
		fa: flashAttentionOn(s, b), ollama: s.Engine.Policy == PolicyOllama, cpuOnly: b == CPU, ub: llamaUbatch}
	lf.runtime = RuntimeOverhead(b) * Bytes(s.devices())
	if lf.ollama && (b == CUDA || b == ROCm) {
		lf.runtime += OllamaMinimumMemory * Bytes(s.devices())
	}
	if b == CPU {
		lf.runtime = 0
	}
	lf.embed, lf.head, lf.perLayer = llamaLayerBytes(lf.m, s.Quant)
	lf.unified = s.UnifiedKV && !lf.ollama
	lf.streams = lf.n
	if lf.unified {
		lf.streams = 1
	}
	lf.expertLayer = expertBytesPerLayer(lf.m, s.Quant)
	if s.CPUMoELayers > 0 && lf.expertLayer > 0 && s.Engine.Policy == PolicyLlamaCpp && b != CPU {
		lf.forcedMoE = min(s.CPUMoELayers, lf.m.Layers)
	}
	return lf
}

// cells is the KV cells and the cells per slot for a per-sequence context.
func (lf llamaFit) cells(per Tokens) (Tokens, Tokens) {
	if lf.s.TotalContext > 0 {
		return LlamaCppCells(lf.s.TotalContext, lf.n, lf.unified)
	}
	return LlamaCppCells(per*Tokens(lf.n), lf.n, lf.unified)
}

// kv is the KV cache of cells.
func (lf llamaFit) kv(cells Tokens) Bytes {
	return LlamaCppKVBytes(lf.m, lf.s.KV, cells, lf.streams, lf.ub)
}

// contextChange says whether and why the default context was lowered.
type contextChange int

const (
	contextKept      contextChange = iota
	contextForRAM                  // on the CPU, to fit in system RAM
	contextForDevice               // on a device, to keep every layer there
)

// context is the per-sequence context: the one asked, else the model's
// (Ollama's default by memory tier), lowered like llama.cpp --fit to fit
// the device (not below 4096 cells a slot) or, on the CPU, system RAM.
func (lf llamaFit) context() (Tokens, contextChange) {
	m := lf.m
	perSeq := lf.s.Context
	if perSeq != 0 || lf.s.TotalContext != 0 {
		return perSeq, contextKept
	}
	perSeq = m.MaxContext
	if lf.ollama {
		perSeq = min(ollamaAutoContext(lf.s, lf.dev), m.MaxContext)
	}
	if perSeq == 0 {
		perSeq = 4096
	}
	if lf.cpuOnly {
		// The KV cache lives in system RAM beside the weights (an 8B
		// model's 131072-token default needed 16 GiB of KV on a 16 GB
		// machine that runs it at 8k).
		perSeq = cpuAutoContext(lf.s, perSeq, func(per Tokens) Bytes {
			cells, slot := lf.cells(per)
			return WeightBytes(m, lf.s.Quant) + lf.kv(cells) + LlamaCppComputeBuffer(m, lf.ub, slot, lf.fa)
		})
		if perSeq < m.MaxContext {
			return perSeq, contextForRAM
		}
		return perSeq, contextKept
	}
	for perSeq > 4096 && lf.need(perSeq).total > lf.dev {
		perSeq /= 2
	}
	if perSeq < m.MaxContext {
		return perSeq, contextForDevice
	}
	return perSeq, contextKept
}

// contextReason says why the context was lowered, in the words of what
// the placement then did: everything stayed on the device, or the context
// went down first and layers moved anyway.
func (lf llamaFit) contextReason(c contextChange, perSeq Tokens, pl llamaPlacement) string {
	max := lf.m.MaxContext
	switch {
	case c == contextForRAM:
		return fmt.Sprintf("context set to %s per sequence (the model allows %s) to fit in system RAM", perSeq, max)
	case pl.fullOnDevice(lf):
		return fmt.Sprintf("context set to %s per sequence (the model allows %s) to keep everything on the device", perSeq, max)
	}
	return fmt.Sprintf("context set to %s per sequence (the model allows %s): like llama.cpp --fit, the context is lowered (to --fit-ctx 4096 at least) before weights move off the device", perSeq, max)
}

// llamaNeed is what the device would hold with every layer on it.
type llamaNeed struct {
	total       Bytes // weights, KV, compute buffer and runtime
	cells, slot Tokens
	kv, cb      Bytes
}

// need is the device memory of the whole model at a per-sequence context.
func (lf llamaFit) need(per Tokens) llamaNeed {
	cells, slot := lf.cells(per)
	kv := lf.kv(cells)
	cb := LlamaCppComputeBuffer(lf.m, lf.ub, llamaKQSpan(lf.s, cells, slot), lf.fa)
	total := lf.perLayer*Bytes(lf.m.Layers) + lf.head + kv + cb + lf.runtime - Bytes(lf.forcedMoE)*lf.expertLayer
	return llamaNeed{total: total, cells: cells, slot: slot, kv: kv, cb: cb}
}

// llamaPlacement is where the layers run: gl blocks on the device (-ngl,
// with the output layer), the experts of moe layers in RAM (--n-cpu-moe),
// and what the device then holds.
type llamaPlacement struct {
	gl, moe, blocksOnDev, moeDev int
	onDev                        Bytes
}

// fullOnDevice reports whether every layer and every expert is on the
// device.
func (pl llamaPlacement) fullOnDevice(lf llamaFit) bool {
	return pl.gl == lf.m.Layers+1 && pl.moe == 0
}

// place decides -ngl and --n-cpu-moe: as asked, else every layer when it
// fits, else (an MoE llama-server can split) the experts of the fewest
// layers in RAM, else the output layer first and then the last blocks
// (llama-model.cpp 2026).
func (lf llamaFit) place(nd llamaNeed) llamaPlacement {
	layers := lf.m.Layers
	gl := lf.s.GPULayers
	if lf.cpuOnly {
		gl = 0
	}
	if gl <= 0 && !lf.cpuOnly {
		gl = lf.layersThatFit(nd)
	}
	moe := lf.forcedMoE
	if moe == 0 && lf.s.GPULayers <= 0 && nd.total > lf.dev {
		if moe = cpuMoELayers(lf.s, lf.b, nd.total-lf.dev); moe > 0 {
			gl = layers + 1
		}
	}
	pl := llamaPlacement{gl: min(gl, layers+1), moe: moe}
	pl.blocksOnDev = max(pl.gl-1, 0)
	// -ngl keeps the first layers on the CPU and --n-cpu-moe the experts
	// of the first N: only the experts of device layers among those N move.
	pl.moeDev = max(0, moe-(layers-pl.blocksOnDev))
	pl.onDev = lf.onDevice(nd, pl)
	return pl
}

// layersThatFit is -ngl when none is given: all blocks and the output
// layer if they fit, else as many blocks as the device holds beside the
// output layer and buffers (0 when not even those fit).
func (lf llamaFit) layersThatFit(nd llamaNeed) int {
	layers := lf.m.Layers
	if nd.total <= lf.dev {
		return layers + 1
	}
	avail := lf.dev - lf.runtime - nd.cb - lf.head
	if avail < 0 {
		return 0
	}
	perWithKV := lf.perLayer + nd.kv/Bytes(max(layers, 1))
	fitN := 0
	if avail > 0 && perWithKV > 0 {
		fitN = int(avail / perWithKV)
	}
	return min(fitN, layers) + 1
}

// onDevice is what the device holds under a placement.
func (lf llamaFit) onDevice(nd llamaNeed, pl llamaPlacement) Bytes {
	if pl.gl > 0 {
		return lf.runtime + nd.cb + lf.head + Bytes(pl.blocksOnDev)*lf.perLayer +
			nd.kv*Bytes(pl.blocksOnDev)/Bytes(max(lf.m.Layers, 1)) - Bytes(pl.moeDev)*lf.expertLayer
	}
	if lf.cpuOnly {
		return 0
	}
	return lf.runtime
}

// breakdown splits memory between the device and system RAM, and gives
// the weights every step streams from RAM (the input embedding, gathered
// by row, is not among them).
func (lf llamaFit) breakdown(nd llamaNeed, pl llamaPlacement) (Breakdown, Bytes) {
	layers := lf.m.Layers
	bd := Breakdown{Device: lf.dev, Budget: lf.dev, Runtime: lf.runtime}
	if pl.gl > 0 {
		bd.Weights = lf.head + Bytes(pl.blocksOnDev)*lf.perLayer - Bytes(pl.moeDev)*lf.expertLayer
		bd.KVCache = nd.kv * Bytes(pl.blocksOnDev) / Bytes(max(layers, 1))
		bd.ComputeBuffer = nd.cb
	}
	off := Bytes(layers-pl.blocksOnDev)*lf.perLayer + Bytes(pl.moeDev)*lf.expertLayer
	bd.HostWeights = lf.embed + off
	if pl.gl == 0 {
		bd.HostWeights += lf.head
		off += lf.head
		if lf.m.TiedEmbeddings {
			bd.HostWeights -= lf.head
			off -= lf.head
		}
	}
	bd.HostKV = nd.kv - bd.KVCache
	if pl.gl < layers+1 || pl.moe > 0 {
		bd.HostBuffers = nd.cb
	}
	bd.Free = lf.dev - pl.onDev
	if lf.cpuOnly {
		bd.Device, bd.Budget, bd.Free = 0, 0, 0
	}
	return bd, off
}

// flags are the settings the launch command passes (-c, -np, -ngl, -ub,
// --n-cpu-moe).
func (lf llamaFit) flags(nd llamaNeed, pl llamaPlacement) map[string]string {
	f := map[string]string{
		"ctx_size": fmt.Sprint(int64(nd.cells)), "parallel": fmt.Sprint(lf.n),
		"n_gpu_layers": fmt.Sprint(pl.gl), "ubatch_size": fmt.Sprint(int64(lf.ub)),
	}
	if pl.moe > 0 {
		f["n_cpu_moe"] = fmt.Sprint(pl.moe)
	}
	return f
}

// capacity sets the longest context and the most sequences the KV cells
// hold.
func (lf llamaFit) capacity(r *FitResult, nd llamaNeed, perSeq Tokens) {
	m := lf.m
	seq := func(ctx Tokens) Bytes { return KVBytesForSequence(m, lf.s.KV, 1, ctx, lf.ub) }
	r.MaxContextAtConcurrency = min(nd.slot, m.MaxContext)
	if lf.unified {
		r.MaxContextAtConcurrency = largestContext(seq, nd.kv, lf.n, min(nd.cells, m.MaxContext))
	}
	if one := seq(llamaSlotSpan(lf.s, perSeq, r.Context, nd.cells)); one > 0 {
		r.MaxConcurrencyAtContext = int(nd.kv / one)
	}
}

// verdict decides fits, fits with offload or does not fit from the
// placement and the system RAM the offloaded part needs, with the reasons
// and advice.
func (lf llamaFit) verdict(r *FitResult, nd llamaNeed, pl llamaPlacement) {
	layers := lf.m.Layers
	bd := r.Breakdown
	hostNeed := bd.HostWeights + bd.HostKV + bd.HostBuffers
	hostAvail, known := hostAvailable(lf.s, pl.onDev)
	switch {
	case pl.fullOnDevice(lf) && pl.onDev <= lf.dev:
		r.Verdict = Fits
		if known && hostNeed > hostAvail {
			r.Verdict = DoesNotFit
			r.Reasons = append(r.Reasons, fmt.Sprintf("the CPU-side embedding (%s) does not fit the %s of system RAM left", hostNeed, hostAvail))
		}
	case !pl.fullOnDevice(lf) && (known && hostNeed <= hostAvail || !known && hostNeed <= unknownHostRAM) && (pl.gl > 0 || lf.cpuOnly):
		r.Verdict = FitsWithOffload
		switch {
		case lf.cpuOnly:
			r.Verdict = Fits
			r.Reasons = append(r.Reasons, "runs entirely on the CPU from system RAM")
		case pl.moe > 0:
			r.Reasons = append(r.Reasons, fmt.Sprintf("the expert weights of %d of %d layers (%s) stay in system RAM (--n-cpu-moe %d); attention, shared weights and the KV cache stay on the device. Decode reads the experts each token routes to from RAM; each prompt ubatch of 32+ tokens copies them to the device", pl.moe, layers, Bytes(pl.moe)*lf.expertLayer, pl.moe))
		default:
			r.Reasons = append(r.Reasons, fmt.Sprintf("%d of %d transformer blocks on the device (-ngl %d of %d with the output layer); %s of weights and KV in system RAM (decode slows to host-memory speed, and each prompt ubatch of 32+ tokens copies them to the device)", pl.blocksOnDev, layers, pl.gl, layers+1, hostNeed))
		}
		if !known {
			r.Assumptions = append(r.Assumptions, fmt.Sprintf("system RAM unknown: needs %s free", hostNeed))
		}
	default:
		r.Verdict = DoesNotFit
		switch {
		case pl.onDev > lf.dev:
			r.Reasons = append(r.Reasons, fmt.Sprintf("even with no layers offloaded the device needs %s (compute buffer and output) but offers %s", pl.onDev, lf.dev))
		case known:
			r.Reasons = append(r.Reasons, fmt.Sprintf("%s must stay in system RAM but only %s is free", hostNeed, max(hostAvail, 0)))
		case hostNeed > unknownHostRAM:
			r.Reasons = append(r.Reasons, fmt.Sprintf("%s would have to stay in system RAM, more than the %s any workstation this plan assumes holds; pass --host-memory if this machine has it", hostNeed, unknownHostRAM))
		default:
			r.Reasons = append(r.Reasons, "not even one layer fits on the device")
		}
		r.Advice = append(r.Advice, adviceSmaller(lf.s)...)
		r.Advice = append(r.Advice, "a smaller context (-c) shrinks the KV cache")
	}
}

// fitTransformers sizes plain Hugging Face transformers: no paged pool, so
// memory is weights + KV for batch × context + activations, plus the ~20%
// the HF memory Space adds for inference (modeling.md §1.7).
func fitTransformers(s Scenario, b Backend) FitResult {
	tp := s.devices()
	dev := s.deviceMemory()
	n := s.concurrency()
	ctx := s.Context
	if ctx == 0 {
		ctx = min(s.Model.MaxContext, 4096)
	}
	w := WeightBytesPerDevice(WeightBytes(s.Model, s.Quant), tp)
	kv := KVBytesForSequence(s.Model, s.KV, tp, ctx, 0) * Bytes(n)
	act := w / 5
	rt := RuntimeOverhead(b)
	r := FitResult{WeightBytes: WeightBytes(s.Model, s.Quant), KVBytesPerToken: KVBytesPerToken(s.Model, s.KV, tp), GPULayers: s.Model.Layers, Context: ctx}
	r.Breakdown = Breakdown{Device: dev, Budget: dev, Weights: w, KVCache: kv, Activations: act, Runtime: rt}
	r.Breakdown.Free = dev - r.Breakdown.Used()
	r.MaxKVTokens = Tokens(int64(ctx) * int64(n))
	pool := dev - w - act - rt
	seq := func(c Tokens) Bytes { return KVBytesForSequence(s.Model, s.KV, tp, c, 0) }
	if pool > 0 {
		r.MaxContextAtConcurrency = largestContext(seq, pool, n, s.Model.MaxContext)
		if one := seq(ctx); one > 0 {
			r.MaxConcurrencyAtContext = int(pool / one)
		}
	}
	if r.Breakdown.Free >= 0 {
		r.Verdict = Fits
	} else {
		r.Verdict = DoesNotFit
		r.Reasons = append(r.Reasons, fmt.Sprintf("needs %s per device, has %s", r.Breakdown.Used(), dev))
		r.Advice = adviceMoreMemory(s, -r.Breakdown.Free, w, kv+act+rt, dev)
	}
	return r
}

// unknownHostRAM is the most system RAM a plan assumes when the machine's
// is not known (a catalog device, no --host-memory): unknown RAM is not
// unlimited RAM. 256 GiB is the most a workstation board takes with
// unbuffered DIMMs (4 × 64 GB DDR5 UDIMMs [U]); a server with more says so
// with --host-memory.
const unknownHostRAM = 256 * GiB

// cpuAutoContext halves a CPU-only configuration's per-sequence context
// from perSeq until need(context) fits in the system RAM the scenario has,
// not below 4096 tokens (llama.cpp --fit-ctx's floor); unchanged when the
// RAM is not known.
func cpuAutoContext(s Scenario, perSeq Tokens, need func(Tokens) Bytes) Tokens {
	avail, known := hostAvailable(s, 0)
	if !known {
		return perSeq
	}
	for perSeq > 4096 && need(perSeq) > avail {
		perSeq /= 2
	}
	return perSeq
}
