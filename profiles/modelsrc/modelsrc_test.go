package modelsrc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/profiles/gguf"
)

const config = `{"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 32, "intermediate_size": 64,
 "num_attention_heads": 2, "vocab_size": 300, "torch_dtype": "bfloat16"}`

// ggufBytes is a tiny llama GGUF file.
func ggufBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gguf.WriteLlama(&b, gguf.LlamaSpec{Layers: 1, Hidden: 32, FFN: 64, Heads: 2, Vocab: 300, Type: "Q8_0", Name: "tiny"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// safetensorsBytes is a one-tensor safetensors file of 16 bytes of data.
func safetensorsBytes() []byte {
	h := []byte(`{"model.embed_tokens.weight": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [0, 16]}}`)
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), make([]byte, 16)...)
}

func write(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for n, data := range files {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenDispatch(t *testing.T) {
	g := ggufBytes(t)
	cases := []struct {
		name   string
		files  map[string][]byte
		open   string // relative to the temp dir; "" opens the dir itself
		id     string
		source string
	}{
		{"gguf file", map[string][]byte{"m.gguf": g}, "m.gguf", "tiny", "GGUF header"},
		{"upper-case extension", map[string][]byte{"M.GGUF": g}, "M.GGUF", "tiny", "GGUF header"},
		{"ollama blob", map[string][]byte{"sha256-0123abcd": g}, "sha256-0123abcd", "tiny", "GGUF header"},
		{"config.json", map[string][]byte{"config.json": []byte(config)}, "config.json", "", "config.json"},
		{"hf directory", map[string][]byte{"config.json": []byte(config), "model.safetensors": safetensorsBytes()}, "", "", "safetensors headers"},
		{"gguf directory", map[string][]byte{"model.gguf": g, "mmproj-model-f16.gguf": []byte("not read"), "README.md": nil}, "", "tiny", "GGUF header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-model")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, dir, c.files)
			m, err := Open(filepath.Join(dir, c.open))
			if err != nil {
				t.Fatal(err)
			}
			id := c.id
			if id == "" {
				id = "my-model"
			}
			if m.ID != id || !strings.Contains(m.Source, c.source) || m.Layers != 1 || m.Hidden != 32 {
				t.Errorf("id %q source %q layers %d hidden %d; want id %q, source with %q, 1 layer, hidden 32",
					m.ID, m.Source, m.Layers, m.Hidden, id, c.source)
			}
		})
	}
}

func TestOpenSplitDirectory(t *testing.T) {
	dir := t.TempDir()
	for i, tensors := range [][]gguf.TensorData{
		{{Name: "token_embd.weight", Type: "F32", Shape: []int64{8, 4}, Data: make([]byte, 128)}},
		{{Name: "output.weight", Type: "F32", Shape: []int64{8, 4}, Data: make([]byte, 128)}},
	} {
		kv := []gguf.KV{{Key: "split.no", Value: uint16(i)}, {Key: "split.count", Value: uint16(2)}}
		if i == 0 {
			kv = append(kv, gguf.KV{Key: "general.architecture", Value: "llama"},
				gguf.KV{Key: "llama.block_count", Value: uint32(1)}, gguf.KV{Key: "llama.embedding_length", Value: uint32(8)})
		}
		var b bytes.Buffer
		if err := gguf.Write(&b, kv, tensors); err != nil {
			t.Fatal(err)
		}
		write(t, dir, map[string][]byte{"m-0000" + string(rune('1'+i)) + "-of-00002.gguf": b.Bytes()})
	}
	m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FileBytes != 256 || len(m.Tensors) != 2 {
		t.Errorf("split directory: FileBytes %d, %d tensors; want 256 and 2", m.FileBytes, len(m.Tensors))
	}
}

func TestOpenErrors(t *testing.T) {
	g := ggufBytes(t)
	cases := []struct {
		name     string
		files    map[string][]byte
		open     string
		notModel bool
		msg      string
	}{
		{"empty directory", nil, "", true, "no config.json and no .gguf file"},
		{"two gguf models", map[string][]byte{"a.gguf": g, "b.gguf": g}, "", false, "holds 2 GGUF models (a.gguf, b.gguf)"},
		{"text file", map[string][]byte{"notes.txt": []byte("hello")}, "notes.txt", true, "give a .gguf file"},
		{"tiny file", map[string][]byte{"x": []byte("GG")}, "x", true, "config.json"},
		{"safetensors alone", map[string][]byte{"model.safetensors": safetensorsBytes()}, "model.safetensors", true, "model directory"},
		{"broken gguf", map[string][]byte{"m.gguf": g[:100]}, "m.gguf", false, "file is truncated"},
		{"broken config", map[string][]byte{"config.json": []byte("{")}, "", false, "invalid JSON"},
		{"missing", nil, "nothing-here", false, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			path := filepath.Join(dir, c.open)
			_, err := Open(path)
			if err == nil || !strings.Contains(err.Error(), c.msg) || errors.Is(err, ErrNotModel) != c.notModel {
				t.Fatalf("error %v; want one containing %q, ErrNotModel %v", err, c.msg, c.notModel)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
		})
	}
}
