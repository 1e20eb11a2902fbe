package planner

import "math"

// This file holds one function per memory term. Each is pure and cites
// where its formula comes from; docs/modeling.md has the long form.

// WeightBytes returns the bytes of the model's weights in format q.
//
// When the model was read from a file (GGUF header or safetensors index)
// the exact sum of tensor sizes is returned. Otherwise the catalog's total
// parameter count is split by role — routed experts, input embedding,
// output head, the remaining linear layers — and each role is priced at the
// format's bits per weight, because quantizers keep embeddings and heads at
// higher precision (modeling.md §1.1, "always sum per tensor").
func WeightBytes(m Model, q Quant) Bytes {
	if m.FileBytes > 0 {
		return m.FileBytes
	}
	emb := Params(m.Vocab) * Params(m.Hidden)
	head := emb
	if m.TiedEmbeddings {
		head = 0
	}
	experts := m.ExpertParams()
	linear := m.Params - emb - head - experts
	if linear < 0 {
		linear = 0
	}
	bits := float64(linear)*q.LinearBPW + float64(experts)*q.expertBPW() +
		float64(emb)*q.EmbedBPW + float64(head)*q.HeadBPW
	return Bytes(math.Ceil(bits / 8))
}

// WeightBytesPerDevice splits weights over tp tensor-parallel ranks. Linear
// layers and vocab-parallel embeddings divide by tp (vLLM/SGLang); norms are
// negligible (modeling.md §1.1).
func WeightBytesPerDevice(w Bytes, tp int) Bytes {
	if tp <= 1 {
		return w
	}
	return Bytes(math.Ceil(float64(w) / float64(tp)))
}

// kvHeadsPerRank is max(1, H_kv/TP): KV heads are split by tensor parallel
// but replicated once TP exceeds them (vLLM/SGLang, modeling.md §2.1).
func kvHeadsPerRank(hkv, tp int) float64 {
	if tp <= 1 {
		return float64(hkv)
	}
	return math.Max(1, float64(hkv)/float64(tp))
}

// KVBytesPerTokenLayer is the KV bytes one token occupies in one attention
// layer on one device: 2 × H_kv × d_h × b_kv for MHA/GQA/MQA (K and V), or
// (kv_lora_rank + rope_dim) × b_kv for MLA, which is not split by TP
// (vLLM kv_cache_interface.py @ 001cabc; modeling.md §2.1-2.2).
func KVBytesPerTokenLayer(m Model, kv KVType, tp int) float64 {
	if m.MLA != nil {
		return float64(m.MLA.KVLoraRank+m.MLA.RopeDim) * kv.BytesPerElement
	}
	return 2 * kvHeadsPerRank(m.kvHeads(), tp) * float64(m.headDim()) * kv.BytesPerElement
}

// KVBytesPerToken is the per-device KV cost of one cached token summed over
// all attention layers: the unit a paged pool is sized in.
func KVBytesPerToken(m Model, kv KVType, tp int) Bytes {
	return Bytes(math.Ceil(float64(m.Layers) * KVBytesPerTokenLayer(m, kv, tp)))
}

// KVBytesForSequence is the KV one sequence of ctx tokens holds: full
// attention layers keep every token, sliding-window layers keep at most
// window+slack tokens, where slack is the engine's extra (vLLM:
// max_num_batched_tokens − 1, llama.cpp: n_ubatch; modeling.md §2.3).
func KVBytesForSequence(m Model, kv KVType, tp int, ctx Tokens, slack Tokens) Bytes {
	per := KVBytesPerTokenLayer(m, kv, tp)
	full := float64(m.fullLayers()) * per * float64(ctx)
	swa := 0.0
	if m.SlidingWindow > 0 && m.SlidingLayers > 0 {
		cells := math.Min(float64(ctx), float64(m.SlidingWindow)+float64(slack))
		swa = float64(m.SlidingLayers) * per * cells
	}
	return Bytes(math.Ceil(full + swa))
}

// RuntimeOverhead is the memory a backend's runtime takes before any
// tensor: CUDA/HIP context, cuBLAS/hipBLASLt workspaces. 0.5 GiB on CUDA and
// ROCm is the usual size of a CUDA context plus workspaces [U: typical
// nvidia-smi reading of an idle PyTorch process]; Metal and CPU count it in
// the OS reserve.
func RuntimeOverhead(b Backend) Bytes {
	switch b {
	case CUDA, ROCm:
		return 512 * MiB
	case Vulkan, SYCL:
		return 256 * MiB
	}
	return 0
}

// VLLMActivationPeak estimates the peak of vLLM's profile run: a dummy
// forward of `tokens` = max_num_batched_tokens (gpu_worker.py
// determine_available_memory @ 35d5cda). The MLP's gate/up/activation
// tensors dominate: 3 × ffn/TP values per token at 2 bytes, plus hidden
// states (4 × d), plus the sampler's fp32 logits for `seqs` sequences
// (modeling.md §1.2 "activation peak scaling", a0 + a1·T + a2·seqs·V). The
// multiplier actFactor covers PyTorch temporaries and allocator slack; it is
// fitted (profiles/fitted.toml) because vLLM does not publish it.
func VLLMActivationPeak(m Model, tokens Tokens, seqs int, tp int, actFactor float64) Bytes {
	if tp < 1 {
		tp = 1
	}
	ffn := float64(m.FFN)
	if m.IsMoE() {
		// Routed tokens are processed per expert group; the fused MoE
		// kernel's intermediate is top-k × expert width per token.
		ffn = float64(m.FFN * m.TopK)
	}
	perToken := (3*ffn/float64(tp) + 4*float64(m.Hidden)) * 2
	logits := float64(seqs) * float64(m.Vocab) * 4
	return Bytes(actFactor*perToken*float64(tokens) + logits)
}

// VLLMVisionProfilePeak is the memory a multimodal model's image encoder
// takes in vLLM's profile run, where dummy images at the largest size go
// through the encoder in one batch:
//
//   - images = min(max_num_seqs, batched // image_tokens), at least one
//     (vllm/worker/model_runner.py profile_run, v0.6.3: one dummy image per
//     sequence; v1 gpu_model_runner caps the encoder budget the same way);
//   - all crops of all images in one batch (phi3v.py: pixel_values
//     flatten(0, 1), num_crops + 1 crops of 336² per image);
//   - the ViT MLP step holds the layer input, residual and LayerNorm output
//     (3 × T·d) and fc1 and activation outputs (2 × 4·T·d) at 2 bytes, with
//     memory-efficient attention (clip.py: xformers, no T² matrix);
//   - plus the fp32 pixel tensor, held for the whole forward.
//
// It returns the encoder peak and the bytes held into the language-model
// pass (pixels and projected image embeddings of lmHidden width).
func VLLMVisionProfilePeak(v VisionEncoder, batched Tokens, maxSeqs int, lmHidden int) (peak, held Bytes) {
	if v.ImageTokens <= 0 || v.TokensPerCrop <= 0 {
		return 0, 0
	}
	images := min(max(int(batched)/v.ImageTokens, 1), max(maxSeqs, 1))
	crops := float64(images * max(v.CropsPerImage, 1))
	tokens := crops * float64(v.TokensPerCrop)
	d := float64(v.Hidden)
	ffn := float64(v.FFN)
	if ffn == 0 {
		ffn = 4 * d
	}
	mlp := (3*d + 2*ffn) * tokens * 2
	pixels := crops * 3 * float64(v.ImageSize*v.ImageSize) * 4
	embeds := float64(images*v.ImageTokens) * float64(lmHidden) * 2
	return Bytes(mlp + pixels), Bytes(pixels + embeds)
}

// VLLMCUDAGraphBytes estimates CUDA-graph memory: vLLM logs 0.25-1.3 GiB for
// single-GPU dense models (modeling.md §1.2 step 3: 0.36 GiB TP2, 0.65 GiB
// gemma-3-4b, ~1.3 GB Llama-4 Maverick). We take 0.25 GiB plus 0.5 KiB per
// layer per captured batch size (67 sizes by default) [D from those points].
func VLLMCUDAGraphBytes(m Model) Bytes {
	return 256*MiB + Bytes(m.Layers)*67*512
}

// LlamaCppCells returns llama.cpp's KV cells: -c padded to 256, with each of
// np slots getting GGML_PAD(c/np, 256) cells when the cache is split, so the
// total is np × that (src/llama-context.cpp, late-2025; modeling.md §1.3).
// The per-slot context is returned too.
func LlamaCppCells(ctx Tokens, np int, unified bool) (total, perSlot Tokens) {
	if np < 1 {
		np = 1
	}
	ctx = padTo(ctx, 256)
	if unified || np == 1 {
		return ctx, ctx
	}
	per := padTo(Tokens(int64(ctx)/int64(np)), 256)
	return per * Tokens(np), per
}

func padTo(t Tokens, n Tokens) Tokens {
	if t <= 0 {
		return 0
	}
	return (t + n - 1) / n * n
}

// LlamaCppKVBytes is the KV cache llama.cpp allocates for `cells` cells:
// Σ layers cells × (row_size(type_k, n_embd_k_gqa) + row_size(type_v, ...))
// (src/llama-kv-cache.cpp @ 3514e9f). SWA layers hold
// GGML_PAD(min(cells, W·streams + n_ubatch), 256) cells
// (llama-kv-cache-iswa.cpp).
func LlamaCppKVBytes(m Model, kv KVType, cells Tokens, streams int, ubatch Tokens) Bytes {
	per := KVBytesPerTokenLayer(m, kv, 1)
	full := float64(m.fullLayers()) * per * float64(cells)
	swa := 0.0
	if m.SlidingWindow > 0 && m.SlidingLayers > 0 {
		c := min(cells, padTo(Tokens(m.SlidingWindow)*Tokens(max(streams, 1))+ubatch, 256))
		swa = float64(m.SlidingLayers) * per * float64(c)
	}
	return Bytes(math.Ceil(full + swa))
}

// LlamaCppComputeBuffer estimates the device compute buffer llama.cpp
// reserves for a worst-case ubatch: fp32 logits n_vocab × n_ubatch × 4 B,
// activations ~n_ubatch × (d + ffn) × 4 B × 2, and, without flash attention,
// the fp32 KQ matrix n_kv × n_ubatch × n_head × 4 B of one layer
// (modeling.md §1.3 "compute buffers"; ik_llama.cpp PR #235).
func LlamaCppComputeBuffer(m Model, ubatch, ctxPerSeq Tokens, flashAttn bool) Bytes {
	ub := float64(ubatch)
	ffn := float64(m.FFN)
	if m.IsMoE() {
		ffn *= float64(m.TopK)
	}
	b := float64(m.Vocab)*ub*4 + ub*(float64(m.Hidden)+ffn)*4*2
	if !flashAttn {
		b += float64(ctxPerSeq) * ub * float64(m.Heads) * 4
	}
	return Bytes(b)
}

// OllamaMinimumMemory is the per-GPU floor Ollama keeps free: 457 MiB on
// CUDA/ROCm (ml/device.go MinimumMemory, modeling.md §1.6).
const OllamaMinimumMemory = 457 * MiB

// SGLangMemFractionStatic reproduces SGLang's default mem_fraction_static:
// reserved_MB = 512 + max(chunked_prefill, 2048)·1.5 + cuda_graph_max_bs·2 +
// tp/8·1024 (+≥10240 on GPUs over 60 GB); fraction = (gpu − reserved)/gpu
// (server_args._handle_gpu_memory_settings, late 2025; modeling.md §1.5).
func SGLangMemFractionStatic(gpu Bytes, tp int) float64 {
	mb := float64(gpu) / float64(MiB)
	chunk, graphBS := 2048.0, 8.0
	switch {
	case mb < 20*1024:
		chunk, graphBS = 2048, 8
	case mb < 35*1024:
		chunk, graphBS = 2048, 24
	case mb < 60*1024:
		chunk, graphBS = 4096, 32
	case mb < 160*1024:
		chunk, graphBS = 8192, 256
	default:
		chunk, graphBS = 16384, 512
	}
	reserved := 512 + math.Max(chunk, 2048)*1.5 + graphBS*2 + float64(tp)/8*1024
	if mb > 60*1024 && reserved < 10240 {
		reserved = 10240
	}
	f := (mb - reserved) / mb
	return math.Round(f*1000) / 1000
}

// TGIFreeForKV is what TGI's warmup leaves for KV blocks: free memory after
// weights and the warm-up prefill, minus (1 − wiggle) × total
// (flash_causal_lm.py warmup / get_cuda_free_memory @ db931fc).
func TGIFreeForKV(total, used Bytes, wiggle float64) Bytes {
	return total - used - Bytes(math.Round((1-wiggle)*float64(total)))
}
