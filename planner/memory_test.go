package planner

import (
	"math"
	"testing"
)

// Fixtures: architectures from the catalog fact sheet (profiles/sources).
var (
	llama31_8B  = Model{ID: "meta-llama/Llama-3.1-8B", Params: 8_030_261_248, Layers: 32, Hidden: 4096, FFN: 14336, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256, GatedMLP: true, MaxContext: 131072}
	llama31_70B = Model{ID: "meta-llama/Llama-3.1-70B", Params: 70_550_000_000, Layers: 80, Hidden: 8192, FFN: 28672, Heads: 64, KVHeads: 8, HeadDim: 128, Vocab: 128256, GatedMLP: true, MaxContext: 131072}
	qwen25_7B   = Model{ID: "Qwen/Qwen2.5-7B", Params: 7_620_000_000, Layers: 28, Hidden: 3584, FFN: 18944, Heads: 28, KVHeads: 4, HeadDim: 128, Vocab: 152064, GatedMLP: true, MaxContext: 32768}
	llama2_7B   = Model{ID: "meta-llama/Llama-2-7b-chat-hf", Params: 6_740_000_000, Layers: 32, Hidden: 4096, FFN: 11008, Heads: 32, KVHeads: 32, HeadDim: 128, Vocab: 32000, GatedMLP: true, MaxContext: 4096, NativeDType: "float16"}
	deepseekV3  = Model{ID: "deepseek-ai/DeepSeek-V3", Params: 671_000_000_000, ActiveParams: 37_000_000_000, Layers: 61, Hidden: 7168, FFN: 2048, Heads: 128, KVHeads: 128, HeadDim: 192, Vocab: 129280, Experts: 256, TopK: 8, GatedMLP: true, MLA: &MLA{KVLoraRank: 512, RopeDim: 64}, MaxContext: 163840}
	gemma3_4B   = Model{ID: "google/gemma-3-4b-it", Params: 4_300_000_000, Layers: 34, Hidden: 2560, FFN: 10240, Heads: 8, KVHeads: 4, HeadDim: 256, Vocab: 262208, GatedMLP: true, SlidingWindow: 1024, SlidingLayers: 29, MaxContext: 131072, TiedEmbeddings: true}

	kvF16  = KVType{ID: "f16", BytesPerElement: 2}
	kvFP8  = KVType{ID: "fp8", BytesPerElement: 1}
	kvQ8_0 = KVType{ID: "q8_0", BytesPerElement: 34.0 / 32}
	kvQ4_0 = KVType{ID: "q4_0", BytesPerElement: 18.0 / 32}

	qBF16  = Quant{ID: "bf16", Family: FamilyFloat, LinearBPW: 16, EmbedBPW: 16, HeadBPW: 16, Compute: BF16}
	qQ8_0  = Quant{ID: "q8_0", Family: FamilyGGUF, LinearBPW: 8.5, EmbedBPW: 8.5, HeadBPW: 8.5, Compute: FP16}
	qQ4KM  = Quant{ID: "q4_k_m", Family: FamilyGGUF, LinearBPW: 4.80, EmbedBPW: 4.5, HeadBPW: 6.5625, Compute: FP16}
	qAWQ   = Quant{ID: "awq-int4", Family: FamilyAWQ, LinearBPW: 4.156, EmbedBPW: 16, HeadBPW: 16, Compute: FP16}
	qMXFP4 = Quant{ID: "mxfp4", Family: FamilyMXFP4, LinearBPW: 16, ExpertBPW: 4.25, EmbedBPW: 16, HeadBPW: 16}
)

func within(t *testing.T, name string, got, want, tolPct float64) {
	t.Helper()
	if want == 0 {
		if got != 0 {
			t.Errorf("%s = %g, want 0", name, got)
		}
		return
	}
	if d := math.Abs(got-want) / math.Abs(want) * 100; d > tolPct {
		t.Errorf("%s = %.6g, want %.6g (±%g%%, off by %.2f%%)", name, got, want, tolPct, d)
	}
}

// KV bytes per token, worked examples of modeling.md §2.1-2.2 (derived from
// vLLM page_size_bytes and llama.cpp tensor shapes).
func TestKVBytesPerToken(t *testing.T) {
	cases := []struct {
		name string
		m    Model
		kv   KVType
		tp   int
		want float64
	}{
		{"Llama-3.1-8B BF16: 128 KiB", llama31_8B, kvF16, 1, 128 * 1024},
		{"Llama-3.1-70B BF16: 320 KiB", llama31_70B, kvF16, 1, 320 * 1024},
		{"Qwen2.5-7B BF16: 56 KiB", qwen25_7B, kvF16, 1, 56 * 1024},
		{"Llama-2-7B MHA: 512 KiB", llama2_7B, kvF16, 1, 512 * 1024},
		{"DeepSeek-V3 MLA BF16: 70,272 B", deepseekV3, kvF16, 1, 70272},
		{"DeepSeek-V3 MLA is not split by TP", deepseekV3, kvF16, 8, 70272},
		{"Llama-3.1-8B FP8: 64 KiB", llama31_8B, kvFP8, 1, 64 * 1024},
		{"Llama-3.1-8B q8_0: 1.0625 B/elem", llama31_8B, kvQ8_0, 1, 128 * 1024 * 1.0625 / 2},
		{"Llama-3.1-8B q4_0: 0.5625 B/elem", llama31_8B, kvQ4_0, 1, 128 * 1024 * 0.5625 / 2},
		{"70B TP4: 2 KV heads per rank", llama31_70B, kvF16, 4, 320 * 1024 / 4},
		{"70B TP16 replicates: max(1, 8/16) heads", llama31_70B, kvF16, 16, 320 * 1024 / 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			within(t, "kv bytes/token", float64(KVBytesPerToken(c.m, c.kv, c.tp)), c.want, 0.01)
		})
	}
}

// Sliding-window layers keep at most window + slack tokens (modeling.md
// §2.3): Gemma-3-4B at 32k holds 5 full layers × 32k + 29 SWA layers × 1024.
func TestKVBytesForSequenceSlidingWindow(t *testing.T) {
	per := 2 * 4 * 256 * 2.0 // 2 × H_kv × d_h × 2 B per layer
	got := KVBytesForSequence(gemma3_4B, kvF16, 1, 32768, 0)
	within(t, "gemma-3 32k", float64(got), per*(5*32768+29*1024), 0.01)
	short := KVBytesForSequence(gemma3_4B, kvF16, 1, 512, 0)
	within(t, "gemma-3 512 (below the window)", float64(short), per*34*512, 0.01)
}

// Weight bytes: Llama-3.1-8B BF16 is 14.96 GiB (modeling.md §1.2 kvplan
// example); Q4_K_M whole-file ≈ 4.8944 bpw ≈ 4.58 GiB on the same model
// (tools/quantize/README.md @ 311c2c9).
func TestWeightBytes(t *testing.T) {
	within(t, "8B bf16 GiB", WeightBytes(llama31_8B, qBF16).GiBf(), 14.96, 0.2)
	within(t, "8B q8_0 GiB (7.95 measured)", WeightBytes(llama31_8B, qQ8_0).GiBf(), 7.95, 1)
	within(t, "8B q4_k_m GiB (4.58 measured)", WeightBytes(llama31_8B, qQ4KM).GiBf(), 4.58, 1.5)
	// AWQ keeps embeddings and head in 16 bit: 6.98B × 4.156/8 + 1.05B × 2.
	within(t, "8B awq GiB", WeightBytes(llama31_8B, qAWQ).GiBf(), (6.98e9*4.156/8+1.0506e9*2)/float64(GiB), 0.5)
	exact := llama31_8B
	exact.FileBytes = 123456789
	if WeightBytes(exact, qBF16) != 123456789 {
		t.Error("weights read from a file must be used exactly")
	}
	// gpt-oss-20b: MXFP4 experts, BF16 elsewhere; the published GGUF is
	// 12.8 GB [U] — within 10%.
	oss := Model{Params: 20_910_000_000, Layers: 24, Hidden: 2880, FFN: 2880, Vocab: 201088, Experts: 32, TopK: 4, GatedMLP: true}
	within(t, "gpt-oss-20b mxfp4 GB", float64(WeightBytes(oss, qMXFP4))/1e9, 12.8, 10)
}

// llama.cpp cells: -c padded to 256, split over -np slots, each slot padded
// to 256 (src/llama-context.cpp, modeling.md §1.3).
func TestLlamaCppCells(t *testing.T) {
	cases := []struct {
		ctx           Tokens
		np            int
		unified       bool
		total, perSlt Tokens
	}{
		{4096, 1, false, 4096, 4096},
		{4096, 16, false, 4096, 256},
		{4096, 16, true, 4096, 4096},
		{1000, 3, false, 1536, 512},
		{8192, 4, false, 8192, 2048},
	}
	for _, c := range cases {
		tot, per := LlamaCppCells(c.ctx, c.np, c.unified)
		if tot != c.total || per != c.perSlt {
			t.Errorf("cells(%d, np %d, unified %v) = %d, %d; want %d, %d", c.ctx, c.np, c.unified, tot, per, c.total, c.perSlt)
		}
	}
}

// llama.cpp KV for Llama-2-7B at -c 4096 f16 is 2 GiB: 32 layers × 4096
// cells × 4096 × 2 × 2 B (the "llama_kv_cache: size = 2048.00 MiB" line of
// llama-server's log for this model).
func TestLlamaCppKVBytes(t *testing.T) {
	within(t, "llama-2-7b 4096 f16 MiB", float64(LlamaCppKVBytes(llama2_7B, kvF16, 4096, 1, 512))/float64(MiB), 2048, 0.01)
	within(t, "llama-2-7b 4096 q8_0 MiB", float64(LlamaCppKVBytes(llama2_7B, kvQ8_0, 4096, 1, 512))/float64(MiB), 1088, 0.01)
}

// SGLang's default mem_fraction_static (server_args.py): an 80 GiB GPU at
// TP1 reserves max(512 + 8192·1.5 + 256·2 + 128, 10240) = 13440 MB.
func TestSGLangMemFractionStatic(t *testing.T) {
	within(t, "80 GiB", SGLangMemFractionStatic(80*GiB, 1), 0.836, 0.1)
	within(t, "24 GiB", SGLangMemFractionStatic(24*GiB, 1), math.Round((24576.0-(512+2048*1.5+24*2+128))/24576*1000)/1000, 0.1)
}

// TGI warm-up: free = total − used − (1 − 0.9) × total (get_cuda_free_memory).
func TestTGIFreeForKV(t *testing.T) {
	if got := TGIFreeForKV(80*GiB, 20*GiB, 0.9); got != 52*GiB {
		t.Errorf("TGI free = %s, want 52 GiB", got)
	}
}

// Tensor parallel divides weights; MLA and replicated heads do not shrink.
func TestWeightBytesPerDevice(t *testing.T) {
	if WeightBytesPerDevice(100, 4) != 25 || WeightBytesPerDevice(100, 1) != 100 || WeightBytesPerDevice(101, 2) != 51 {
		t.Error("weights per device")
	}
}

// vLLM profile-run activation: Llama-3.1-8B at 29,000 batched tokens is
// 29000 × (3·14336 + 4·4096) × 2 B ≈ 3.2 GiB plus sampler logits; vLLM's
// own log for this case (vllm#10517, RTX 3090, util 0.9) leaves 2.89 GiB
// of KV from 21.6 GiB after 14.99 GB of weights, i.e. ≈3.7 GiB non-KV.
func TestVLLMActivationPeak(t *testing.T) {
	a := VLLMActivationPeak(llama31_8B, 29000, 256, 1, 1)
	within(t, "activation GiB", a.GiBf(), 3.2+256*128256*4/float64(GiB), 1)
	if VLLMActivationPeak(llama31_8B, 29000, 256, 2, 1) >= a {
		t.Error("TP must shrink the MLP activation")
	}
}

// Multimodal profile run, Phi-3-vision in vLLM 0.6.3 at max_model_len
// 100000 (no chunked prefill for multimodal models, so 100000 batched
// tokens; model_runner.py profile_run): min(256, 100000 // 2653) = 37
// dummy images × 17 crops = 629 crops × 577 = 362,933 CLIP tokens. One
// [T, 1024] bf16 tensor is 0.692 GiB; the MLP step holds 11 of them
// (7.61 GiB) and the fp32 pixels 629·3·336²·4 B = 0.794 GiB: 8.41 GiB.
// Held into the LM pass: pixels plus 37·2653·3072·2 B of embeddings.
func TestVLLMVisionProfilePeak(t *testing.T) {
	v := VisionEncoder{Layers: 23, Hidden: 1024, FFN: 4096, ImageSize: 336, TokensPerCrop: 577, CropsPerImage: 17, ImageTokens: 2653}
	peak, held := VLLMVisionProfilePeak(v, 100000, 256, 3072)
	within(t, "vision peak GiB", peak.GiBf(), 8.41, 0.5)
	within(t, "held GiB", held.GiBf(), 0.794+0.562, 1)
	// Short batches still profile one image; fewer sequences cap images.
	one, _ := VLLMVisionProfilePeak(v, 2048, 256, 3072)
	within(t, "one image GiB", one.GiBf(), 8.41/37, 1)
	capped, _ := VLLMVisionProfilePeak(v, 100000, 4, 3072)
	within(t, "four images GiB", capped.GiBf(), 4*8.41/37, 1)
	if p, h := VLLMVisionProfilePeak(VisionEncoder{}, 100000, 256, 3072); p != 0 || h != 0 {
		t.Error("an encoder with no image tokens must add nothing")
	}
}

func TestExpertsTouched(t *testing.T) {
	// modeling.md §3.3: E=128, k=8: B=1→8, 8→52, 32→112, 64→126.
	for b, want := range map[int]float64{1: 8, 8: 52, 32: 112, 64: 126} {
		within(t, "experts touched", expertsTouched(128, 8, b), want, 2.5)
	}
}
