package planner

import (
	"fmt"
	"strings"
)

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

// trtllmSupported: the FP8 KV cache needs FP8 hardware; MXFP4 MoE
// weights need Hopper or Blackwell.
func trtllmSupported(s Scenario, b Backend) *UnsupportedError {
	if s.Quant.Family == FamilyFP8 && cudaBelow(s.Hardware, 89) {
		// No weight-only FP8 path below Ada: on an A100 trtllm-serve stops
		// on Qwen3-14B-FP8 and Qwen3-32B-FP8 with "RuntimeError:
		// Unsupported SM version for FP8 block scaling GEMM" (GPUStack
		// performance-lab, v1.2.0rc1).
		return refuse(s, ReasonComputeCapability, "TensorRT-LLM's FP8 GEMMs need compute capability 8.9+ (Ada, Hopper, Blackwell); %s is %s", s.Hardware.Name, capabilityText(s.Hardware))
	}
	if s.Quant.Family == FamilyMXFP4 && cudaCapability(s.Hardware) < 90 {
		// examples/models/core/gpt_oss/README.md "MoE Support Matrix":
		// Hopper runs MXFP4 experts with BF16 activations, Blackwell with
		// MXFP8, nothing else; on an A100 trtllm-serve stops with
		// "NotImplementedError: WFP4A16 MoE is unsupported on SM80"
		// (GPUStack performance-lab, gpt-oss-20b on A100, v1.2.0rc1).
		return refuse(s, ReasonComputeCapability, "TensorRT-LLM runs MXFP4 experts on Hopper and Blackwell only (WFP4A16 MoE is unsupported below SM90); %s is %s", s.Hardware.Name, capabilityText(s.Hardware))
	}
	if k := s.Model.CheckpointKV; k != "" && s.KV.ID != k {
		// tensorrt_llm/llmapi/llm_utils.py
		// ModelLoader._update_from_hf_quant_config (the v1.0-era code and
		// main of 2026 alike): hf_quant_config.json's kv_cache_quant_algo
		// becomes the engine's KV cache type; a different one asked for
		// is an error ("conflicting with kv_cache_quant_algo=… from HF
		// quant config"), and kv_cache_config.dtype names only fp8 or
		// nvfp4, so no setting gives such a checkpoint a 16-bit cache.
		return refuse(s, ReasonKVType, "TensorRT-LLM caches this checkpoint's KV in %s, the type its ModelOpt quantization config names (kv_cache_quant_algo), not %s", strings.ToUpper(k), s.KV.ID)
	}
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

// trtllmRules are TensorRT-LLM's rules (PolicyTRTLLM).
type trtllmRules struct{}

func (trtllmRules) supported(s Scenario, b Backend) *UnsupportedError { return trtllmSupported(s, b) }
func (trtllmRules) fit(s Scenario, b Backend) FitResult               { return fitPaged(s, b, trtllmPaged) }
func (trtllmRules) flashAttention(Scenario, Backend) bool             { return true }
func (trtllmRules) imageEntrypoint() bool                             { return false }
func (trtllmRules) memoryKnob() string                                { return "" }

// quantizesOnLoad: none; trtllm-serve loads pre-quantized checkpoints
// (ModelOpt).
func (trtllmRules) quantizesOnLoad(QuantFamily) bool { return false }

func (trtllmRules) command(in *launchIn, l *Launch) (server, []string, error) {
	cmd, files := trtllmArgs(*in)
	l.Files = files
	return cmd, append(trtllmKVNotes(in.s), trtllmStreamNotes(in.conc)...), nil
}

// trtllmStreamNotes says, for a launch of many users, what trtllm-serve's
// streaming costs each step (trtllmServeStreamUs) and the option that
// moves it out of the executor's process, which the plan does not assume.
func trtllmStreamNotes(users int) []string {
	if users < trtllmStreamNoteUsers {
		return nil
	}
	return []string{fmt.Sprintf("trtllm-serve detokenizes and sends each streamed token in the executor's own process: at %d users that is about %.0f ms of every step, which this plan's TPOT includes; --num_postprocess_workers N (experimental, default 0) moves that work to N processes, and the server may then run faster than planned", users, float64(users)*trtllmServeStreamUs/1000)}
}

// trtllmStreamNoteUsers is where the streaming cost reaches about a step
// of a small model (64 × 180 µs ≈ 12 ms), so the note is worth reading.
const trtllmStreamNoteUsers = 64

// trtllmKVNotes: without a dtype in kv_cache_config, TensorRT-LLM takes
// the KV cache type the checkpoint names (hf_quant_config.json
// kv_cache_quant_algo), and NVIDIA's ModelOpt exports of FP8 and NVFP4
// weights name FP8 by default (ModelOpt examples/llm_ptq/hf_ptq.py
// --kv_cache_qformat fp8; TensorRT-LLM's perf tables run those
// checkpoints). A 16-bit-KV plan of those formats then holds only for a
// checkpoint without one: the server would cache twice the tokens the
// plan counts, so its fp8-KV row is the one to read.
//
// A model read from its checkpoint (FileQuant set) has said which KV type
// it names, if any (Model.CheckpointKV, which trtllmSupported enforces), so
// the note is only for a catalog model planned in one of those formats.
func trtllmKVNotes(s Scenario) []string {
	if s.KV.ID == "fp8" || (s.Quant.Family != FamilyFP8 && s.Quant.Family != FamilyNVFP4) || s.Model.FileQuant != "" {
		return nil
	}
	return []string{fmt.Sprintf("TensorRT-LLM caches KV in the type the checkpoint names: NVIDIA's ModelOpt %s checkpoints (nvidia/…) name FP8 (ModelOpt exports with --kv_cache_qformat fp8 by default), so with one of them the server runs this plan's fp8-KV variant, with twice the KV tokens; this %s-KV plan holds for a checkpoint whose hf_quant_config.json names no KV format", s.Quant.Name, s.KV.ID)}
}

// trtllmPaged is TensorRT-LLM's plan of a device: its KV cache takes
// free_gpu_memory_fraction (0.9) of what the weights, runtime and the
// activations of 8192 batched tokens leave.
func trtllmPaged(s Scenario, b Backend, _ Tokens) pagedPlan {
	p := pagedBase(s, b)
	p.budget = s.deviceMemory()
	p.batched = 8192
	p.act = VLLMActivationPeak(s.Model, p.batched, 1, s.devices(), s.mem().VLLMActivationFactor)
	p.ofRest = 0.9
	return p
}

// stepOverheadMs: trtllm-serve's executor per step: a C++ batch manager
// with CUDA graphs [U: magnitude; the published 1.2 single-client TPOT
// on an H100, 7.7 ms for Qwen3-8B BF16, leaves under 3 ms beside the
// weights' read].
func (trtllmRules) stepOverheadMs(Backend, string) float64 { return 1 }

// admitOverheadMs: the C++ executor admits requests in its batch manager;
// trtllm-serve's Python front end works beside it, which the fitted
// request_overhead_ms covers [U].
func (trtllmRules) admitOverheadMs() float64 { return 0 }

// frontEndProcess: trtllm-serve's OpenAI server submits to executor
// workers it spawns (llmapi's GenerationExecutorProxy).
func (trtllmRules) frontEndProcess(string) bool { return true }

// trtllmServeStreamUs is what trtllm-serve spends per running sequence per
// step streaming its token: the LLM API's post-processing (incremental
// detokenizing, the OpenAI chunk, the SSE write) runs in the process of
// the PyTorch executor's Python loop unless num_postprocess_workers is
// set (default 0; NVIDIA/TensorRT-LLM PR #5122 "reduce the main process
// pressure by splitting the post-processing to other processes"), so it
// is serial with the steps. trtllm-bench's throughput runs feed token ids
// and do not stream (bench/benchmark/utils/asynchronous.py), and MLPerf's
// submitters drive the C++ executor from LoadGen in-process: neither pays
// it. [U: magnitude. GPUStack's trtllm-serve 1.2.0rc1 bursts of 1000
// prompts on an H100 imply 250-280 µs per running sequence in all
// (gpt-oss-20b: TPOT 224 ms at about 810 running, 3,615 tok/s; Qwen3-14B:
// 162 ms at about 650), of which the fitted seq_overhead_us keeps 20 for
// the executor; the grid measured with the fit is in
// docs/predictions.md.]
const trtllmServeStreamUs = 180.0

// streamOverheadUs: trtllm-serve streams from the executor's process
// (trtllmServeStreamUs); an MLPerf submission's harness does not.
func (trtllmRules) streamOverheadUs(v string) float64 {
	if mlperfHarness(v) {
		return 0
	}
	return trtllmServeStreamUs
}

// seqOverheadPriorUs: fitted (seq_overhead_us).
func (trtllmRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: max_batch_size 2048, max_num_tokens 8192 (trtllm-bench and
// trtllm-serve defaults [U]).
func (trtllmRules) schedLimits(Scenario) schedLimits {
	return schedLimits{maxSeqs: 2048, budget: 8192}
}

// mixedSteps: in-flight batching runs context (prefill) requests and
// generation requests in one forward step, chunked or not.
func (trtllmRules) mixedSteps(Scenario) bool { return true }

// chunkedPrefill: off by default (enable_chunked_prefill false).
func (trtllmRules) chunkedPrefill(Scenario) bool { return false }

func (trtllmRules) marlinInt4() bool { return false }

// docker: the Hugging Face cache, 16 GB of shared memory, the options file
// in this folder mounted as the working folder, and port 8000.
func (trtllmRules) docker() dockerSpec {
	return dockerSpec{mounts: hfCacheMount, run: []string{"--shm-size", "16g", "-v", "$PWD:/work", "-w", "/work", "-p", "127.0.0.1:8000:8000"}}
}

func (trtllmRules) image(rel EngineRelease, b Backend) string { return gpuImage(rel, b) }

func (trtllmRules) modelDir() string { return hfCacheDir }

// multiNode: trtllm-serve spans nodes through its own MPI launcher, which
// Headroom does not plan: one node.
func (trtllmRules) multiNode(Engine) MultiNodeMode { return MultiNodeNone }
