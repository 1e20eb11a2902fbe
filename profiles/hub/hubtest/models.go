package hubtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/headroom-planner/headroom/profiles/gguf"
)

// Tensor is one safetensors tensor to lay out.
type Tensor struct {
	Name  string
	DType string // F16, BF16, I32, F8_E4M3 ...
	Shape []int64
}

// dtypeBytes is the storage width of the dtypes the fixtures use.
var dtypeBytes = map[string]int64{"F16": 2, "BF16": 2, "F32": 4, "I32": 4, "F8_E4M3": 1, "U8": 1, "I8": 1}

// Bytes is the tensor's data size.
func (t Tensor) Bytes() int64 {
	n := dtypeBytes[t.DType]
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// SafetensorsFile lays tensors out in order, as the safetensors writer
// does (the JSON header padded with spaces to a multiple of 8), and
// returns the file with its header as Head; the data after it is zeros.
func SafetensorsFile(ts []Tensor) (File, error) {
	type entry struct {
		DType       string   `json:"dtype"`
		Shape       []int64  `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range ts {
		if _, ok := dtypeBytes[t.DType]; !ok {
			return File{}, fmt.Errorf("tensor %s: dtype %s not in the fixture table", t.Name, t.DType)
		}
		hdr[t.Name] = entry{t.DType, t.Shape, [2]int64{off, off + t.Bytes()}}
		off += t.Bytes()
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return File{}, err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	head := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	head = append(head, js...)
	return File{Head: head, Size: int64(len(head)) + off, LFS: true}, nil
}

// awqLinear is an AWQ GEMM linear layer (AutoAWQ WQLinear_GEMM): qweight
// and qzeros pack eight 4-bit values per int32 along the output, scales
// are F16 per 128-input group.
func awqLinear(name string, in, out int64, bias bool) []Tensor {
	const group, pack = 128, 8
	ts := []Tensor{
		{name + ".qweight", "I32", []int64{in, out / pack}},
		{name + ".qzeros", "I32", []int64{in / group, out / pack}},
		{name + ".scales", "F16", []int64{in / group, out}},
	}
	if bias {
		ts = append(ts, Tensor{name + ".bias", "F16", []int64{out}})
	}
	return ts
}

// QwenAWQ builds Qwen/Qwen2.5-72B-Instruct-AWQ: its config.json fixture
// and 11 safetensors shards with an index, and returns the repository
// with the exact sum of its tensors' bytes.
func QwenAWQ() (*Repo, int64, error) {
	const id = "Qwen/Qwen2.5-72B-Instruct-AWQ"
	cfg, err := Fixture(id, "config.json")
	if err != nil {
		return nil, 0, err
	}
	const d, ffn, kv, vocab, layers = 8192, 29696, 1024, 152064, 80
	ts := []Tensor{{"model.embed_tokens.weight", "F16", []int64{vocab, d}}}
	for i := 0; i < layers; i++ {
		p := "model.layers." + strconv.Itoa(i) + "."
		ts = append(ts, awqLinear(p+"self_attn.q_proj", d, d, true)...)
		ts = append(ts, awqLinear(p+"self_attn.k_proj", d, kv, true)...)
		ts = append(ts, awqLinear(p+"self_attn.v_proj", d, kv, true)...)
		ts = append(ts, awqLinear(p+"self_attn.o_proj", d, d, false)...)
		ts = append(ts, awqLinear(p+"mlp.gate_proj", d, ffn, false)...)
		ts = append(ts, awqLinear(p+"mlp.up_proj", d, ffn, false)...)
		ts = append(ts, awqLinear(p+"mlp.down_proj", ffn, d, false)...)
		ts = append(ts, Tensor{p + "input_layernorm.weight", "F16", []int64{d}},
			Tensor{p + "post_attention_layernorm.weight", "F16", []int64{d}})
	}
	ts = append(ts, Tensor{"model.norm.weight", "F16", []int64{d}}, Tensor{"lm_head.weight", "F16", []int64{vocab, d}})
	repo := &Repo{ID: id, SHA: "698703eac6a7a9ba5a6ec7d5f9ed1b9bf1e1a4f1", Files: map[string]File{
		"config.json":            {Head: cfg, Size: int64(len(cfg))},
		"generation_config.json": {Head: []byte(`{"do_sample": true}`), Size: 19},
		"README.md":              {Head: []byte("# Qwen2.5-72B-Instruct-AWQ\n"), Size: 27},
	}}
	total, err := shard(repo, ts, 11)
	if err != nil {
		return nil, 0, err
	}
	return repo, total, nil
}

// shard spreads tensors over n files of about equal size, named as
// transformers names them, adds them and model.safetensors.index.json to
// repo, and returns the tensors' bytes.
func shard(repo *Repo, ts []Tensor, n int) (int64, error) {
	var total int64
	for _, t := range ts {
		total += t.Bytes()
	}
	per := total/int64(n) + 1
	groups := make([][]Tensor, n)
	var acc int64
	for _, t := range ts {
		i := min(int(acc/per), n-1)
		groups[i] = append(groups[i], t)
		acc += t.Bytes()
	}
	weightMap := map[string]string{}
	for i, g := range groups {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n)
		f, err := SafetensorsFile(g)
		if err != nil {
			return 0, err
		}
		repo.Files[name] = f
		for _, t := range g {
			weightMap[t.Name] = name
		}
	}
	idx, err := json.MarshalIndent(map[string]any{"metadata": map[string]int64{"total_size": total}, "weight_map": weightMap}, "", "  ")
	if err != nil {
		return 0, err
	}
	repo.Files["model.safetensors.index.json"] = File{Head: idx, Size: int64(len(idx))}
	return total, nil
}

// Qwen3GGUF writes the header of Qwen3-32B as GGUF with ggml type typ
// ("Q4_K_M" mix, or a single type such as "Q8_0"), split into parts files
// when parts > 1, and returns the files with the exact sum of their
// tensors' bytes.
func Qwen3GGUF(typ string, parts int) ([]File, int64, error) {
	const d, ffn, vocab, layers, heads, kvHeads, hd = 5120, 25600, 151936, 64, 64, 8, 128
	pick := func(name string, layer int) string {
		if typ != "Q4_K_M" {
			return typ
		}
		// llama.cpp llama_tensor_get_type, LLAMA_FTYPE_MOSTLY_Q4_K_M.
		more := layer < layers/8 || layer >= 7*layers/8 || (layer-layers/8)%3 == 2
		switch {
		case name == "output.weight":
			return "Q6_K"
		case (name == "attn_v.weight" || name == "ffn_down.weight") && more:
			return "Q6_K"
		}
		return "Q4_K"
	}
	var ts []gguf.TensorInfo
	ts = append(ts, gguf.TensorInfo{Name: "token_embd.weight", Type: pick("token_embd.weight", 0), Shape: []int64{d, vocab}})
	for i := 0; i < layers; i++ {
		p := "blk." + strconv.Itoa(i) + "."
		mat := func(n string, shape ...int64) gguf.TensorInfo {
			return gguf.TensorInfo{Name: p + n, Type: pick(n, i), Shape: shape}
		}
		norm := func(n string, w int64) gguf.TensorInfo {
			return gguf.TensorInfo{Name: p + n, Type: "F32", Shape: []int64{w}}
		}
		ts = append(ts, norm("attn_norm.weight", d), mat("attn_q.weight", d, heads*hd), mat("attn_k.weight", d, kvHeads*hd),
			mat("attn_v.weight", d, kvHeads*hd), mat("attn_output.weight", heads*hd, d),
			norm("attn_q_norm.weight", hd), norm("attn_k_norm.weight", hd), norm("ffn_norm.weight", d),
			mat("ffn_gate.weight", d, ffn), mat("ffn_up.weight", d, ffn), mat("ffn_down.weight", ffn, d))
	}
	ts = append(ts, gguf.TensorInfo{Name: "output_norm.weight", Type: "F32", Shape: []int64{d}},
		gguf.TensorInfo{Name: "output.weight", Type: pick("output.weight", 0), Shape: []int64{d, vocab}})
	var total int64
	for _, t := range ts {
		n, err := gguf.TensorBytes(t.Type, t.Shape)
		if err != nil {
			return nil, 0, err
		}
		total += n
	}
	fileType := map[string]uint32{"Q4_K_M": 15, "Q8_0": 7, "F16": 1}[typ]
	kv := qwen3Metadata(fileType)
	files := make([]File, 0, parts)
	per := (len(ts) + parts - 1) / parts
	for i := 0; i < parts; i++ {
		chunk := ts[i*per : min(len(ts), (i+1)*per)]
		meta := []gguf.KV{{Key: "general.architecture", Value: "qwen3"}}
		if i == 0 {
			meta = kv
		}
		if parts > 1 {
			meta = append(meta, gguf.KV{Key: "split.no", Value: uint16(i)}, gguf.KV{Key: "split.count", Value: uint16(parts)},
				gguf.KV{Key: "split.tensors.count", Value: int32(len(ts))})
		}
		var buf bytes.Buffer
		size, err := gguf.WriteHeader(&buf, meta, chunk)
		if err != nil {
			return nil, 0, err
		}
		files = append(files, File{Head: buf.Bytes(), Size: size, LFS: true})
	}
	return files, total, nil
}

// qwen3Metadata is the key set of a llama.cpp Qwen3 conversion, with a
// vocabulary of Qwen3's size (151936 entries; the token strings are
// placeholders of realistic length, so the header is about 5 MB, as real
// ones are).
func qwen3Metadata(fileType uint32) []gguf.KV {
	const vocab = 151936
	tokens := make([]string, vocab)
	types := make([]int32, vocab)
	for i := range tokens {
		tokens[i] = "tok" + strconv.Itoa(i)
		types[i] = 1
	}
	merges := make([]string, 151387)
	for i := range merges {
		merges[i] = "m" + strconv.Itoa(i) + " n" + strconv.Itoa(i)
	}
	sort.Strings(merges)
	return []gguf.KV{
		{Key: "general.architecture", Value: "qwen3"},
		{Key: "general.type", Value: "model"},
		{Key: "general.name", Value: "Qwen3-32B"},
		{Key: "general.file_type", Value: fileType},
		{Key: "general.quantization_version", Value: uint32(2)},
		{Key: "qwen3.block_count", Value: uint32(64)},
		{Key: "qwen3.context_length", Value: uint32(40960)},
		{Key: "qwen3.embedding_length", Value: uint32(5120)},
		{Key: "qwen3.feed_forward_length", Value: uint32(25600)},
		{Key: "qwen3.attention.head_count", Value: uint32(64)},
		{Key: "qwen3.attention.head_count_kv", Value: uint32(8)},
		{Key: "qwen3.attention.key_length", Value: uint32(128)},
		{Key: "qwen3.attention.value_length", Value: uint32(128)},
		{Key: "qwen3.rope.freq_base", Value: float32(1e6)},
		{Key: "qwen3.attention.layer_norm_rms_epsilon", Value: float32(1e-6)},
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "qwen2"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(151645)},
	}
}

// Expected are the exact weight bytes of the standard fixtures.
type Expected struct {
	QwenAWQ      int64 // Qwen/Qwen2.5-72B-Instruct-AWQ, all shards
	Qwen3Q4KM    int64 // unsloth/Qwen3-32B-GGUF Q4_K_M and ollama qwen3:32b
	Qwen3Q8Split int64 // unsloth/Qwen3-32B-GGUF Q8_0, two shards
	ModelOptFP8  int64 // nvidia/Llama-3.1-8B-Instruct-FP8, two shards
}

// Standard fills the servers with the must-show models:
// Qwen/Qwen2.5-72B-Instruct-AWQ; unsloth/Qwen3-32B-GGUF with a Q4_K_M
// file, a UD-Q4_K_XL file and a Q8_0 model split in two; the Ollama tag
// qwen3:32b (the same Q4_K_M GGUF); the gated meta-llama/Llama-3.1-8B,
// whose licence the token GatedToken has accepted; and NVIDIA's ModelOpt
// FP8 export of Llama-3.1-8B-Instruct (ModelOptFP8).
func (s *Server) Standard() (Expected, error) {
	var e Expected
	awq, total, err := QwenAWQ()
	if err != nil {
		return e, err
	}
	e.QwenAWQ = total
	s.AddRepo(awq)
	q4, q4total, err := Qwen3GGUF("Q4_K_M", 1)
	if err != nil {
		return e, err
	}
	e.Qwen3Q4KM = q4total
	q8, q8total, err := Qwen3GGUF("Q8_0", 2)
	if err != nil {
		return e, err
	}
	e.Qwen3Q8Split = q8total
	s.AddRepo(&Repo{ID: "unsloth/Qwen3-32B-GGUF", SHA: "a3c4b4b9d5c0a8e2e61d3f1f4e5b6c7d8e9f0a1b", Files: map[string]File{
		"Qwen3-32B-Q4_K_M.gguf":                   q4[0],
		"Qwen3-32B-UD-Q4_K_XL.gguf":               q4[0],
		"Q8_0/Qwen3-32B-Q8_0-00001-of-00002.gguf": q8[0],
		"Q8_0/Qwen3-32B-Q8_0-00002-of-00002.gguf": q8[1],
		"mmproj-F16.gguf":                         {Head: []byte("GGUF"), Size: 4, LFS: true},
		"README.md":                               {Head: []byte("# Qwen3-32B GGUF\n"), Size: 17},
	}})
	if err := s.AddOllama("library/qwen3", "32b", Qwen3Digest, q4[0]); err != nil {
		return e, err
	}
	// Repositories search must pass over: the base model (no GGUF), a
	// more downloaded fine-tune whose name also matches, and a repository
	// without the Q4_K_M file.
	s.AddRepo(&Repo{ID: "Qwen/Qwen3-32B", SHA: "9216db5781bf21249d130ec9da846c4624c16137", Downloads: 900,
		Files: map[string]File{"README.md": {Head: []byte("# Qwen3-32B\n"), Size: 12}}})
	s.AddRepo(&Repo{ID: "unsloth/Qwen3-32B-abliterated-GGUF", SHA: "1111111111111111111111111111111111111111", Downloads: 5000,
		Files: map[string]File{"Qwen3-32B-abliterated-Q4_K_M.gguf": q4[0]}})
	s.AddRepo(&Repo{ID: "bartowski/Qwen_Qwen3-32B-GGUF", SHA: "2222222222222222222222222222222222222222", Downloads: 100,
		Files: map[string]File{"Qwen_Qwen3-32B-Q6_K.gguf": q4[0]}})
	mo, mototal, err := ModelOptFP8()
	if err != nil {
		return e, err
	}
	e.ModelOptFP8 = mototal
	s.AddRepo(mo)
	llama, err := Fixture("meta-llama/Llama-3.1-8B", "config.json")
	if err != nil {
		return e, err
	}
	s.AddRepo(&Repo{ID: "meta-llama/Llama-3.1-8B", SHA: "d04e592bb4f6aa9cfee91e2e20afa771667e1d4b", Gated: true, Token: GatedToken,
		Files: map[string]File{"config.json": {Head: llama, Size: int64(len(llama))}}})
	return e, nil
}

// GatedToken is the token that has accepted meta-llama/Llama-3.1-8B's
// licence on the fake Hub.
const GatedToken = "hf_fakeAcceptedToken0123456789"

// Qwen3Digest is the model layer of the fake qwen3:32b manifest.
const Qwen3Digest = "sha256:3291abe70f16ee9682de7bfae08db5373ea9d6497e614aaad63340ad421d6312"

// ModelOptFP8ID is the fake Hub's NVIDIA ModelOpt FP8 export.
const ModelOptFP8ID = "nvidia/Llama-3.1-8B-Instruct-FP8"

// ModelOptFP8 is nvidia/Llama-3.1-8B-Instruct-FP8 as ModelOpt exports it
// (fixtures/README.md): Llama-3.1-8B's config.json, which names no
// quantization, an hf_quant_config.json naming FP8 weights and an FP8 KV
// cache, and two shards whose linear layers are F8_E4M3 with an F32
// weight_scale and input_scale each, the KV scales (k_proj.k_scale,
// v_proj.v_scale) in F32, and the embeddings, norms and the excluded
// lm_head in BF16. It returns the repository and its tensors' bytes.
func ModelOptFP8() (*Repo, int64, error) {
	cfg, err := Fixture("meta-llama/Llama-3.1-8B", "config.json")
	if err != nil {
		return nil, 0, err
	}
	quant, err := Fixture(ModelOptFP8ID, "hf_quant_config.json")
	if err != nil {
		return nil, 0, err
	}
	const d, ffn, kv, vocab, layers = 4096, 14336, 1024, 128256, 32
	scalar := func(name string) Tensor { return Tensor{name, "F32", []int64{}} }
	linear := func(name string, in, out int64) []Tensor {
		return []Tensor{{name + ".weight", "F8_E4M3", []int64{out, in}}, scalar(name + ".weight_scale"), scalar(name + ".input_scale")}
	}
	ts := []Tensor{{"model.embed_tokens.weight", "BF16", []int64{vocab, d}}}
	for i := 0; i < layers; i++ {
		p := "model.layers." + strconv.Itoa(i) + "."
		ts = append(ts, linear(p+"self_attn.q_proj", d, d)...)
		ts = append(ts, linear(p+"self_attn.k_proj", d, kv)...)
		ts = append(ts, linear(p+"self_attn.v_proj", d, kv)...)
		ts = append(ts, scalar(p+"self_attn.k_proj.k_scale"), scalar(p+"self_attn.v_proj.v_scale"))
		ts = append(ts, linear(p+"self_attn.o_proj", d, d)...)
		ts = append(ts, linear(p+"mlp.gate_proj", d, ffn)...)
		ts = append(ts, linear(p+"mlp.up_proj", d, ffn)...)
		ts = append(ts, linear(p+"mlp.down_proj", ffn, d)...)
		ts = append(ts, Tensor{p + "input_layernorm.weight", "BF16", []int64{d}},
			Tensor{p + "post_attention_layernorm.weight", "BF16", []int64{d}})
	}
	ts = append(ts, Tensor{"model.norm.weight", "BF16", []int64{d}}, Tensor{"lm_head.weight", "BF16", []int64{vocab, d}})
	repo := &Repo{ID: ModelOptFP8ID, SHA: "4a7d2a5b2f4f4c0e9b1d8f3a6c5e7b9d0a1c2e3f", Files: map[string]File{
		"config.json":          {Head: cfg, Size: int64(len(cfg))},
		"hf_quant_config.json": {Head: quant, Size: int64(len(quant))},
		"README.md":            {Head: []byte("# Llama-3.1-8B-Instruct-FP8\n"), Size: 28},
	}}
	total, err := shard(repo, ts, 2)
	if err != nil {
		return nil, 0, err
	}
	return repo, total, nil
}
