package planner

import "fmt"

// TensorRT-LLM's rules: trtllm-serve's options (tensorrt_llm/commands/serve.py,
// click options) at the tags named (NVIDIA/TensorRT-LLM). The KV-cache
// dtype has no option of its own: it goes in the YAML file given to
// --extra_llm_api_options (kv_cache_config.dtype).
func trtllmReleases() []EngineRelease {
	t := flags("--host", "--port", "--tp_size", "--max_batch_size", "--max_seq_len", "--kv_cache_free_gpu_memory_fraction", "--extra_llm_api_options")
	return sortReleases(TRTLLM,
		EngineRelease{Release: MustRelease("0.20.0"), Name: "TensorRT-LLM 0.20.0 (trtllm-serve)",
			Checked: CheckedFromDocs,
			Source:  "NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py @ v0.20.0", Image: "nvcr.io/nvidia/tensorrt-llm/release:0.20.0", Flags: t},
		EngineRelease{Release: MustRelease("1.0.0"), Name: "TensorRT-LLM 1.0.0 (trtllm-serve)",
			Checked: CheckedFromDocs,
			Source:  "NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py @ v1.0.0", Image: "nvcr.io/nvidia/tensorrt-llm/release:1.0.0", Flags: t},
	)
}

// trtllmSupported: the FP8 KV cache needs FP8 hardware.
func trtllmSupported(s Scenario, b Backend) *UnsupportedError {
	if s.KV.ID == "fp8" && !s.Hardware.SupportsNative(FP8) {
		// TensorRT-LLM support matrix: Ampere runs FP32/FP16/BF16/INT8/INT4,
		// FP8 needs Ada (SM89), Hopper or Blackwell.
		return refuse(s, ReasonNoKernel, "TensorRT-LLM's FP8 KV cache needs FP8 hardware (Ada, Hopper, Blackwell), not %s", s.Hardware.Arch)
	}
	return nil
}

// trtllmOptionsFile is the --extra_llm_api_options file name.
const trtllmOptionsFile = "extra-llm-api-options.yaml"

func trtllmArgs(in launchIn) (server, []LaunchFile) {
	c := in.c
	a := []string{in.model, "--host", in.host, "--port", "8000",
		"--tp_size", fmt.Sprint(max(c.Devices, 1)), "--max_batch_size", fmt.Sprint(in.conc),
		"--max_seq_len", fmt.Sprint(int64(in.ctx)), "--kv_cache_free_gpu_memory_fraction", "0.9"}
	prog := []string{"trtllm-serve"}
	if in.s.KV.ID != "fp8" {
		return server{prog: prog, args: a}, nil
	}
	f := LaunchFile{Name: trtllmOptionsFile, Content: "kv_cache_config:\n  dtype: fp8\n  free_gpu_memory_fraction: 0.9\n"}
	return server{prog: prog, args: append(a, "--extra_llm_api_options", trtllmOptionsFile)}, []LaunchFile{f}
}
