package hf

import (
	"fmt"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Bounds on config values: larger ones are corrupt, and keeping them small
// keeps every product below in range.
const (
	maxLayers = 1 << 12
	maxWidth  = 1 << 20 // hidden, FFN, head and rank widths
	maxVocab  = 1 << 24
	maxCount  = 1 << 16 // heads, experts
	maxCtx    = 1 << 30
	// maxHeadDim and maxKernel bound linear-attention head widths and
	// convolution kernels (real ones are 128 and 4), so that a layer's
	// state stays far inside int64 over every layer.
	maxHeadDim = 1 << 14
	maxKernel  = 1 << 10
)

// defaults are transformers' class defaults for fields that real
// config.json files leave out (transformers Gemma3TextConfig: gemma-3
// configs carry only the fields that differ from it).
//
// Qwen3NextConfig's linear-attention defaults (16 key and 32 value heads
// of 128, a 4-wide convolution, one full-attention layer in 4) and
// CohereConfig's tied embeddings are in the same table.
var defaults = map[string]config{
	"gemma3_text": {Vocab: 262208, MaxPositions: 131072, SlidingWindowPattern: 6, HeadDim: 256,
		HiddenActivation: "gelu_pytorch_tanh", TieEmbeddings: ptr(true)},
	"qwen3_next": {FullAttentionInterval: 4, LinearKeyHeads: 16, LinearValueHeads: 32,
		LinearKeyHeadDim: 128, LinearValueHeadDim: 128, LinearConvKernel: 4},
	"cohere":  {TieEmbeddings: ptr(true)},
	"cohere2": {TieEmbeddings: ptr(true)},
}

func ptr[T any](v T) *T { return &v }

// applyDefaults fills absent fields from the model type's class defaults.
func (c *config) applyDefaults() {
	d, ok := defaults[c.ModelType]
	if !ok {
		return
	}
	if c.Vocab == 0 {
		c.Vocab = d.Vocab
	}
	if c.MaxPositions == 0 {
		c.MaxPositions = d.MaxPositions
	}
	if c.HeadDim == 0 {
		c.HeadDim = d.HeadDim
	}
	if c.SlidingWindowPattern == 0 && len(c.LayerTypes) == 0 {
		c.SlidingWindowPattern = d.SlidingWindowPattern
	}
	if c.HiddenActivation == "" && c.HiddenAct == "" {
		c.HiddenActivation = d.HiddenActivation
	}
	if c.TieEmbeddings == nil {
		c.TieEmbeddings = d.TieEmbeddings
	}
	if c.FullAttentionInterval == 0 {
		c.FullAttentionInterval = d.FullAttentionInterval
	}
	for _, f := range []struct {
		dst *int
		def int
	}{
		{&c.LinearKeyHeads, d.LinearKeyHeads}, {&c.LinearValueHeads, d.LinearValueHeads},
		{&c.LinearKeyHeadDim, d.LinearKeyHeadDim}, {&c.LinearValueHeadDim, d.LinearValueHeadDim},
		{&c.LinearConvKernel, d.LinearConvKernel},
	} {
		if *f.dst == 0 {
			*f.dst = f.def
		}
	}
}

// model maps the config onto planner.Model.
func (c config) model(id string) (planner.Model, error) {
	if err := c.validate(); err != nil {
		return planner.Model{}, err
	}
	if c.NameOrPath != "" && !strings.HasPrefix(c.NameOrPath, "/") && !strings.HasPrefix(c.NameOrPath, ".") {
		id = c.NameOrPath
	}
	m := planner.Model{
		ID: id, Name: id, Arch: c.ModelType,
		Layers: c.Layers, Hidden: c.Hidden, FFN: c.ffn(),
		Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.headDim(), Vocab: c.Vocab,
		Experts: c.experts(), TopK: c.topK(),
		GatedMLP: c.gated(), MaxContext: planner.Tokens(c.MaxPositions),
		TiedEmbeddings: c.TieEmbeddings != nil && *c.TieEmbeddings,
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads // absent num_key_value_heads means MHA
	}
	m.SlidingWindow, m.SlidingLayers = c.sliding()
	m.Linear = c.linear()
	if c.KVLoraRank > 0 {
		m.MLA = &planner.MLA{KVLoraRank: c.KVLoraRank, RopeDim: c.QKRopeHeadDim}
	}
	m.NativeDType = c.dtype()
	quant, native := fileQuant(c.Quantization, m.NativeDType)
	m.FileQuant = quant
	if native != "" {
		m.NativeDType = native
	}
	m.Notes = c.Quantization.scheme(quant)
	if c.Quantization != nil && strings.EqualFold(c.Quantization.QuantMethod, "modelopt") {
		kv, err := c.Quantization.modelOptKV()
		if err != nil {
			return planner.Model{}, fmt.Errorf("quantization_config: %w", err)
		}
		m.CheckpointKV = kv
	}
	m.Params, m.ActiveParams = estimateParams(c, m)
	return m, nil
}

// validate checks that the config describes a decoder and that every
// width is in range.
func (c config) validate() error {
	if c.Layers <= 0 || c.Hidden <= 0 || c.Heads <= 0 {
		return fmt.Errorf("num_hidden_layers, hidden_size and num_attention_heads must be positive (got %d, %d, %d): not a transformer language model config?",
			c.Layers, c.Hidden, c.Heads)
	}
	if c.Vocab <= 0 {
		return fmt.Errorf("vocab_size is missing or not positive (%d)", c.Vocab)
	}
	checks := []struct {
		name  string
		v     int
		limit int
	}{
		{"num_hidden_layers", c.Layers, maxLayers}, {"hidden_size", c.Hidden, maxWidth},
		{"intermediate_size", c.Intermediate, maxWidth}, {"moe_intermediate_size", c.MoEIntermediate, maxWidth},
		{"shared_expert_intermediate_size", c.SharedExpertFFN, maxWidth},
		{"num_attention_heads", c.Heads, maxCount}, {"num_key_value_heads", c.KVHeads, maxCount},
		{"head_dim", c.HeadDim, maxWidth}, {"vocab_size", c.Vocab, maxVocab},
		{"max_position_embeddings", c.MaxPositions, maxCtx}, {"num_experts", c.NumExperts, maxCount},
		{"num_local_experts", c.NumLocalExperts, maxCount}, {"n_routed_experts", c.NRoutedExperts, maxCount},
		{"num_experts_per_tok", c.ExpertsPerTok, maxCount}, {"experts_per_token", c.ExpertsPerToken, maxCount},
		{"n_shared_experts", c.NSharedExperts, maxCount}, {"first_k_dense_replace", c.FirstKDenseReplace, maxLayers},
		{"sliding_window", c.SlidingWindow, maxCtx}, {"sliding_window_pattern", c.SlidingWindowPattern, maxLayers},
		{"max_window_layers", c.MaxWindowLayers, maxLayers}, {"kv_lora_rank", c.KVLoraRank, maxWidth},
		{"q_lora_rank", c.QLoraRank, maxWidth}, {"qk_rope_head_dim", c.QKRopeHeadDim, maxWidth},
		{"qk_nope_head_dim", c.QKNopeHeadDim, maxWidth}, {"v_head_dim", c.VHeadDim, maxWidth},
		{"full_attention_interval", c.FullAttentionInterval, maxLayers},
		{"linear_num_key_heads", c.LinearKeyHeads, maxCount}, {"linear_num_value_heads", c.LinearValueHeads, maxCount},
		{"linear_key_head_dim", c.LinearKeyHeadDim, maxHeadDim}, {"linear_value_head_dim", c.LinearValueHeadDim, maxHeadDim},
		{"linear_conv_kernel_dim", c.LinearConvKernel, maxKernel}, {"interleave_moe_layer_step", c.InterleaveMoE, maxLayers},
		{"intermediate_size_mlp", c.IntermediateMLP, maxWidth}, {"attention_chunk_size", c.AttentionChunk, maxCtx},
	}
	for _, k := range checks {
		if k.v < 0 || k.v > k.limit {
			return fmt.Errorf("%s = %d is out of range (0 to %d)", k.name, k.v, k.limit)
		}
	}
	if e := c.experts(); e > 1 && c.topK() > e {
		return fmt.Errorf("num_experts_per_tok = %d exceeds the %d experts", c.topK(), e)
	}
	if len(c.LayerTypes) > maxLayers || len(c.NoRopeLayers) > maxLayers {
		return fmt.Errorf("layer_types or no_rope_layers has more than %d entries", maxLayers)
	}
	return nil
}

// ffn is the per-expert width of MoE models, else the dense MLP width.
func (c config) ffn() int {
	if c.experts() > 1 && c.MoEIntermediate > 0 {
		return c.MoEIntermediate
	}
	return c.Intermediate
}

// headDim is head_dim when stated; for MLA the q/k head width
// qk_nope_head_dim + qk_rope_head_dim; else zero (planner derives
// hidden/heads, modeling.md §0).
func (c config) headDim() int {
	if c.HeadDim > 0 {
		return c.HeadDim
	}
	if c.KVLoraRank > 0 && c.QKNopeHeadDim+c.QKRopeHeadDim > 0 {
		return c.QKNopeHeadDim + c.QKRopeHeadDim
	}
	return 0
}

// experts is the routed expert count under any of its names.
func (c config) experts() int {
	return max(c.NumExperts, c.NumLocalExperts, c.NRoutedExperts)
}

// topK is the experts each token is routed to.
func (c config) topK() int { return max(c.ExpertsPerTok, c.ExpertsPerToken) }

// gatedTypes and plainTypes name model types whose MLP is known to be
// gated (gate, up, down: SwiGLU or GeGLU) or plain (up, down). Gemma is
// gated although its activation is GELU, so the model type is asked first
// and hidden_act only for unknown types.
var (
	gatedTypes = []string{"llama", "mistral", "mixtral", "qwen", "gemma", "deepseek", "kimi", "phi3", "gpt_oss",
		"olmo", "granite", "cohere", "internlm", "yi", "baichuan", "exaone", "glm", "minicpm", "ernie", "smollm"}
	plainTypes = []string{"gpt2", "gpt_neox", "gptj", "gpt_bigcode", "falcon", "phi", "starcoder2", "opt",
		"bloom", "mpt", "bert", "roberta"}
)

// gated reports whether the MLP has three matrices.
func (c config) gated() bool {
	mt := strings.ToLower(c.ModelType)
	for _, p := range plainTypes {
		if mt == p || strings.HasPrefix(mt, p+"_") {
			return false
		}
	}
	for _, p := range gatedTypes {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	act := strings.ToLower(c.HiddenAct + c.HiddenActivation)
	return strings.Contains(act, "silu") || strings.Contains(act, "swiglu") || strings.Contains(act, "swish") || strings.Contains(act, "glu")
}

// sliding returns the window and how many layers use it, from (in order)
// layer_types, sliding_window_pattern, use_sliding_window with
// max_window_layers (Qwen2: layers from max_window_layers on slide), the
// Gemma-2 alternation, else every layer (Mistral-7B-v0.1), modeling.md §2.3.
func (c config) sliding() (window, layers int) {
	if c.AttentionChunk > 0 && strings.HasPrefix(c.ModelType, "llama4") {
		return c.AttentionChunk, c.chunkedLayers()
	}
	if c.SlidingWindow <= 0 {
		return 0, 0
	}
	switch {
	case len(c.LayerTypes) > 0:
		n := 0
		for _, t := range c.LayerTypes {
			if t == "sliding_attention" {
				n++
			}
		}
		if n == 0 {
			return 0, 0
		}
		return c.SlidingWindow, n
	case c.UseSlidingWindow != nil:
		if !*c.UseSlidingWindow || c.MaxWindowLayers >= c.Layers {
			return 0, 0
		}
		return c.SlidingWindow, c.Layers - c.MaxWindowLayers
	case c.SlidingWindowPattern > 0:
		return c.SlidingWindow, patternLayers(c.Layers, c.SlidingWindowPattern)
	case strings.HasPrefix(c.ModelType, "gemma2"):
		return c.SlidingWindow, patternLayers(c.Layers, 2)
	}
	return c.SlidingWindow, c.Layers
}

// chunkedLayers counts Llama 4's chunked-attention layers: those with
// RoPE (no_rope_layers[i] = 1); when the list is absent, transformers'
// Llama4TextConfig default, every layer but each fourth
// (no_rope_layers[i] = (i+1) % 4 != 0). Chunked attention keeps at most
// attention_chunk_size tokens, so it is a sliding window for memory
// (modeling.md §2.3).
func (c config) chunkedLayers() int {
	if len(c.NoRopeLayers) == 0 {
		return patternLayers(c.Layers, 4)
	}
	n := 0
	for _, v := range c.NoRopeLayers {
		if v != 0 {
			n++
		}
	}
	return n
}

// linearLayers counts recurrent layers: "linear_attention" entries of
// layer_types, else all but every full_attention_interval-th layer
// (Qwen3-Next: layer i is full attention when (i+1) % interval == 0).
func (c config) linearLayers() int {
	if len(c.LayerTypes) > 0 {
		n := 0
		for _, t := range c.LayerTypes {
			if t == "linear_attention" {
				n++
			}
		}
		return n
	}
	if c.FullAttentionInterval > 0 && c.LinearValueHeads > 0 {
		return patternLayers(c.Layers, c.FullAttentionInterval)
	}
	return 0
}

// linear describes Gated DeltaNet layers (nil without any): per layer and
// sequence n_v·d_k·d_v recurrent state plus (conv_k − 1)(2·n_k·d_k +
// n_v·d_v) convolution state (modeling.md §2.4).
func (c config) linear() *planner.LinearAttention {
	n := c.linearLayers()
	if n == 0 {
		return nil
	}
	nk, nv := int64(c.LinearKeyHeads), int64(c.LinearValueHeads)
	dk, dv := int64(c.LinearKeyHeadDim), int64(c.LinearValueHeadDim)
	conv := int64(max(c.LinearConvKernel-1, 0))
	return &planner.LinearAttention{Layers: n, StateElements: nv*dk*dv + conv*(2*nk*dk+nv*dv)}
}

// patternLayers counts sliding layers when every period-th layer is global:
// transformers Gemma3 is_sliding = (layer_idx + 1) % pattern != 0.
func patternLayers(layers, period int) int {
	n := 0
	for i := 0; i < layers; i++ {
		if (i+1)%period != 0 {
			n++
		}
	}
	return n
}

// dtype is torch_dtype (or the newer dtype) as planner names it.
func (c config) dtype() string {
	d := c.DType
	if d == "" {
		d = c.TorchDType
	}
	return strings.TrimPrefix(d, "torch.")
}

// estimateParams returns total and active parameters from the geometry,
// for configs read without weights:
//
//	embeddings  V·d, twice unless tied (input embedding and output head)
//	attention   d·H·h (q) + 2·d·Hkv·h (k, v) + H·h·d (o) per layer, h = head
//	            dim; MLA: q = d·H·(n+r), or d·q_lora + q_lora·H·(n+r) with a
//	            q LoRA; kv = d·(r_kv+r) + r_kv·H·(n+v); o = H·v·d, with n, r,
//	            v the nope, rope and value head dims (DeepSeek-V2/V3)
//	MLP         m·d·ffn per dense layer, m = 3 gated or 2; MoE layers hold
//	            m·d·ffn_e per routed and shared expert plus a d·E router,
//	            and the first first_k_dense_replace layers are dense
//	norms       2·d per layer + d
//
// Active parameters count TopK routed experts instead of all E. Biases,
// vision towers and multi-token-prediction layers are left out, so the
// estimate runs slightly low (Llama-3.1-8B: 8.03B, exact to 0.1%).
func estimateParams(c config, m planner.Model) (total, active planner.Params) {
	d, L, V := float64(c.Hidden), float64(c.Layers), float64(c.Vocab)
	emb := V * d
	if !m.TiedEmbeddings {
		emb *= 2
	}
	lin := 0.0
	if m.Linear != nil {
		lin = float64(m.Linear.Layers)
	}
	attn := attentionParams(c, m)*(L-lin) + linearParams(c)*lin
	mats := 2.0
	if m.GatedMLP {
		mats = 3
	}
	norms := 2*d*L + d
	if !m.IsMoE() {
		p := emb + attn + mats*d*float64(c.Intermediate)*L + norms
		return planner.Params(p), planner.Params(p)
	}
	dense := float64(min(c.FirstKDenseReplace, c.Layers))
	if c.InterleaveMoE > 1 {
		dense = L - float64(c.Layers/c.InterleaveMoE)
	}
	moe := L - dense
	denseFFN := float64(c.Intermediate)
	if c.IntermediateMLP > 0 {
		denseFFN = float64(c.IntermediateMLP)
	}
	denseMLP := mats * d * denseFFN * dense
	expert := mats * d * float64(m.FFN)
	sharedCount := float64(c.NSharedExperts)
	if strings.HasPrefix(c.ModelType, "llama4") {
		sharedCount = 1 // Llama 4 MoE layers add one shared expert of the expert width
	}
	shared := sharedCount*expert + mats*d*float64(c.SharedExpertFFN)
	router := d * float64(m.Experts)
	base := emb + attn + denseMLP + norms + moe*(shared+router)
	return planner.Params(base + moe*expert*float64(m.Experts)),
		planner.Params(base + moe*expert*float64(m.TopK))
}

// linearParams is one Gated DeltaNet layer (transformers
// Qwen3NextGatedDeltaNet): in_proj_qkvz d·(2·n_k·d_k + 2·n_v·d_v),
// in_proj_ba d·2·n_v, the depthwise convolution (2·n_k·d_k + n_v·d_v)·k,
// out_proj n_v·d_v·d.
func linearParams(c config) float64 {
	d := float64(c.Hidden)
	k := float64(c.LinearKeyHeads * c.LinearKeyHeadDim)
	v := float64(c.LinearValueHeads * c.LinearValueHeadDim)
	return d*(2*k+2*v) + d*2*float64(c.LinearValueHeads) + (2*k+v)*float64(c.LinearConvKernel) + v*d
}

// attentionParams is one layer's attention projections.
func attentionParams(c config, m planner.Model) float64 {
	d, H := float64(c.Hidden), float64(c.Heads)
	if c.KVLoraRank > 0 {
		nope, rope, v := float64(c.QKNopeHeadDim), float64(c.QKRopeHeadDim), float64(c.VHeadDim)
		rkv, rq := float64(c.KVLoraRank), float64(c.QLoraRank)
		q := d * H * (nope + rope)
		if rq > 0 {
			q = d*rq + rq*H*(nope+rope)
		}
		return q + d*(rkv+rope) + rkv*H*(nope+v) + H*v*d
	}
	h := float64(m.HeadDim)
	if h == 0 {
		h = d / H
	}
	return d*H*h + 2*d*float64(m.KVHeads)*h + H*h*d
}
