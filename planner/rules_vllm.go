package planner

import (
	"fmt"
	"strings"
)

// vLLM's rules. Flags: vllm/engine/arg_utils.py (EngineArgs.add_cli_args;
// each dataclass field becomes --field-name) and the quantization choices
// of vllm/model_executor/layers/quantization/__init__.py
// (QUANTIZATION_METHODS) at the tags named per release, as the docs and
// release notes give them (CheckedFromDocs).
func vllmReleases() []EngineRelease {
	base := flags("--gpu-memory-utilization", "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens",
		"--tensor-parallel-size", "--host", "--port", "--model", "--api-key",
		// --pipeline-parallel-size: in EngineArgs since before 0.6.0.
		"--pipeline-parallel-size")
	dtype := map[string]FlagSpec{"--dtype": {Values: []string{"auto", "half", "float16", "bfloat16", "float", "float32"}}}
	kv := map[string]FlagSpec{"--kv-cache-dtype": {Values: []string{"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}}}
	q06 := []string{"aqlm", "awq", "deepspeedfp", "tpu_int8", "fp8", "fbgemm_fp8", "modelopt", "marlin", "gguf", "gptq_marlin_24",
		"gptq_marlin", "awq_marlin", "gptq", "compressed-tensors", "bitsandbytes", "qqq", "experts_int8", "neuron_quant", "ipex"}
	q08 := append(append([]string{}, q06...), "quark", "moe_wna16", "torchao", "ptpc_fp8", "modelopt_fp4", "nvfp4")
	q010 := append(append([]string{}, q08...), "mxfp4")
	old := map[string]FlagSpec{"--load-format": {Values: []string{"auto", "pt", "safetensors", "npcache", "dummy", "bitsandbytes", "gguf"}}}
	return sortReleases(VLLM,
		EngineRelease{Release: MustRelease("0.6.0"), Name: "vLLM 0.6.0 (vllm serve)",
			Checked: CheckedFromDocs,
			Source:  "vllm-project/vllm vllm/engine/arg_utils.py @ v0.6.0",
			Image:   "vllm/vllm-openai:v0.6.0",
			Flags:   with(with(with(base, dtype), kv), with(old, map[string]FlagSpec{"--quantization": {Values: q06}}))},
		EngineRelease{Release: MustRelease("0.8.0"), Name: "vLLM 0.8.0 (vllm serve, V1 engine)",
			Checked: CheckedFromDocs,
			Source:  "vllm-project/vllm vllm/engine/arg_utils.py @ v0.8.0",
			Image:   "vllm/vllm-openai:v0.8.0",
			Flags:   with(with(with(base, dtype), kv), map[string]FlagSpec{"--quantization": {Values: q08}})},
		EngineRelease{Release: MustRelease("0.10.1"), Name: "vLLM 0.10.1 (vllm serve)",
			Checked: CheckedFromDocs,
			Source:  "vllm-project/vllm vllm/engine/arg_utils.py @ v0.10.1",
			Image:   "vllm/vllm-openai:v0.10.1",
			Flags:   with(with(with(base, dtype), kv), map[string]FlagSpec{"--quantization": {Values: q010}})},
		EngineRelease{Release: MustRelease("0.11.0"), Name: "vLLM 0.11.0 (vllm serve)",
			Checked: CheckedFromDocs,
			Source:  "vllm-project/vllm vllm/engine/arg_utils.py @ v0.11.0",
			Image:   "vllm/vllm-openai:v0.11.0", ROCmImage: "vllm/vllm-openai-rocm:v0.11.0",
			// docker/Dockerfile.rocm_base PYTORCH_ROCM_ARCH @ v0.11.0.
			ROCmTargets: []string{"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200", "gfx1201"},
			Flags:       with(with(with(base, dtype), kv), map[string]FlagSpec{"--quantization": {Values: q010}})},
	)
}

// vllmSupported holds vLLM's kernel gates.
func vllmSupported(s Scenario, b Backend) *UnsupportedError {
	h, q := s.Hardware, s.Quant
	cc := cudaCapability(h)
	switch {
	case b == CUDA && cc > 0 && cc < 80 && (q.ID == "bf16" || s.KV.ID == "bf16"):
		// vllm/platforms/cuda.py and config: "Bfloat16 is only supported on
		// GPUs with compute capability of at least 8.0" (v0.6-v0.11).
		return refuse(s, ReasonComputeCapability, "vLLM runs bfloat16 only on compute capability 8.0+; %s is %s: use float16 (--dtype half)", h.Name, capabilityText(h))
	case b == CUDA && cc > 0 && cc < 75 && q.Family == FamilyAWQ:
		// AWQConfig.get_min_capability 75; AWQMarlinConfig 80.
		return refuse(s, ReasonComputeCapability, "vLLM's AWQ kernels need compute capability 7.5+ (Marlin 8.0+); %s is %s: use a GPTQ checkpoint", h.Name, capabilityText(h))
	case b == CPU && q.Family != FamilyFloat && !h.X86Host():
		// docs.vllm.ai installation/cpu (v0.7-v0.12): the Arm backend runs
		// FP32/FP16/BF16 and macOS FP32/FP16; AWQ, GPTQ and W8A8 are x86 paths.
		return refuse(s, ReasonNoKernel, "vLLM's CPU backend loads only FP32/FP16/BF16 weights on Arm and macOS hosts (%s), not %s", h.Vendor, q.ID)
	}
	return nil
}

// marlinOK reports whether the Marlin 4-bit kernels (vLLM awq_marlin and
// gptq_marlin, SGLang's too) run on the device: CUDA compute capability
// 8.0+, never ROCm (AWQMarlinConfig/GPTQMarlinConfig get_min_capability
// 80 and check_marlin_supported, which is CUDA-only).
func marlinOK(s Scenario, b Backend) bool {
	return b == CUDA && cudaCapability(s.Hardware) >= 80
}

// int4Method is the --quantization value for an AWQ/GPTQ checkpoint on
// the device: the Marlin method where it runs, else the plain kernel.
func int4Method(s Scenario, b Backend) string {
	m := "awq"
	if s.Quant.Family == FamilyGPTQ {
		m = "gptq"
	}
	if marlinOK(s, b) {
		return m + "_marlin"
	}
	return m
}

// vllmArgs: the model is vllm serve's positional argument natively; the
// image's entrypoint is the API server, which takes --model (vLLM's
// docker docs).
func vllmArgs(in launchIn) server {
	s, c := in.s, in.c
	util := s.GPUMemoryUtilization
	if util == 0 {
		util = s.Engine.GPUMemoryUtilization
	}
	a := []string{in.model}
	if in.image != "" {
		a = []string{"--model", in.model}
	}
	if in.b != CPU {
		a = append(a, "--gpu-memory-utilization", fmt.Sprintf("%.2f", util))
	}
	a = append(a, "--max-model-len", fmt.Sprint(int64(in.ctx)),
		"--max-num-seqs", fmt.Sprint(in.conc))
	if n := vllmLaunchBatched(in); n > 0 {
		a = append(a, "--max-num-batched-tokens", fmt.Sprint(int64(n)))
	}
	if c.Devices > 1 {
		a = append(a, "--tensor-parallel-size", fmt.Sprint(c.Devices))
	}
	if c.Nodes > 1 {
		a = append(a, "--pipeline-parallel-size", fmt.Sprint(c.Nodes))
	}
	if q := in.quantFlag; q != "" {
		a = append(a, "--quantization", q)
		if q == "bitsandbytes" && in.rel.Has("--load-format") {
			a = append(a, "--load-format", "bitsandbytes")
		}
	}
	if s.Quant.Family == FamilyFloat {
		if d := vllmDType(s, in.b); d != "" {
			a = append(a, "--dtype", d)
		}
	}
	if s.KV.ID == "fp8" {
		a = append(a, "--kv-cache-dtype", "fp8")
	}
	return server{prog: []string{"vllm", "serve"}, args: append(a, "--host", in.host, "--port", "8000")}
}

// vllmDType is --dtype for a float plan.
func vllmDType(s Scenario, b Backend) string {
	return map[string]string{"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[s.Quant.ID]
}

// vllmQuantFlag is --quantization: nil when the checkpoint's
// quantization_config says it (vLLM reads it), the Marlin or plain int4
// method by device, fp8 and bitsandbytes quantized on load from the BF16
// repo.
func vllmQuantFlag(s Scenario, b Backend, ck checkpoint) string {
	switch s.Quant.Family {
	case FamilyAWQ, FamilyGPTQ:
		return int4Method(s, b)
	case FamilyFP8:
		if ck.onLoad {
			return "fp8"
		}
	case FamilyBNB:
		return "bitsandbytes"
	}
	return ""
}

// vllmCPUEnv sets the CPU backend's KV space: vLLM's CPU worker gives the
// KV cache VLLM_CPU_KVCACHE_SPACE GiB (4 when unset; vllm/envs.py), not a
// share of memory, so the plan's pool must be asked for.
func vllmCPUEnv(c Candidate) (map[string]string, []string) {
	kv := Bytes(int64(c.Fit.MaxKVTokens)) * c.Fit.KVBytesPerToken
	gib := max(int64((kv+GiB-1)/GiB), 1)
	return map[string]string{"VLLM_CPU_KVCACHE_SPACE": fmt.Sprint(gib)},
		[]string{fmt.Sprintf("VLLM_CPU_KVCACHE_SPACE=%d GiB holds the planned KV pool of %d tokens (vLLM's CPU backend allots 4 GiB otherwise)", gib, c.Fit.MaxKVTokens)}
}

// vllmV1 is the first release whose default engine (V1) always chunks
// prefills; before it a prompt that is not chunked must fit one step, and
// vLLM refuses to start when --max-num-batched-tokens is below
// --max-model-len without chunked prefill (SchedulerConfig._verify_args,
// vllm/config.py @ v0.6.0).
var vllmV1 = MustRelease("0.8.0")

// vllmLaunchBatched is --max-num-batched-tokens: the plan's, raised to the
// context on releases before V1 that will not chunk prefills at the
// command's --max-model-len (the plan may have been made for another
// release than the command's). A V0 server that chunks (past 32K,
// chunkedPrefill) runs the plan's budget: raising it to a 64K context
// would profile, and take from the KV pool, activations for 64K tokens.
func vllmLaunchBatched(in launchIn) Tokens {
	var n Tokens
	if v, err := ParseTokens(in.c.Fit.Flags["max_num_batched_tokens"]); err == nil {
		n = v
	}
	if !in.rel.Release.IsNewest() && in.rel.Release.Compare(vllmV1) < 0 {
		s := in.s
		s.EngineVersion, s.Context = in.rel.Release.String(), in.ctx
		if !(vllmRules{}).chunkedPrefill(s) {
			n = max(n, in.ctx, 2048)
		}
	}
	return n
}

// vllmRules are vLLM's rules (PolicyVLLM).
type vllmRules struct{}

func (vllmRules) supported(s Scenario, b Backend) *UnsupportedError { return vllmSupported(s, b) }
func (vllmRules) fit(s Scenario, b Backend) FitResult               { return fitPaged(s, b, vllmPaged) }
func (vllmRules) flashAttention(Scenario, Backend) bool             { return true }
func (vllmRules) imageEntrypoint() bool                             { return true }
func (vllmRules) memoryKnob() string                                { return "--gpu-memory-utilization" }

// quantizesOnLoad: FP8 (dynamic, --quantization fp8) and bitsandbytes
// from a BF16 repo.
func (vllmRules) quantizesOnLoad(f QuantFamily) bool { return f == FamilyFP8 || f == FamilyBNB }

func (vllmRules) command(in *launchIn, l *Launch) (server, []string, error) {
	in.conc = max(in.conc, in.o.Users)
	in.quantFlag = vllmQuantFlag(in.s, in.b, in.ck)
	var notes []string
	if in.b == CPU {
		l.Env, notes = vllmCPUEnv(in.c)
	}
	return vllmArgs(*in), append(notes, vllmCheckpointKVNotes(in.s)...), nil
}

// vllmCheckpointKVNotes: up to 0.11, the newest release these rules
// cover, vLLM's --kv-cache-dtype auto is the model dtype and a ModelOpt
// checkpoint's KV scales are used only with fp8 asked; vLLM PR #29980
// (merged December 2025) makes auto follow hf_quant_config.json's
// kv_cache_quant_algo, so on a build with it a 16-bit-KV plan of such a
// checkpoint runs with an FP8 cache instead.
func vllmCheckpointKVNotes(s Scenario) []string {
	k := s.Model.CheckpointKV
	if k == "" || s.KV.ID == k {
		return nil
	}
	return []string{fmt.Sprintf("this checkpoint names a %s KV cache (ModelOpt kv_cache_quant_algo): vLLM up to 0.11 caches in the model dtype under --kv-cache-dtype auto, as this %s-KV plan counts; vLLM builds with PR #29980 (merged December 2025) follow the checkpoint and cache %s, twice the KV tokens, so on those the plan's %s-KV row is the one to read",
		strings.ToUpper(k), s.KV.ID, strings.ToUpper(k), k)}
}

// vllmPaged is vLLM's plan of a device: --gpu-memory-utilization of it
// (0.9 by default), the profile run's activation peak at the batched
// tokens and sequences of the release, the vision encoder's peak, its
// reserve, and CUDA graphs, which vLLM ≥ 0.21 subtracts from the budget
// (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default; modeling.md §1.2).
func vllmPaged(s Scenario, b Backend, maxLen Tokens) pagedPlan {
	p := pagedBase(s, b)
	mp := s.mem()
	u := s.GPUMemoryUtilization
	if u == 0 {
		u = s.Engine.GPUMemoryUtilization
	}
	if u == 0 {
		u = 0.9
	}
	p.budget = Bytes(u * float64(s.deviceMemory()))
	p.batched = vllmBatchedTokens(s, maxLen)
	p.act = VLLMActivationPeak(s.Model, p.batched, vllmMaxSeqs(s), s.devices(), mp.VLLMActivationFactor)
	if v := s.Model.Vision; v != nil {
		// The profile run's peak is the image encoder's or the
		// language model's with the image tensors still held.
		vis, held := VLLMVisionProfilePeak(*v, p.batched, vllmMaxSeqs(s), s.Model.Hidden)
		p.act = max(p.act+held, vis)
	}
	p.runtime += mp.VLLMReserve
	p.graphs = VLLMCUDAGraphBytes(s.Model)
	if b == CPU {
		p.graphs = 0
	}
	p.graphsInBudget = VersionAtLeast(s.EngineVersion, "0.21.0")
	return p
}

// vllmBatchDefaults are the OpenAI server's max_num_seqs and
// max_num_batched_tokens in the scenario's release, for a server whose
// max_model_len is maxLen; a scenario's own settings win. The profile run
// sizes its activations from them (vllmPaged) and the scheduler admits
// and chunks by them (schedLimits), so both read this one function.
//
//   - V0 (before 0.8.0) runs at most 256 sequences. With chunked prefill
//     (chunkedPrefill) its token budget is 512 before 0.6.5 and 2048 from
//     it (vllm/config.py SchedulerConfig; PR #10544 "Update default
//     max_num_batch_tokens for chunked prefill to 2048", 2024-11);
//     without it a step takes whole prompts, max(max_model_len, 2048)
//     tokens. The published 128k-context runs without chunking (Phi-3,
//     vLLM 0.6) imply that full-length profile: their non-KV memory is
//     19-31 GiB.
//   - V1 (0.8.0 on) takes the API server's defaults by device
//     (EngineArgs.get_batch_defaults): 8192 tokens and 1024 sequences on
//     devices of 70 GiB or more other than the A100, else 2048 and 256
//     (PR #12369 raised them on H100/H200 in 2025-01, #17073 extended them
//     by memory, #17885 took the A100 back out in 2025-05) [U: the release
//     between 0.7 and 0.8.5 where max_num_seqs became 1024; taken as V1's
//     first default release].
func vllmBatchDefaults(s Scenario, maxLen Tokens) (seqs int, tokens Tokens) {
	v := s.EngineVersion
	switch {
	case !VersionAtLeast(v, "0.8.0"):
		seqs = 256
		switch {
		case !(vllmRules{}).chunkedPrefill(s):
			tokens = max(maxLen, 2048)
		case VersionAtLeast(v, "0.6.5"):
			tokens = 2048
		default:
			tokens = 512
		}
	case s.deviceMemory() >= 70*GiB && !isA100(s.Hardware):
		seqs, tokens = 1024, 8192
	default:
		seqs, tokens = 256, 2048
	}
	if s.MaxNumSeqs > 0 {
		seqs = s.MaxNumSeqs
	}
	if s.MaxBatchedTokens > 0 {
		tokens = s.MaxBatchedTokens
	}
	return seqs, tokens
}

func vllmBatchedTokens(s Scenario, maxLen Tokens) Tokens {
	_, t := vllmBatchDefaults(s, maxLen)
	return t
}

func isA100(h Hardware) bool { return h.Arch == "ampere" && h.Compute == "8.0" }

func vllmMaxSeqs(s Scenario) int {
	n, _ := vllmBatchDefaults(s, s.maxModelLen())
	return n
}

// stepOverheadMs: vLLM's scheduler, sampler and launches per step. The V1
// engine, the default from 0.8.0, moved scheduling and output processing
// off the GPU's critical path (a busy-loop engine core in its own process,
// persistent batch, piecewise CUDA graphs: "vLLM V1: A Major Upgrade to
// vLLM's Core Architecture", blog, 2025-01-27, up to 1.7× throughput from
// lower CPU overhead); before it a step cost a few ms of Python [U:
// magnitudes. The published single-stream TPOT of v0.11 on an H100,
// 7.3 ms for Qwen3-8B BF16 whose weights take 4.9 ms to read, leaves
// under 2.5 ms for everything else].
func (vllmRules) stepOverheadMs(_ Backend, v string) float64 {
	return pythonStepMs(v, "0.8.0")
}

// admitOverheadMs: vLLM's engine loop adds waiting requests between steps
// in Python (V1: EngineCore._process_input_queue → add_request, then the
// scheduler allocates their blocks and the model runner inserts them into
// its persistent batch; V0 the same in LLMEngine.step) [U: magnitude,
// pythonAdmitMs].
func (vllmRules) admitOverheadMs() float64 { return pythonAdmitMs }

// frontEndProcess: V1 (0.8 on) serves from AsyncLLM in the API server's
// process and runs the engine core in its own, over ZMQ both ways
// (v1/engine/core_client.py); V0's AsyncLLMEngine steps in the API
// server's own event loop.
func (vllmRules) frontEndProcess(v string) bool { return VersionAtLeast(v, "0.8.0") }

// streamOverheadUs: V1's API server process detokenizes and streams apart
// from EngineCore; V0's output processing ran in the engine loop, and the
// fitted seq_overhead_us covers both.
func (vllmRules) streamOverheadUs(string) float64 { return 0 }

// seqOverheadPriorUs: fitted (seq_overhead_us).
func (vllmRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: the release's max_num_seqs and max_num_batched_tokens
// (vllmBatchDefaults) for a server at the scenario's max_model_len.
func (vllmRules) schedLimits(s Scenario) schedLimits {
	n, t := vllmBatchDefaults(s, s.maxModelLen())
	return schedLimits{maxSeqs: n, budget: int(t)}
}

// mixedSteps: prefill chunks ride with the decodes exactly when vLLM
// chunks prefills; V0 without chunking schedules whole prefills alone
// (vllm/core/scheduler.py _schedule_default: prefills first, then decodes
// only when none were scheduled).
func (r vllmRules) mixedSteps(s Scenario) bool { return r.chunkedPrefill(s) }

// chunkedPrefill: V1 (0.8+) always chunks; V0 from 0.5.3 (PR #6666) when
// max_model_len > 32K on a GPU, the model has no sliding window and, from
// 0.6.1 (PR #8425), no image encoder (vllm/engine/arg_utils.py
// create_engine_config).
func (vllmRules) chunkedPrefill(s Scenario) bool {
	v := s.EngineVersion
	if VersionAtLeast(v, "0.8.0") {
		return true
	}
	if !VersionAtLeast(v, "0.5.3") || s.Hardware.Kind == KindCPU {
		return false
	}
	maxLen := s.Context
	if maxLen <= 0 {
		maxLen = s.Model.MaxContext
	}
	if maxLen <= 32768 || s.Model.SlidingWindow > 0 {
		return false
	}
	return s.Model.Vision == nil || !VersionAtLeast(v, "0.6.1")
}

// marlinInt4: AWQ/GPTQ run on the Marlin kernels on sm80+
// (awq_marlin/gptq_marlin).
func (vllmRules) marlinInt4() bool { return true }

// docker: the Hugging Face cache, and the OpenAI server's port 8000.
func (vllmRules) docker() dockerSpec {
	return dockerSpec{mounts: hfCacheMount, run: []string{"-p", "127.0.0.1:8000:8000"}}
}

func (vllmRules) image(rel EngineRelease, b Backend) string { return gpuImage(rel, b) }

func (vllmRules) modelDir() string { return hfCacheDir }

// multiNode: TP within a node, PP across nodes over Ray (vLLM docs,
// "Distributed inference and serving").
func (vllmRules) multiNode(Engine) MultiNodeMode { return MultiNodePipeline }
