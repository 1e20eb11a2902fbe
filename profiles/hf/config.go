package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/planner"
)

// maxConfigSize bounds config.json; real ones are a few KiB.
const maxConfigSize = 16 << 20

// config is the subset of a transformers config.json that sizes a model.
// Zero means absent (or null); pointers mark fields whose absence differs
// from zero.
type config struct {
	NameOrPath    string   `json:"_name_or_path"`
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures"`

	Layers           int    `json:"num_hidden_layers"`
	Hidden           int    `json:"hidden_size"`
	Intermediate     int    `json:"intermediate_size"`
	MoEIntermediate  int    `json:"moe_intermediate_size"`
	Heads            int    `json:"num_attention_heads"`
	KVHeads          int    `json:"num_key_value_heads"`
	HeadDim          int    `json:"head_dim"`
	Vocab            int    `json:"vocab_size"`
	MaxPositions     int    `json:"max_position_embeddings"`
	TieEmbeddings    *bool  `json:"tie_word_embeddings"`
	TorchDType       string `json:"torch_dtype"`
	DType            string `json:"dtype"`
	HiddenAct        string `json:"hidden_act"`
	HiddenActivation string `json:"hidden_activation"` // Gemma

	NumExperts         int `json:"num_experts"`
	NumLocalExperts    int `json:"num_local_experts"`
	NRoutedExperts     int `json:"n_routed_experts"`
	ExpertsPerTok      int `json:"num_experts_per_tok"`
	ExpertsPerToken    int `json:"experts_per_token"` // gpt-oss
	NSharedExperts     int `json:"n_shared_experts"`
	SharedExpertFFN    int `json:"shared_expert_intermediate_size"`
	FirstKDenseReplace int `json:"first_k_dense_replace"`

	SlidingWindow        int      `json:"sliding_window"`
	LayerTypes           []string `json:"layer_types"`
	SlidingWindowPattern int      `json:"sliding_window_pattern"`
	UseSlidingWindow     *bool    `json:"use_sliding_window"`
	MaxWindowLayers      int      `json:"max_window_layers"`

	KVLoraRank    int `json:"kv_lora_rank"`
	QLoraRank     int `json:"q_lora_rank"`
	QKRopeHeadDim int `json:"qk_rope_head_dim"`
	QKNopeHeadDim int `json:"qk_nope_head_dim"`
	VHeadDim      int `json:"v_head_dim"`

	// Hybrid linear attention (Qwen3-Next Gated DeltaNet).
	FullAttentionInterval int `json:"full_attention_interval"`
	LinearKeyHeads        int `json:"linear_num_key_heads"`
	LinearValueHeads      int `json:"linear_num_value_heads"`
	LinearKeyHeadDim      int `json:"linear_key_head_dim"`
	LinearValueHeadDim    int `json:"linear_value_head_dim"`
	LinearConvKernel      int `json:"linear_conv_kernel_dim"`

	// Llama 4: interleaved MoE layers, a wider dense MLP, chunked local
	// attention on the RoPE layers.
	InterleaveMoE   int   `json:"interleave_moe_layer_step"`
	IntermediateMLP int   `json:"intermediate_size_mlp"`
	AttentionChunk  int   `json:"attention_chunk_size"`
	NoRopeLayers    []int `json:"no_rope_layers"`

	Quantization *quantConfig `json:"quantization_config"`
	TextConfig   *config      `json:"text_config"`
}

// ReadConfig reads a Hugging Face config.json and returns the model it
// describes. Without weights, Params and ActiveParams are estimated from
// the geometry (see estimateParams) and FileBytes stays zero. For
// multimodal configs the language model in text_config is described.
func ReadConfig(path string) (planner.Model, error) {
	data, err := readSmall(path, maxConfigSize)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(data, path)
}

// ParseConfig is ReadConfig on the bytes of a config.json; name (its path
// or a label) appears in errors and, without an _name_or_path field,
// gives the model ID: the name of the directory holding config.json.
func ParseConfig(data []byte, name string) (planner.Model, error) {
	c, err := decodeConfig(data)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read config %s: %w", name, err)
	}
	m, err := c.model(idFrom(name))
	if err != nil {
		return planner.Model{}, fmt.Errorf("read config %s: %w", name, err)
	}
	m.Source = "config.json " + name
	return m, nil
}

// idFrom names a model after the directory holding its config.json.
func idFrom(name string) string {
	if filepath.Base(name) == "config.json" {
		if dir := filepath.Base(filepath.Dir(name)); dir != "." && dir != string(filepath.Separator) {
			return dir
		}
	}
	return filepath.Base(name)
}

// readSmall reads a whole file that must not exceed limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	} else if err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a config may have", path, st.Size(), limit)
	}
	f, err := safefile.Open(path, limit) // a FIFO or device is refused, not waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a config may have", path, st.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// decodeConfig parses config.json, merging text_config over the top level.
func decodeConfig(data []byte) (config, error) {
	var top config
	if err := json.Unmarshal(data, &top); err != nil {
		return config{}, jsonError(data, err)
	}
	c := top
	if top.TextConfig != nil {
		c = *top.TextConfig
		c.inherit(top)
	}
	c.TextConfig = nil
	c.applyDefaults()
	return c, nil
}

// inherit fills what a text_config leaves out from the enclosing config:
// multimodal configs keep dtype, quantization, vocabulary and naming at
// the top level.
func (c *config) inherit(top config) {
	if c.NameOrPath == "" {
		c.NameOrPath = top.NameOrPath
	}
	c.Architectures = top.Architectures
	if top.ModelType != "" && c.ModelType == "" {
		c.ModelType = top.ModelType
	}
	if c.TorchDType == "" && c.DType == "" {
		c.TorchDType, c.DType = top.TorchDType, top.DType
	}
	if c.Quantization == nil {
		c.Quantization = top.Quantization
	}
	if c.TieEmbeddings == nil {
		c.TieEmbeddings = top.TieEmbeddings
	}
	if c.Vocab == 0 {
		c.Vocab = top.Vocab
	}
	if c.MaxPositions == 0 {
		c.MaxPositions = top.MaxPositions
	}
}

// jsonError adds the line and column of a JSON syntax or type error. Go
// reports the offset after the offending byte (syntax) or value (type);
// the column given is that of the byte itself, or the end of the input.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := se.Offset
		if !strings.HasPrefix(se.Error(), "unexpected end") {
			off-- // the offset counts the offending byte itself
		}
		line, col := lineCol(data, off)
		return fmt.Errorf("invalid JSON at line %d, column %d (byte offset %d): %w", line, col, off, err)
	case errors.As(err, &te):
		line, col := lineCol(data, te.Offset-1)
		return fmt.Errorf("field %q (value ending at line %d, column %d) holds a JSON %s where a %s belongs: %w",
			te.Field, line, col, te.Value, te.Type, err)
	}
	return err
}

// lineCol converts a byte offset to a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
