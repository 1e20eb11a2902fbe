package planner

import (
	"fmt"
	"strings"
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
// compute buffer, and partial offload when the device is too small.
func fitLlamaCpp(s Scenario, b Backend) FitResult {
	m := s.Model
	n := s.concurrency()
	dev := s.deviceMemory() * Bytes(s.devices()) // -sm layer pools devices
	fa := flashAttentionOn(s, b)
	ollama := s.Engine.Policy == PolicyOllama
	runtime := RuntimeOverhead(b) * Bytes(s.devices())
	if ollama && (b == CUDA || b == ROCm) {
		runtime += OllamaMinimumMemory * Bytes(s.devices())
	}
	if b == CPU {
		runtime = 0
	}
	embed, head, perLayer := llamaLayerBytes(m, s.Quant)
	ub := llamaUbatch
	unified := s.UnifiedKV && !ollama
	r := FitResult{WeightBytes: WeightBytes(m, s.Quant), KVBytesPerToken: KVBytesPerToken(m, s.KV, 1)}

	perSeq := s.Context
	auto := perSeq == 0 && s.TotalContext == 0
	if auto {
		perSeq = m.MaxContext
		if ollama {
			perSeq = min(ollamaAutoContext(s, s.deviceMemory()*Bytes(s.devices())), m.MaxContext)
		}
		if perSeq == 0 {
			perSeq = 4096
		}
	}
	cellsFor := func(per Tokens) (Tokens, Tokens) {
		if s.TotalContext > 0 {
			return LlamaCppCells(s.TotalContext, n, unified)
		}
		return LlamaCppCells(per*Tokens(n), n, unified)
	}
	streams := n
	if unified {
		streams = 1
	}
	kvFor := func(cells Tokens) Bytes { return LlamaCppKVBytes(m, s.KV, cells, streams, ub) }
	// --n-cpu-moe as given (0: decided below, when the device is short).
	expertLayer := expertBytesPerLayer(m, s.Quant)
	forcedMoE := 0
	if s.CPUMoELayers > 0 && expertLayer > 0 && s.Engine.Policy == PolicyLlamaCpp && b != CPU {
		forcedMoE = min(s.CPUMoELayers, m.Layers)
	}
	deviceNeed := func(per Tokens) (Bytes, Tokens, Tokens, Bytes, Bytes) {
		cells, slot := cellsFor(per)
		kv := kvFor(cells)
		cb := LlamaCppComputeBuffer(m, ub, llamaKQSpan(s, cells, slot), fa)
		return perLayer*Bytes(m.Layers) + head + kv + cb + runtime - Bytes(forcedMoE)*expertLayer, cells, slot, kv, cb
	}
	cpuOnly := b == CPU
	if auto && cpuOnly {
		// On the CPU the KV cache lives in system RAM beside the weights:
		// the default context is the largest that fits there, as on a
		// device (an 8B model's 131072-token default needed 16 GiB of KV
		// on a 16 GB machine that runs it at 8k).
		perSeq = cpuAutoContext(s, perSeq, func(per Tokens) Bytes {
			cells, slot := cellsFor(per)
			return WeightBytes(m, s.Quant) + kvFor(cells) + LlamaCppComputeBuffer(m, ub, slot, fa)
		})
		if perSeq < m.MaxContext {
			r.Reasons = append(r.Reasons, fmt.Sprintf("context set to %s per sequence (the model allows %s) to fit in system RAM", perSeq, m.MaxContext))
		}
	}
	if auto && !cpuOnly {
		// Like llama.cpp --fit: lower the context (not below 4096 cells
		// per slot) before moving layers off the device.
		for perSeq > 4096 {
			if need, _, _, _, _ := deviceNeed(perSeq); need <= dev {
				break
			}
			perSeq /= 2
		}
		if perSeq < m.MaxContext {
			// Reworded below when weights must leave the device anyway.
			r.Reasons = append(r.Reasons, fmt.Sprintf("context set to %s per sequence (the model allows %s) to keep everything on the device", perSeq, m.MaxContext))
		}
	}
	need, cells, slot, kv, cb := deviceNeed(perSeq)
	r.MaxKVTokens = cells
	r.Context = slot
	if unified {
		r.Context = min(cells, m.MaxContext)
	}
	layers := m.Layers
	gl := s.GPULayers
	if cpuOnly {
		gl = 0
	}
	onDev := need
	if gl <= 0 && !cpuOnly {
		gl = layers + 1 // all blocks plus the output layer
		if need > dev {
			// Output first, then the last blocks (llama-model.cpp 2026).
			avail := dev - runtime - cb - head
			perWithKV := perLayer + kv/Bytes(max(layers, 1))
			fitN := 0
			if avail > 0 && perWithKV > 0 {
				fitN = int(avail / perWithKV)
			}
			if avail < 0 {
				gl = 0
			} else {
				gl = min(fitN, layers) + 1
			}
		}
	}
	// An MoE that does not fit keeps experts, not whole layers, in system
	// RAM when the engine can (cpuMoELayers): gl stays full.
	moe := forcedMoE
	if moe == 0 && s.GPULayers <= 0 && need > dev {
		if moe = cpuMoELayers(s, b, need-dev); moe > 0 {
			gl = layers + 1
		}
	}
	gl = min(gl, layers+1)
	blocksOnDev := max(gl-1, 0)
	// -ngl keeps the first layers on the CPU and --n-cpu-moe the experts
	// of the first N: only the experts of device layers among those N move.
	moeDev := max(0, moe-(layers-blocksOnDev))
	if gl > 0 {
		onDev = runtime + cb + head + Bytes(blocksOnDev)*perLayer + kv*Bytes(blocksOnDev)/Bytes(max(layers, 1)) - Bytes(moeDev)*expertLayer
	} else {
		onDev = 0
		if !cpuOnly {
			onDev = runtime
		}
	}
	r.GPULayers = gl
	r.CPUMoELayers = moe
	bd := Breakdown{Device: dev, Budget: dev, Runtime: runtime}
	if gl > 0 {
		bd.Weights = head + Bytes(blocksOnDev)*perLayer - Bytes(moeDev)*expertLayer
		bd.KVCache = kv * Bytes(blocksOnDev) / Bytes(max(layers, 1))
		bd.ComputeBuffer = cb
	}
	r.OffloadBytes = Bytes(layers-blocksOnDev)*perLayer + Bytes(moeDev)*expertLayer
	bd.HostWeights = embed + r.OffloadBytes
	if gl == 0 {
		bd.HostWeights += head
		r.OffloadBytes += head
		if m.TiedEmbeddings {
			bd.HostWeights -= head
			r.OffloadBytes -= head
		}
	}
	bd.HostKV = kv - bd.KVCache
	if gl < layers+1 || moe > 0 {
		bd.HostBuffers = cb
	}
	bd.Free = dev - onDev
	if cpuOnly {
		bd.Device, bd.Budget, bd.Free = 0, 0, 0
	}
	r.Breakdown = bd
	r.Flags = map[string]string{
		"ctx_size": fmt.Sprint(int64(cells)), "parallel": fmt.Sprint(n),
		"n_gpu_layers": fmt.Sprint(gl), "ubatch_size": fmt.Sprint(int64(ub)),
	}
	if moe > 0 {
		r.Flags["n_cpu_moe"] = fmt.Sprint(moe)
	}
	seq := func(ctx Tokens) Bytes { return KVBytesForSequence(m, s.KV, 1, ctx, ub) }
	r.MaxContextAtConcurrency = min(slot, m.MaxContext)
	if unified {
		r.MaxContextAtConcurrency = largestContext(seq, kv, n, min(cells, m.MaxContext))
	}
	if one := seq(llamaSlotSpan(s, perSeq, r.Context, cells)); one > 0 {
		r.MaxConcurrencyAtContext = int(kv / one)
	}
	hostNeed := bd.HostWeights + bd.HostKV + bd.HostBuffers
	hostAvail, known := hostAvailable(s, onDev)
	fullOnDev := gl == layers+1 && moe == 0
	if !fullOnDev && !cpuOnly && len(r.Reasons) > 0 && strings.HasSuffix(r.Reasons[0], "to keep everything on the device") {
		r.Reasons[0] = fmt.Sprintf("context set to %s per sequence (the model allows %s): like llama.cpp --fit, the context is lowered (to --fit-ctx 4096 at least) before weights move off the device", perSeq, m.MaxContext)
	}
	switch {
	case fullOnDev && onDev <= dev:
		r.Verdict = Fits
		if known && hostNeed > hostAvail {
			r.Verdict = DoesNotFit
			r.Reasons = append(r.Reasons, fmt.Sprintf("the CPU-side embedding (%s) does not fit the %s of system RAM left", hostNeed, hostAvail))
		}
	case !fullOnDev && (known && hostNeed <= hostAvail || !known && hostNeed <= unknownHostRAM) && (gl > 0 || cpuOnly):
		r.Verdict = FitsWithOffload
		if cpuOnly {
			r.Verdict = Fits
			r.Reasons = append(r.Reasons, "runs entirely on the CPU from system RAM")
		} else if moe > 0 {
			r.Reasons = append(r.Reasons, fmt.Sprintf("the expert weights of %d of %d layers (%s) stay in system RAM (--n-cpu-moe %d); attention, shared weights and the KV cache stay on the device. Decode reads the experts each token routes to from RAM; each prompt ubatch of 32+ tokens copies them to the device", moe, layers, Bytes(moe)*expertLayer, moe))
		} else {
			r.Reasons = append(r.Reasons, fmt.Sprintf("%d of %d transformer blocks on the device (-ngl %d of %d with the output layer); %s of weights and KV in system RAM (decode slows to host-memory speed, and each prompt ubatch of 32+ tokens copies them to the device)", blocksOnDev, layers, gl, layers+1, hostNeed))
		}
		if !known {
			r.Assumptions = append(r.Assumptions, fmt.Sprintf("system RAM unknown: needs %s free", hostNeed))
		}
	default:
		r.Verdict = DoesNotFit
		switch {
		case onDev > dev:
			r.Reasons = append(r.Reasons, fmt.Sprintf("even with no layers offloaded the device needs %s (compute buffer and output) but offers %s", onDev, dev))
		case known:
			r.Reasons = append(r.Reasons, fmt.Sprintf("%s must stay in system RAM but only %s is free", hostNeed, max(hostAvail, 0)))
		case hostNeed > unknownHostRAM:
			r.Reasons = append(r.Reasons, fmt.Sprintf("%s would have to stay in system RAM, more than the %s any workstation this plan assumes holds; pass --host-memory if this machine has it", hostNeed, unknownHostRAM))
		default:
			r.Reasons = append(r.Reasons, "not even one layer fits on the device")
		}
		r.Advice = append(r.Advice, adviceSmaller(s)...)
		r.Advice = append(r.Advice, "a smaller context (-c) shrinks the KV cache")
	}
	return r
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
