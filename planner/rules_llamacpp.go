package planner

import (
	"fmt"
	"strings"
)

// llama.cpp's llama-server rules. Flags: common/arg.cpp (common_params_parser_init:
// each common_arg's names) at the builds named, as tools/server/README.md
// and the PRs below give them (CheckedFromDocs). What changed between them:
//   - --jinja (chat templates from the GGUF) from PR #9639, 2025-01;
//   - --kv-unified from PR #14363, 2025-07 (before it the cache was always
//     one pool shared by the slots);
//   - --n-cpu-moe from PR #15077 (b6100);
//   - -fa became on|off|auto in PR #15434 (2025-08, b6325); before it -fa
//     was a switch, and "-fa on" makes the old parser fail on "on".
func llamaCppReleases() []EngineRelease {
	ctk := llamaKVTypes
	// --rpc SERVERS (common/arg.cpp): the RPC backend's remote devices,
	// since May 2024 (ggml-org/llama.cpp PR #6829), before every release
	// tabled here.
	base := with(flags("-m", "-ngl", "-c", "-np", "-b", "-ub", "--host", "--port", "--api-key", "--rpc"),
		map[string]FlagSpec{"-ctk": {Values: ctk}, "-ctv": {Values: ctk}, "-fa": {Switch: true}})
	jinja := map[string]FlagSpec{"--jinja": {Switch: true}}
	unified := map[string]FlagSpec{"--kv-unified": {Switch: true}}
	faTri := map[string]FlagSpec{"-fa": {Values: []string{"on", "off", "auto"}}, "--n-cpu-moe": {}}
	img := func(b string) string { return "ghcr.io/ggml-org/llama.cpp:server-cuda-" + b }
	return sortReleases(LlamaCpp,
		EngineRelease{Release: MustRelease("b4000"), Name: "llama.cpp b4000 (llama-server)",
			Checked: CheckedFromDocs,
			Source:  "ggml-org/llama.cpp common/arg.cpp @ b4000", Image: img("b4000"), Flags: base},
		EngineRelease{Release: MustRelease("b5000"), Name: "llama.cpp b5000 (llama-server)",
			Checked: CheckedFromDocs,
			Source:  "ggml-org/llama.cpp common/arg.cpp @ b5000", Image: img("b5000"), Flags: with(base, jinja)},
		EngineRelease{Release: MustRelease("b6000"), Name: "llama.cpp b6000 (llama-server, -fa as a switch)",
			Checked: CheckedFromDocs,
			Source:  "ggml-org/llama.cpp common/arg.cpp @ b6000", Image: img("b6000"), Flags: with(with(base, jinja), unified)},
		EngineRelease{Release: MustRelease("b6500"), Name: "llama.cpp b6500 (llama-server, -fa on|off|auto)",
			Checked: CheckedFromDocs,
			Source:  "ggml-org/llama.cpp common/arg.cpp @ b6500", Image: img("b6500"), Flags: with(with(with(base, jinja), unified), faTri)},
		EngineRelease{Name: "llama.cpp master (llama-server, -fa on|off|auto)",
			Checked: CheckedFromDocs,
			Source:  "ggml-org/llama.cpp common/arg.cpp @ master (2026)", Image: "ghcr.io/ggml-org/llama.cpp:server-cuda",
			Flags: with(with(with(base, jinja), unified), faTri)},
	)
}

// llamaKVTypes are -ctk/-ctv's choices (kv_cache_types in common/arg.cpp).
var llamaKVTypes = []string{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}

// ikLlamaCppReleases: ik_llama.cpp keeps llama.cpp's early-2025 server
// options (-fa as a switch, no --kv-unified) and publishes no image.
func ikLlamaCppReleases() []EngineRelease {
	base := with(flags("-m", "-ngl", "-c", "-np", "-b", "-ub", "--host", "--port", "--api-key"),
		map[string]FlagSpec{"-ctk": {Values: llamaKVTypes}, "-ctv": {Values: llamaKVTypes}, "-fa": {Switch: true}})
	return sortReleases(IKLlamaCpp,
		EngineRelease{Name: "ik_llama.cpp main (llama-server)",
			Checked: CheckedFromDocs,
			Source:  "ikawrakow/ik_llama.cpp common/common.cpp (gpt_params_find_arg)", Flags: base},
	)
}

// llamaFAFixed is the first llama.cpp release Headroom knows to have GPU
// flash-attention kernels for gpt-oss with a quantized KV cache and for a
// bf16 KV cache on CUDA and SYCL: absent at b6500, present on master (the
// build in between is not pinned down: the zero Release, newest, stands
// for master).
var llamaFAFixed = Release{}

// llamaFACovers reports whether the build has a GPU flash-attention
// kernel for the scenario's KV type and model.
func llamaFACovers(s Scenario, b Backend, rel Release) bool {
	if b == CPU || rel.AtLeast(llamaFAFixed) {
		return true
	}
	if s.KV.ID == "bf16" && (b == CUDA || b == SYCL) {
		return false
	}
	return !(s.Model.Arch == "gpt_oss" && s.KV.ID != "f16" && s.KV.ID != "")
}

// llamaCppSupported: a quantized V cache needs flash attention, which
// builds before llamaFAFixed lack on the GPU for gpt-oss (the attention
// would fall back to the CPU).
func llamaCppSupported(s Scenario, b Backend, rel Release) *UnsupportedError {
	if s.Engine.ID == LlamaCpp && s.KV.NeedsFlashAttention && !llamaFACovers(s, b, rel) {
		return refuse(s, ReasonNoKernel, "llama.cpp %s has no %s flash-attention kernel for %s with a %s KV cache, which needs flash attention: use f16 KV or a newer build", rel, b, s.Model.Arch, s.KV.ID)
	}
	return nil
}

func llamaServerArgs(in launchIn) (server, []string) {
	s, c, rel := in.s, in.c, in.rel
	conc := in.conc
	unified := s.UnifiedKV && rel.Has("--kv-unified")
	cells := llamaLaunchCells(in, unified)
	file := in.model
	if in.image != "" && !strings.HasPrefix(file, "/") {
		// The GGUF is in this folder, mounted at /models (llama.cpp
		// docs/docker.md: -m /models/…).
		file = "/models/" + strings.TrimPrefix(file, "./")
	}
	a := []string{"-m", file,
		"-ngl", fmt.Sprint(c.Fit.GPULayers),
		"-c", fmt.Sprint(int64(cells)),
		"-np", fmt.Sprint(conc),
	}
	fa := flashAttentionOn(s, in.b)
	a = append(a, llamaFAFlag(rel, fa)...)
	if n := c.Fit.CPUMoELayers; n > 0 && rel.Has("--n-cpu-moe") {
		a = append(a, "--n-cpu-moe", fmt.Sprint(n))
	}
	if unified && conc > 1 {
		a = append(a, "--kv-unified")
	}
	if s.KV.ID != "f16" && s.KV.ID != "" {
		a = append(a, "-ctk", s.KV.ID, "-ctv", s.KV.ID)
	}
	if rel.Has("--jinja") {
		a = append(a, "--jinja")
	}
	if c.Nodes > 1 && rel.Has("--rpc") {
		a = append(a, "--rpc", rpcServers(c.Nodes, c.Devices/c.Nodes))
	}
	a = append(a, "-b", "2048", "-ub", "512", "--host", in.host, "--port", "8080")
	var notes []string
	if c.Nodes > 1 {
		notes = append(notes, rpcNote(c.Nodes, c.Devices/c.Nodes))
	}
	if unified {
		notes = append(notes, fmt.Sprintf("-c %d cells in one pool shared by %s (--kv-unified)", cells, Plural(conc, "slot")))
	} else {
		notes = append(notes, fmt.Sprintf("-c %d cells split over %s: %d tokens per slot", cells, Plural(conc, "slot"), int64(cells)/int64(conc)))
	}
	if !fa {
		notes = append(notes, fmt.Sprintf("flash attention off: %s has no GPU kernel for %s with %s KV", rel.Name, s.Model.Arch, s.KV.ID))
	}
	switch {
	case c.Fit.CPUMoELayers > 0 && !rel.Has("--n-cpu-moe"):
		notes = append(notes, fmt.Sprintf("this build has no --n-cpu-moe (llama.cpp b6100+): keep the experts of %d layers in RAM with -ot, or use a newer build", c.Fit.CPUMoELayers))
	case c.Fit.CPUMoELayers > 0:
		notes = append(notes, fmt.Sprintf("the expert tensors of the first %d layers stay in system RAM (--n-cpu-moe, llama.cpp since b6100, PR #15077); all layers' attention and KV stay on the device", c.Fit.CPUMoELayers))
	case c.Fit.Verdict == FitsWithOffload:
		notes = append(notes, fmt.Sprintf("partial offload: %d of %d layers on the device", c.Fit.GPULayers, c.Fit.TotalLayers+1))
	}
	if c.Fit.OffloadBytes > 0 && c.Fit.GPULayers > 0 {
		notes = append(notes, "weights in system RAM are copied to the device once per prompt ubatch: a larger -ub (1024-4096) cuts that cost for long prompts, for a larger compute buffer")
	}
	return server{prog: []string{"llama-server"}, args: a}, notes
}

// llamaLaunchCells is -c: the KV cells the plan sized (Fit.MaxKVTokens),
// grown to give each slot the context with template room. Split
// (default): -c is n × the per-slot context; unified: one pool of at least
// one full-length sequence.
func llamaLaunchCells(in launchIn, unified bool) Tokens {
	cells := in.c.Fit.MaxKVTokens
	per := padTo(in.ctx, 256)
	if unified && cells > 0 {
		return cells // the pool the plan sized already holds a full sequence
	}
	return max(cells, per*Tokens(in.conc))
}

// llamaFAFlag is the flash-attention option in the release's syntax.
func llamaFAFlag(rel EngineRelease, on bool) []string {
	if rel.Accepts("-fa", "on") {
		return []string{"-fa", map[bool]string{true: "on", false: "off"}[on]}
	}
	if on {
		return []string{"-fa"} // a switch before PR #15434: off unless given
	}
	return nil
}

// llamaImage is the image of the release built for the backend (llama.cpp
// docs/docker.md: server-cuda, server-rocm, server-vulkan, server-intel;
// plain server is the CPU build), or "".
func llamaImage(rel EngineRelease, b Backend) string {
	img := rel.Image
	if img == "" {
		return ""
	}
	suffix, ok := map[Backend]string{CUDA: "server-cuda", ROCm: "server-rocm", Vulkan: "server-vulkan", SYCL: "server-intel", CPU: "server"}[b]
	if !ok {
		return ""
	}
	return strings.Replace(img, "server-cuda", suffix, 1)
}

// llamaKQSpan is the number of KV cells one ubatch's attention spans in
// llama.cpp's worst-case graph, which sizes the KQ matrix of the compute
// buffer without flash attention: one slot's cells where the cache is
// split into per-slot streams (llama.cpp since PR #14363, without
// --kv-unified), every cell where all slots share one cache (Ollama's
// runner, ik_llama.cpp, llama.cpp builds before the split). Measured on
// Ollama 0.6.5 (calibrate/enginetest TestOllamaRunsTheLaunchPlan): 2
// slots × 1280 cells, CPU compute buffer 49.0 MiB, which a per-slot span
// (35.5 MiB planned) under-counts.
func llamaKQSpan(s Scenario, cells, slot Tokens) Tokens {
	if s.Engine.ID != LlamaCpp {
		return cells
	}
	rel, err := ReleaseFor(LlamaCpp, releaseOf(s))
	if err == nil && !rel.Has("--kv-unified") {
		return cells
	}
	return slot
}

// llamaSlotSpan is the sequence length MaxConcurrencyAtContext counts in:
// the per-slot context asked for, else (only -c/--ctx-size given) the
// slot's share of the cells. Counting in the whole pool's length made a
// unified or --ctx-size plan hold "1 sequence" and flags cut -np to 1
// (issue 18, defect 1).
func llamaSlotSpan(s Scenario, perSeq, ctx, cells Tokens) Tokens {
	if perSeq > 0 {
		return min(perSeq, ctx)
	}
	return max(cells/Tokens(s.concurrency()), 1)
}

// kvQuantized reports whether a KV type is a ggml block format (q8_0,
// q4_0), which costs quality the 8-bit float KV of the paged engines
// (fp8) is not charged for here.
func kvQuantized(kv KVType) bool { return strings.HasPrefix(kv.ID, "q") }

// quantizedKVSaves reports whether quantizing the KV cache of a GGML plan
// buys anything over its f16 row: it does when f16 does not hold every
// requested user at the context, or holds them only with weights in RAM.
// Where f16 already fits, q8_0 KV only costs quality (issue 18).
func quantizedKVSaves(full Candidate, users int) bool {
	return full.Fit.Verdict != Fits || full.Concurrency < users || full.Fit.MaxConcurrencyAtContext < users
}

// rpcPort is rpc-server's default port (tools/rpc/rpc-server.cpp).
const rpcPort = 50052

// rpcServers is the --rpc list of a plan over nodes of perNode devices:
// one rpc-server per device of every node but the one running
// llama-server, on ports rpcPort, rpcPort+1, …, as placeholders to fill.
func rpcServers(nodes, perNode int) string {
	var hosts []string
	for n := 2; n <= nodes; n++ {
		for d := 0; d < max(perNode, 1); d++ {
			hosts = append(hosts, fmt.Sprintf("<node%d>:%d", n, rpcPort+d))
		}
	}
	return strings.Join(hosts, ",")
}

// rpcNote says how to start the workers of an RPC plan (llama.cpp
// tools/rpc/README.md: one rpc-server per device, chosen with
// CUDA_VISIBLE_DEVICES; a build with -DGGML_RPC=ON; the protocol has no
// authentication, so a private network).
func rpcNote(nodes, perNode int) string {
	return fmt.Sprintf("on every node but this one (%s more) run one rpc-server per device, `CUDA_VISIBLE_DEVICES=i rpc-server -H 0.0.0.0 -p %d+i` for i = 0..%d (llama.cpp built with -DGGML_RPC=ON), and put their addresses in --rpc; the RPC protocol has no authentication: keep it on a private network", Plural(nodes-1, "node"), rpcPort, max(perNode, 1)-1)
}

// llamaCppRules are llama.cpp's rules (PolicyLlamaCpp: llama-server and
// ik_llama.cpp).
type llamaCppRules struct{}

func (llamaCppRules) supported(s Scenario, b Backend) *UnsupportedError {
	return llamaCppSupported(s, b, releaseOf(s))
}
func (llamaCppRules) fit(s Scenario, b Backend) FitResult { return fitLlamaCpp(s, b) }

// flashAttention: ik_llama.cpp always has it; llama.cpp where the build's
// kernels cover the KV type on the backend.
func (llamaCppRules) flashAttention(s Scenario, b Backend) bool {
	return s.Engine.ID != LlamaCpp || llamaFACovers(s, b, releaseOf(s))
}
func (llamaCppRules) imageEntrypoint() bool            { return true }
func (llamaCppRules) quantizesOnLoad(QuantFamily) bool { return false }
func (llamaCppRules) memoryKnob() string               { return "" }

func (llamaCppRules) command(in *launchIn, _ *Launch) (server, []string, error) {
	cmd, notes := llamaServerArgs(*in)
	return cmd, notes, nil
}

// stepOverheadMs: llama.cpp's C++ loop, well under a millisecond per step
// [U].
func (llamaCppRules) stepOverheadMs(b Backend, _ string) float64 {
	if b == CPU {
		return 0.2
	}
	return 0.5
}

// admitOverheadMs: llama-server tokenizes in its HTTP threads and launches
// a slot in its C++ loop [U: well under a millisecond].
func (llamaCppRules) admitOverheadMs() float64 { return 0 }

// frontEndProcess: llama-server's HTTP threads and its slot loop share
// one process.
func (llamaCppRules) frontEndProcess(string) bool { return false }

// streamOverheadUs: llama-server's HTTP threads send each slot's tokens
// beside its slot loop; what the loop itself spends per slot is the fitted
// seq_overhead_us.
func (llamaCppRules) streamOverheadUs(string) float64 { return 0 }

// seqOverheadPriorUs: fitted (seq_overhead_us).
func (llamaCppRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: llama-server's parallel slots (-np, 4 when auto) and -b
// 2048.
func (llamaCppRules) schedLimits(Scenario) schedLimits {
	return schedLimits{maxSeqs: 4, budget: 2048}
}

// mixedSteps: one llama_decode batch holds prompt tokens and the other
// slots' next tokens.
func (llamaCppRules) mixedSteps(Scenario) bool { return true }

// chunkedPrefill: llama-server batches prompt tokens with other slots'
// decodes (-b).
func (llamaCppRules) chunkedPrefill(Scenario) bool { return true }

func (llamaCppRules) marlinInt4() bool { return false }

// docker: the GGUF's folder mounted at /models, and port 8080.
func (llamaCppRules) docker() dockerSpec {
	return dockerSpec{run: []string{"-p", "127.0.0.1:8080:8080", "-v", "$PWD:/models"}}
}

// image: the release's build for the backend (llamaImage).
func (llamaCppRules) image(rel EngineRelease, b Backend) string { return llamaImage(rel, b) }

// modelDir: GGUF files mounted at /models.
func (llamaCppRules) modelDir() string { return "/models" }

// multiNode: llama-server extends its layer split over rpc-server
// workers (tools/rpc/README.md); ik_llama.cpp is planned on one node.
func (llamaCppRules) multiNode(e Engine) MultiNodeMode {
	if e.ID == LlamaCpp {
		return MultiNodeRPC
	}
	return MultiNodeNone
}
