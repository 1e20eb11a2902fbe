package gguf

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// ReadFile reads the header of the GGUF file at path and returns the model
// it describes. Only the metadata and tensor infos are read; the tensor data
// is never loaded, though its extents are checked against the file size.
// A shard of a split model (name-00001-of-00003.gguf, as gguf-split and
// llama.cpp name them) is read together with its sibling shards, which
// must all be present.
func ReadFile(path string) (planner.Model, error) {
	if paths, ok := splitPaths(path); ok {
		return readSplit(paths)
	}
	f, size, err := openModel(path)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read gguf: %w", err)
	}
	defer f.Close()
	return Read(f, size, path)
}

// openModel opens a model file that must be a regular file: a FIFO, a
// device or a directory is refused at once instead of blocking or reading
// without end.
func openModel(path string) (*os.File, int64, error) {
	f, err := safefile.Open(path, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Read reads a GGUF header from the first size bytes of r; name (a path or
// label) appears in errors and, without a general.name key, becomes the
// model ID. Given one shard of a split model it describes that shard's
// tensors only; ReadFile reads all shards. Malformed or truncated input gives an error wrapping
// ErrNotGGUF or ErrTruncated where those apply; it never panics.
func Read(r io.ReaderAt, size int64, name string) (planner.Model, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read gguf %s: %w", name, err)
	}
	m, err := h.model(name)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read gguf %s: %w", name, err)
	}
	return m, nil
}

// model maps the header onto planner.Model. Hyperparameters come from the
// "<arch>." keys llama.cpp reads (src/llama-arch.cpp LLM_KV_NAMES); weights
// from the tensor infos, summed exactly.
func (h *header) model(name string) (planner.Model, error) {
	arch, ok := h.KV["general.architecture"].(string)
	if !ok || arch == "" {
		return planner.Model{}, fmt.Errorf("general.architecture is missing or not a string")
	}
	k := keys{kv: h.KV, prefix: arch + "."}
	if !textsafe.Clean(arch) || len(arch) > maxArch {
		return planner.Model{}, fmt.Errorf("general.architecture %q is not an architecture name", textsafe.Printable(arch, maxArch))
	}
	m := planner.Model{Arch: arch, Source: "GGUF header of " + textsafe.Printable(filepath.Base(name), maxName)}
	m.ID, m.Name = h.modelName(name)
	m.Layers = k.int("block_count")
	m.Hidden = k.int("embedding_length")
	if k.err == nil && (m.Layers == 0 || m.Hidden == 0) {
		return m, fmt.Errorf("%sblock_count or %sembedding_length is missing: not a language model", k.prefix, k.prefix)
	}
	if m.Layers > maxLayers {
		return m, fmt.Errorf("%sblock_count = %d: llama.cpp loads at most %d layers (LLAMA_MAX_LAYERS)", k.prefix, m.Layers, maxLayers)
	}
	m.Heads = k.int("attention.head_count")
	m.KVHeads = k.int("attention.head_count_kv")
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads // llama.cpp: n_head_kv defaults to n_head
	}
	m.HeadDim = k.headDim()
	m.MaxContext = planner.Tokens(k.int("context_length"))
	m.Experts = k.int("expert_count")
	m.TopK = k.int("expert_used_count")
	if m.Experts > maxExperts || m.TopK > max(m.Experts, 1) {
		return m, fmt.Errorf("%sexpert_count = %d with expert_used_count = %d: want at most %d experts, and no more used than exist",
			k.prefix, m.Experts, m.TopK, maxExperts)
	}
	m.FFN = k.int("feed_forward_length")
	if m.Experts > 1 && k.has("expert_feed_forward_length") {
		m.FFN = k.int("expert_feed_forward_length")
	}
	m.SlidingWindow = k.int("attention.sliding_window")
	m.SlidingLayers = k.slidingLayers(arch, m.Layers, m.SlidingWindow)
	if r := k.int("attention.kv_lora_rank"); r > 0 {
		m.MLA = &planner.MLA{KVLoraRank: r, RopeDim: k.int("rope.dimension_count")}
	}
	m.Vocab = h.vocab(k)
	m.Linear = linearAttention(&k, arch, m.Layers)
	if k.err != nil {
		return m, k.err
	}
	h.fillTensors(&m)
	return m, nil
}

// Bounds on what a header may claim. maxLayers is LLAMA_MAX_LAYERS
// (llama.cpp src/llama-hparams.h), which llama.cpp refuses to exceed;
// maxExperts is a sanity bound well above any published model (DeepSeek-V3
// and Kimi K2 route over 256 and 384). maxName caps a name taken from the
// file, maxArch an architecture name.
const (
	maxLayers  = 512
	maxExperts = 4096
	maxName    = 256
	maxArch    = 64
)

// modelName returns general.name, or the file's base name without .gguf,
// made printable (control characters escaped, at most maxName bytes): the
// name ends up in terminal output, warnings and exported scripts.
func (h *header) modelName(name string) (id, display string) {
	if n, ok := h.KV["general.name"].(string); ok && strings.TrimSpace(n) != "" {
		n = textsafe.Printable(n, maxName)
		return n, n
	}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	base = textsafe.Printable(base, maxName)
	return base, base
}

// vocab is the token count: the tokenizer's token list, else <arch>.vocab_size,
// else the rows of token_embd.weight.
func (h *header) vocab(k keys) int {
	if n, ok := arrayLen(h.KV["tokenizer.ggml.tokens"]); ok && n > 0 && n <= maxInt {
		return int(n)
	}
	if v := k.int("vocab_size"); v > 0 {
		return v
	}
	for _, t := range h.Tensors {
		if t.Name == "token_embd.weight" && len(t.Shape) >= 2 && t.Shape[1] <= maxInt {
			return int(t.Shape[1])
		}
	}
	return 0
}

// fillTensors sets Tensors, Params, ActiveParams, FileBytes, FileQuant,
// NativeDType, GatedMLP and TiedEmbeddings from the tensor infos.
func (h *header) fillTensors(m *planner.Model) {
	var expertElems int64
	tied, gated := true, false
	m.Tensors = make([]planner.Tensor, len(h.Tensors))
	for i, t := range h.Tensors {
		m.Tensors[i] = planner.Tensor{Name: textsafe.Printable(t.Name, maxTensorName+8), Type: t.Type.Name, Elements: t.Elements, Bytes: planner.Bytes(t.Bytes)}
		m.Params += planner.Params(t.Elements)
		m.FileBytes += planner.Bytes(t.Bytes)
		if strings.Contains(t.Name, "_exps") {
			expertElems += t.Elements
		}
		switch {
		case t.Name == "output.weight":
			tied = false
		case strings.Contains(t.Name, "ffn_gate") && !strings.Contains(t.Name, "ffn_gate_inp"):
			gated = true // ffn_gate_inp is the MoE router, not a gate
		}
	}
	m.TiedEmbeddings, m.GatedMLP = tied, gated
	m.ActiveParams = m.Params
	if m.IsMoE() && m.TopK <= m.Experts {
		// Only TopK of Experts routed experts run per token.
		m.ActiveParams = m.Params - planner.Params(expertElems) +
			planner.Params(expertElems*int64(m.TopK)/int64(m.Experts))
	}
	m.FileQuant = h.fileQuant()
	m.NativeDType = nativeDTypes[m.FileQuant]
}

// fileQuant names the file's quantization: general.file_type when it is a
// known llama_ftype, else the tensor type holding the most bytes among
// matrices, lowercased.
func (h *header) fileQuant() string {
	if ft, ok := toInt(h.KV["general.file_type"]); ok {
		if n, ok := fileTypeNames[uint64(ft)]; ok && ft >= 0 {
			return n
		}
	}
	bytes := map[string]int64{}
	for _, t := range h.Tensors {
		if len(t.Shape) >= 2 {
			bytes[t.Type.Name] += t.Bytes
		}
	}
	names := make([]string, 0, len(bytes))
	for n := range bytes {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		if bytes[names[a]] != bytes[names[b]] {
			return bytes[names[a]] > bytes[names[b]]
		}
		return names[a] < names[b]
	})
	if len(names) == 0 {
		return ""
	}
	return strings.ToLower(names[0])
}

// swaPatterns is how many layers make one local/global period when the
// file does not store the pattern: period−1 sliding layers, then one full
// (llama.cpp src/llama-model.cpp set_swa_pattern; modeling.md §2.3 for
// Gemma-2, Gemma-3 and gpt-oss; Cohere2's 4 is unverified).
var swaPatterns = map[string]int{"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4}

// slidingLayers counts the layers that use the sliding window: from
// <arch>.attention.sliding_window_pattern (a bool per layer, or a period),
// else the architecture's known period, else all layers.
func (k *keys) slidingLayers(arch string, layers, window int) int {
	if window <= 0 {
		return 0
	}
	v, ok := k.kv[k.prefix+"attention.sliding_window_pattern"]
	if flags, isBools := v.([]bool); ok && isBools {
		n := 0
		for _, f := range flags {
			if f {
				n++
			}
		}
		return min(n, layers) // a longer array than the layers says nothing of the rest
	}
	period := swaPatterns[arch]
	if ok {
		period = k.int("attention.sliding_window_pattern")
	}
	if period <= 0 {
		return layers
	}
	// llama.cpp: swa_layers[il] = il % n_pattern < n_pattern - 1, so each
	// full period has period-1 sliding layers, and the partial one at the
	// end min(rest, period-1).
	return layers/period*(period-1) + min(layers%period, period-1)
}

// headDim is <arch>.attention.key_length_mla (MLA files store the
// per-head q/k width there and the latent width in key_length), else
// <arch>.attention.key_length, else zero (derive Hidden/Heads).
func (k *keys) headDim() int {
	if k.has("attention.key_length_mla") {
		return k.int("attention.key_length_mla")
	}
	return k.int("attention.key_length")
}

// maxInt bounds integers taken from metadata: every count is a uint32 in
// llama.cpp.
const maxInt = 1<<31 - 1

// keys reads integer metadata under an architecture prefix, keeping the
// first error.
type keys struct {
	kv     map[string]any
	prefix string
	err    error
}

func (k *keys) has(key string) bool {
	_, ok := k.kv[k.prefix+key]
	return ok
}

// int returns the key's value as an int: a scalar, or the largest element
// of a per-layer array (head counts and FFN widths may vary by layer).
// Absent keys give 0; negative, oversized or non-numeric values an error.
func (k *keys) int(key string) int {
	v, ok := k.kv[k.prefix+key]
	if !ok {
		return 0
	}
	n, ok := toInt(v)
	if !ok {
		n, ok = maxOf(v)
	}
	if !ok || n < 0 || n > maxInt {
		if k.err == nil {
			k.err = fmt.Errorf("metadata %s%s = %v is not a count", k.prefix, key, v)
		}
		return 0
	}
	return int(n)
}

// toInt converts an integer metadata value.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint64:
		if x > 1<<62 {
			return 0, false
		}
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// maxOf returns the largest element of an integer array.
func maxOf(v any) (int64, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Len() == 0 {
		return 0, false
	}
	var out int64
	for i := range rv.Len() {
		n, ok := toInt(rv.Index(i).Interface())
		if !ok {
			return 0, false
		}
		out = max(out, n)
	}
	return out, true
}

// arrayLen returns the length of a metadata array.
func arrayLen(v any) (uint64, bool) {
	if b, ok := v.(bigArray); ok {
		return b.Len, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return uint64(rv.Len()), true
	}
	return 0, false
}
