package planner

// QuantFamily groups weight formats that share loaders and kernels.
type QuantFamily string

// Weight-format families.
const (
	FamilyFloat QuantFamily = "float" // f32/f16/bf16 checkpoints
	FamilyGGUF  QuantFamily = "gguf"  // ggml block formats (Q8_0, Q4_K_M ...)
	FamilyGPTQ  QuantFamily = "gptq"
	FamilyAWQ   QuantFamily = "awq"
	FamilyFP8   QuantFamily = "fp8"
	FamilyINT8  QuantFamily = "int8" // W8A8-INT8 (SmoothQuant / compressed-tensors)
	FamilyMXFP4 QuantFamily = "mxfp4"
	FamilyNVFP4 QuantFamily = "nvfp4"
	FamilyBNB   QuantFamily = "bnb"
)

// Quant is a weight format with its exact storage cost. Bits per weight are
// split by tensor role because quantizers keep embeddings and the output
// head at higher precision (modeling.md §1.1).
type Quant struct {
	ID     string      `toml:"id" json:"id"`
	Name   string      `toml:"name" json:"name"`
	Family QuantFamily `toml:"family" json:"family"`
	// LinearBPW covers attention and dense MLP matrices; ExpertBPW routed
	// experts (zero = LinearBPW); EmbedBPW the token embedding; HeadBPW the
	// output head.
	LinearBPW float64 `toml:"linear_bpw" json:"linear_bpw"`
	ExpertBPW float64 `toml:"expert_bpw" json:"expert_bpw,omitempty"`
	EmbedBPW  float64 `toml:"embed_bpw" json:"embed_bpw"`
	HeadBPW   float64 `toml:"head_bpw" json:"head_bpw"`
	// Compute is the math precision of the matmul kernels: W8A8 formats
	// compute in int8/fp8, weight-only formats dequantize to fp16.
	Compute Precision `toml:"compute" json:"compute"`
	// NeedsNative lists the precision the device must support natively for
	// the fast path (fp8 on Ada/Hopper/MI300); empty = none.
	NeedsNative Precision `toml:"needs_native" json:"needs_native,omitempty"`
	// GGUFType is the ggml type name of the main tensors (Q4_K, Q8_0 ...).
	GGUFType string `toml:"gguf_type" json:"gguf_type,omitempty"`
	// EngineFlag is the value engines take for this format (vLLM
	// --quantization, TGI --quantize); empty when auto-detected.
	EngineFlag string   `toml:"engine_flag" json:"engine_flag,omitempty"`
	Aliases    []string `toml:"aliases" json:"aliases,omitempty"`
	Notes      string   `toml:"notes" json:"notes,omitempty"`
	Source     string   `toml:"source" json:"source,omitempty"`
}

// expertBPW returns the bits per weight of routed experts.
func (q Quant) expertBPW() float64 {
	if q.ExpertBPW > 0 {
		return q.ExpertBPW
	}
	return q.LinearBPW
}

// KVType is a KV-cache element type with its real storage cost.
type KVType struct {
	ID string `toml:"id" json:"id"`
	// BytesPerElement includes block scales: q8_0 = 34/32, q4_0 = 18/32
	// (ggml-common.h block sizes), fp8 = 1, f16/bf16 = 2.
	BytesPerElement float64 `toml:"bytes_per_element" json:"bytes_per_element"`
	// NeedsFlashAttention is true where llama.cpp requires FA for a
	// quantized V cache.
	NeedsFlashAttention bool     `toml:"needs_flash_attention" json:"needs_flash_attention,omitempty"`
	Aliases             []string `toml:"aliases" json:"aliases,omitempty"`
	Source              string   `toml:"source" json:"source,omitempty"`
}
