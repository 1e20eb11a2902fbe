package importer

import "github.com/headroom-planner/headroom/planner"

// testCatalog holds the catalog entries the seeds refer to, copied from
// the catalog's models.csv and hardware.csv (id, name, native dtype,
// backends).
func testCatalog() *planner.Catalog {
	return &planner.Catalog{
		Models: []planner.Model{
			{ID: "meta-llama/Llama-2-7b-chat-hf", Name: "Llama 2 7B Chat", NativeDType: "float16"},
			{ID: "meta-llama/Llama-2-7b-hf", Name: "Llama 2 7B", NativeDType: "float16"},
			{ID: "meta-llama/Llama-2-70b-chat-hf", Name: "Llama 2 70B Chat", NativeDType: "float16"},
			{ID: "codellama/CodeLlama-7b-Instruct-hf", Name: "Code Llama 7B Instruct", NativeDType: "bfloat16"},
			{ID: "codellama/CodeLlama-13b-hf", Name: "Code Llama 13B (base)", NativeDType: "bfloat16"},
			{ID: "microsoft/Phi-3-vision-128k-instruct", Name: "Phi-3 vision 128k Instruct", NativeDType: "bfloat16"},
			{ID: "microsoft/Phi-3-mini-128k-instruct", Name: "Phi-3 mini 128k Instruct", NativeDType: "bfloat16"},
			{ID: "bigscience/bloomz-7b1-mt", Name: "BLOOMZ 7B1 MT", NativeDType: "float16"},
			{ID: "Qwen/Qwen2.5-7B-Instruct", Name: "Qwen2.5 7B Instruct", NativeDType: "bfloat16"},
			{ID: "Qwen/Qwen3-30B-A3B", Name: "Qwen3 30B-A3B", NativeDType: "bfloat16"},
		},
		Hardware: []planner.Hardware{
			{ID: "nvidia-a100-sxm4-80gb", Name: "NVIDIA A100 80GB SXM4", Backends: []planner.Backend{planner.CUDA}},
			{ID: "nvidia-a100-pcie-80gb", Name: "NVIDIA A100 80GB PCIe", Backends: []planner.Backend{planner.CUDA}},
			{ID: "nvidia-h100-nvl-94gb", Name: "NVIDIA H100 NVL 94GB", Backends: []planner.Backend{planner.CUDA}},
			{ID: "nvidia-h100-sxm5-80gb", Name: "NVIDIA H100 SXM5 80GB", Backends: []planner.Backend{planner.CUDA}},
			{ID: "nvidia-rtx-4080", Name: "NVIDIA GeForce RTX 4080", Backends: []planner.Backend{planner.CUDA, planner.Vulkan}},
			{ID: "amd-ryzen-ai-max-395", Name: "AMD Ryzen AI Max+ 395 (Radeon 8060S, Strix Halo)", Backends: []planner.Backend{planner.ROCm, planner.Vulkan, planner.CPU}},
		},
		Quants: []planner.Quant{
			{ID: "f16"}, {ID: "bf16"}, {ID: "f32"}, {ID: "fp8"}, {ID: "w8a8-int8"}, {ID: "awq-int4"}, {ID: "gptq-int4"},
			{ID: "q8_0"}, {ID: "q6_k"}, {ID: "q5_k_m"}, {ID: "q4_k_m"}, {ID: "q4_0"}, {ID: "q4_k_xl"}, {ID: "mxfp4"},
		},
	}
}
