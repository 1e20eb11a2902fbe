package gguf

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// LlamaSpec describes a llama-architecture model for WriteLlama. Zero
// KVHeads means KVHeads = Heads (MHA); zero Context means 2048; an empty
// Type means F16; an empty Name means "headroom-test-llama".
type LlamaSpec struct {
	Layers, Hidden, FFN, Heads, KVHeads, Vocab, Context int
	// Type is the ggml type of the weight matrices and embeddings: "F32",
	// "F16" or "Q8_0". Norms are always F32.
	Type string
	// Seed makes the random weights reproducible.
	Seed int64
	// Name is written to general.name.
	Name string
	// ChatTemplate, when set, is written to tokenizer.chat_template.
	ChatTemplate string
}

// minLlamaVocab is <unk>, <s>, </s> and the 256 byte tokens.
const minLlamaVocab = 3 + 256

// Token types of llama.cpp (include/llama.h, llama_token_type).
const (
	tokenNormal  int32 = 1
	tokenUnknown int32 = 2
	tokenControl int32 = 3
	tokenByte    int32 = 6
)

// llamaFileTypes are the general.file_type values (llama_ftype) of the
// formats WriteLlama encodes.
var llamaFileTypes = map[string]uint32{"F32": 0, "F16": 1, "Q8_0": 7}

// WriteLlama writes a complete llama-architecture GGUF v3 file that
// llama.cpp and Ollama load: metadata, a SentencePiece-style vocabulary
// (<unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then word pieces
// ▁a, a, ▁b ... up to Vocab) and random weights drawn from N(0, 0.02²) with
// spec.Seed; norms are ones. Only one tensor is held in memory at a time.
func WriteLlama(w io.Writer, spec LlamaSpec) error {
	s, err := spec.normalized()
	if err != nil {
		return err
	}
	infos := s.tensors()
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x9e3779b97f4a7c15))
	var buf []byte
	fill := func(i int, _ int64, w io.Writer) error {
		t := infos[i]
		n := 1
		for _, d := range t.Shape {
			n *= int(d)
		}
		vals := make([]float32, n)
		for j := range vals {
			if isLlamaNorm(t.Name) {
				vals[j] = 1 // RMS norm weights start at one
				continue
			}
			vals[j] = float32(rng.NormFloat64() * 0.02)
		}
		buf, err = encode(buf[:0], t.Type, vals)
		if err != nil {
			return err
		}
		_, err = w.Write(buf)
		return err
	}
	return writeFile(w, s.metadata(), infos, fill)
}

// normalized applies the defaults and checks the geometry.
func (s LlamaSpec) normalized() (LlamaSpec, error) {
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.Context == 0 {
		s.Context = 2048
	}
	if s.Type == "" {
		s.Type = "F16"
	}
	if s.Name == "" {
		s.Name = "headroom-test-llama"
	}
	if _, ok := llamaFileTypes[s.Type]; !ok {
		return s, fmt.Errorf("llama spec: type %q is not F32, F16 or Q8_0", s.Type)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", s.Layers}, {"hidden", s.Hidden}, {"ffn", s.FFN}, {"heads", s.Heads}, {"kv heads", s.KVHeads}, {"context", s.Context}} {
		if f.v <= 0 {
			return s, fmt.Errorf("llama spec: %s must be positive, got %d", f.name, f.v)
		}
	}
	switch {
	case s.Hidden%s.Heads != 0 || (s.Hidden/s.Heads)%2 != 0:
		return s, fmt.Errorf("llama spec: hidden %d must split into %d heads of even size", s.Hidden, s.Heads)
	case s.Heads%s.KVHeads != 0:
		return s, fmt.Errorf("llama spec: heads %d is not a multiple of kv heads %d", s.Heads, s.KVHeads)
	case s.Vocab < minLlamaVocab:
		return s, fmt.Errorf("llama spec: vocab %d is below %d (3 special and 256 byte tokens)", s.Vocab, minLlamaVocab)
	case s.Type == "Q8_0" && (s.Hidden%32 != 0 || s.FFN%32 != 0):
		return s, fmt.Errorf("llama spec: Q8_0 needs hidden (%d) and ffn (%d) to be multiples of 32", s.Hidden, s.FFN)
	}
	return s, nil
}

// headDim is the per-head width.
func (s LlamaSpec) headDim() int { return s.Hidden / s.Heads }

// tensors lists the llama tensors in llama.cpp's names and ggml shapes
// (src/llama-arch.cpp LLM_ARCH_LLAMA; src/llama-model.cpp create_tensor).
func (s LlamaSpec) tensors() []tensorInfo {
	d, f, v := int64(s.Hidden), int64(s.FFN), int64(s.Vocab)
	kv := int64(s.KVHeads * s.headDim())
	mat := func(name string, shape ...int64) tensorInfo { return tensorInfo{name, s.Type, shape} }
	norm := func(name string) tensorInfo { return tensorInfo{name, "F32", []int64{d}} }
	ts := []tensorInfo{mat("token_embd.weight", d, v)}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			norm(p+"attn_norm.weight"),
			mat(p+"attn_q.weight", d, d),
			mat(p+"attn_k.weight", d, kv),
			mat(p+"attn_v.weight", d, kv),
			mat(p+"attn_output.weight", d, d),
			norm(p+"ffn_norm.weight"),
			mat(p+"ffn_gate.weight", d, f),
			mat(p+"ffn_up.weight", d, f),
			mat(p+"ffn_down.weight", f, d),
		)
	}
	return append(ts, norm("output_norm.weight"), mat("output.weight", d, v))
}

// metadata is the key set llama.cpp's llama loader reads (src/llama-model.cpp
// load_hparams, src/llama-vocab.cpp load), with the types it checks.
func (s LlamaSpec) metadata() []KV {
	kv := []KV{
		{"general.architecture", "llama"},
		{"general.name", s.Name},
		{"general.file_type", llamaFileTypes[s.Type]},
	}
	if s.Type == "Q8_0" {
		kv = append(kv, KV{"general.quantization_version", uint32(2)})
	}
	kv = append(kv,
		KV{"llama.context_length", uint32(s.Context)},
		KV{"llama.embedding_length", uint32(s.Hidden)},
		KV{"llama.block_count", uint32(s.Layers)},
		KV{"llama.feed_forward_length", uint32(s.FFN)},
		KV{"llama.attention.head_count", uint32(s.Heads)},
		KV{"llama.attention.head_count_kv", uint32(s.KVHeads)},
		KV{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		KV{"llama.rope.dimension_count", uint32(s.headDim())},
		KV{"llama.rope.freq_base", float32(10000)},
		KV{"llama.vocab_size", uint32(s.Vocab)},
	)
	tokens, scores, types := llamaVocab(s.Vocab)
	kv = append(kv,
		KV{"tokenizer.ggml.model", "llama"},
		KV{"tokenizer.ggml.tokens", tokens},
		KV{"tokenizer.ggml.scores", scores},
		KV{"tokenizer.ggml.token_type", types},
		KV{"tokenizer.ggml.bos_token_id", uint32(1)},
		KV{"tokenizer.ggml.eos_token_id", uint32(2)},
		KV{"tokenizer.ggml.unknown_token_id", uint32(0)},
		KV{"tokenizer.ggml.add_bos_token", true},
		KV{"tokenizer.ggml.add_eos_token", false},
	)
	if s.ChatTemplate != "" {
		kv = append(kv, KV{"tokenizer.chat_template", s.ChatTemplate})
	}
	return kv
}

// llamaVocab builds n unique SentencePiece tokens with scores and types.
func llamaVocab(n int) ([]string, []float32, []int32) {
	tokens := make([]string, 0, n)
	types := make([]int32, 0, n)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, tokenUnknown, tokenControl, tokenControl)
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokenByte)
	}
	for length := 1; len(tokens) < n; length++ {
		tokens, types = appendPieces(tokens, types, n, "", length)
	}
	scores := make([]float32, n)
	for i := minLlamaVocab; i < n; i++ {
		scores[i] = -float32(i - minLlamaVocab)
	}
	return tokens, scores, types
}

// appendPieces appends "▁w" and "w" for every lowercase word w of the given
// length with the given prefix, stopping at n tokens.
func appendPieces(tokens []string, types []int32, n int, prefix string, length int) ([]string, []int32) {
	for c := 'a'; c <= 'z' && len(tokens) < n; c++ {
		w := prefix + string(c)
		if length > 1 {
			tokens, types = appendPieces(tokens, types, n, w, length-1)
			continue
		}
		for _, t := range []string{"▁" + w, w} {
			if len(tokens) < n {
				tokens = append(tokens, t)
				types = append(types, tokenNormal)
			}
		}
	}
	return tokens, types
}

// isLlamaNorm reports whether a llama tensor name is a norm weight.
func isLlamaNorm(name string) bool { return strings.HasSuffix(name, "norm.weight") }
