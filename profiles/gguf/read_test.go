package gguf

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// randomTensor returns a tensor of the given type and shape filled with
// random bytes of exactly the right size (k-quant payloads need not decode).
func randomTensor(t testing.TB, r *rand.Rand, name, typ string, shape ...int64) TensorData {
	t.Helper()
	n, err := TensorBytes(typ, shape)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return TensorData{Name: name, Type: typ, Shape: shape, Data: data}
}

// mixedFile writes a small llama-shaped file whose tensors use several
// ggml types; sizes are spelled out by hand from ggml-common.h.
func mixedFile(t testing.TB) (data []byte, wantSizes map[string]int64) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	tensors := []TensorData{
		randomTensor(t, r, "token_embd.weight", "Q4_K", 256, 300),   // 300 rows × 144
		randomTensor(t, r, "blk.0.attn_norm.weight", "F32", 256),    // 1024
		randomTensor(t, r, "blk.0.attn_q.weight", "Q8_0", 256, 256), // 8 blocks × 34 × 256
		randomTensor(t, r, "blk.0.attn_k.weight", "Q4_0", 256, 64),  // 8 × 18 × 64
		randomTensor(t, r, "blk.0.attn_v.weight", "Q6_K", 256, 64),  // 210 × 64
		randomTensor(t, r, "blk.0.attn_output.weight", "F16", 256, 256),
		randomTensor(t, r, "blk.0.ffn_norm.weight", "F32", 256),
		randomTensor(t, r, "blk.0.ffn_gate.weight", "Q4_K", 256, 512),
		randomTensor(t, r, "blk.0.ffn_up.weight", "BF16", 256, 512),
		randomTensor(t, r, "blk.0.ffn_down.weight", "MXFP4", 512, 256), // 16 × 17 × 256
		randomTensor(t, r, "output_norm.weight", "F32", 256),
		randomTensor(t, r, "output.weight", "Q6_K", 256, 320),
	}
	wantSizes = map[string]int64{
		"token_embd.weight": 300 * 144, "blk.0.attn_norm.weight": 1024,
		"blk.0.attn_q.weight": 8 * 34 * 256, "blk.0.attn_k.weight": 8 * 18 * 64,
		"blk.0.attn_v.weight": 210 * 64, "blk.0.attn_output.weight": 2 * 256 * 256,
		"blk.0.ffn_norm.weight": 1024, "blk.0.ffn_gate.weight": 144 * 512,
		"blk.0.ffn_up.weight": 2 * 256 * 512, "blk.0.ffn_down.weight": 16 * 17 * 256,
		"output_norm.weight": 1024, "output.weight": 210 * 320,
	}
	kv := []KV{
		{"general.architecture", "llama"},
		{"general.name", "mixed"},
		{"general.file_type", uint32(15)},
		{"llama.block_count", uint32(1)},
		{"llama.embedding_length", uint32(256)},
		{"llama.feed_forward_length", uint32(512)},
		{"llama.attention.head_count", uint32(8)},
		{"llama.attention.head_count_kv", uint32(2)},
		{"llama.context_length", uint32(4096)},
		{"tokenizer.ggml.tokens", make([]string, 300)},
	}
	var buf bytes.Buffer
	if err := Write(&buf, kv, tensors); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), wantSizes
}

func readBytes(data []byte, name string) (planner.Model, error) {
	return Read(bytes.NewReader(data), int64(len(data)), name)
}

func TestReadSeveralTypesExactBytes(t *testing.T) {
	data, want := mixedFile(t)
	m, err := readBytes(data, "mixed.gguf")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, tn := range m.Tensors {
		if int64(tn.Bytes) != want[tn.Name] {
			t.Errorf("%s (%s): %d bytes, want %d", tn.Name, tn.Type, tn.Bytes, want[tn.Name])
		}
		sum += want[tn.Name]
	}
	if len(m.Tensors) != len(want) {
		t.Errorf("%d tensors, want %d", len(m.Tensors), len(want))
	}
	if int64(m.FileBytes) != sum {
		t.Errorf("FileBytes = %d, want the exact sum %d", m.FileBytes, sum)
	}
	h, err := readHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Every tensor size here is a multiple of the 32-byte alignment, so the
	// data section holds no padding and equals FileBytes.
	if section := int64(len(data)) - h.DataStart; section != int64(m.FileBytes) {
		t.Errorf("data section is %d bytes, FileBytes %d", section, m.FileBytes)
	}
	if m.FileQuant != "q4_k_m" || m.NativeDType != "" {
		t.Errorf("FileQuant %q NativeDType %q, want q4_k_m and none", m.FileQuant, m.NativeDType)
	}
}

func TestReadPaddedTensors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var buf bytes.Buffer
	err := Write(&buf, []KV{{"general.architecture", "llama"}, {"llama.block_count", uint32(1)}, {"llama.embedding_length", uint32(3)}},
		[]TensorData{randomTensor(t, r, "a", "F32", 3), randomTensor(t, r, "b", "F16", 5), randomTensor(t, r, "c", "Q4_0", 32, 2)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := readBytes(buf.Bytes(), "padded.gguf")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := readHeader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if m.FileBytes != 12+10+36 {
		t.Errorf("FileBytes = %d, want 58", m.FileBytes)
	}
	if section := int64(buf.Len()) - h.DataStart; section != 32+32+64 {
		t.Errorf("data section %d bytes, want 128 (12, 10 and 36 bytes each padded to 32)", section)
	}
	if m.FileQuant != "q4_0" {
		t.Errorf("FileQuant without general.file_type = %q, want the dominant matrix type q4_0", m.FileQuant)
	}
}

func TestReadLlamaModel(t *testing.T) {
	for _, typ := range []string{"F32", "F16", "Q8_0"} {
		t.Run(typ, func(t *testing.T) {
			spec := LlamaSpec{Layers: 2, Hidden: 64, FFN: 160, Heads: 4, KVHeads: 2, Vocab: 300, Context: 512, Type: typ, Seed: 3}
			var buf bytes.Buffer
			if err := WriteLlama(&buf, spec); err != nil {
				t.Fatal(err)
			}
			m, err := readBytes(buf.Bytes(), "/models/tiny.gguf")
			if err != nil {
				t.Fatal(err)
			}
			const d, f, v, kv, L = 64, 160, 300, 2 * 16, 2
			matrices := int64(2*v*d + L*(2*d*d+2*d*kv+3*d*f))
			norms := int64(L*2*d + d)
			bpw := map[string]float64{"F32": 32, "F16": 16, "Q8_0": 8.5}[typ]
			wantBytes := planner.Bytes(float64(matrices)*bpw/8) + planner.Bytes(4*norms)
			want := planner.Model{
				ID: "headroom-test-llama", Name: "headroom-test-llama", Arch: "llama",
				Params: planner.Params(matrices + norms), ActiveParams: planner.Params(matrices + norms),
				Layers: L, Hidden: d, FFN: f, Heads: 4, KVHeads: 2, Vocab: v, GatedMLP: true,
				MaxContext: 512, FileQuant: strings.ToLower(typ), FileBytes: wantBytes,
				NativeDType: map[string]string{"F32": "float32", "F16": "float16"}[typ],
				Source:      "GGUF header of tiny.gguf",
			}
			got := m
			got.Tensors = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("model\n got %+v\nwant %+v", got, want)
			}
			if n := len(m.Tensors); n != 3+9*L {
				t.Errorf("%d tensors, want %d", n, 3+9*L)
			}
		})
	}
}

func TestWriteLlamaIsSeeded(t *testing.T) {
	spec := LlamaSpec{Layers: 1, Hidden: 32, FFN: 64, Heads: 2, Vocab: 270, Type: "Q8_0", Seed: 9}
	write := func(s LlamaSpec) []byte {
		var b bytes.Buffer
		if err := WriteLlama(&b, s); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := write(spec), write(spec)
	spec.Seed = 10
	c := write(spec)
	if !bytes.Equal(a, b) {
		t.Error("same seed wrote different files")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds wrote the same file")
	}
}

func TestWriteLlamaVocabulary(t *testing.T) {
	tokens, scores, types := llamaVocab(1000)
	if len(tokens) != 1000 || len(scores) != 1000 || len(types) != 1000 {
		t.Fatalf("vocab lengths %d %d %d, want 1000", len(tokens), len(scores), len(types))
	}
	seen := map[string]bool{}
	for _, tok := range tokens {
		if seen[tok] {
			t.Fatalf("token %q appears twice", tok)
		}
		seen[tok] = true
	}
	checks := []struct {
		i    int
		tok  string
		kind int32
	}{{0, "<unk>", tokenUnknown}, {1, "<s>", tokenControl}, {2, "</s>", tokenControl},
		{3, "<0x00>", tokenByte}, {13, "<0x0A>", tokenByte}, {258, "<0xFF>", tokenByte},
		{259, "▁a", tokenNormal}, {260, "a", tokenNormal}, {261, "▁b", tokenNormal}, {311, "▁aa", tokenNormal}}
	for _, c := range checks {
		if tokens[c.i] != c.tok || types[c.i] != c.kind {
			t.Errorf("token %d = %q type %d, want %q type %d", c.i, tokens[c.i], types[c.i], c.tok, c.kind)
		}
	}
}

func TestWriteLlamaRefusesBadSpec(t *testing.T) {
	ok := LlamaSpec{Layers: 1, Hidden: 64, FFN: 128, Heads: 4, Vocab: 300}
	cases := []struct {
		name string
		edit func(*LlamaSpec)
		msg  string
	}{
		{"type", func(s *LlamaSpec) { s.Type = "Q4_K" }, `type "Q4_K"`},
		{"layers", func(s *LlamaSpec) { s.Layers = 0 }, "layers must be positive"},
		{"heads", func(s *LlamaSpec) { s.Heads = 3 }, "split into 3 heads"},
		{"gqa", func(s *LlamaSpec) { s.KVHeads = 3 }, "not a multiple of kv heads 3"},
		{"vocab", func(s *LlamaSpec) { s.Vocab = 100 }, "vocab 100 is below 259"},
		{"q8 rows", func(s *LlamaSpec) { s.Type, s.FFN = "Q8_0", 100 }, "multiples of 32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ok
			c.edit(&s)
			if err := WriteLlama(&bytes.Buffer{}, s); err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want one containing %q", err, c.msg)
			}
		})
	}
}

func TestReadArchitectureKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	moeTensors := []TensorData{
		randomTensor(t, r, "token_embd.weight", "F16", 32, 10),
		randomTensor(t, r, "blk.0.ffn_gate_inp.weight", "F32", 32, 8),
		randomTensor(t, r, "blk.0.ffn_gate_exps.weight", "Q8_0", 32, 16, 8),
		randomTensor(t, r, "blk.0.ffn_up_exps.weight", "Q8_0", 32, 16, 8),
		randomTensor(t, r, "blk.0.ffn_down_exps.weight", "Q8_0", 32, 16, 8),
	}
	const exps = 3 * 32 * 16 * 8
	const total = 320 + 256 + exps
	cases := []struct {
		name    string
		kv      []KV
		tensors []TensorData
		check   func(t *testing.T, m planner.Model)
	}{
		{"deepseek2 moe mla", []KV{
			{"general.architecture", "deepseek2"}, {"deepseek2.block_count", uint32(61)},
			{"deepseek2.embedding_length", uint32(7168)}, {"deepseek2.feed_forward_length", uint32(18432)},
			{"deepseek2.expert_feed_forward_length", uint32(2048)}, {"deepseek2.expert_count", uint32(8)},
			{"deepseek2.expert_used_count", uint32(2)}, {"deepseek2.attention.head_count", uint32(128)},
			{"deepseek2.attention.head_count_kv", uint32(1)}, {"deepseek2.attention.key_length", uint32(576)},
			{"deepseek2.attention.key_length_mla", uint32(192)}, {"deepseek2.attention.kv_lora_rank", uint32(512)},
			{"deepseek2.rope.dimension_count", uint32(64)}, {"deepseek2.context_length", uint32(163840)},
			{"deepseek2.vocab_size", uint32(129280)},
		}, moeTensors, func(t *testing.T, m planner.Model) {
			if m.FFN != 2048 || m.Experts != 8 || m.TopK != 2 || m.HeadDim != 192 || m.Vocab != 129280 {
				t.Errorf("FFN %d experts %d topk %d head dim %d vocab %d", m.FFN, m.Experts, m.TopK, m.HeadDim, m.Vocab)
			}
			if m.MLA == nil || *m.MLA != (planner.MLA{KVLoraRank: 512, RopeDim: 64}) {
				t.Errorf("MLA %+v, want 512/64", m.MLA)
			}
			if m.Params != total || m.ActiveParams != total-exps+exps*2/8 {
				t.Errorf("params %d active %d, want %d and %d", m.Params, m.ActiveParams, total, total-exps+exps*2/8)
			}
			if !m.GatedMLP || !m.TiedEmbeddings || m.FileQuant != "q8_0" {
				t.Errorf("gated %v tied %v quant %q", m.GatedMLP, m.TiedEmbeddings, m.FileQuant)
			}
		}},
		{"gemma3 default pattern", []KV{
			{"general.architecture", "gemma3"}, {"gemma3.block_count", uint32(62)},
			{"gemma3.embedding_length", uint32(5376)}, {"gemma3.attention.sliding_window", uint32(1024)},
			{"gemma3.attention.head_count", uint32(32)}, {"gemma3.attention.key_length", uint32(128)},
		}, nil, func(t *testing.T, m planner.Model) {
			// 62 = 10 periods of 6 (5 sliding) + 2 sliding layers.
			if m.SlidingWindow != 1024 || m.SlidingLayers != 52 || m.HeadDim != 128 || m.KVHeads != 32 {
				t.Errorf("window %d sliding layers %d head dim %d kv heads %d", m.SlidingWindow, m.SlidingLayers, m.HeadDim, m.KVHeads)
			}
		}},
		{"per-layer pattern and head arrays", []KV{
			{"general.architecture", "x"}, {"x.block_count", uint32(4)}, {"x.embedding_length", uint32(64)},
			{"x.attention.sliding_window", uint32(128)},
			{"x.attention.sliding_window_pattern", []bool{true, false, true, true}},
			{"x.attention.head_count", []int32{8, 8, 8, 8}}, {"x.attention.head_count_kv", []uint32{0, 2, 0, 4}},
			{"x.feed_forward_length", []uint32{100, 200, 300, 200}},
		}, nil, func(t *testing.T, m planner.Model) {
			if m.SlidingLayers != 3 || m.Heads != 8 || m.KVHeads != 4 || m.FFN != 300 {
				t.Errorf("sliding layers %d heads %d kv heads %d ffn %d", m.SlidingLayers, m.Heads, m.KVHeads, m.FFN)
			}
		}},
		{"mistral-style window on every layer", []KV{
			{"general.architecture", "llama"}, {"llama.block_count", uint32(32)}, {"llama.embedding_length", uint32(4096)},
			{"llama.attention.sliding_window", uint32(4096)},
		}, nil, func(t *testing.T, m planner.Model) {
			if m.SlidingLayers != 32 || m.ID != "arch" {
				t.Errorf("sliding layers %d id %q", m.SlidingLayers, m.ID)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, c.kv, c.tensors); err != nil {
				t.Fatal(err)
			}
			m, err := readBytes(buf.Bytes(), "dir/arch.gguf")
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, m)
		})
	}
}

func TestReadTruncatedPrefixes(t *testing.T) {
	small := fuzzSeed(t)
	every := make([]int, len(small)+1)
	for n := range every {
		every[n] = n
	}
	t.Run("every prefix of a small file", func(t *testing.T) { checkPrefixes(t, small, every) })
	// In a larger file, cut around every tensor boundary and through the header.
	big, _ := mixedFile(t)
	h, err := readHeader(bytes.NewReader(big), int64(len(big)))
	if err != nil {
		t.Fatal(err)
	}
	var cuts []int
	for n := 0; n <= int(h.DataStart); n++ {
		cuts = append(cuts, n)
	}
	for _, tn := range h.Tensors {
		end := int(h.DataStart + tn.Offset + tn.Bytes)
		cuts = append(cuts, end-1, end, end+1, int(h.DataStart+tn.Offset)+1)
	}
	t.Run("tensor boundaries of a mixed file", func(t *testing.T) { checkPrefixes(t, big, cuts) })
}

// checkPrefixes reads data cut to each length in cuts. The file may lose
// the padding after its last tensor (llama.cpp checks each tensor's
// extent, not the padded section); any shorter cut must fail with
// ErrTruncated and name the file.
func checkPrefixes(t *testing.T, data []byte, cuts []int) {
	h, err := readHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	dataEnd := h.DataStart
	for _, tn := range h.Tensors {
		dataEnd = max(dataEnd, h.DataStart+tn.Offset+tn.Bytes)
	}
	for _, n := range cuts {
		if n > len(data) {
			continue
		}
		_, err := readBytes(data[:n], "cut.gguf")
		switch {
		case n < int(dataEnd) && !errors.Is(err, ErrTruncated):
			t.Fatalf("prefix of %d bytes: error %v, want ErrTruncated", n, err)
		case n < int(dataEnd) && !strings.Contains(err.Error(), "cut.gguf"):
			t.Fatalf("prefix of %d bytes: error %q does not name the file", n, err)
		case n >= int(dataEnd) && err != nil:
			t.Fatalf("prefix of %d bytes ends in the final padding but failed: %v", n, err)
		}
	}
}

// rawHeader builds a header by hand for corruption tests.
type rawHeader struct {
	buf bytes.Buffer
	w   *writer
}

func newRaw(version uint32, nt, nkv uint64) *rawHeader {
	r := &rawHeader{}
	r.w = &writer{w: bufio.NewWriter(&r.buf)}
	r.w.u32(magic)
	r.w.u32(version)
	r.w.u64(nt)
	r.w.u64(nkv)
	return r
}

func (r *rawHeader) bytes() []byte {
	_ = r.w.w.Flush()
	return append(r.buf.Bytes(), make([]byte, 256)...) // some slack so counts are the only problem
}

func TestReadCorruptHeaders(t *testing.T) {
	cases := []struct {
		name  string
		build func() []byte
		msg   string
	}{
		{"not gguf", func() []byte { return []byte("PK\x03\x04 a zip file, not a model") }, "not a GGUF file"},
		{"version 1", func() []byte { return newRaw(1, 0, 0).bytes() }, "version 1"},
		{"version 9", func() []byte { return newRaw(9, 0, 0).bytes() }, "unsupported GGUF version 9"},
		{"big endian", func() []byte { return newRaw(3<<24, 0, 0).bytes() }, "big-endian"},
		{"tensor count 2^60", func() []byte { return newRaw(3, 1<<60, 0).bytes() }, "tensor count 1152921504606846976"},
		{"kv count 2^60", func() []byte { return newRaw(3, 0, 1<<60).bytes() }, "metadata count 1152921504606846976"},
		{"kv count max", func() []byte { return newRaw(3, 0, ^uint64(0)).bytes() }, "metadata count"},
		{"key length 2^60", func() []byte {
			r := newRaw(3, 0, 1)
			r.w.u64(1 << 60)
			return r.bytes()
		}, "string length 1152921504606846976"},
		{"array length 2^60", func() []byte {
			r := newRaw(3, 0, 1)
			r.w.str("a")
			r.w.u32(typeArray)
			r.w.u32(typeUint64)
			r.w.u64(1 << 60)
			return r.bytes()
		}, `metadata "a": file is truncated: array length`},
		{"unknown value type", func() []byte {
			r := newRaw(3, 0, 1)
			r.w.str("a")
			r.w.u32(77)
			return r.bytes()
		}, "unknown value type 77"},
		{"array of unknown type", func() []byte {
			r := newRaw(3, 0, 1)
			r.w.str("a")
			r.w.u32(typeArray)
			r.w.u32(13)
			r.w.u64(1)
			return r.bytes()
		}, "array of unknown value type 13"},
		{"nested arrays", func() []byte {
			r := newRaw(3, 0, 1)
			r.w.str("a")
			r.w.u32(typeArray)
			for i := 0; i < 5; i++ {
				r.w.u32(typeArray)
				r.w.u64(1)
			}
			return r.bytes()
		}, "nested deeper"},
		{"duplicate key", func() []byte {
			r := newRaw(3, 0, 2)
			for i := 0; i < 2; i++ {
				r.w.str("k")
				r.w.u32(typeUint8)
				r.w.u8(1)
			}
			return r.bytes()
		}, `"k" appears twice`},
		{"alignment not a power of two", func() []byte {
			r := newRaw(3, 0, 1)
			_ = r.w.kv(KV{"general.alignment", uint32(48)})
			return r.bytes()
		}, "power of two"},
		{"alignment as string", func() []byte {
			r := newRaw(3, 0, 1)
			_ = r.w.kv(KV{"general.alignment", "32"})
			return r.bytes()
		}, "power of two"},
		{"five dimensions", func() []byte {
			r := newRaw(3, 1, 0)
			r.w.str("w")
			r.w.u32(5)
			return r.bytes()
		}, `tensor 0 ("w"): 5 dimensions`},
		{"unknown tensor type", func() []byte { return rawTensor(32, 1, 99, 0) }, "unknown or removed ggml type id 99"},
		{"removed tensor type", func() []byte { return rawTensor(32, 1, 31, 0) }, "unknown or removed ggml type id 31"},
		{"row not a block multiple", func() []byte { return rawTensor(48, 1, 2, 0) }, `tensor 0 ("w"): row length 48 is not a multiple of the Q4_0 block size 32`},
		{"huge shape", func() []byte { return rawTensor(1<<40, 1<<40, 0, 0) }, "overflows"},
		{"negative dimension", func() []byte { return rawTensor(1<<63, 1, 0, 0) }, "negative"},
		{"misaligned offset", func() []byte { return rawTensor(8, 1, 0, 4) }, "not a multiple of the alignment"},
		{"data beyond the end", func() []byte { return rawTensor(1<<20, 1, 0, 0) }, `tensor "w" needs bytes 0 to 4194304`},
		{"offset beyond the end", func() []byte { return rawTensor(8, 1, 0, 1<<40) }, "file is truncated"},
		{"overlapping tensors", func() []byte {
			r := newRaw(3, 2, 0)
			for _, n := range []string{"a", "b"} {
				r.w.str(n)
				r.w.u32(1)
				r.w.u64(16)
				r.w.u32(0)
				r.w.u64(0)
			}
			return r.bytes()
		}, "overlaps"},
		{"duplicate tensor", func() []byte {
			r := newRaw(3, 2, 0)
			for off := uint64(0); off < 64; off += 32 {
				r.w.str("a")
				r.w.u32(1)
				r.w.u64(1)
				r.w.u32(0)
				r.w.u64(off)
			}
			return r.bytes()
		}, `tensor "a" appears twice`},
		{"no architecture", func() []byte { return newRaw(3, 0, 0).bytes() }, "general.architecture is missing"},
		{"not a language model", func() []byte {
			var b bytes.Buffer
			_ = Write(&b, []KV{{"general.architecture", "clip"}, {"clip.vision.block_count", uint32(4)}}, nil)
			return b.Bytes()
		}, "clip.block_count or clip.embedding_length is missing"},
		{"negative count", func() []byte {
			var b bytes.Buffer
			_ = Write(&b, []KV{{"general.architecture", "llama"}, {"llama.block_count", int32(-1)}, {"llama.embedding_length", uint32(8)}}, nil)
			return b.Bytes()
		}, "llama.block_count = -1 is not a count"},
		{"count as string", func() []byte {
			var b bytes.Buffer
			_ = Write(&b, []KV{{"general.architecture", "llama"}, {"llama.block_count", uint32(2)}, {"llama.embedding_length", "8"}}, nil)
			return b.Bytes()
		}, "llama.embedding_length = 8 is not a count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readBytes(c.build(), "bad.gguf")
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Fatalf("error %v, want one naming bad.gguf and containing %q", err, c.msg)
			}
		})
	}
}

// rawTensor is a header with one F32-or-other tensor "w" of shape
// [ne0, ne1], type id typ, at data offset off, and a little data.
func rawTensor(ne0, ne1 uint64, typ uint32, off uint64) []byte {
	r := newRaw(3, 1, 1)
	_ = r.w.kv(KV{"general.architecture", "llama"})
	r.w.str("w")
	r.w.u32(2)
	r.w.u64(ne0)
	r.w.u64(ne1)
	r.w.u32(typ)
	r.w.u64(off)
	return r.bytes()
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.gguf")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(text); !errors.Is(err, ErrNotGGUF) || !strings.Contains(err.Error(), text) {
		t.Errorf("text file: %v, want ErrNotGGUF naming %s", err, text)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	if _, err := ReadFile(dir); !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v, want 'not a regular file (a directory)'", err)
	}
	good := filepath.Join(dir, "tiny-model.gguf")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, []KV{{"general.architecture", "llama"}, {"llama.block_count", uint32(1)}, {"llama.embedding_length", uint32(8)}}, nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, err := ReadFile(good)
	if err != nil || m.ID != "tiny-model" || m.Layers != 1 || m.Hidden != 8 {
		t.Errorf("ReadFile = %+v, %v; want id tiny-model, 1 layer, hidden 8", m, err)
	}
}

// fuzzSeed is a small file with several tensor types.
func fuzzSeed(t testing.TB) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	err := Write(&buf, []KV{
		{"general.architecture", "llama"}, {"general.name", "f"},
		{"llama.block_count", uint32(1)}, {"llama.embedding_length", uint32(32)},
		{"llama.attention.head_count", []uint32{4}}, {"llama.expert_count", uint32(4)},
		{"llama.expert_used_count", uint32(2)}, {"tokenizer.ggml.tokens", []string{"a", "b"}},
		{"llama.attention.sliding_window", uint32(8)},
	}, []TensorData{
		randomTensor(t, r, "token_embd.weight", "F16", 32, 2),
		randomTensor(t, r, "blk.0.ffn_up_exps.weight", "Q8_0", 32, 1, 4),
		randomTensor(t, r, "output.weight", "Q4_0", 32, 2),
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func FuzzRead(f *testing.F) {
	seed := fuzzSeed(f)
	f.Add(seed)
	f.Add(seed[:100])
	f.Add(rawTensor(32, 1, 8, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readBytes(data, "fuzz.gguf")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.gguf") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var sum planner.Bytes
		for _, tn := range m.Tensors {
			if tn.Bytes < 0 || tn.Elements < 0 {
				t.Fatalf("tensor %+v has negative size", tn)
			}
			sum += tn.Bytes
		}
		if sum != m.FileBytes || int64(m.FileBytes) > int64(len(data)) {
			t.Fatalf("FileBytes %d, tensor sum %d, file %d bytes", m.FileBytes, sum, len(data))
		}
		if m.ActiveParams > m.Params || m.Params < 0 {
			t.Fatalf("active params %d exceed params %d", m.ActiveParams, m.Params)
		}
		if !textsafe.Clean(m.ID) || !textsafe.Clean(m.Name) || len(m.Name) > maxName || m.Layers > maxLayers || m.SlidingLayers > m.Layers {
			t.Fatalf("model %q (%d layers, %d sliding) is unprintable or out of bounds", m.Name, m.Layers, m.SlidingLayers)
		}
	})
}
