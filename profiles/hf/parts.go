package hf

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// IndexName is the shard index transformers writes next to sharded
// safetensors weights.
const IndexName = indexName

// MaxSafetensorsHeader is the largest safetensors JSON header accepted, the
// format's own limit (safetensors MAX_HEADER_SIZE, 100 MB).
const MaxSafetensorsHeader = maxHeader

// SafetensorsHeaderLength decodes the 8-byte little-endian length that
// opens every safetensors file and checks it against the format's limit.
// Remote readers use it to ask for exactly the header's bytes.
func SafetensorsHeaderLength(first8 []byte) (int64, error) {
	if len(first8) < 8 {
		return 0, fmt.Errorf("%w: %d bytes, shorter than the 8-byte header length", ErrTruncated, len(first8))
	}
	n := binary.LittleEndian.Uint64(first8[:8])
	if n > maxHeader {
		return 0, fmt.Errorf("header length %d exceeds the %d-byte limit: not a safetensors file?", n, maxHeader)
	}
	return int64(n), nil
}

// ReadSafetensorsHeader parses the header of a safetensors file of size
// bytes, of which r needs to hold only the first 8 + header-length bytes:
// the tensor data is never read, but its extent is checked against size.
// Tensors come back sorted by name with their exact byte sizes.
func ReadSafetensorsHeader(r io.ReaderAt, size int64) ([]planner.Tensor, error) {
	return parseSafetensors(r, size)
}

// ParseIndex reads model.safetensors.index.json: the shard files it names
// (sorted, each a bare *.safetensors name) and metadata.total_size (zero
// when absent).
func ParseIndex(data []byte) (shards []string, total planner.Bytes, err error) {
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", indexName, jsonError(data, err))
	}
	if idx.Metadata.TotalSize < 0 || len(idx.WeightMap) == 0 {
		return nil, 0, fmt.Errorf("read %s: no weight_map, or a negative total_size", indexName)
	}
	for name, shard := range idx.WeightMap {
		if strings.ContainsAny(shard, `/\`) || shard == ".." || !strings.HasSuffix(shard, ".safetensors") {
			return nil, 0, fmt.Errorf("read %s: tensor %q maps to %q, not a .safetensors file beside the index", indexName, name, shard)
		}
	}
	return idx.shards(), planner.Bytes(idx.Metadata.TotalSize), nil
}

// Parts is what a remote reader gathered about a checkpoint without its
// weights: the config.json bytes, an optional hf_quant_config.json
// (NVIDIA ModelOpt checkpoints state their format there rather than in
// config.json), and the tensors of every safetensors header, from which
// weight bytes are summed exactly.
type Parts struct {
	Config      []byte
	QuantConfig []byte
	Tensors     []planner.Tensor
	// WeightsSource says where the tensors came from, for Model.Source.
	WeightsSource string
}

// modelOptName is the file NVIDIA ModelOpt writes its quantization into.
const modelOptName = "hf_quant_config.json"

// modelOptConfig is hf_quant_config.json as NVIDIA ModelOpt writes it.
type modelOptConfig struct {
	Quantization struct {
		QuantAlgo        string  `json:"quant_algo"`
		KVCacheQuantAlgo *string `json:"kv_cache_quant_algo"`
	} `json:"quantization"`
}

// FromParts builds the model a remote checkpoint describes: ParseConfig on
// the config (name labels errors and Source), the quantization from
// hf_quant_config.json when config.json has none, then the tensors as
// ReadDir applies them (exact FileBytes; exact Params for float
// checkpoints). A tensor with a duplicate name is an error. A config.json
// without a decoder's fields (an architecture with its own field names)
// still gives a model when the headers do: genericModel's estimate,
// labelled with GenericNote.
func FromParts(p Parts, name string) (planner.Model, error) {
	m, err := ParseConfig(p.Config, name)
	if err != nil {
		return fallbackGeneric(p, name, err)
	}
	if len(p.QuantConfig) > 0 {
		if err := applyModelOpt(&m, p.QuantConfig, name); err != nil {
			return planner.Model{}, err
		}
	}
	seen := make(map[string]bool, len(p.Tensors))
	w := weights{tensors: p.Tensors, source: p.WeightsSource}
	for _, t := range p.Tensors {
		if seen[t.Name] {
			return planner.Model{}, fmt.Errorf("read %s: tensor %q is in two shards", name, t.Name)
		}
		seen[t.Name] = true
		w.bytes += t.Bytes
	}
	if len(p.Tensors) > 0 && w.source == "" {
		w.source = "safetensors headers"
	}
	w.apply(&m)
	return m, nil
}

// applyModelOpt reads hf_quant_config.json; it only sets the format when
// config.json left the checkpoint a plain float one, and the KV cache type
// (kv_cache_quant_algo) when config.json named none.
func applyModelOpt(m *planner.Model, data []byte, name string) error {
	var c modelOptConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("read %s of %s: %w", modelOptName, name, jsonError(data, err))
	}
	if m.CheckpointKV == "" {
		kv, err := checkpointKV(c.Quantization.KVCacheQuantAlgo)
		if err != nil {
			return fmt.Errorf("read %s of %s: %w", modelOptName, name, err)
		}
		m.CheckpointKV = kv
	}
	if c.Quantization.QuantAlgo == "" || isQuantized(m) {
		return nil
	}
	q, native := fileQuant(&quantConfig{QuantMethod: "modelopt", QuantAlgo: c.Quantization.QuantAlgo}, m.NativeDType)
	m.FileQuant = q
	if native != "" {
		m.NativeDType = native
	}
	return nil
}

// knownArchs are the config.json model types whose layout Headroom maps
// field by field (modeling.md §0, §2); others get the generic decoder
// reading of the same fields, labelled as an estimate by callers.
var knownArchs = map[string]bool{
	"llama": true, "mistral": true, "mixtral": true, "qwen2": true, "qwen2_moe": true,
	"qwen3": true, "qwen3_moe": true, "qwen3_next": true, "gemma": true, "gemma2": true,
	"gemma3": true, "gemma3_text": true, "phi3": true, "phi4": true, "phimoe": true,
	"deepseek_v2": true, "deepseek_v3": true, "kimi_k2": true, "gpt_oss": true,
	"glm4": true, "glm4_moe": true, "llama4": true, "llama4_text": true,
	"granite": true, "granitemoe": true, "cohere": true, "cohere2": true,
	"olmo2": true, "ministral": true, "mistral3": true, "smollm3": true,
}

// KnownArch reports whether a config.json model_type is one Headroom
// reads specifically rather than as a generic decoder.
func KnownArch(modelType string) bool { return knownArchs[modelType] }
