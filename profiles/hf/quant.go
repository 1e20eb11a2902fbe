package hf

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/internal/textsafe"
)

// quantConfig is a config.json quantization_config.
type quantConfig struct {
	QuantMethod  string             `json:"quant_method"`
	Bits         int                `json:"bits"`
	WBit         int                `json:"w_bit"`  // older AWQ configs
	Format       string             `json:"format"` // compressed-tensors
	ConfigGroups map[string]ctGroup `json:"config_groups"`
	LoadIn4bit   bool               `json:"load_in_4bit"` // bitsandbytes
	LoadIn8bit   bool               `json:"load_in_8bit"`
	QuantAlgo    string             `json:"quant_algo"` // NVIDIA modelopt
	// KVCacheQuantAlgo is the KV cache type a ModelOpt checkpoint was
	// calibrated for ("FP8"; null or "none" for none).
	KVCacheQuantAlgo *string `json:"kv_cache_quant_algo"`
	// KVCacheScheme is the same in llm-compressor's form, which ModelOpt
	// writes into config.json since it converts its config to that
	// format (convert_hf_quant_config_format): 8-bit float is FP8.
	KVCacheScheme *ctArgs `json:"kv_cache_scheme"`
	// WeightBlockSize is set by block-wise FP8 checkpoints (DeepSeek-V3,
	// Qwen3-*-FP8: [128, 128]); absent for per-tensor or per-channel FP8.
	WeightBlockSize []int `json:"weight_block_size"`
}

// scheme says how an FP8 checkpoint is scaled, which decides its kernels
// (block-wise scales need vLLM's block FP8 path); "" for other formats.
func (q *quantConfig) scheme(id string) string {
	if q == nil || id != "fp8" {
		return ""
	}
	if len(q.WeightBlockSize) == 2 && q.WeightBlockSize[0] > 0 && q.WeightBlockSize[1] > 0 {
		return fmt.Sprintf("FP8 weights with %d×%d block scales (quantization_config.weight_block_size)", q.WeightBlockSize[0], q.WeightBlockSize[1])
	}
	return "FP8 weights with per-tensor or per-channel scales"
}

// ctGroup is one compressed-tensors scheme.
type ctGroup struct {
	Weights          *ctArgs `json:"weights"`
	InputActivations *ctArgs `json:"input_activations"`
}

// ctArgs is the precision of one side of a compressed-tensors scheme.
type ctArgs struct {
	NumBits int    `json:"num_bits"`
	Type    string `json:"type"` // "int" or "float"
}

// fileQuant names a checkpoint's weight format with the catalog's quant ids
// (profiles/catalog/quants.toml): the quantization_config when there is
// one, else the dtype (bf16, f16, f32). The second result is the native
// dtype for formats stored natively (fp8, mxfp4, nvfp4); empty otherwise.
func fileQuant(q *quantConfig, dtype string) (id, native string) {
	if q == nil {
		return dtypeQuant(dtype), ""
	}
	bits := q.Bits
	if bits == 0 {
		bits = q.WBit
	}
	switch m := strings.ToLower(q.QuantMethod); m {
	case "gptq":
		return intQuant("gptq", bits), ""
	case "awq":
		return intQuant("awq", bits), ""
	case "fp8", "fbgemm_fp8":
		return "fp8", "fp8"
	case "mxfp4":
		return "mxfp4", "mxfp4"
	case "bitsandbytes":
		if q.LoadIn8bit {
			return "bnb-int8", ""
		}
		return "bnb-nf4", ""
	case "compressed-tensors":
		return q.compressedTensors()
	case "modelopt":
		if a := strings.ToLower(q.QuantAlgo); a == "fp8" || a == "nvfp4" {
			return a, a
		}
		return "modelopt-" + strings.ToLower(q.QuantAlgo), ""
	default:
		return m, ""
	}
}

// intQuant is "gptq-int4", "awq-int4", "gptq-int8" ...; 4 bits when unstated.
func intQuant(method string, bits int) string {
	if bits == 0 {
		bits = 4
	}
	return method + "-int" + strconv.Itoa(bits)
}

// compressedTensors reads the first scheme of a compressed-tensors config
// (llm-compressor): fp8 weights → fp8; int8 weights and activations →
// w8a8-int8; 4-bit float → nvfp4; 4-bit int weight-only → gptq-int4, whose
// storage (4 bits plus a 16-bit scale per group) and Marlin kernels it
// shares.
func (q *quantConfig) compressedTensors() (string, string) {
	names := make([]string, 0, len(q.ConfigGroups))
	for n := range q.ConfigGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := q.ConfigGroups[n]
		if g.Weights == nil {
			continue
		}
		w, a := g.Weights, g.InputActivations
		switch {
		case w.Type == "float" && w.NumBits == 8:
			return "fp8", "fp8"
		case w.Type == "float" && w.NumBits == 4:
			return "nvfp4", "nvfp4"
		case w.Type == "int" && w.NumBits == 8 && a != nil && a.NumBits == 8:
			return "w8a8-int8", ""
		case w.Type == "int" && w.NumBits == 4:
			return "gptq-int4", ""
		case w.Type == "int":
			return "w" + strconv.Itoa(w.NumBits) + "a16-int" + strconv.Itoa(w.NumBits), ""
		}
	}
	if strings.Contains(q.Format, "float") {
		return "fp8", "fp8"
	}
	return "compressed-tensors", ""
}

// dtypeQuant maps a torch dtype name to the catalog's float quant ids.
func dtypeQuant(dtype string) string {
	switch strings.TrimPrefix(dtype, "torch.") {
	case "bfloat16":
		return "bf16"
	case "float16", "half":
		return "f16"
	case "float32", "float":
		return "f32"
	}
	return ""
}

// modelOptKV is the KV cache type a ModelOpt quantization_config names,
// as kv_cache_quant_algo or as kv_cache_scheme (8-bit float: fp8; another
// scheme is an error rather than a guess).
func (q *quantConfig) modelOptKV() (string, error) {
	if q.KVCacheQuantAlgo != nil {
		return checkpointKV(q.KVCacheQuantAlgo)
	}
	if k := q.KVCacheScheme; k != nil {
		if k.NumBits == 8 && strings.EqualFold(k.Type, "float") {
			return "fp8", nil
		}
		return "", fmt.Errorf("kv_cache_scheme of %d-bit %q is not a KV cache type Headroom sizes", k.NumBits, textsafe.Printable(k.Type, 20))
	}
	return "", nil
}

// checkpointKV is the KV cache type a ModelOpt checkpoint names
// (kv_cache_quant_algo, lower-cased: "fp8", "nvfp4"), or "" when it names
// none. ModelOpt writes JSON null or the string "none" for an unquantized
// cache (TensorRT-LLM's llmapi/llm_utils.py reads both as none). A value
// that is not a short name of letters, digits and underscores is an
// error: it is printed in plans.
func checkpointKV(algo *string) (string, error) {
	if algo == nil {
		return "", nil
	}
	a := strings.ToLower(strings.TrimSpace(*algo))
	switch a {
	case "", "none", "null":
		return "", nil
	}
	if len(a) > 32 || strings.TrimLeft(a, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "", fmt.Errorf("kv_cache_quant_algo %q is not a KV cache type's name", textsafe.Printable(*algo, 40))
	}
	return a, nil
}
