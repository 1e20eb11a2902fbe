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

// TestMoreArchitectures reads one config of each further family the
// issue names and checks the geometry the planner uses and the parameter
// totals against the model cards.
func TestMoreArchitectures(t *testing.T) {
	cases := []struct {
		dir                 string
		arch, quant         string
		layers, kvHeads     int
		experts, topK       int
		mla, tied           bool
		params, active, tol float64
	}{
		// Phi-4: 14.7B (model card).
		{"phi-4", "phi3", "bf16", 40, 10, 0, 0, false, false, 14.7e9, 14.7e9, 0.01},
		// GLM-4.5-Air: 106B total, 12B active (model card, without the
		// 1.24B embedding and head counted here; the one
		// multi-token-prediction layer is left out).
		{"glm-4.5-air", "glm4_moe", "bf16", 46, 8, 128, 8, false, false, 106e9, 13.24e9, 0.03},
		// Kimi-K2: 1.04T total, 32B active (model card); FP8 blocks.
		{"kimi-k2-instruct", "kimi_k2", "fp8", 61, 64, 384, 8, true, false, 1.04e12, 32.6e9, 0.03},
		// Command-R v01: 35B with tied embeddings (CohereConfig default).
		{"c4ai-command-r-v01", "cohere", "f16", 40, 64, 0, 0, false, true, 35e9, 35e9, 0.01},
		// OLMo-2-1124-7B: 7.30B (model card), float32 checkpoint.
		{"olmo-2-1124-7b", "olmo2", "f32", 32, 32, 0, 0, false, false, 7.30e9, 7.30e9, 0.01},
		// Granite-3.3-8B: 8.17B.
		{"granite-3.3-8b-instruct", "granite", "bf16", 40, 8, 0, 0, false, true, 8.17e9, 8.17e9, 0.01},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			m, err := ReadConfig(filepath.Join("testdata", c.dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Arch != c.arch || m.FileQuant != c.quant || m.Layers != c.layers || m.KVHeads != c.kvHeads ||
				m.Experts != c.experts || m.TopK != c.topK || (m.MLA != nil) != c.mla || m.TiedEmbeddings != c.tied || !m.GatedMLP {
				t.Errorf("got %s %s layers %d kv %d experts %d/%d mla %v tied %v gated %v",
					m.Arch, m.FileQuant, m.Layers, m.KVHeads, m.Experts, m.TopK, m.MLA != nil, m.TiedEmbeddings, m.GatedMLP)
			}
			within(t, "Params", m.Params, c.params, c.tol)
			within(t, "ActiveParams", m.ActiveParams, c.active, c.tol)
			if !KnownArch(m.Arch) {
				t.Errorf("arch %q not known", m.Arch)
			}
		})
	}
}

func TestFP8Scheme(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"block", `, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}`, "FP8 weights with 128×128 block scales (quantization_config.weight_block_size)"},
		{"per tensor", `, "quantization_config": {"quant_method": "fp8", "activation_scheme": "static"}`, "FP8 weights with per-tensor or per-channel scales"},
		{"not fp8", `, "quantization_config": {"quant_method": "awq", "bits": 4}`, ""},
	}
	for _, c := range cases {
		if got := parse(t, c.body).Notes; got != c.want {
			t.Errorf("%s: notes %q, want %q", c.name, got, c.want)
		}
	}
}
