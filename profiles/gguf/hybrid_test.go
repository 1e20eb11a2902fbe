package gguf

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// TestQwen3NextLinearLayers writes a small qwen3next GGUF with the SSM
// keys convert_hf_to_gguf.py stores and checks the recurrent layers and
// their state; other architectures get none.
func TestQwen3NextLinearLayers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ts := []TensorData{randomTensor(t, r, "token_embd.weight", "F16", 64, 300), randomTensor(t, r, "output_norm.weight", "F32", 64)}
	base := []KV{
		{"general.architecture", "qwen3next"}, {"qwen3next.block_count", uint32(8)}, {"qwen3next.embedding_length", uint32(64)},
		{"qwen3next.attention.head_count", uint32(4)}, {"qwen3next.attention.head_count_kv", uint32(2)},
		{"qwen3next.attention.key_length", uint32(16)},
		{"qwen3next.ssm.conv_kernel", uint32(4)}, {"qwen3next.ssm.state_size", uint32(128)},
		{"qwen3next.ssm.group_count", uint32(16)}, {"qwen3next.ssm.time_step_rank", uint32(32)},
		{"qwen3next.ssm.inner_size", uint32(4096)},
	}
	cases := []struct {
		name string
		kv   []KV
		want *planner.LinearAttention
	}{
		// Qwen3-Next-80B-A3B's geometry on 8 layers: 6 recurrent.
		{"default interval", base, &planner.LinearAttention{Layers: 6, StateElements: 548864}},
		{"interval 2", append(append([]KV(nil), base...), KV{"qwen3next.full_attention_interval", uint32(2)}),
			&planner.LinearAttention{Layers: 4, StateElements: 548864}},
		{"not hybrid", []KV{{"general.architecture", "llama"}, {"llama.block_count", uint32(8)}, {"llama.embedding_length", uint32(64)}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, c.kv, ts); err != nil {
				t.Fatal(err)
			}
			m, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "x.gguf")
			if err != nil {
				t.Fatal(err)
			}
			if (m.Linear == nil) != (c.want == nil) || (m.Linear != nil && *m.Linear != *c.want) {
				t.Errorf("linear %+v, want %+v", m.Linear, c.want)
			}
		})
	}
}
