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
		name, quantConfig string
		quant, native     string
	}{
		// NVIDIA ModelOpt hf_quant_config.json as nvidia/*-FP4 repos ship it.
		{"modelopt nvfp4", `{"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null, "group_size": 16}}`, "nvfp4", "nvfp4"},
		{"modelopt fp8", `{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}`, "fp8", "fp8"},
		{"none", ``, "bf16", "bfloat16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := FromParts(Parts{Config: cfg, QuantConfig: []byte(c.quantConfig)}, "meta-llama/Llama-3.1-8B/config.json")
			if err != nil {
				t.Fatal(err)
			}
			if m.FileQuant != c.quant || m.NativeDType != c.native {
				t.Errorf("quant %q native %q, want %q %q", m.FileQuant, m.NativeDType, c.quant, c.native)
			}
		})
	}
	if _, err := FromParts(Parts{Config: cfg, QuantConfig: []byte(`{`)}, "x/config.json"); err == nil {
		t.Error("a broken hf_quant_config.json was accepted")
	}
	dup := []planner.Tensor{{Name: "a", Bytes: 2, Elements: 1}, {Name: "a", Bytes: 2, Elements: 1}}
	if _, err := FromParts(Parts{Config: cfg, Tensors: dup}, "x/config.json"); err == nil {
		t.Error("a tensor in two shards was accepted")
	}
}
