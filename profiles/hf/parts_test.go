package hf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestParseIndex(t *testing.T) {
	cases := []struct {
		name, body string
		shards     []string
		total      planner.Bytes
		err        string
	}{
		{"two shards", `{"metadata": {"total_size": 300}, "weight_map": {"a": "model-00002-of-00002.safetensors", "b": "model-00001-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}}`,
			[]string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, 300, ""},
		{"no total", `{"weight_map": {"a": "m.safetensors"}}`, []string{"m.safetensors"}, 0, ""},
		{"subdirectory", `{"weight_map": {"a": "sub/m.safetensors"}}`, nil, 0, "not a .safetensors file beside"},
		{"traversal", `{"weight_map": {"a": "..\\m.safetensors"}}`, nil, 0, "not a .safetensors file beside"},
		{"not safetensors", `{"weight_map": {"a": "m.bin"}}`, nil, 0, "not a .safetensors file beside"},
		{"empty", `{"weight_map": {}}`, nil, 0, "no weight_map"},
		{"bad json", `{"weight_map": [}`, nil, 0, "invalid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shards, total, err := ParseIndex([]byte(c.body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseIndex = %v, %v; want error %q", shards, err, c.err)
				}
				return
			}
			if err != nil || strings.Join(shards, ",") != strings.Join(c.shards, ",") || total != c.total {
				t.Fatalf("ParseIndex = %v, %d, %v; want %v, %d", shards, total, err, c.shards, c.total)
			}
		})
	}
}

// headerOnly is a safetensors head (length and JSON) for tensors laid out
// in order, and the size of the whole file.
func headerOnly(t *testing.T, json string, dataBytes int64) ([]byte, int64) {
	t.Helper()
	head := binary.LittleEndian.AppendUint64(nil, uint64(len(json)))
	head = append(head, json...)
	return head, int64(len(head)) + dataBytes
}

func TestReadSafetensorsHeaderFromPrefix(t *testing.T) {
	head, size := headerOnly(t, `{"w": {"dtype": "BF16", "shape": [1024, 4096], "data_offsets": [0, 8388608]}}`, 8388608)
	n, err := SafetensorsHeaderLength(head[:8])
	if err != nil || n != int64(len(head)-8) {
		t.Fatalf("SafetensorsHeaderLength = %d, %v", n, err)
	}
	ts, err := ReadSafetensorsHeader(bytes.NewReader(head), size)
	if err != nil || len(ts) != 1 || ts[0].Bytes != 8388608 || len(ts[0].Shape) != 2 {
		t.Fatalf("ReadSafetensorsHeader = %+v, %v", ts, err)
	}
	if _, err := ReadSafetensorsHeader(bytes.NewReader(head), size-1); err == nil {
		t.Error("a file one byte short of its tensors was accepted")
	}
	if _, err := SafetensorsHeaderLength([]byte{1, 2}); err == nil {
		t.Error("a 2-byte length was accepted")
	}
	if _, err := SafetensorsHeaderLength(binary.LittleEndian.AppendUint64(nil, 1<<40)); err == nil {
		t.Error("a 1 TB header length was accepted")
	}
}

func TestFromPartsQuantConfig(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, quantConfig     string
		quant, native, kvType string
	}{
		// NVIDIA ModelOpt hf_quant_config.json as nvidia/*-FP4 repos ship it.
		{"modelopt nvfp4", `{"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null, "group_size": 16}}`, "nvfp4", "nvfp4", ""},
		{"modelopt fp8", `{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}`, "fp8", "fp8", ""},
		// ModelOpt's own example of an FP8 export (modelopt/torch/export
		// convert_hf_quant_config_format's docstring, version 0.19.0).
		{"modelopt fp8 with fp8 kv", `{"producer": {"name": "modelopt", "version": "0.19.0"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}`, "fp8", "fp8", "fp8"},
		// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4's schema.
		{"modelopt nvfp4 with fp8 kv", `{"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}}`, "nvfp4", "nvfp4", "fp8"},
		// "none" is how some exports spell an unquantized cache
		// (TensorRT-LLM reads it as none too).
		{"kv none", `{"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "none"}}`, "nvfp4", "nvfp4", ""},
		{"none", ``, "bf16", "bfloat16", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := FromParts(Parts{Config: cfg, QuantConfig: []byte(c.quantConfig)}, "meta-llama/Llama-3.1-8B/config.json")
			if err != nil {
				t.Fatal(err)
			}
			if m.FileQuant != c.quant || m.NativeDType != c.native || m.CheckpointKV != c.kvType {
				t.Errorf("quant %q native %q KV %q, want %q %q %q", m.FileQuant, m.NativeDType, m.CheckpointKV, c.quant, c.native, c.kvType)
			}
		})
	}
	// Newer ModelOpt exports put the same fields in config.json's
	// quantization_config (quant_method "modelopt").
	inline := strings.Replace(string(cfg), "{", `{"quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},`, 1)
	if m, err := FromParts(Parts{Config: []byte(inline)}, "x/config.json"); err != nil || m.FileQuant != "fp8" || m.CheckpointKV != "fp8" {
		t.Errorf("config.json's modelopt quantization_config: quant %q KV %q, %v", m.FileQuant, m.CheckpointKV, err)
	}
	// and, converted to llm-compressor's form, as kv_cache_scheme
	// (lukealonso/MiniMax-M2.5-NVFP4's config.json, hf-mem PR #46).
	scheme := strings.Replace(string(cfg), "{", `{"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": {"dynamic": false, "num_bits": 8, "type": "float"}},`, 1)
	if m, err := FromParts(Parts{Config: []byte(scheme)}, "x/config.json"); err != nil || m.FileQuant != "nvfp4" || m.CheckpointKV != "fp8" {
		t.Errorf("config.json's modelopt kv_cache_scheme: quant %q KV %q, %v", m.FileQuant, m.CheckpointKV, err)
	}
	odd := strings.Replace(string(cfg), "{", `{"quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"num_bits": 4, "type": "int"}},`, 1)
	if _, err := FromParts(Parts{Config: []byte(odd)}, "x/config.json"); err == nil || !strings.Contains(err.Error(), "kv_cache_scheme") {
		t.Errorf("a 4-bit int kv_cache_scheme: %v, want an error naming it", err)
	}
	if _, err := FromParts(Parts{Config: cfg, QuantConfig: []byte(`{`)}, "x/config.json"); err == nil {
		t.Error("a broken hf_quant_config.json was accepted")
	}
	dup := []planner.Tensor{{Name: "a", Bytes: 2, Elements: 1}, {Name: "a", Bytes: 2, Elements: 1}}
	if _, err := FromParts(Parts{Config: cfg, Tensors: dup}, "x/config.json"); err == nil {
		t.Error("a tensor in two shards was accepted")
	}
}

func TestCheckpointKVRefusesOddNames(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{`"FP8; rm -rf /"`, `"` + strings.Repeat("a", 33) + `"`, `"fp8\u001b[2J"`} {
		_, err := FromParts(Parts{Config: cfg, QuantConfig: []byte(`{"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": ` + algo + `}}`)}, "x/config.json")
		if err == nil || !strings.Contains(err.Error(), "hf_quant_config.json") || !strings.Contains(err.Error(), "kv_cache_quant_algo") || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("kv_cache_quant_algo %s: %v, want an error naming the file and field, without control characters", algo, err)
		}
	}
}

// FuzzModelOptConfig: hf_quant_config.json from a repository or a
// directory never panics; an error names the file; a KV type read is a
// short lower-case name.
func FuzzModelOptConfig(f *testing.F) {
	cfg, err := os.ReadFile(filepath.Join("testdata", "llama-3.1-8b", "config.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"producer": {"name": "modelopt", "version": "0.19.0"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}`))
	f.Add([]byte(`{"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null, "group_size": 16}}`))
	f.Add([]byte(`{"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "none"}}`))
	f.Add([]byte(`{"quantization": {"kv_cache_quant_algo": "FP8"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := FromParts(Parts{Config: cfg, QuantConfig: data}, "fuzz/config.json")
		if err != nil {
			if !strings.Contains(err.Error(), "hf_quant_config.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if k := m.CheckpointKV; len(k) > 32 || strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Fatalf("KV type %q", k)
		}
	})
}
