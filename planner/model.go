package planner

// MLA holds the latent-attention geometry of DeepSeek-style models.
type MLA struct {
	KVLoraRank int `toml:"kv_lora_rank" json:"kv_lora_rank"`
	RopeDim    int `toml:"rope_dim" json:"rope_dim"`
}

// VisionEncoder is the image tower of a multimodal model, as far as the
// engine's memory profiling needs it (a ViT run over image crops).
type VisionEncoder struct {
	// Layers is how many layers run (to the feature layer); the profile
	// peak does not depend on it, since each layer frees its tensors.
	Layers        int `toml:"layers" json:"layers"`
	Hidden        int `toml:"hidden" json:"hidden"`
	FFN           int `toml:"ffn" json:"ffn"`
	ImageSize     int `toml:"image_size" json:"image_size"`           // crop side in pixels
	TokensPerCrop int `toml:"tokens_per_crop" json:"tokens_per_crop"` // patches + class token
	CropsPerImage int `toml:"crops_per_image" json:"crops_per_image"` // HD crops + global view
	ImageTokens   int `toml:"image_tokens" json:"image_tokens"`       // LM tokens of the largest image
}

// LinearAttention describes the recurrent layers of a hybrid model (Gated
// DeltaNet in Qwen3-Next, Mamba in Jamba and Nemotron-H): they keep a
// fixed state per sequence instead of a KV cache that grows with the
// context (modeling.md §2.4).
type LinearAttention struct {
	// Layers is how many of Model.Layers are recurrent.
	Layers int `toml:"layers" json:"layers"`
	// StateElements is one layer's state per sequence, in elements:
	// Gated DeltaNet n_v·d_k·d_v (recurrent) + (conv_k − 1)(2·n_k·d_k +
	// n_v·d_v) (convolution), modeling.md §2.4.
	StateElements int64 `toml:"state_elements" json:"state_elements"`
}

// StateBytesPerSeq is the recurrent state of one sequence over all linear
// layers, stored in float32 as llama.cpp and vLLM keep it by default
// (modeling.md §2.4); zero for models without linear layers.
func (m Model) StateBytesPerSeq() Bytes {
	if m.Linear == nil {
		return 0
	}
	return Bytes(int64(m.Linear.Layers) * m.Linear.StateElements * 4)
}

// Tensor is one weight tensor read from a model file.
type Tensor struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // GGUF type name (Q4_K, F16 ...) or safetensors dtype
	Elements int64  `json:"elements"`
	Bytes    Bytes  `json:"bytes"`
	// Shape is the tensor's dimensions as the file stores them
	// (safetensors: row-major, outermost first); nil when not kept.
	Shape []int64 `json:"shape,omitempty"`
}

// Model is a transformer's architecture as far as memory and FLOPs need it.
// Zero values mean "not known" and fall back to documented defaults.
type Model struct {
	ID           string `toml:"id" json:"id"`
	Name         string `toml:"name" json:"name"`
	Arch         string `toml:"arch" json:"arch"`
	Params       Params `toml:"params" json:"params"`
	ActiveParams Params `toml:"active_params" json:"active_params"`
	Layers       int    `toml:"layers" json:"layers"`
	Hidden       int    `toml:"hidden" json:"hidden"`
	// FFN is the dense MLP width, or the per-expert width of MoE models.
	FFN     int `toml:"ffn" json:"ffn"`
	Heads   int `toml:"heads" json:"heads"`
	KVHeads int `toml:"kv_heads" json:"kv_heads"`
	HeadDim int `toml:"head_dim" json:"head_dim"`
	Vocab   int `toml:"vocab" json:"vocab"`
	Experts int `toml:"experts" json:"experts,omitempty"`
	TopK    int `toml:"experts_per_token" json:"experts_per_token,omitempty"`
	// GatedMLP is true for SwiGLU-style MLPs (3 matrices), false for GELU (2).
	GatedMLP bool `toml:"gated_mlp" json:"gated_mlp"`
	// SlidingWindow is the local-attention window; SlidingLayers how many of
	// Layers use it (the rest attend to the full context).
	SlidingWindow int  `toml:"sliding_window" json:"sliding_window,omitempty"`
	SlidingLayers int  `toml:"sliding_layers" json:"sliding_layers,omitempty"`
	MLA           *MLA `toml:"mla" json:"mla,omitempty"`
	// Linear marks the recurrent layers of a hybrid model; they hold no KV
	// cache (nil: every layer is attention).
	Linear *LinearAttention `toml:"linear_attention" json:"linear_attention,omitempty"`
	// Vision is the image encoder of a multimodal model (nil: text only).
	Vision         *VisionEncoder `toml:"vision" json:"vision,omitempty"`
	MaxContext     Tokens         `toml:"max_context" json:"max_context"`
	TiedEmbeddings bool           `toml:"tied_embeddings" json:"tied_embeddings"`
	// NativeDType is the checkpoint's dtype: bfloat16, float16, float32, fp8, mxfp4.
	NativeDType string `toml:"native_dtype" json:"native_dtype"`
	// Tensors and FileQuant are set when the model was read from a file;
	// weight bytes are then summed exactly.
	Tensors   []Tensor `toml:"-" json:"-"`
	FileQuant string   `toml:"-" json:"file_quant,omitempty"`
	FileBytes Bytes    `toml:"-" json:"file_weight_bytes,omitempty"`
	// CheckpointKV is the KV cache type the checkpoint was calibrated
	// for and names (NVIDIA ModelOpt's kv_cache_quant_algo: "fp8"), set
	// when the model was read from its files; "" when it names none.
	// TensorRT-LLM caches in it whatever kv_cache_config says
	// (trtllmSupported).
	CheckpointKV string `toml:"-" json:"checkpoint_kv,omitempty"`
	Notes        string `toml:"notes" json:"notes,omitempty"`
	Source       string `toml:"source" json:"source,omitempty"`
}

// IsMoE reports whether the model routes tokens to experts.
func (m Model) IsMoE() bool { return m.Experts > 1 && m.TopK > 0 }

// kvHeads returns the KV head count, defaulting to MHA (= Heads).
func (m Model) kvHeads() int {
	if m.KVHeads > 0 {
		return m.KVHeads
	}
	return m.Heads
}

// headDim returns the head dimension, derived from Hidden/Heads only when the
// config does not state it (modeling.md §0: "do not derive when present").
func (m Model) headDim() int {
	if m.HeadDim > 0 {
		return m.HeadDim
	}
	if m.Heads > 0 {
		return m.Hidden / m.Heads
	}
	return 0
}

// fullLayers is the number of layers attending to the whole context:
// neither sliding-window nor recurrent (linear-attention) layers.
func (m Model) fullLayers() int {
	n := m.Layers
	if m.Linear != nil {
		n -= m.Linear.Layers
	}
	if m.SlidingWindow > 0 {
		n -= m.SlidingLayers
	}
	return max(n, 0)
}

// EmbeddingParams is the input embedding plus an untied output head.
func (m Model) EmbeddingParams() Params {
	e := Params(m.Vocab) * Params(m.Hidden)
	if m.TiedEmbeddings {
		return e
	}
	return 2 * e
}

// mlpMatrices is 3 for gated (SwiGLU) MLPs and 2 for plain GELU MLPs.
func (m Model) mlpMatrices() int64 {
	if m.GatedMLP {
		return 3
	}
	return 2
}

// ExpertParams is the parameter count held in routed experts (zero for
// dense models): layers × experts × matrices × hidden × expert FFN.
func (m Model) ExpertParams() Params {
	if !m.IsMoE() {
		return 0
	}
	p := Params(int64(m.Layers) * int64(m.Experts) * m.mlpMatrices() * int64(m.Hidden) * int64(m.FFN))
	if p > m.Params-m.EmbeddingParams() {
		// The catalog's total is authoritative; never let the expert
		// estimate exceed what is left after embeddings.
		p = m.Params - m.EmbeddingParams()
	}
	if p < 0 {
		return 0
	}
	return p
}

// active returns ActiveParams, defaulting to Params.
func (m Model) active() Params {
	if m.ActiveParams > 0 {
		return m.ActiveParams
	}
	return m.Params
}
