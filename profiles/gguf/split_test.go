package gguf

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSplit writes a model as shards named like gguf-split's output and
// returns their paths and the exact tensor byte total.
func writeSplit(t *testing.T, dir string, tensorCount int32, shards [][]TensorData) ([]string, int64) {
	t.Helper()
	var paths []string
	var total int64
	for i, ts := range shards {
		kv := []KV{{"split.no", uint16(i)}, {"split.count", uint16(len(shards))}, {"split.tensors.count", tensorCount}}
		if i == 0 {
			kv = append([]KV{{"general.architecture", "llama"}, {"llama.block_count", uint32(2)},
				{"llama.embedding_length", uint32(64)}}, kv...)
		}
		p := filepath.Join(dir, "big-model-Q4_0-0000"+string(rune('1'+i))+"-of-0000"+string(rune('0'+len(shards)))+".gguf")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(f, kv, ts); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, td := range ts {
			total += int64(len(td.Data))
		}
		paths = append(paths, p)
	}
	return paths, total
}

func TestReadSplitModel(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	shards := [][]TensorData{
		{randomTensor(t, r, "token_embd.weight", "Q4_0", 64, 100), randomTensor(t, r, "blk.0.attn_q.weight", "Q4_0", 64, 64)},
		{randomTensor(t, r, "blk.1.attn_q.weight", "Q4_K", 256, 16)},
		{randomTensor(t, r, "output.weight", "Q6_K", 256, 25), randomTensor(t, r, "output_norm.weight", "F32", 64)},
	}
	dir := t.TempDir()
	paths, total := writeSplit(t, dir, 5, shards)
	for _, p := range paths { // any shard names the whole model
		m, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if int64(m.FileBytes) != total || len(m.Tensors) != 5 || m.ID != "big-model-Q4_0" || m.TiedEmbeddings {
			t.Errorf("%s: FileBytes %d (want %d), %d tensors, id %q, tied %v", filepath.Base(p), m.FileBytes, total, len(m.Tensors), m.ID, m.TiedEmbeddings)
		}
		if !strings.Contains(m.Source, "3 shards") {
			t.Errorf("source %q", m.Source)
		}
	}

	os.Remove(paths[2])
	if _, err := ReadFile(paths[0]); err == nil || !strings.Contains(err.Error(), filepath.Base(paths[2])) {
		t.Errorf("missing shard: %v, want an error naming %s", err, paths[2])
	}

	dup := t.TempDir()
	paths, _ = writeSplit(t, dup, 2, [][]TensorData{shards[1], shards[1]})
	if _, err := ReadFile(paths[0]); err == nil || !strings.Contains(err.Error(), `"blk.1.attn_q.weight" is also in`) {
		t.Errorf("duplicate tensor: %v", err)
	}

	miscount := t.TempDir()
	paths, _ = writeSplit(t, miscount, 9, shards)
	if _, err := ReadFile(paths[0]); err == nil || !strings.Contains(err.Error(), "split.tensors.count is 9") {
		t.Errorf("tensor count mismatch: %v", err)
	}
}
