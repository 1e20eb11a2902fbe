package hf

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// within checks got against want with a relative tolerance.
func within(t *testing.T, what string, got planner.Params, want, tol float64) {
	t.Helper()
	if math.Abs(float64(got)-want) > tol*want {
		t.Errorf("%s = %s (%d), want %.4gB ± %.1f%%", what, got, got, want/1e9, tol*100)
	}
}

func TestReadConfigFixtures(t *testing.T) {
	cases := []struct {
		dir              string
		want             planner.Model // compared field by field below; Params checked with tolerance
		params, active   float64
		paramTol, actTol float64
	}{
		{"llama-3.1-8b", planner.Model{Arch: "llama", Layers: 32, Hidden: 4096, FFN: 14336, Heads: 32, KVHeads: 8,
			Vocab: 128256, GatedMLP: true, MaxContext: 131072, NativeDType: "bfloat16", FileQuant: "bf16"},
			8.03e9, 8.03e9, 0.002, 0.002},
		{"mistral-7b-v0.1", planner.Model{Arch: "mistral", Layers: 32, Hidden: 4096, FFN: 14336, Heads: 32, KVHeads: 8,
			Vocab: 32000, GatedMLP: true, SlidingWindow: 4096, SlidingLayers: 32, MaxContext: 32768,
			NativeDType: "bfloat16", FileQuant: "bf16"},
			7.24e9, 7.24e9, 0.002, 0.002},
		{"qwen3-30b-a3b", planner.Model{Arch: "qwen3_moe", Layers: 48, Hidden: 2048, FFN: 768, Heads: 32, KVHeads: 4,
			HeadDim: 128, Vocab: 151936, Experts: 128, TopK: 8, GatedMLP: true, MaxContext: 40960,
			NativeDType: "bfloat16", FileQuant: "bf16"},
			30.53e9, 3.3e9, 0.003, 0.03},
		{"gpt-oss-20b", planner.Model{Arch: "gpt_oss", Layers: 24, Hidden: 2880, FFN: 2880, Heads: 64, KVHeads: 8,
			HeadDim: 64, Vocab: 201088, Experts: 32, TopK: 4, GatedMLP: true, SlidingWindow: 128, SlidingLayers: 12,
			MaxContext: 131072, NativeDType: "mxfp4", FileQuant: "mxfp4"},
			// Active includes the 0.58B input embedding that OpenAI's 3.6B leaves out.
			20.91e9, 4.19e9, 0.003, 0.01},
		{"deepseek-v3", planner.Model{Arch: "deepseek_v3", Layers: 61, Hidden: 7168, FFN: 2048, Heads: 128, KVHeads: 128,
			HeadDim: 192, Vocab: 129280, Experts: 256, TopK: 8, GatedMLP: true, MaxContext: 163840,
			MLA: &planner.MLA{KVLoraRank: 512, RopeDim: 64}, NativeDType: "fp8", FileQuant: "fp8"},
			671e9, 37e9, 0.005, 0.02},
		{"gemma-3-27b-it", planner.Model{Arch: "gemma3_text", Layers: 62, Hidden: 5376, FFN: 21504, Heads: 32, KVHeads: 16,
			HeadDim: 128, Vocab: 262208, GatedMLP: true, SlidingWindow: 1024, SlidingLayers: 52, MaxContext: 131072,
			TiedEmbeddings: true, NativeDType: "bfloat16", FileQuant: "bf16"},
			// Text model only: the 0.4B SigLIP tower is not counted.
			27.01e9, 27.01e9, 0.002, 0.002},
		{"qwen2.5-7b-instruct-awq", planner.Model{Arch: "qwen2", Layers: 28, Hidden: 3584, FFN: 18944, Heads: 28, KVHeads: 4,
			Vocab: 152064, GatedMLP: true, MaxContext: 32768, NativeDType: "float16", FileQuant: "awq-int4"},
			7.62e9, 7.62e9, 0.003, 0.003},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			path := filepath.Join("testdata", c.dir, "config.json")
			m, err := ReadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			within(t, "Params", m.Params, c.params, c.paramTol)
			within(t, "ActiveParams", m.ActiveParams, c.active, c.actTol)
			if m.ID != c.dir || m.Name != c.dir || m.Source != "config.json "+path {
				t.Errorf("ID %q Name %q Source %q", m.ID, m.Name, m.Source)
			}
			if m.FileBytes != 0 || m.Tensors != nil {
				t.Errorf("config alone gave FileBytes %d and %d tensors", m.FileBytes, len(m.Tensors))
			}
			got := m
			got.ID, got.Name, got.Source, got.Params, got.ActiveParams = "", "", "", 0, 0
			if !sameModel(got, c.want) {
				t.Errorf("model\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// sameModel compares models including the MLA pointer's target.
func sameModel(a, b planner.Model) bool {
	if (a.MLA == nil) != (b.MLA == nil) || (a.MLA != nil && *a.MLA != *b.MLA) {
		return false
	}
	a.MLA, b.MLA = nil, nil
	a.Tensors, b.Tensors = nil, nil
	return a.Arch == b.Arch && a.Layers == b.Layers && a.Hidden == b.Hidden && a.FFN == b.FFN &&
		a.Heads == b.Heads && a.KVHeads == b.KVHeads && a.HeadDim == b.HeadDim && a.Vocab == b.Vocab &&
		a.Experts == b.Experts && a.TopK == b.TopK && a.GatedMLP == b.GatedMLP &&
		a.SlidingWindow == b.SlidingWindow && a.SlidingLayers == b.SlidingLayers &&
		a.MaxContext == b.MaxContext && a.TiedEmbeddings == b.TiedEmbeddings &&
		a.NativeDType == b.NativeDType && a.FileQuant == b.FileQuant && a.FileBytes == b.FileBytes
}

// base is a minimal valid config to vary in table tests.
const base = `"num_hidden_layers": 28, "hidden_size": 1024, "num_attention_heads": 16, "vocab_size": 1000, "intermediate_size": 2048`

func parse(t *testing.T, body string) planner.Model {
	t.Helper()
	m, err := ParseConfig([]byte("{"+base+body+"}"), "x/config.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSlidingLayouts(t *testing.T) {
	cases := []struct {
		name           string
		body           string
		window, layers int
	}{
		{"no window", ``, 0, 0},
		{"null window", `, "sliding_window": null`, 0, 0},
		{"every layer", `, "sliding_window": 4096`, 4096, 28},
		{"qwen2 off", `, "sliding_window": 131072, "use_sliding_window": false, "max_window_layers": 21`, 0, 0},
		{"qwen2 on", `, "sliding_window": 4096, "use_sliding_window": true, "max_window_layers": 21`, 4096, 7},
		{"pattern 6", `, "sliding_window": 1024, "sliding_window_pattern": 6`, 1024, 24},
		{"gemma2 alternation", `, "model_type": "gemma2", "sliding_window": 4096`, 4096, 14},
		{"layer types", `, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]`, 128, 2},
		{"layer types all full", `, "sliding_window": 128, "layer_types": ["full_attention"]`, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := parse(t, c.body)
			if m.SlidingWindow != c.window || m.SlidingLayers != c.layers {
				t.Errorf("window %d over %d layers, want %d over %d", m.SlidingWindow, m.SlidingLayers, c.window, c.layers)
			}
		})
	}
}

func TestGatedMLP(t *testing.T) {
	cases := []struct {
		body  string
		gated bool
	}{
		{`, "model_type": "gpt2", "hidden_act": "gelu_new"`, false},
		{`, "model_type": "gemma", "hidden_act": "gelu"`, true},
		{`, "model_type": "phi3", "hidden_act": "silu"`, true},
		{`, "model_type": "phi", "hidden_act": "gelu_new"`, false},
		{`, "model_type": "falcon"`, false},
		{`, "model_type": "newthing", "hidden_act": "silu"`, true},
		{`, "model_type": "newthing", "hidden_act": "gelu"`, false},
	}
	for _, c := range cases {
		if m := parse(t, c.body); m.GatedMLP != c.gated {
			t.Errorf("%s: gated %v, want %v", c.body, m.GatedMLP, c.gated)
		}
	}
}

func TestQuantizationConfigs(t *testing.T) {
	cases := []struct {
		body          string
		quant, native string
	}{
		{`, "torch_dtype": "float32"`, "f32", "float32"},
		{`, "dtype": "bfloat16"`, "bf16", "bfloat16"},
		{`, "torch_dtype": "float16", "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}`, "gptq-int4", "float16"},
		{`, "quantization_config": {"quant_method": "gptq", "bits": 8}`, "gptq-int8", ""},
		{`, "quantization_config": {"quant_method": "awq", "w_bit": 4}`, "awq-int4", ""},
		{`, "quantization_config": {"quant_method": "fbgemm_fp8"}`, "fp8", "fp8"},
		{`, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true}`, "bnb-nf4", ""},
		{`, "quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": true}`, "bnb-int8", ""},
		{`, "quantization_config": {"quant_method": "compressed-tensors", "format": "int-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int"}, "input_activations": {"num_bits": 8, "type": "int"}}}}`, "w8a8-int8", ""},
		{`, "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}, "input_activations": {"num_bits": 8, "type": "float"}}}}`, "fp8", "fp8"},
		{`, "quantization_config": {"quant_method": "compressed-tensors", "format": "pack-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}`, "gptq-int4", ""},
		{`, "quantization_config": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
			"config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float"}}}}`, "nvfp4", "nvfp4"},
		{`, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}`, "nvfp4", "nvfp4"},
		{`, "quantization_config": {"quant_method": "hqq"}`, "hqq", ""},
	}
	for _, c := range cases {
		m := parse(t, c.body)
		if m.FileQuant != c.quant || m.NativeDType != c.native {
			t.Errorf("%s: quant %q native %q, want %q and %q", c.body, m.FileQuant, m.NativeDType, c.quant, c.native)
		}
	}
}

func TestParamsEstimateMHAAndTied(t *testing.T) {
	// GPT-2 small: 12 layers, 768 wide, MHA, tied, plain GELU MLP of 3072.
	m := parse(t, `, "model_type": "gpt2", "num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12,
		"vocab_size": 50257, "intermediate_size": 3072, "tie_word_embeddings": true`)
	// 50257·768 + 12·(4·768² + 2·768·3072 + 2·768) + 768, without biases
	// and the 1024×768 position table, which the formula leaves out.
	want := 50257.0*768 + 12*(4*768*768+2*768*3072+2*768) + 768
	within(t, "GPT-2 Params", m.Params, want, 1e-9)
	if m.KVHeads != 12 || m.HeadDim != 0 || !m.TiedEmbeddings || m.GatedMLP {
		t.Errorf("kv heads %d head dim %d tied %v gated %v", m.KVHeads, m.HeadDim, m.TiedEmbeddings, m.GatedMLP)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		json string
		msg  string
	}{
		{"missing comma", "{\n  \"hidden_size\": 4096\n  \"num_hidden_layers\": 32\n}", "invalid JSON at line 3, column 3"},
		{"truncated", "{\n  \"hidden_size\": 40", "line 2, column 20"},
		{"empty", "", "invalid JSON at line 1, column 1"},
		{"string width", "{\n  \"hidden_size\": \"4096\"\n}", `field "hidden_size" (value ending at line 2, column 23)`},
		{"array", "[1, 2]", "holds a JSON array"},
		{"float layers", `{"num_hidden_layers": 3.5}`, `field "num_hidden_layers"`},
		{"not a model", `{"architectures": ["BertModel"]}`, "must be positive"},
		{"no vocab", `{"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2}`, "vocab_size is missing"},
		{"negative", "{" + base + `, "num_key_value_heads": -1}`, "num_key_value_heads = -1 is out of range"},
		{"huge", "{" + base + `, "num_local_experts": 100000000}`, "num_local_experts = 100000000 is out of range"},
		{"top-k above experts", "{" + base + `, "num_experts": 8, "num_experts_per_tok": 9}`, "exceeds the 8 experts"},
		{"text_config wrong type", "{" + base + `, "text_config": 3}`, `field "text_config"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.json), "dir/config.json")
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "dir/config.json") {
				t.Fatalf("error %v, want one naming dir/config.json and containing %q", err, c.msg)
			}
		})
	}
}

func TestReadConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadConfig(filepath.Join(dir, "config.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadConfig(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxConfigSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadConfig(big); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("oversized: %v", err)
	}
}

// unwrapAll returns the innermost wrapped error.
func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func FuzzReadConfig(f *testing.F) {
	for _, d := range []string{"llama-3.1-8b", "gpt-oss-20b", "deepseek-v3", "gemma-3-27b-it", "qwen2.5-7b-instruct-awq"} {
		data, err := os.ReadFile(filepath.Join("testdata", d, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("{" + base + `, "num_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 40, "kv_lora_rank": 8}`))
	f.Add([]byte("{" + base + `, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": {"num_bits": 8, "type": "float"}}}`))
	f.Add([]byte("{" + base + `, "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseConfig(data, "fuzz/config.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/config.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if m.Params <= 0 || m.ActiveParams <= 0 || m.ActiveParams > m.Params {
			t.Fatalf("params %d active %d", m.Params, m.ActiveParams)
		}
		if m.SlidingLayers < 0 || m.SlidingLayers > max(m.Layers, maxLayers) {
			t.Fatalf("sliding layers %d of %d", m.SlidingLayers, m.Layers)
		}
		if k := m.CheckpointKV; len(k) > 32 || strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Fatalf("KV type %q", k)
		}
	})
}
