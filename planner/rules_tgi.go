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
