package planner

import "testing"

// TestLinearLayersHoldNoKV checks that recurrent layers of a hybrid model
// drop out of the KV cache and hold their fixed f32 state instead
// (modeling.md §2.4): Qwen3-Next-80B-A3B keeps KV on 12 of 48 layers.
func TestLinearLayersHoldNoKV(t *testing.T) {
	dense := Model{Layers: 48, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256}
	hybrid := dense
	hybrid.Linear = &LinearAttention{Layers: 36, StateElements: 548864}
	kv := KVType{ID: "f16", BytesPerElement: 2}
	cases := []struct {
		name  string
		m     Model
		kv    Bytes
		state Bytes
	}{
		// 2 (K and V) · 2 heads · 256 · 2 bytes = 2 KiB per token and layer.
		{"all attention", dense, 48 * 2048 * 1000, 0},
		{"qwen3-next hybrid", hybrid, 12 * 2048 * 1000, 36 * 548864 * 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := KVBytesForSequence(c.m, kv, 1, 1000, 0); got != c.kv {
				t.Errorf("KV for 1000 tokens = %d, want %d", got, c.kv)
			}
			if got := c.m.StateBytesPerSeq(); got != c.state {
				t.Errorf("state per sequence = %d, want %d", got, c.state)
			}
		})
	}
}
