package planner

import (
	"fmt"
	"strings"
)

// SGLang's rules. Flags: python/sglang/srt/server_args.py (ServerArgs.add_cli_args,
// QUANTIZATION_CHOICES) at the tags named, as the docs and release notes
// give them (CheckedFromDocs). compressed-tensors became a
// --quantization choice in 0.5.4 (before it the method is read from the
// checkpoint's quantization_config only); the `sglang serve` entry point
// replaces `python -m sglang.launch_server`, deprecated on main.
func sglangReleases() []EngineRelease {
	base := flags("--model-path", "--tp", "--mem-fraction-static", "--max-running-requests", "--context-length",
		"--host", "--port", "--api-key", "--nnodes", "--node-rank", "--dist-init-addr")
	// --pp-size: pipeline parallel, in server_args.py since v0.4.8 (sglang
	// PR #5724) [U: from the release notes, not checked against the tag].
	pp := flags("--pp-size")
	kv := map[string]FlagSpec{"--kv-cache-dtype": {Values: []string{"auto", "fp8_e5m2", "fp8_e4m3"}}}
	q04 := []string{"awq", "fp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf", "modelopt", "w8a8_int8", "w8a8_fp8"}
	q053 := append(append([]string{}, q04...), "modelopt_fp4", "mxfp4", "moe_wna16", "qoq")
	q054 := append(append([]string{}, q053...), "compressed-tensors")
	return sortReleases(SGLang,
		EngineRelease{Release: MustRelease("0.4.0"), Name: "SGLang 0.4.0 (python -m sglang.launch_server)",
			Checked: CheckedFromDocs,
			Source:  "sgl-project/sglang python/sglang/srt/server_args.py @ v0.4.0", Image: "lmsysorg/sglang:v0.4.0-cu124",
			Flags: with(with(base, kv), map[string]FlagSpec{"--quantization": {Values: q04}})},
		EngineRelease{Release: MustRelease("0.5.3"), Name: "SGLang 0.5.3 (python -m sglang.launch_server)",
			Checked: CheckedFromDocs,
			Source:  "sgl-project/sglang python/sglang/srt/server_args.py @ v0.5.3", Image: "lmsysorg/sglang:v0.5.3-cu126",
			ROCmImage: "lmsysorg/sglang:v0.5.3-rocm630-mi30x", ROCmTargets: []string{"gfx942"},
			Flags: with(with(with(base, kv), pp), map[string]FlagSpec{"--quantization": {Values: q053}})},
		EngineRelease{Release: MustRelease("0.5.4"), Name: "SGLang 0.5.4 (python -m sglang.launch_server)",
			Checked: CheckedFromDocs,
			Source:  "sgl-project/sglang python/sglang/srt/server_args.py @ v0.5.4", Image: "lmsysorg/sglang:v0.5.4-cu126",
			ROCmImage: "lmsysorg/sglang:v0.5.4-rocm630-mi30x", ROCmTargets: []string{"gfx942"},
			Flags: with(with(with(base, kv), pp), map[string]FlagSpec{"--quantization": {Values: q054}})},
		EngineRelease{Name: "SGLang main (sglang serve)",
			Checked: CheckedFromDocs,
			Source:  "sgl-project/sglang python/sglang/srt/server_args.py @ main (2026)", Image: "lmsysorg/sglang:latest",
			ROCmImage: "lmsysorg/sglang:latest-rocm630-mi30x", ROCmTargets: []string{"gfx942"},
			Flags: with(with(with(base, kv), pp), map[string]FlagSpec{"--quantization": {Values: q054}, "serve": {Switch: true}})},
	)
}

// sglangSupported: SGLang's ROCm builds target Instinct MI300 (gfx942,
// the mi30x images; docs/platforms/amd_gpu.md), not Radeon.
func sglangSupported(s Scenario, b Backend) *UnsupportedError {
	if b == ROCm && rocmTarget(s.Hardware) != "gfx942" && rocmTarget(s.Hardware) != "gfx950" {
		return refuse(s, ReasonImageTarget, "SGLang's ROCm builds are for Instinct MI300/MI350 (gfx942, gfx950), not %s (%s)", s.Hardware.Name, rocmTarget(s.Hardware))
	}
	if b == CUDA && s.Quant.Family == FamilyFP8 && cudaBelow(s.Hardware, 89) {
		// GPUStack performance-lab, SGLang v0.5.3-0.5.5 on A100: GLM-4.6-FP8
		// stops with "type fp8e4nv not supported in this architecture",
		// GLM-4.5-Air-FP8 crashes ("FP8 not supported on A100"), and
		// "Running SGLang with FP8 quantization on A100 GPUs does not work"
		// (Qwen3-235B-A22B). vLLM's weight-only FP8 Marlin path has no
		// SGLang counterpart there.
		return refuse(s, ReasonComputeCapability, "SGLang's FP8 kernels need compute capability 8.9+ (Ada, Hopper, Blackwell); on %s (%s) its FP8 checkpoints stop at load: use vLLM, whose weight-only FP8 Marlin kernel runs on Ampere", s.Hardware.Name, capabilityText(s.Hardware))
	}
	return nil
}

// sglangQuantFlag: Marlin names for AWQ/GPTQ where Marlin runs (SGLang
// keeps awq_marlin/gptq_marlin as choices; stripping _marlin loses them),
// fp8 quantized on load from the BF16 repo, compressed-tensors from 0.5.4
// only, else nothing (read from the checkpoint).
func sglangQuantFlag(s Scenario, b Backend, rel EngineRelease, ck checkpoint) string {
	switch s.Quant.Family {
	case FamilyAWQ, FamilyGPTQ:
		return int4Method(s, b)
	case FamilyFP8:
		if ck.onLoad {
			return "fp8"
		}
	case FamilyINT8:
		if rel.Accepts("--quantization", "compressed-tensors") {
			return "compressed-tensors"
		}
	}
	return ""
}

func sglangArgs(in launchIn) (server, []string) {
	s, c := in.s, in.c
	f := s.GPUMemoryUtilization
	if f == 0 {
		f = SGLangMemFractionStatic(s.deviceMemory(), c.Devices)
	}
	prog := []string{"python", "-m", "sglang.launch_server"}
	if in.rel.Has("serve") {
		prog = []string{"sglang", "serve"}
	}
	a := []string{"--model-path", in.model,
		"--tp", fmt.Sprint(max(c.Devices, 1)),
		"--mem-fraction-static", fmt.Sprintf("%.3f", f),
		"--max-running-requests", fmt.Sprint(in.conc),
		"--context-length", fmt.Sprint(int64(in.ctx)),
	}
	if c.Nodes > 1 {
		a = append(a, sglangMultiNodeArgs(in.rel, c.Nodes, "0", "$LEADER_ADDR:5000")...)
	}
	if q := in.quantFlag; q != "" {
		a = append(a, "--quantization", q)
	}
	if s.KV.ID == "fp8" {
		a = append(a, "--kv-cache-dtype", "fp8_e4m3")
	}
	var notes []string
	if s.Quant.Family == FamilyINT8 && in.quantFlag == "" {
		notes = append(notes, fmt.Sprintf("%s has no --quantization compressed-tensors (0.5.4+): SGLang reads the method from the checkpoint", in.rel.Name))
	}
	if strings.HasSuffix(in.quantFlag, "_marlin") {
		notes = append(notes, "Marlin 4-bit kernels (compute capability 8.0+)")
	}
	if c.Nodes > 1 && !in.rel.Has("--pp-size") {
		notes = append(notes, fmt.Sprintf("%s has no --pp-size: with --nnodes %d it splits --tp %d over the nodes instead of pipelining them; the plan's TP%d × PP%d needs a release with --pp-size", in.rel.Name, c.Nodes, max(c.Devices, 1), max(c.Devices, 1), c.Nodes))
	}
	return server{prog: prog, args: append(a, "--host", in.host, "--port", "30000")}, notes
}

// sglangMultiNodeArgs are the flags of node rank of nodes pipeline stages:
// --pp-size, --nnodes, --node-rank and --dist-init-addr (host:port of
// rank 0's torch.distributed rendezvous), from SGLang's multi-node
// deployment docs. Releases without --pp-size are not given one.
func sglangMultiNodeArgs(rel EngineRelease, nodes int, rank, initAddr string) []string {
	var a []string
	if rel.Has("--pp-size") {
		a = append(a, "--pp-size", fmt.Sprint(nodes))
	}
	return append(a, "--nnodes", fmt.Sprint(nodes), "--node-rank", rank, "--dist-init-addr", initAddr)
}

// sglangRules are SGLang's rules (PolicySGLang).
type sglangRules struct{}

func (sglangRules) supported(s Scenario, b Backend) *UnsupportedError { return sglangSupported(s, b) }
func (sglangRules) fit(s Scenario, b Backend) FitResult               { return fitPaged(s, b, sglangPaged) }
func (sglangRules) flashAttention(Scenario, Backend) bool             { return true }
func (sglangRules) imageEntrypoint() bool                             { return false }
func (sglangRules) memoryKnob() string                                { return "" }

// quantizesOnLoad: FP8 from a BF16 repo (--quantization fp8).
func (sglangRules) quantizesOnLoad(f QuantFamily) bool { return f == FamilyFP8 }

func (sglangRules) command(in *launchIn, _ *Launch) (server, []string, error) {
	in.conc = max(in.conc, in.o.Users)
	in.quantFlag = sglangQuantFlag(in.s, in.b, in.rel, in.ck)
	cmd, notes := sglangArgs(*in)
	return cmd, notes, nil
}

// sglangPaged is SGLang's plan of a device: the static fraction of it
// (--mem-fraction-static, SGLangMemFractionStatic by default) holds the
// weights and the pool; runtime and activations live in the rest
// (profile_max_num_token: rest = total·f − weights).
func sglangPaged(s Scenario, b Backend, _ Tokens) pagedPlan {
	p := pagedBase(s, b)
	dev := s.deviceMemory()
	f := s.GPUMemoryUtilization
	if f == 0 {
		f = SGLangMemFractionStatic(dev, s.devices())
	}
	p.budget = Bytes(f * float64(dev))
	p.runtime = 0
	p.batched = 8192
	return p
}

// stepOverheadMs: SGLang's scheduler, sampler and launches per step.
// From v0.4 the overlap scheduler prepares the next batch on the CPU while
// the GPU runs the current one ("SGLang v0.4: Zero-Overhead Batch
// Scheduler", blog, 2024-12-04) [U: magnitudes; the published v0.5
// single-client TPOT on an H100, 7.2 ms for Qwen3-8B BF16, leaves under
// 2.5 ms beside the weights' read].
func (sglangRules) stepOverheadMs(_ Backend, v string) float64 {
	return pythonStepMs(v, "0.4.0")
}

// admitOverheadMs: SGLang's scheduler takes new requests in its own
// Python loop between batches (Scheduler.process_input_requests →
// handle_generate_request, then get_new_batch_prefill builds them into a
// ScheduleBatch) [U: magnitude, pythonAdmitMs].
func (sglangRules) admitOverheadMs() float64 { return pythonAdmitMs }

// frontEndProcess: the HTTP server's TokenizerManager hands requests to
// the scheduler's process and gets tokens back through the
// DetokenizerManager's (srt/entrypoints/engine.py launches the three).
func (sglangRules) frontEndProcess(string) bool { return true }

// streamOverheadUs: the DetokenizerManager process detokenizes and the
// TokenizerManager streams, both apart from the scheduler; the scheduler's
// own per-request work is the fitted seq_overhead_us.
func (sglangRules) streamOverheadUs(string) float64 { return 0 }

// seqOverheadPriorUs: fitted (seq_overhead_us).
func (sglangRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: max_running_requests bounded by the pool, and
// chunked_prefill_size 8192 (2048 on GPUs under 32 GiB) [U: server_args.py
// defaults].
func (sglangRules) schedLimits(s Scenario) schedLimits {
	if s.Hardware.Memory >= 32*GiB {
		return schedLimits{maxSeqs: 4096, budget: 8192}
	}
	return schedLimits{maxSeqs: 4096, budget: 2048}
}

// mixedSteps: SGLang's scheduler runs a waiting prefill batch before the
// running decode batch (Scheduler.get_next_batch_to_run); chunks join
// the decodes only with --enable-mixed-chunk, off by default.
func (sglangRules) mixedSteps(Scenario) bool { return false }

// chunkedPrefill: SGLang chunks by default (--chunked-prefill-size).
func (sglangRules) chunkedPrefill(Scenario) bool { return true }

// marlinInt4: AWQ/GPTQ through vLLM's Marlin kernels on sm80+.
func (sglangRules) marlinInt4() bool { return true }

// docker: the Hugging Face cache, 32 GB of shared memory and port 30000.
func (sglangRules) docker() dockerSpec {
	return dockerSpec{mounts: hfCacheMount, run: []string{"--shm-size", "32g", "-p", "127.0.0.1:30000:30000"}}
}

func (sglangRules) image(rel EngineRelease, b Backend) string { return gpuImage(rel, b) }

func (sglangRules) modelDir() string { return hfCacheDir }

// multiNode: --nnodes, --node-rank, --dist-init-addr, --pp-size (SGLang
// server arguments).
func (sglangRules) multiNode(Engine) MultiNodeMode { return MultiNodePipeline }
