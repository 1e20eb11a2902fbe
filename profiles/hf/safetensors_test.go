package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// stTensor is a tensor for writeSafetensors.
type stTensor struct {
	name  string
	dtype string
	shape []int64
}

// stBytes encodes a safetensors file: header length, JSON header (with
// __metadata__) and zero-filled data laid out in order.
func stBytes(t testing.TB, tensors []stTensor) []byte {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, ts := range tensors {
		_, n, err := entrySize(stEntry{DType: ts.dtype, Shape: ts.shape})
		if err != nil {
			t.Fatal(err)
		}
		header[ts.name] = map[string]any{"dtype": ts.dtype, "shape": ts.shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(js)%8 != 0 {
		js = append(js, ' ') // the format pads headers with spaces
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	out = append(out, js...)
	return append(out, make([]byte, off)...)
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyConfig is a small llama config: 2 layers, hidden 64, 4 heads (2 KV),
// FFN 128, vocab 100.
const tinyConfig = `{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "torch_dtype": "bfloat16",
 "max_position_embeddings": 2048, "tie_word_embeddings": false}`

// tinyTensors are the tiny llama's tensors in transformers' names.
func tinyTensors(dtype string, layers ...int) []stTensor {
	ts := []stTensor{}
	for _, l := range layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		ts = append(ts,
			stTensor{p + "input_layernorm.weight", dtype, []int64{64}},
			stTensor{p + "self_attn.q_proj.weight", dtype, []int64{64, 64}},
			stTensor{p + "self_attn.k_proj.weight", dtype, []int64{32, 64}},
			stTensor{p + "self_attn.v_proj.weight", dtype, []int64{32, 64}},
			stTensor{p + "self_attn.o_proj.weight", dtype, []int64{64, 64}},
			stTensor{p + "post_attention_layernorm.weight", dtype, []int64{64}},
			stTensor{p + "mlp.gate_proj.weight", dtype, []int64{128, 64}},
			stTensor{p + "mlp.up_proj.weight", dtype, []int64{128, 64}},
			stTensor{p + "mlp.down_proj.weight", dtype, []int64{64, 128}},
		)
	}
	return ts
}

// tinyParams is the tiny llama's exact parameter count.
const tinyParams = 2*100*64 + 2*(2*64+2*64*64+2*32*64+3*128*64) + 64

func tinyDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "tiny-llama")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	return dir
}

func TestReadDirSingleFile(t *testing.T) {
	dir := tinyDir(t)
	ts := append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{100, 64}}}, tinyTensors("BF16", 0, 1)...)
	ts = append(ts, stTensor{"model.norm.weight", "BF16", []int64{64}}, stTensor{"lm_head.weight", "F32", []int64{100, 64}})
	writeFile(t, filepath.Join(dir, "model.safetensors"), stBytes(t, ts))
	m, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := planner.Bytes(2*(tinyParams-100*64) + 4*100*64)
	if m.FileBytes != wantBytes || m.Params != tinyParams || m.ActiveParams != tinyParams {
		t.Errorf("FileBytes %d Params %d Active %d, want %d, %d, %d", m.FileBytes, m.Params, m.ActiveParams, wantBytes, tinyParams, tinyParams)
	}
	var sum planner.Bytes
	for _, tn := range m.Tensors {
		sum += tn.Bytes
	}
	if sum != m.FileBytes || len(m.Tensors) != len(ts) {
		t.Errorf("%d tensors summing to %d, want %d tensors and %d", len(m.Tensors), sum, len(ts), m.FileBytes)
	}
	if m.Tensors[0].Name != "lm_head.weight" || m.Tensors[0].Type != "F32" || m.Tensors[0].Elements != 6400 || m.Tensors[0].Bytes != 25600 {
		t.Errorf("first tensor %+v, want lm_head.weight F32 6400 elements 25600 bytes", m.Tensors[0])
	}
	if m.ID != "tiny-llama" || m.TiedEmbeddings || !m.GatedMLP || !strings.Contains(m.Source, "safetensors headers") {
		t.Errorf("id %q tied %v gated %v source %q", m.ID, m.TiedEmbeddings, m.GatedMLP, m.Source)
	}
}

func TestReadDirShardedWithIndex(t *testing.T) {
	dir := tinyDir(t)
	shard1 := append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{100, 64}}}, tinyTensors("BF16", 0)...)
	shard2 := append(tinyTensors("BF16", 1), stTensor{"model.norm.weight", "BF16", []int64{64}})
	names := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
	weightMap := map[string]string{}
	for i, shard := range [][]stTensor{shard1, shard2} {
		writeFile(t, filepath.Join(dir, names[i]), stBytes(t, shard))
		for _, ts := range shard {
			weightMap[ts.name] = names[i]
		}
	}
	want := planner.Bytes(2 * (tinyParams - 100*64))
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": want}, "weight_map": weightMap})
	writeFile(t, filepath.Join(dir, indexName), idx)
	// A stray file the index does not list is not read.
	writeFile(t, filepath.Join(dir, "consolidated.safetensors"), stBytes(t, shard1))
	m, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FileBytes != want || m.Params != tinyParams-100*64 || !m.TiedEmbeddings {
		t.Errorf("FileBytes %d Params %d tied %v, want %d, %d, tied (no lm_head)", m.FileBytes, m.Params, m.TiedEmbeddings, want, tinyParams-100*64)
	}

	// Without the shards (a metadata-only download) total_size is used.
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
	m, err = ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FileBytes != want || m.Tensors != nil || !strings.Contains(m.Source, "total_size") {
		t.Errorf("index only: FileBytes %d, %d tensors, source %q", m.FileBytes, len(m.Tensors), m.Source)
	}
	if m.Params != tinyParams {
		t.Errorf("index only: Params %d, want the estimate %d", m.Params, tinyParams)
	}
}

func TestReadDirSkipsConsolidatedDuplicate(t *testing.T) {
	dir := tinyDir(t)
	ts := append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{100, 64}}}, tinyTensors("BF16", 0, 1)...)
	writeFile(t, filepath.Join(dir, "model.safetensors"), stBytes(t, ts))
	writeFile(t, filepath.Join(dir, "consolidated.safetensors"), stBytes(t, ts))
	m, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tensors) != len(ts) {
		t.Errorf("%d tensors, want %d: consolidated.safetensors was read too", len(m.Tensors), len(ts))
	}
}

func TestReadDirMoEAndQuantized(t *testing.T) {
	t.Run("moe active params", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "moe")
		os.Mkdir(dir, 0o755)
		writeFile(t, filepath.Join(dir, "config.json"), []byte(`{"model_type": "qwen3_moe", "num_hidden_layers": 1,
			"hidden_size": 64, "moe_intermediate_size": 32, "num_attention_heads": 4, "vocab_size": 100,
			"num_experts": 4, "num_experts_per_tok": 1, "torch_dtype": "bfloat16"}`))
		ts := []stTensor{{"model.embed_tokens.weight", "BF16", []int64{100, 64}}, {"model.layers.0.mlp.gate.weight", "BF16", []int64{4, 64}}}
		for e := 0; e < 4; e++ {
			for _, p := range []string{"gate_proj", "up_proj", "down_proj"} {
				ts = append(ts, stTensor{fmt.Sprintf("model.layers.0.mlp.experts.%d.%s.weight", e, p), "BF16", []int64{32, 64}})
			}
		}
		writeFile(t, filepath.Join(dir, "model.safetensors"), stBytes(t, ts))
		m, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		const experts = 4 * 3 * 32 * 64
		const total = 6400 + 256 + experts
		if m.Params != total || m.ActiveParams != total-experts+experts/4 {
			t.Errorf("params %d active %d, want %d and %d", m.Params, m.ActiveParams, total, total-experts+experts/4)
		}
	})
	t.Run("awq keeps the estimate", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "awq")
		os.Mkdir(dir, 0o755)
		cfg := strings.Replace(tinyConfig, `"torch_dtype"`, `"quantization_config": {"quant_method": "awq", "bits": 4}, "torch_dtype"`, 1)
		writeFile(t, filepath.Join(dir, "config.json"), []byte(cfg))
		ts := []stTensor{
			{"model.embed_tokens.weight", "F16", []int64{100, 64}},
			{"model.layers.0.mlp.down_proj.qweight", "I32", []int64{128, 8}},
			{"model.layers.0.mlp.down_proj.scales", "F16", []int64{1, 64}},
		}
		writeFile(t, filepath.Join(dir, "model.safetensors"), stBytes(t, ts))
		m, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.FileBytes != 2*6400+4*1024+2*64 || m.Params != tinyParams || m.FileQuant != "awq-int4" {
			t.Errorf("FileBytes %d Params %d quant %q", m.FileBytes, m.Params, m.FileQuant)
		}
	})
}

func TestReadDirErrors(t *testing.T) {
	good := stBytes(t, []stTensor{{"a", "F32", []int64{2, 2}}})
	cases := []struct {
		name  string
		files map[string][]byte
		msg   string
	}{
		{"no config", map[string][]byte{}, "config.json: no such file"},
		{"duplicate tensor across shards", map[string][]byte{"a.safetensors": good, "b.safetensors": good}, `tensor "a" is in both a.safetensors and b.safetensors`},
		{"bad index", map[string][]byte{indexName: []byte(`{"weight_map": {"a": "../x.safetensors"}}`)}, "not a .safetensors file beside the index"},
		{"empty index", map[string][]byte{indexName: []byte(`{}`)}, "no weight_map"},
		{"index syntax", map[string][]byte{indexName: []byte("{\n\"weight_map\": }")}, "line 2, column 15"},
		{"corrupt shard", map[string][]byte{"model.safetensors": good[:len(good)-1]}, "model.safetensors: file is truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name != "no config" {
				writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
			}
			for n, data := range c.files {
				writeFile(t, filepath.Join(dir, n), data)
			}
			_, err := ReadDir(dir)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want one containing %q", err, c.msg)
			}
		})
	}
}

// rawST builds a safetensors file from a literal header and data size.
func rawST(header string, data int) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(out, header...), make([]byte, data)...)
}

func TestSafetensorsCorrupt(t *testing.T) {
	huge := binary.LittleEndian.AppendUint64(nil, 1<<60)
	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"short", []byte{1, 2, 3}, "shorter than the 8-byte header length"},
		{"header length 2^60", append(huge, '{', '}'), "exceeds the 104857600-byte limit"},
		{"header past the end", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), "header length 100, only 2 bytes follow"},
		{"not json", rawST("hello", 0), "not a JSON object"},
		{"bad json", rawST("{\"a\": {\"dtype\": }", 0), "invalid JSON at line 1, column 17"},
		{"unknown dtype", rawST(`{"a": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 1]}}`, 1), `tensor "a": unknown dtype "Q4"`},
		{"unknown field", rawST(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}}`, 4), `unknown field "x"`},
		{"negative dimension", rawST(`{"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}`, 4), "negative dimension"},
		{"huge shape", rawST(`{"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}}`, 4), "too large"},
		{"size mismatch", rawST(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}`, 4), "do not hold the 8 bytes"},
		{"reversed offsets", rawST(`{"a": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}}`, 4), "do not hold"},
		{"gap", rawST(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, 8), `tensor "a" starts at data byte 4`},
		{"overlap", rawST(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, 8), "starts at data byte 4, the previous tensor ends at 8"},
		{"data missing", rawST(`{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}`, 15), "file is truncated: tensors need 16 data bytes, the file holds 15"},
		{"trailing bytes", rawST(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}`, 5), "1 bytes after the last tensor"},
		{"odd f4", rawST(`{"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}`, 2), "do not fill whole bytes"},
		{"entry not an object", rawST(`{"a": 3}`, 0), `tensor "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.safetensors")
			writeFile(t, path, c.data)
			_, err := readSafetensors(path)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, path, c.msg)
			}
		})
	}
}

func TestSafetensorsDTypes(t *testing.T) {
	data := stBytes(t, []stTensor{
		{"f4", "F4", []int64{32, 2}}, {"e8m0", "F8_E8M0", []int64{32}}, {"f6", "F6_E2M3", []int64{4}},
		{"fp8", "F8_E4M3", []int64{3, 3}}, {"u8", "U8", []int64{5}}, {"i64", "I64", []int64{1}},
		{"scalar", "F32", []int64{}}, {"empty", "BF16", []int64{0, 7}},
	})
	ts, err := parseSafetensors(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"f4": {64, 32}, "e8m0": {32, 32}, "f6": {4, 3}, "fp8": {9, 9}, "u8": {5, 5},
		"i64": {1, 8}, "scalar": {1, 4}, "empty": {0, 0}}
	for _, tn := range ts {
		if w := want[tn.Name]; tn.Elements != w[0] || int64(tn.Bytes) != w[1] {
			t.Errorf("%s: %d elements %d bytes, want %d and %d", tn.Name, tn.Elements, tn.Bytes, w[0], w[1])
		}
	}
}

func TestSafetensorsTruncatedPrefixes(t *testing.T) {
	data := stBytes(t, append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{10, 8}}}, stTensor{"x", "F8_E4M3", []int64{3}}))
	for n := 0; n < len(data); n++ {
		_, err := parseSafetensors(bytes.NewReader(data[:n]), int64(n))
		if err == nil {
			t.Fatalf("prefix of %d of %d bytes read without error", n, len(data))
		}
		// Cuts inside the header leave broken JSON; cuts in the data are truncation.
		headerEnd := 8 + int(binary.LittleEndian.Uint64(data))
		if n >= headerEnd && !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: %v, want ErrTruncated", n, err)
		}
	}
	if _, err := parseSafetensors(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(stBytes(f, append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{10, 8}}}, stTensor{"x", "F4", []int64{4}})))
	f.Add(rawST(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "__metadata__": {"k": "v"}}`, 8))
	f.Add(rawST(`{}`, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := parseSafetensors(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var sum int64
		for _, tn := range ts {
			if tn.Bytes < 0 || tn.Elements < 0 {
				t.Fatalf("negative size %+v", tn)
			}
			sum += int64(tn.Bytes)
		}
		if hl := int64(binary.LittleEndian.Uint64(data)); sum != int64(len(data))-8-hl {
			t.Fatalf("tensors hold %d bytes, the data section is %d", sum, int64(len(data))-8-hl)
		}
	})
}

// A local ModelOpt export states its format and KV cache type in
// hf_quant_config.json beside a config.json that names neither, as the
// Hub reader reads it.
func TestReadDirModelOpt(t *testing.T) {
	dir := tinyDir(t)
	ts := append([]stTensor{{"model.embed_tokens.weight", "BF16", []int64{100, 64}}}, tinyTensors("F8_E4M3", 0, 1)...)
	ts = append(ts, stTensor{"model.norm.weight", "BF16", []int64{64}}, stTensor{"lm_head.weight", "BF16", []int64{100, 64}})
	writeFile(t, filepath.Join(dir, "model.safetensors"), stBytes(t, ts))
	q := filepath.Join(dir, "hf_quant_config.json")
	writeFile(t, q, []byte(`{"producer": {"name": "modelopt", "version": "0.19.0"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}`))
	m, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FileQuant != "fp8" || m.NativeDType != "fp8" || m.CheckpointKV != "fp8" {
		t.Errorf("quant %q native %q KV %q, want fp8, fp8, fp8", m.FileQuant, m.NativeDType, m.CheckpointKV)
	}
	writeFile(t, q, []byte(`{"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 8}}`))
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "hf_quant_config.json") {
		t.Errorf("a kv_cache_quant_algo that is a number: %v, want an error naming hf_quant_config.json", err)
	}
	if err := os.Remove(q); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(q, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "hf_quant_config.json") {
		t.Errorf("hf_quant_config.json a directory: %v, want an error naming it", err)
	}
}
