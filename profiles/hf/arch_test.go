package hf

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// TestHybridAndInterleavedArchitectures reads the configs whose layouts
// need more than the common fields: Qwen3-Next's Gated DeltaNet layers
// (36 of 48 hold a fixed state, no KV cache) and Llama 4 Maverick's
// interleaved MoE and chunked attention (36 of 48 layers keep at most
// 8192 tokens).
func TestHybridAndInterleavedArchitectures(t *testing.T) {
	cases := []struct {
		dir            string
		linear         *planner.LinearAttention
		window, slide  int
		experts, topK  int
		params, active float64
		tol            float64
	}{
		// 32·128·128 recurrent + 3·(2·16·128 + 32·128) convolution elements.
		{"qwen3-next-80b-a3b-instruct", &planner.LinearAttention{Layers: 36, StateElements: 548864}, 0, 0, 512, 10,
			// Qwen's model card: 80B total, 3B activated; with the 0.62B
			// embedding and head counted here, 3.8B.
			80e9, 3.8e9, 0.03},
		{"llama-4-maverick-17b-128e-instruct", nil, 8192, 36, 128, 1,
			// Meta's model card: 400B total, 17B active (text model).
			400e9, 17e9, 0.03},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			m, err := ReadConfig(filepath.Join("testdata", c.dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if (m.Linear == nil) != (c.linear == nil) || (m.Linear != nil && *m.Linear != *c.linear) {
				t.Errorf("linear %+v, want %+v", m.Linear, c.linear)
			}
			if m.SlidingWindow != c.window || m.SlidingLayers != c.slide || m.Experts != c.experts || m.TopK != c.topK {
				t.Errorf("window %d over %d layers, %d experts top %d; want %d over %d, %d top %d",
					m.SlidingWindow, m.SlidingLayers, m.Experts, m.TopK, c.window, c.slide, c.experts, c.topK)
			}
			within(t, "Params", m.Params, c.params, c.tol)
			within(t, "ActiveParams", m.ActiveParams, c.active, c.tol)
			if !KnownArch(m.Arch) {
				t.Errorf("arch %q not known", m.Arch)
			}
		})
	}
}

// TestGenericEstimateFromTensors reads GPT-2, whose config.json uses its
// own field names, from its tensors alone: exact parameters, layers,
// width and vocabulary from the shapes, labelled as an estimate; the KV
// width per layer (heads × head dim) equals the model width either way.
func TestGenericEstimateFromTensors(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("testdata", "gpt2", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const d, v, ctx, layers = 768, 50257, 1024, 12
	ts := []planner.Tensor{tensor("wte.weight", v, d), tensor("wpe.weight", ctx, d), tensor("ln_f.weight", d), tensor("ln_f.bias", d)}
	for i := 0; i < layers; i++ {
		p := "h." + strconv.Itoa(i) + "."
		ts = append(ts, tensor(p+"ln_1.weight", d), tensor(p+"ln_1.bias", d),
			tensor(p+"attn.c_attn.weight", d, 3*d), tensor(p+"attn.c_attn.bias", 3*d),
			tensor(p+"attn.c_proj.weight", d, d), tensor(p+"attn.c_proj.bias", d),
			tensor(p+"ln_2.weight", d), tensor(p+"ln_2.bias", d),
			tensor(p+"mlp.c_fc.weight", d, 4*d), tensor(p+"mlp.c_fc.bias", 4*d),
			tensor(p+"mlp.c_proj.weight", 4*d, d), tensor(p+"mlp.c_proj.bias", d))
	}
	m, err := FromParts(Parts{Config: cfg, Tensors: ts}, "openai-community/gpt2/config.json")
	if err != nil {
		t.Fatal(err)
	}
	// 124,439,808 is GPT-2 small's published parameter count.
	if m.Params != 124439808 || m.Layers != layers || m.Hidden != d || m.Vocab != v || !m.TiedEmbeddings {
		t.Errorf("params %d layers %d hidden %d vocab %d tied %v", m.Params, m.Layers, m.Hidden, m.Vocab, m.TiedEmbeddings)
	}
	if m.Heads*m.HeadDim != d || m.KVHeads != m.Heads || m.Notes != GenericNote || m.FileBytes != planner.Bytes(4*124439808) {
		t.Errorf("heads %d × %d, kv %d, notes %q, bytes %d", m.Heads, m.HeadDim, m.KVHeads, m.Notes, m.FileBytes)
	}
	if _, err := FromParts(Parts{Config: cfg}, "gpt2/config.json"); err == nil {
		t.Error("a GPT-2 config without tensors gave a model")
	}
}

// tensor is an F32 safetensors tensor of the given shape.
func tensor(name string, shape ...int64) planner.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return planner.Tensor{Name: name, Type: "F32", Elements: n, Bytes: planner.Bytes(4 * n), Shape: shape}
}
