package planner

import (
	"fmt"
	"strings"
)

// TGI's rules. Flags: launcher/src/main.rs (struct Args; clap turns each
// field into --field-name, enum Quantization and KVCacheDtype into their
// kebab-case choices), lines at the tags named
// (huggingface/text-generation-inference). --kv-cache-dtype arrived in
// 2.4 (absent at v2.0.0); compressed-tensors in 2.4.
func tgiReleases() []EngineRelease {
	qv2 := []string{"awq", "eetq", "gptq", "bitsandbytes", "bitsandbytes-nf4", "bitsandbytes-fp4", "fp8"}
	qv24 := []string{"awq", "compressed-tensors", "eetq", "exl2", "gptq", "marlin", "bitsandbytes", "bitsandbytes-nf4", "bitsandbytes-fp4", "fp8"}
	type lines struct{ model, shard, quant, kv, conc, in, total, prefill, batch, host, port, frac int }
	table := func(l lines, q []string) map[string]FlagSpec {
		t := map[string]FlagSpec{
			"--model-id": {Line: l.model}, "--num-shard": {Line: l.shard}, "--quantize": {Values: q, Line: l.quant},
			"--max-concurrent-requests": {Line: l.conc}, "--max-input-tokens": {Line: l.in}, "--max-total-tokens": {Line: l.total},
			"--max-batch-prefill-tokens": {Line: l.prefill}, "--max-batch-total-tokens": {Line: l.batch},
			"--hostname": {Line: l.host}, "--port": {Line: l.port}, "--cuda-memory-fraction": {Line: l.frac},
		}
		if l.kv > 0 {
			t["--kv-cache-dtype"] = FlagSpec{Values: []string{"fp8_e4m3fn", "fp8_e5m2"}, Line: l.kv}
		}
		return t
	}
	img := "ghcr.io/huggingface/text-generation-inference:"
	// Dockerfile_amd: PYTORCH_ROCM_ARCH="gfx90a;gfx942".
	rocm := []string{"gfx90a", "gfx942"}
	return sortReleases(TGI,
		EngineRelease{Release: MustRelease("2.0.0"), Name: "TGI 2.0.0 (text-generation-launcher)",
			Checked: CheckedAtTag,
			Source:  "huggingface/text-generation-inference launcher/src/main.rs @ v2.0.0 (c38a7d7)", Image: img + "2.0.0", ROCmImage: img + "2.0.0-rocm", ROCmTargets: rocm,
			Flags: table(lines{146, 169, 173, 0, 196, 226, 242, 262, 282, 317, 321, 356}, qv2)},
		EngineRelease{Release: MustRelease("2.4.1"), Name: "TGI 2.4.1 (text-generation-launcher)",
			Checked: CheckedAtTag,
			Source:  "huggingface/text-generation-inference launcher/src/main.rs @ v2.4.1 (d2ed52f)", Image: img + "2.4.1", ROCmImage: img + "2.4.1-rocm", ROCmTargets: rocm,
			Flags: table(lines{392, 415, 423, 440, 452, 482, 498, 518, 538, 573, 577, 612}, qv24)},
		EngineRelease{Release: MustRelease("3.0.0"), Name: "TGI 3.0.0 (text-generation-launcher)",
			Checked: CheckedAtTag,
			Source:  "huggingface/text-generation-inference launcher/src/main.rs @ v3.0.0 (8f326c9)", Image: img + "3.0.0", ROCmImage: img + "3.0.0-rocm", ROCmTargets: rocm,
			Flags: table(lines{560, 583, 591, 608, 620, 650, 666, 686, 706, 741, 745, 780}, qv24)},
		EngineRelease{Release: MustRelease("3.3.5"), Name: "TGI 3.3.5 (text-generation-launcher)",
			Checked: CheckedAtTag,
			Source:  "huggingface/text-generation-inference launcher/src/main.rs @ v3.3.5 (8d029d2)", Image: img + "3.3.5", ROCmImage: img + "3.3.5-rocm", ROCmTargets: rocm,
			Flags: table(lines{589, 612, 620, 637, 649, 679, 695, 715, 735, 770, 774, 813}, qv24)},
	)
}

// tgiKVDtype is the first TGI release with --kv-cache-dtype and the
// compressed-tensors quantizer (launcher/src/main.rs: absent at v2.0.0,
// line 440 and enum Quantization at v2.4.1).
var tgiKVDtype = MustRelease("2.4.0")

// tgiSupported: the ROCm image is built for Instinct only; an FP8 KV cache
// and W8A8 checkpoints need 2.4 (before it the launch could not ask for
// them and TGI would run f16 KV, twice the planned pool).
func tgiSupported(s Scenario, b Backend) *UnsupportedError {
	if rel := releaseOf(s); !rel.AtLeast(tgiKVDtype) && (s.KV.ID == "fp8" || s.Quant.Family == FamilyINT8) {
		return refuse(s, ReasonRelease, "TGI %s has no --kv-cache-dtype or compressed-tensors (2.4+): use f16 KV and another format, or a newer TGI", rel)
	}
	if b == ROCm && !strings.HasPrefix(s.Hardware.Arch, "cdna") {
		// Dockerfile_amd builds PyTorch and the kernels with
		// PYTORCH_ROCM_ARCH="gfx90a;gfx942"; Hugging Face validates
		// Instinct MI210/MI250/MI300 only (optimum docs, amdgpu/overview).
		return refuse(s, ReasonImageTarget, "TGI's ROCm image is built for Instinct (gfx90a, gfx942) only, not %s", s.Hardware.Arch)
	}
	return nil
}

// tgiQuantize is --quantize: bitsandbytes and fp8 quantize the BF16 repo
// on load; AWQ, GPTQ and compressed-tensors are read from the checkpoint.
func tgiQuantize(q Quant, ck checkpoint) string {
	switch q.Family {
	case FamilyAWQ:
		return "awq"
	case FamilyGPTQ:
		return "gptq"
	case FamilyFP8:
		if ck.onLoad {
			return "fp8"
		}
	case FamilyINT8:
		return "compressed-tensors"
	case FamilyBNB:
		return "bitsandbytes-nf4"
	}
	return ""
}

// tgiArgs: TGI sizes its KV pool itself at warmup (--max-batch-total-tokens
// is ignored for flash-attention models, launcher/src/main.rs), so the
// command sets what it enforces: the per-request token limits and the
// number of requests it accepts before answering 429, which is the
// workload's users (they queue), not the plan's batch.
func tgiArgs(in launchIn) (server, []string) {
	s, c := in.s, in.c
	accept := max(in.conc, in.o.Users, s.Concurrency)
	a := []string{"--model-id", in.model,
		"--num-shard", fmt.Sprint(max(c.Devices, 1)),
		"--max-concurrent-requests", fmt.Sprint(accept),
		"--max-input-tokens", fmt.Sprint(int64(in.ctx - 1)),
		"--max-total-tokens", fmt.Sprint(int64(in.ctx)),
		"--max-batch-prefill-tokens", fmt.Sprint(int64(max(in.ctx, 4096))),
	}
	if q := in.quantFlag; q != "" {
		a = append(a, "--quantize", q)
	}
	if s.KV.ID == "fp8" && in.rel.Has("--kv-cache-dtype") {
		a = append(a, "--kv-cache-dtype", "fp8_e4m3fn")
	}
	notes := []string{fmt.Sprintf("TGI sizes its KV pool at warmup from free memory (TGI_WIGGLE_ROOM); the plan expects about %d tokens, %d running at once", c.Fit.MaxKVTokens, in.conc)}
	port := "8080"
	if in.image != "" {
		port = "80" // the image's convention, published as 8080
	}
	return server{prog: []string{"text-generation-launcher"}, args: append(a, "--hostname", in.host, "--port", port)}, notes
}

// tgiRules are TGI's rules (PolicyTGI).
type tgiRules struct{}

func (tgiRules) supported(s Scenario, b Backend) *UnsupportedError { return tgiSupported(s, b) }
func (tgiRules) fit(s Scenario, b Backend) FitResult               { return fitPaged(s, b, tgiPaged) }
func (tgiRules) flashAttention(Scenario, Backend) bool             { return true }
func (tgiRules) imageEntrypoint() bool                             { return true }
func (tgiRules) memoryKnob() string                                { return "" }

// quantizesOnLoad: FP8 and bitsandbytes from a BF16 repo (--quantize).
func (tgiRules) quantizesOnLoad(f QuantFamily) bool { return f == FamilyFP8 || f == FamilyBNB }

func (tgiRules) command(in *launchIn, _ *Launch) (server, []string, error) {
	in.quantFlag = tgiQuantize(in.s.Quant, in.ck)
	cmd, notes := tgiArgs(*in)
	return cmd, notes, nil
}

// tgiPaged is TGI's plan of a device: the wiggle room's share of it (0.9
// by default), and the activations of one prefill batch of
// --max-batch-prefill-tokens (4096).
func tgiPaged(s Scenario, b Backend, _ Tokens) pagedPlan {
	p := pagedBase(s, b)
	w := s.Engine.WiggleRoom
	if w == 0 {
		w = 0.9
	}
	p.budget = Bytes(w * float64(s.deviceMemory()))
	p.batched = 4096
	p.act = VLLMActivationPeak(s.Model, p.batched, 1, s.devices(), s.mem().VLLMActivationFactor)
	return p
}

// stepOverheadMs: TGI's router and Python shard per step [U].
func (tgiRules) stepOverheadMs(Backend, string) float64 { return 4 }

// admitOverheadMs: TGI's Rust router queues and batches requests; no
// published burst measures the shard's side [U].
func (tgiRules) admitOverheadMs() float64 { return 0 }

// frontEndProcess: the Rust router talks to the Python shards over gRPC.
func (tgiRules) frontEndProcess(string) bool { return true }

// streamOverheadUs: the Rust router streams to clients; what the Python
// shard does per request each step is seqOverheadPriorUs, streamed or not.
func (tgiRules) streamOverheadUs(string) float64 { return 0 }

// tgiShardSeqUs is TGI's host work per running sequence per step: the
// Python shard's generate_token decodes every request's new token
// (Model.decode_token: two tokenizer.decode calls over its recent ids,
// server/text_generation_server/models/model.py) and builds its
// Generation for the router, every step and serial with it. [U:
// magnitude. No published TGI row runs more than one sequence, so it is
// not fitted; 120 µs is vLLM's fitted per-sequence cost, whose V0 loop did
// the same kind of work in Python. TGI's own benchmark of mt0-xxl (seed
// 004, an older release) grows a decode step 43 → 64 ms from 1 to 32
// sequences, several hundred µs each.]
const tgiShardSeqUs = 120.0

// seqOverheadPriorUs: tgiShardSeqUs.
func (tgiRules) seqOverheadPriorUs() float64 { return tgiShardSeqUs }

// schedLimits: max_batch_prefill_tokens 4096 and 128 concurrent requests
// (router defaults [U]).
func (tgiRules) schedLimits(Scenario) schedLimits {
	return schedLimits{maxSeqs: 128, budget: 4096}
}

// mixedSteps: TGI 3 runs prefill chunks with the decodes; TGI 2 prefilled
// a new batch on its own and then concatenated it to the running one.
func (r tgiRules) mixedSteps(s Scenario) bool { return r.chunkedPrefill(s) }

// chunkedPrefill: TGI 3 chunks prefills.
func (tgiRules) chunkedPrefill(s Scenario) bool { return VersionAtLeast(s.EngineVersion, "3.0.0") }

// marlinInt4: AWQ/GPTQ on Marlin kernels on sm80+.
func (tgiRules) marlinInt4() bool { return true }

// docker: the image sets HF_HOME=/data (its Dockerfile), so the host's
// cache goes there, or every run downloads the weights again; 1 GB of
// shared memory and the launcher's port 80.
func (tgiRules) docker() dockerSpec {
	return dockerSpec{mounts: []string{"-v", "$HOME/.cache/huggingface:/data"}, run: []string{"--shm-size", "1g", "-p", "127.0.0.1:8080:80"}}
}

func (tgiRules) image(rel EngineRelease, b Backend) string { return gpuImage(rel, b) }

// modelDir: the image sets HF_HOME=/data (its Dockerfile).
func (tgiRules) modelDir() string { return "/data" }

// multiNode: TGI serves from one node.
func (tgiRules) multiNode(Engine) MultiNodeMode { return MultiNodeNone }
