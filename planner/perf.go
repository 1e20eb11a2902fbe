package planner

import (
	"math"
	"strings"
)

// Workload is what the server is asked to do.
type Workload struct {
	Prompt      Tokens // prompt tokens per request
	Gen         Tokens // generated tokens per request
	Concurrency int    // requests in flight (decode batch)
	Depth       Tokens // tokens already cached before the prompt (llama-bench -d)
	// Serving is true for a continuously batching server under a closed
	// loop of Concurrency clients (vllm bench serve, happy_vllm): other
	// requests' prefills are interleaved with each request's decode steps.
	Serving bool
	// VariableLengths is true when request lengths vary (ShareGPT-like
	// datasets), which spreads arrivals out.
	VariableLengths bool
	// Saturate sets the batch to what the server can hold (offline
	// throughput runs that state no concurrency).
	Saturate bool
	// Rate is an open-loop Poisson arrival rate in requests/s (MLPerf
	// Server scenario, `vllm bench serve --request-rate`); with Saturate
	// it caps the batch at what that rate keeps in flight (Little's law).
	Rate float64
	// Kind is the scenario this workload applies (single, closed, burst
	// ...); blank for callers that set the fields above directly.
	Kind WorkloadKind
	// Burst is the number of prompts sent at once (WorkloadBurst).
	Burst int
	// Median asks for per-request figures as medians, not means.
	Median bool
	// Requests is the number of requests a rate run sends (num_prompts),
	// 0 when unstated. It bounds the queue a run above capacity builds
	// (operatingPoint).
	Requests int
}

// Prediction is the speed answer for a scenario and workload.
type Prediction struct {
	PrefillTPS TokensPerSecond `json:"prefill_tps"` // prompt tokens/s of one prefill
	DecodeTPS  TokensPerSecond `json:"decode_tps"`  // tokens/s seen by one request
	// RequestTPS is one request's tokens over its whole time in the
	// server, TTFT included: gen / (TTFT + (gen−1)·TPOT).
	RequestTPS  TokensPerSecond `json:"request_tps"`
	TotalTPS    TokensPerSecond `json:"total_tps"`      // output tokens/s of all requests
	TTFT        Milliseconds    `json:"ttft_ms"`        // time to first token
	TPOT        Milliseconds    `json:"tpot_ms"`        // time per output token after the first
	StepMs      Milliseconds    `json:"decode_step_ms"` // one decode step of the whole batch
	ReqPerS     float64         `json:"req_per_s"`
	Bound       string          `json:"bound"` // "memory" or "compute" (decode step)
	DecodeEff   float64         `json:"decode_bw_efficiency"`
	PrefillEff  float64         `json:"prefill_compute_efficiency"`
	Source      string          `json:"source"` // prior, fitted, calibrated
	Concurrency int             `json:"concurrency"`
}

// Makespan is how long n requests take to complete at the rate the
// prediction completes them (0 when it states none): a burst's time until
// its last prompt is answered.
func (p Prediction) Makespan(n int) Milliseconds {
	if !(p.ReqPerS > 0) || math.IsInf(p.ReqPerS, 0) {
		return 0
	}
	return Milliseconds(float64(n) / p.ReqPerS * 1000)
}

// Features returns the scenario's feature keys for the efficiency models:
// device kind, vendor, architecture, engine, backend, weight format, and
// the interactions engine×backend, arch×engine, engine×quant,
// engine×backend×memory class (a backend's kernels are tuned for the
// datacenter HBM parts first: vLLM on ROCm runs CDNA's MI300X close to
// the CUDA parts and RDNA3.5's Strix Halo at half that speed, seed 002 and
// MLPerf v4.1; without the split each taught the other the wrong speed
// when held out), "nonnative" when the format's math has no native tensor path on the
// device (INT8 on RDNA3.5, FP8 on Ampere: modeling.md §3.6, seed 002).
// decode says which of the two models they are for: they differ only in
// how a llama.cpp build's age is encoded (ggmlBuildFeatures).
func Features(s Scenario, b Backend, decode bool) []string {
	h := s.Hardware
	eng := string(s.Engine.ID)
	quant, family := s.Quant.ID, string(s.Quant.Family)
	if marlinInt4(s, b) {
		// One kernel, one effect: what AWQ rows teach applies to GPTQ.
		quant, family = "int4-marlin", "int4-marlin"
	}
	f := []string{
		"kind=" + string(h.Kind),
		"vendor=" + h.Vendor,
		"arch=" + h.Arch,
		"mem=" + memClass(h.MemoryType),
		"engine=" + eng,
		"backend=" + string(b),
		"quant=" + quant,
		"family=" + family,
		"engine*backend=" + eng + "*" + string(b),
		"engine*backend*mem=" + eng + "*" + string(b) + "*" + memClass(h.MemoryType),
		"arch*engine=" + h.Arch + "*" + eng,
		"engine*family=" + eng + "*" + family,
	}
	if h.DieLink != "" {
		// Memory reached across a die bridge: llama.cpp's Apple-silicon
		// results (discussion #4167) put Ultra chips well below twice
		// their Max die at twice the nominal bandwidth.
		f = append(f, "die-link="+h.DieLink)
	}
	if p := s.Quant.NeedsNative; p != "" && !h.SupportsNative(p) {
		f = append(f, "nonnative="+string(p))
	}
	if s.Engine.IsGGML() {
		// ggml's kernels changed a lot between builds on the same device
		// (gpt-oss-20b decode on Strix Halo: 43 → 73 tok/s over 2025):
		// the build's year is an input, the newest when unstated.
		f = append(f, ggmlBuildFeatures(ggmlEra(s.EngineVersion), decode)...)
	}
	if r := releaseLine(s.EngineVersion); r != "" && !s.Engine.IsGGML() {
		// A serving engine's release line (vLLM 0.4 → 0.11 rewrote its
		// scheduler and kernels; SGLang 0.3 and 0.5 published speeds a
		// factor apart on the same GPUs). Unstated: the engine's mean.
		f = append(f, "release="+eng+"@"+r)
	}
	// Formats a backend runs slowly (BF16 GGUF on RDNA's Vulkan/ROCm
	// paths, +237% against the model in the published rows) and backends
	// weak on one architecture (prefill on Intel Arc's SYCL/Vulkan).
	f = append(f, "backend*family="+string(b)+"*"+family, "arch*backend="+h.Arch+"*"+string(b))
	if s.devices() > 1 {
		if s.Engine.IsGGML() {
			f = append(f, "multi-device=layer-split")
		} else {
			f = append(f, "multi-device=tensor-parallel")
		}
	}
	return f
}

// ggmlYears are the llama.cpp build years the efficiency fit tells
// apart (ggmlEra), oldest first; the last is the newest, what a user who
// does not say which build they run gets.
var ggmlYears = []string{"2023", "2024", "2025", "2026"}

// ggmlBuildFeatures encode a llama.cpp build's year for the decode or the
// prefill efficiency model.
//
// Prefill gets one feature per year boundary the build is older than
// ("ggml-before=2026" for every build before 2026, "ggml-before=2025"
// for every one before 2025, …): prompt processing got faster build after
// build (quantized matrix-matrix kernels, flash attention, tensor-core
// paths), so a build older than any a fit has seen is predicted at least
// as slow as the oldest it has, not at the mean of all years, which a
// feature per year gives an unseen year. Measured (2026-11-28, 1,045
// rows, overheads held): held out by source, prefill MdAPE 28.1 → 22.2%
// (XiongjieDai's May-2024 builds +22 → −8% signed, discussion #4167's
// 2023 build +43 → +17%), at 3 points of held-out output throughput
// (docs/predictions.md).
//
// Decode keeps one feature per year: decode is bound by memory and its
// kernels did not move one way across builds; the encoding above on
// decode as well took held-out decode from 14.6 to 16.3%.
func ggmlBuildFeatures(era string, decode bool) []string {
	if decode {
		return []string{"ggml-era=" + era}
	}
	var f []string
	for _, y := range ggmlYears[1:] {
		if era < y {
			f = append(f, "ggml-before="+y)
		}
	}
	return f
}

// ggmlCommitYears are llama.cpp commits that published benchmarks name
// without a build number, with the year the commit was made: the year
// cannot be read from a hash, and unknown is taken for the newest.
var ggmlCommitYears = map[string]string{
	// 8e672efe632bb6a7333964a255c4b96f018b9a65, 2023-11-21: the build of
	// discussion #4167's Apple-silicon table ("main table on fixed build
	// 8e672ef (2023-11-21)").
	"8e672ef": "2023",
	// 5143fa895e7725c5bd2135daf7d8f793d98fa91c, about 2025-09-05 (a
	// project vendoring it records that date), in discussion #15013's
	// CUDA table.
	"5143fa8": "2025",
}

// ggmlEra is the year of a llama.cpp build named in an engine_version
// ("b6918 (2f68ce7cf)", "May-2024 master", "Aug-2025", "8e672ef"): a
// bNNNN build number maps by the release tags' dates (b1700 ≈ Jan 2024,
// b4400 ≈ Jan 2025, b7600 ≈ Jan 2026 [U: approximate]), a commit by
// ggmlCommitYears, else a four-digit year in the text; unknown (another
// bare commit, blank) is the newest, 2026, which is what a user who does
// not say runs.
func ggmlEra(v string) string {
	if y, ok := ggmlCommitYears[leadingHex(v, 7)]; ok {
		return y
	}
	if n, ok := buildNumber(v); ok {
		switch {
		case n < 1700:
			return "2023"
		case n < 4400:
			return "2024"
		case n < 7600:
			return "2025"
		}
		return "2026"
	}
	for _, y := range ggmlYears {
		if strings.Contains(v, y) {
			return y
		}
	}
	return ggmlYears[len(ggmlYears)-1]
}

// leadingHex is the first n characters of v when they are lower-case hex
// digits (a git commit's short hash), else "".
func leadingHex(v string, n int) string {
	v = strings.TrimSpace(v)
	if len(v) < n {
		return ""
	}
	for _, r := range v[:n] {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return ""
		}
	}
	return v[:n]
}

// releaseLine is the major.minor of a release named in an engine_version
// ("v0.11.0" → "0.11", "0.6.1.post2" → "0.6"); "" when it names none.
func releaseLine(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	major, rest, ok := strings.Cut(v, ".")
	if !ok || !allDigits(major) {
		return ""
	}
	minor := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = rest[:i]
	}
	if minor == "" {
		return ""
	}
	return major + "." + minor
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// buildNumber reads a llama.cpp build tag "bNNNN" at the start of v; a
// commit hash that starts with b and digits ("b3622ab") is not one.
func buildNumber(v string) (int, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 2 || v[0] != 'b' {
		return 0, false
	}
	n, i := 0, 1
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9' && i < 8; i++ {
		n = n*10 + int(v[i]-'0')
	}
	if i < len(v) && (v[i] >= 'a' && v[i] <= 'f' || v[i] >= '0' && v[i] <= '9') {
		return 0, false
	}
	return n, i > 1
}

// marlinInt4 reports whether a 4-bit AWQ or GPTQ checkpoint runs on the
// Marlin kernel: vLLM (and SGLang, TGI, which use the same kernels)
// repack both to Marlin on CUDA GPUs of compute capability 8.0 and later
// (vLLM awq_marlin/gptq_marlin, chosen over awq/gptq when supported), so
// their speed is one kernel's, whichever format the checkpoint came in.
func marlinInt4(s Scenario, b Backend) bool {
	f := s.Quant.Family
	if (f != FamilyAWQ && f != FamilyGPTQ) || b != CUDA {
		return false
	}
	if r, ok := rulesFor(s.Engine.Policy); !ok || !r.marlinInt4() {
		return false
	}
	switch s.Hardware.Arch {
	case "ampere", "ada", "hopper", "blackwell":
		return true
	}
	return false
}

// memClass groups memory technologies (HBM, GDDR, LPDDR, DDR), which
// reach different shares of their peak bandwidth; it gives a device whose
// architecture has no data a better prior than its vendor alone.
func memClass(t string) string {
	t = strings.ToLower(t)
	for _, c := range []string{"hbm", "gddr", "lpddr", "ddr"} {
		if strings.Contains(t, c) {
			return c
		}
	}
	if strings.Contains(t, "unified") {
		return "lpddr"
	}
	return "other"
}

// stepOverheadMs is the fixed cost of one forward step of the engine on
// b: scheduling, sampling and kernel launches (each engine's
// stepOverheadMs in rules_*.go [U: typical figures]; the fitted
// efficiencies absorb what these constants miss).
func stepOverheadMs(e Engine, b Backend, release string) float64 {
	if r, ok := rulesFor(e.Policy); ok {
		return r.stepOverheadMs(b, release)
	}
	if b == CPU {
		return 0.2
	}
	return 0.5
}

// pythonStepMs is the per-step cost of a Python serving engine in release
// v: a few ms of scheduling and output handling on the GPU's critical path
// before the release (since) that moved them off it, about one after
// [U: magnitudes; each engine's rules name the release and the published
// figures behind them]. An unstated release is the newest.
func pythonStepMs(v, since string) float64 {
	if VersionAtLeast(v, since) {
		return 1
	}
	return 3
}

// layerOverheadUs is the per-layer step cost for backend b: fitted, or a
// 20 µs prior (a handful of kernel launches per layer [U]).
func layerOverheadUs(p *PerfParams, b Backend) float64 {
	if p != nil {
		if v, ok := p.LayerOverheadUs[string(b)]; ok {
			return v
		}
	}
	return 20
}

// seqCosts are the host-side ms per running sequence per step for the
// scenario's engine:
//   - seq, on every step: fitted per engine (PerfParams.SeqOverheadUs),
//     else the engine's prior (seqOverheadPriorUs in its rules: TGI's),
//     else 0. A Python engine's scheduler, sampler and output processor
//     touch every running request each step, so at a thousand sequences
//     this is tens of milliseconds a step (vLLM issue #8779 and PR #9087
//     "async output processing" [U: magnitudes]); the GPU step model alone
//     predicted 1000-prompt bursts' TPOT at half the published values.
//     llama-server samples every slot on the CPU over the whole vocabulary
//     (common/sampling.cpp: set_logits fills one candidate per vocabulary
//     entry, 128-152k for current models, before the sampler chain runs),
//     so its per-slot cost is the largest of the fitted ones;
//   - stream, more on each step of a workload that streams tokens to
//     clients from the engine's own process (streamOverheadUs in its
//     rules; added by forWorkload).
//
// One rules lookup for both, as requestCosts does for the per-request
// costs.
func seqCosts(p *PerfParams, s Scenario) (seq, stream float64) {
	r, ok := rulesFor(s.Engine.Policy)
	if ok {
		seq, stream = r.seqOverheadPriorUs()/1000, r.streamOverheadUs(s.EngineVersion)/1000
	}
	if p != nil {
		if v, fitted := p.SeqOverheadUs[string(s.Engine.ID)]; fitted {
			seq = v / 1000
		}
	}
	return seq, stream
}

// streams reports whether w's tokens go out to clients as they are made:
// a served run (clients, a burst, a rate), not an offline one, whose
// benchmark takes its outputs whole, and not one stream of a local tool.
func streams(w Workload) bool { return w.Serving && w.Kind != WorkloadOffline }

// forWorkload is pm for workload w: where w streams, each running
// sequence also costs the engine's streaming work per step. The cost is
// folded in once (streamOvh is cleared), so a caller that passes the
// result on does not pay it twice.
func (pm perfModel) forWorkload(w Workload) perfModel {
	if streams(w) {
		pm.seqOvh += pm.streamOvh
	}
	pm.streamOvh = 0
	return pm
}

// pythonAdmitMs is the engine-loop ms per admitted request of a serving
// engine whose scheduler runs in Python (vLLM, SGLang: admitOverheadMs in
// their rules). [U: magnitude. Measured with the fit: with GPUStack's
// 1000-prompt bursts, 1, 1.5, 2 and 3 ms put those bursts at 30.3, 29.9,
// 29.5 and 28.8% in-sample against 31.1% without (docs/predictions.md);
// its 4-token bursts bound the whole per-request cost of vLLM's gpt-oss
// runs, front end included, at 4.2-4.7 ms.]
const pythonAdmitMs = 2.0

// requestCosts are a request's costs outside the forward steps, in ms:
//   - front, the front end's serial work per request (requestOverheadMs),
//     which spaces a burst's arrivals at the engine (predictBurst);
//   - lone, what every served request waits in the front end before the
//     engine sees it: one front cost where the API server runs apart from
//     the engine loop (frontEndProcess in the engine's rules), else 0. The
//     front end handles one request at a time, so a lone request waits
//     one cost and the j-th of a burst j of them. Published clients at 1-8
//     users on vLLM 0.10-0.11, SGLang 0.5 and TensorRT-LLM 1.2 on an H100
//     wait 28-123 ms for a first token whose prefill takes a few ms; vLLM
//     0.4-0.6 (V0, one process) single requests wait what their prefill
//     takes;
//   - admit, the engine loop's own work per admitted request, serial with
//     its steps (admitOverheadMs in the engine's rules).
//
// All three are zero while FitPerf inverts rows (PerfParams.inverting):
// they are set after the efficiencies and move only bursts and TTFT.
func requestCosts(p *PerfParams, s Scenario) (front, lone, admit float64) {
	if p.inverting {
		return 0, 0, 0
	}
	front = requestOverheadMs(p, s.Engine.ID)
	if r, ok := rulesFor(s.Engine.Policy); ok {
		admit = r.admitOverheadMs()
		if r.frontEndProcess(s.EngineVersion) {
			lone = front
		}
	}
	return front, lone, admit
}

// requestOverheadMs is the serial front-end ms per admitted request for
// engine e (PerfParams.RequestOverheadMs), else 0. vLLM's API server
// tokenizes and hands requests to the engine core one at a time, so the
// last of 1000 prompts sent at once reaches the scheduler seconds after
// the first (the published bursts' TTFT on H100, where all 1000 are
// admitted at once, is 2-10× one prefill of the batch) [U: the mechanism
// is the front end's; the magnitude is fitted].
func requestOverheadMs(p *PerfParams, e EngineID) float64 {
	if p != nil {
		if v, ok := p.RequestOverheadMs[string(e)]; ok {
			return v
		}
	}
	return 0
}

// expertsTouched is the expected number of distinct experts B tokens
// route to with top-k of E uniform experts: E(1 − (1 − k/E)^B)
// (modeling.md §3.3).
func expertsTouched(e, k, b int) float64 {
	if e <= 0 {
		return 0
	}
	return float64(e) * (1 - math.Pow(1-float64(k)/float64(e), float64(b)))
}

// weightTraffic caches the byte counts decode traffic is built from.
type weightTraffic struct {
	streamed, experts float64 // per device, bytes
}

func newWeightTraffic(s Scenario) weightTraffic {
	m, q := s.Model, s.Quant
	total := float64(WeightBytes(m, q))
	var ex float64
	if m.IsMoE() {
		ex = float64(m.ExpertParams()) * q.expertBPW() / 8
	}
	// Embedding rows are gathered, not streamed; the output head is read.
	if !m.TiedEmbeddings {
		total -= float64(m.Vocab) * float64(m.Hidden) * q.EmbedBPW / 8
	}
	d := float64(speedDevices(s))
	return weightTraffic{streamed: (total - ex) / d, experts: ex / d}
}

// bytes is the weight traffic of a decode step of batch b: dense weights
// once, plus the experts the batch touches.
func (w weightTraffic) bytes(m Model, b int) float64 {
	if w.experts == 0 {
		return w.streamed
	}
	return w.streamed + w.experts*expertsTouched(m.Experts, m.TopK, b)/float64(m.Experts)
}

// speedDevices is how many devices share one step's work: all of them under
// tensor parallel, one at a time under llama.cpp's layer split (pipeline:
// "no speedup for a single sequence", modeling.md §3.4).
func speedDevices(s Scenario) int {
	if s.Engine.IsGGML() {
		return 1
	}
	return s.devices()
}

// attnDim is H_q × d_h, the attention width that multiplies context.
func attnDim(m Model) float64 { return float64(m.Heads * m.headDim()) }

// computePeak is the device's dense peak for the format's math: weight-only
// formats compute in fp16/bf16; W8A8 formats use int8/fp8 where native,
// else fall back to fp16 (modeling.md §3.1, §3.6). On backend b = CPU
// of a device that is not a CPU (an APU's or SoC's cores, a GPU host)
// it is hostCPUPeakFLOPS: the catalog's rates are the GPU's, and read as
// the CPU's they had vLLM on an M4 Max's CPU prefill as fast as llama.cpp
// on its 40-core GPU, and ranked first there.
func computePeak(s Scenario, b Backend) float64 {
	h := s.Hardware
	if b == CPU && h.Kind != KindCPU {
		return hostCPUPeakFLOPS
	}
	p := s.Quant.Compute
	if p == "" || p == FP32 && h.Kind != KindCPU {
		p = FP16
	}
	if !h.SupportsNative(p) {
		p = FP16
	}
	if s.Quant.Compute == BF16 && h.SupportsNative(BF16) {
		p = BF16
	}
	v := h.Peak(p)
	if v <= 0 {
		v = unknownPeakFLOPS
	}
	return v
}

// Fallbacks for a device the catalog has no figure for (a generic probed
// device before `headroom calibrate`); every plan on one says its figures
// are priors.
const (
	// unknownPeakFLOPS is 1 TFLOP/s: below any GPU of the last decade and
	// about what 8 AVX2 cores sustain in FP32 GEMM [U], so an unknown
	// device is not assumed fast.
	unknownPeakFLOPS = 1e12
	// hostCPUPeakFLOPS is the CPU cores of an APU or SoC, whose own
	// rate the catalog does not record: 1 TFLOP/s, the low end of what
	// 8-16 cores with 128-512-bit FMA units at 3-5 GHz reach in FP32
	// (cores × GHz × FMA lanes × 2) [U].
	hostCPUPeakFLOPS = 1e12
	// unknownLinkBytesPerS is 25 GB/s, PCIe 4.0 x16 in one direction
	// (31.5 GB/s raw, ~80% achieved; PCI-SIG spec [spec]), for tensor
	// parallel over an interconnect the catalog does not name.
	unknownLinkBytesPerS = 25e9
	// unknownMemBytesPerS is 50 GB/s: dual-channel DDR5-4800's 76.8 GB/s
	// at the ~65% a STREAM triad reaches [D], for a device whose
	// bandwidth is unknown.
	unknownMemBytesPerS = 50e9
	// defaultHostGBs is system RAM bandwidth for weights kept in RAM when
	// the plan is not told (--host-bandwidth): dual-channel DDR5-4800,
	// 76.8 GB/s peak rounded down [D].
	defaultHostGBs = 60.0
	// hostReadEff is the share of that bandwidth llama.cpp's CPU matrix
	// kernels reach reading offloaded weights (the CPU decode rows of the
	// published measurements run at 0.6-0.8 of the triad rate [D]).
	hostReadEff = 0.7
)

// allReduceMs is the tensor-parallel cost of one step of t tokens: 2L
// all-reduces of t × d × 2 bytes, ring time α + 2(p−1)/p × bytes/busBW
// (modeling.md §3.4; α 15 µs on NVLink/xGMI, 30 µs over PCIe [U]).
func allReduceMs(s Scenario, tokens float64) float64 {
	p := s.devices()
	if p <= 1 || s.Engine.IsGGML() {
		return 0
	}
	ic := s.Hardware.Interconnect
	bw := ic.GBs * 1e9
	alpha := 15e-6
	if bw <= 0 || ic.Kind == "none" {
		bw = unknownLinkBytesPerS
	}
	if len(ic.Kind) >= 4 && ic.Kind[:4] == "pcie" {
		alpha = 30e-6
	}
	bytes := tokens * float64(s.Model.Hidden) * 2
	per := alpha + 2*float64(p-1)/float64(p)*bytes/bw
	return 2 * float64(s.Model.Layers) * per * 1000
}

// perfModel binds a scenario to its efficiencies.
type perfModel struct {
	s          Scenario
	bw, peak   float64 // per device, bytes/s and FLOP/s
	effD, effP float64
	ovh        float64 // ms per step
	seqOvh     float64 // ms per running sequence per step
	streamOvh  float64 // ms more per running sequence per step while streaming (forWorkload)
	reqOvh     float64 // ms of front-end work per admitted request
	admitOvh   float64 // ms of engine-loop work per admitted request, serial with steps
	loneFE     float64 // ms every served request spends in the front end first (requestCosts)
	mixed      bool    // prefills share decode steps (engineRules.mixedSteps)
	kvTok      float64 // per device
	wt         weightTraffic
	// queue is the closed-loop queue share σ for fixed and varied
	// request lengths (queueFactor, looked up once per scenario).
	queue [2]float64 // [0] fixed, [1] varied
	// gemv: the bandwidth was measured by a matrix-vector kernel
	// (Calibrated.GEMVBandwidth), so one-sequence steps are bound by it.
	gemv   bool
	source string
}

// applyCalibration replaces fitted terms with this machine's measured ones.
func (pm *perfModel) applyCalibration(c Calibrated, model string) {
	if c.BandwidthGBs > 0 {
		pm.bw = c.BandwidthGBs * 1e9
	}
	if c.TFLOPS > 0 {
		pm.peak = c.TFLOPS * 1e12
	}
	if c.DecodeEff > 0 {
		pm.effD = c.DecodeEff
	}
	if c.PrefillEff > 0 {
		pm.effP = c.PrefillEff
	}
	if k := c.decodeScale(model); k > 0 {
		pm.effD = math.Min(1, pm.effD*k)
	}
	if c.StepOverheadMs > 0 {
		pm.ovh = c.StepOverheadMs
	}
	pm.gemv = c.GEMVBandwidth && c.BandwidthGBs > 0
	pm.source = "calibrated"
}

func newPerfModel(s Scenario, p *PerfParams) perfModel {
	return newPerfModelEff(s, p, 0, 0)
}

// fittedTerms are the parts of a perfModel looked up from the fitted
// parameters by the scenario's features (Features, queueKey). They depend
// on the hardware, engine, backend, weight format and whether more than
// one device shares a step, not on the batch, context or KV type, so a
// plan looks them up once per such key (termsKey) rather than per
// candidate.
type fittedTerms struct {
	effD, effP float64
	queue      [2]float64
}

// termsKey is what fittedTerms depend on within one hardware's plan.
type termsKey struct {
	engine  EngineID
	backend Backend
	quant   string
	multi   bool
}

func lookupTerms(s Scenario, b Backend, p *PerfParams) fittedTerms {
	f := Features(s, b, true)
	effD := p.Decode.Eval(f, 0.02, 1.0)
	if s.Engine.IsGGML() {
		// Only a llama.cpp build's age is encoded apart for prefill.
		f = Features(s, b, false)
	}
	return fittedTerms{
		effD:  effD,
		effP:  p.Prefill.Eval(f, 0.005, 1.0),
		queue: [2]float64{queueFactor(p, s, false), queueFactor(p, s, true)},
	}
}

// newPerfModelEff is newPerfModel with the efficiencies forced when
// positive (used by the fitter to invert rows).
func newPerfModelEff(s Scenario, p *PerfParams, effD, effP float64) perfModel {
	b, _ := s.ResolveBackend()
	if p == nil {
		d := DefaultPerfParams()
		p = &d
	}
	pm := newPerfModelTerms(s, b, p, lookupTerms(s, b, p))
	if effD > 0 {
		pm.effD = effD
	}
	if effP > 0 {
		pm.effP = effP
	}
	return pm
}

// newPerfModelTerms binds s on backend b to the fitted terms t looked up
// for it (lookupTerms), then applies this machine's calibration if p has
// one for it.
func newPerfModelTerms(s Scenario, b Backend, p *PerfParams, t fittedTerms) perfModel {
	pm := perfModel{
		s:     s,
		bw:    s.Hardware.Bandwidth(),
		peak:  computePeak(s, b),
		effD:  t.effD,
		effP:  t.effP,
		ovh:   stepOverheadMs(s.Engine, b, s.EngineVersion) + float64(s.Model.Layers)*layerOverheadUs(p, b)/1000,
		mixed: mixedSteps(s),
		kvTok: float64(KVBytesPerToken(s.Model, s.KV, s.devices())),
		wt:    newWeightTraffic(s),
		queue: t.queue,
	}
	pm.seqOvh, pm.streamOvh = seqCosts(p, s)
	pm.reqOvh, pm.loneFE, pm.admitOvh = requestCosts(p, s)
	if pm.bw <= 0 {
		pm.bw = unknownMemBytesPerS
	}
	pm.source = "prior"
	if p.Source != "" {
		pm.source = p.Source
	}
	if len(p.Calibrations) > 0 {
		if cal, ok := p.Calibrations[CalibrationKey(s.Hardware.ID, s.Engine.ID, b)]; ok {
			pm.applyCalibration(cal, s.Model.ID)
		}
	}
	return pm
}

// decodeStep returns the ms of one decode step of batch b at mean context
// ctx, and whether memory or compute bounds it: t = overhead +
// max(bytes/(BW·η_d), FLOPs/(P·η_p)) + all-reduce (modeling.md §3.1).
func (pm perfModel) decodeStep(b int, ctx float64) (float64, string) {
	s := pm.s
	m := s.Model
	bytes := pm.wt.bytes(m, b) + float64(b)*ctx*pm.kvTok
	tMem := bytes / (pm.bw * pm.effD) * 1000
	tComp := pm.decodeCompute(b, ctx)
	t, bound := tMem, "memory"
	if tComp > tMem && !(pm.gemv && b == 1) {
		t, bound = tComp, "compute"
	}
	if off := pm.offloadMs(b); off > 0 {
		t += off
		bound = "host memory"
		if b >= opOffloadMinBatch {
			bound = "host link"
		}
	}
	return pm.ovh + float64(b)*pm.seqOvh + t + allReduceMs(s, float64(b)) + pipelineTransferMs(s, float64(b)), bound
}

// opOffloadMinBatch is the batch from which a GGML GPU backend runs a
// matrix product whose weights sit in system RAM on the GPU, copying the
// weights over the host link, instead of on the CPU: ggml-cuda's
// ggml_backend_cuda_device_offload_op, min_batch_size = 32 (described in
// ik_llama.cpp PR #520; llama.cpp --no-op-offload turns it off).
const opOffloadMinBatch = 32

// offloadMs is the extra ms a step of t tokens spends on weights resident
// in system RAM on a discrete GPU (whole layers under a partial -ngl, or
// only experts under --n-cpu-moe). Below opOffloadMinBatch the CPU runs
// them at host memory speed, reading what the tokens use: the dense
// weights and the experts they route to. From it on, each step copies all
// the offloaded weights to the GPU over the host link.
func (pm perfModel) offloadMs(t int) float64 {
	s := pm.s
	if s.OffloadBytes <= 0 || s.Hardware.MemoryModel != MemDiscrete {
		return 0
	}
	off := float64(s.OffloadBytes)
	if t >= opOffloadMinBatch {
		return off / (hostLinkGBs(s.Hardware) * 1e9) * 1000
	}
	hb := s.HostBandwidthGBs
	if hb <= 0 {
		hb = defaultHostGBs
	}
	share := 1.0 // a dense model reads all of it
	all := pm.wt.streamed + pm.wt.experts
	switch {
	case s.CPUMoELayers > 0 && s.Model.IsMoE(): // experts only
		share = expertsTouched(s.Model.Experts, s.Model.TopK, t) / float64(s.Model.Experts)
	case all > 0:
		share = pm.wt.bytes(s.Model, t) / all
	}
	return off * share / (hb * 1e9 * hostReadEff) * 1000
}

// hostLinkGBs is the GB/s a discrete GPU copies host memory at: its PCIe
// link where that is the catalog's interconnect (25 GB/s for 4.0 x16, 50
// for 5.0), else PCIe 4.0 for the Volta/Ampere/CDNA2 SXM/OAM generation
// and PCIe 5.0 after it.
func hostLinkGBs(h Hardware) float64 {
	ic := h.Interconnect
	if strings.HasPrefix(ic.Kind, "pcie") && ic.GBs > 0 {
		return ic.GBs
	}
	switch h.Arch {
	case "volta", "ampere", "cdna2", "cdna":
		return 25
	}
	return 50
}

// decodeCompute is the compute-only ms of one decode step of batch b at
// mean context ctx: 2·N_act FLOPs per token plus attention over the
// context (modeling.md §3.1), at η_p of the device's peak, each matrix
// product at the small-batch efficiency of the columns it sees. Dense
// layers see the whole batch; an MoE expert sees only the tokens routed
// to it, b·k/E_touched(b) on average (modeling.md §3.3), so in a GGML
// engine a batch of 32 on a 32-expert top-4 model multiplies each expert
// by ~4 columns, not 32 (§3.6: MMVQ/MMQ choice and efficiency follow the
// column count of each mul_mat_id slice).
func (pm perfModel) decodeCompute(b int, ctx float64) float64 {
	s := pm.s
	m := s.Model
	sd := float64(speedDevices(s))
	bf := float64(b)
	dense := float64(m.active())
	var experts float64 // active expert parameters per token
	cols := bf
	if m.IsMoE() {
		experts = math.Min(float64(m.ExpertParams())*float64(m.TopK)/float64(m.Experts), dense)
		dense -= experts
		cols = bf * float64(m.TopK) / math.Max(expertsTouched(m.Experts, m.TopK, b), 1)
	}
	rate := pm.peak * pm.effP
	t := (2*dense/sd + 4*float64(m.Layers)*attnDim(m)*ctx/sd) * bf / (rate * smallBatchGEMM(s.Engine, bf))
	if experts > 0 {
		t += 2 * experts / sd * bf / (rate * smallBatchGEMM(s.Engine, cols))
	}
	return t * 1000
}

// queueFactor is the fitted share σ ∈ [0, 1] of other requests' prefills
// a new request waits for, keyed by engine, scheduling (queueKey) and
// whether request lengths vary; a key the fit never saw falls back to the
// same engine without the scheduling split, then to what the scheduling
// implies (waveQueueShare).
func queueFactor(p *PerfParams, s Scenario, variable bool) float64 {
	if p != nil {
		for _, k := range []string{queueKey(s, variable), lengthsKey(string(s.Engine.ID), variable)} {
			if v, ok := p.QueueFactor[k]; ok {
				return math.Min(1, math.Max(0, v))
			}
		}
	}
	return waveQueueShare(chunkedPrefill(s), variable)
}

// waveQueueShare is the queue share σ of a closed loop whose clients send
// together and stay in step, as they do with fixed lengths (each cycle
// ends for all at once): an engine that prefills whole prompts batches the
// wave's prompts, and every request gets its first token when the wave's
// prefill ends (σ = 1); one that chunks them hands request j of b its
// first token after (j+1)/b of it, ½ on average (predictBurst's waves).
// Varied lengths drift the clients apart: ¼. The fitted shares sit near
// these (vLLM 0.4-0.6 without chunking 0.8, with chunking 0.19-0.32,
// docs/predictions.md); this is what a regime with no published rows gets,
// and what a source held out of the fit gets for its own regime (with ½
// for every unfitted regime, France-Travail's closed loops held out came
// out at half their TTFT: LOSO TTFT 38.2 → 35.8%).
func waveQueueShare(chunked, variable bool) float64 {
	switch {
	case variable:
		return 0.25
	case chunked:
		return 0.5
	}
	return 1
}

// queueKey names the queueing regime a serving scenario runs in: the
// engine, "/chunked" when it chunks prefills by default, "/variable" for
// varied request lengths.
func queueKey(s Scenario, variable bool) string {
	k := string(s.Engine.ID)
	if chunkedPrefill(s) {
		k += "/chunked"
	}
	return lengthsKey(k, variable)
}

// lengthsKey appends "/variable" to a queue key for varied lengths.
func lengthsKey(k string, variable bool) string {
	if variable {
		return k + "/variable"
	}
	return k
}

// mixedSteps reports whether the engine runs a new request's prefill in
// the running decodes' step (its rules' mixedSteps; false for an engine
// without rules).
func mixedSteps(s Scenario) bool {
	r, ok := rulesFor(s.Engine.Policy)
	return ok && r.mixedSteps(s)
}

// chunkedPrefill reports whether the engine, as launched with its
// defaults, splits prompts into chunks that ride in decode steps
// (decode-first scheduling) rather than running whole prefills that stall
// every decode (prefill-first). New requests then queue for a token
// budget per step instead of behind whole prompts, which changes TTFT
// under load by several times (France-Travail benchmark_llm_serving runs:
// 128k-context models on vLLM 0.5.3–0.7 queue 2–6× less at 38 clients
// than 8k/32k-context ones on the same versions). Each engine's rule, with
// its source, is its chunkedPrefill in rules_*.go.
func chunkedPrefill(s Scenario) bool {
	r, ok := rulesFor(s.Engine.Policy)
	return ok && r.chunkedPrefill(s)
}

// smallBatchGEMM is the share of prefill GEMM efficiency a decode batch of
// b sequences reaches in a GGML engine: b/(b+16) from two sequences on.
// llama.cpp decodes one sequence with matrix-vector kernels (MMVQ), bound
// by memory and covered by the bandwidth term, but switches to its
// quantized matrix-matrix kernels (MMQ) for batches, which run far below
// their large-batch rate on a few columns (modeling.md §3.6; tall-skinny
// GEMMs in general: vLLM PR #20071). The half-efficiency point of 16 rows
// is [U], chosen against the batched rows of the published measurements.
// Other engines use cuBLAS/hipBLASLt GEMMs whose small-batch cost the
// fitted efficiency already carries (factor 1).
func smallBatchGEMM(e Engine, cols float64) float64 {
	if !e.IsGGML() || cols < 2 {
		return 1
	}
	return cols / (cols + 16)
}

// prefillCompute is the compute-only ms to process n prompt tokens at
// depth d: 2·N_act·n + 2·L·d_attn·(n² + 2·n·d) FLOPs (causal attention;
// modeling.md §3.1), at η_p of the device's peak.
func (pm perfModel) prefillCompute(n, d float64) float64 {
	m := pm.s.Model
	flops := pm.linearPrefillFLOPs(n) + 2*float64(m.Layers)*attnDim(m)*(n*n+2*n*d)
	return flops / float64(speedDevices(pm.s)) / (pm.peak * pm.effP) * 1000
}

// linearPrefillFLOPs is 2·N_act·t, the FLOPs of t prompt tokens through
// the linear layers (modeling.md §3.1), with the experts' share counted at
// the small-batch efficiency a GGML engine's expert products reach:
// llama-server multiplies a prompt in ubatches of -ub tokens
// (llamaUbatch), and each expert sees only the tokens routed to it,
// ub·k/E_touched(ub) columns (32 for a 128-expert top-8 model), on the
// same curve as a decode step's (smallBatchGEMM, decodeCompute). Other
// engines' fused MoE kernels carry their cost in the fitted efficiency.
func (pm perfModel) linearPrefillFLOPs(t float64) float64 {
	m := pm.s.Model
	act := float64(m.active())
	if !m.IsMoE() || !pm.s.Engine.IsGGML() || t < 1 {
		return 2 * act * t
	}
	ub := math.Min(t, float64(llamaUbatch))
	experts := math.Min(float64(m.ExpertParams())*float64(m.TopK)/float64(m.Experts), act)
	cols := ub * float64(m.TopK) / math.Max(expertsTouched(m.Experts, m.TopK, int(ub)), 1)
	return 2*(act-experts)*t + 2*experts*t/smallBatchGEMM(pm.s.Engine, cols)
}

// prefill is the ms to prefill n tokens at depth d in one request: at
// least one read of the weights, and the compute above.
func (pm perfModel) prefill(n, d float64) float64 {
	read := pm.wt.bytes(pm.s.Model, int(math.Max(n, 1))) / (pm.bw * pm.effD) * 1000
	return pm.ovh + math.Max(read, pm.prefillCompute(n, d)) + allReduceMs(pm.s, n) + pipelineTransferMs(pm.s, n) + pm.prefillOffloadMs(n)
}

// prefillOffloadMs is what weights in system RAM add to a prefill of n
// tokens: llama-server splits a prompt into ubatches of -ub 512 tokens
// (llamaUbatch) and each one of opOffloadMinBatch tokens or more copies the
// offloaded weights to the GPU (offloadMs), which is why prompt processing
// with partial offload is slow unless -ub is raised.
func (pm perfModel) prefillOffloadMs(n float64) float64 {
	if pm.s.OffloadBytes <= 0 {
		return 0
	}
	ub := float64(llamaUbatch)
	full := math.Floor(n / ub)
	rest := n - full*ub
	t := full * pm.offloadMs(int(ub))
	if rest >= 1 {
		t += pm.offloadMs(int(rest))
	}
	return t
}

// Predict returns speed figures for the scenario under workload w, using
// the fitted efficiencies p (nil = priors). The workload's arrival
// pattern (ParseWorkload: users, burst, rate, offline) picks the
// scheduler model (predictScheduled).
func Predict(s Scenario, w Workload, p *PerfParams) Prediction {
	return predictScheduled(s, newPerfModel(s, p), w, p, 0, 0)
}

// genTokens is the workload's generated tokens per request, 128 when
// not stated.
func genTokens(w Workload) float64 {
	if w.Gen <= 0 {
		return 128
	}
	return float64(w.Gen)
}

func predictWith(pm perfModel, w Workload) Prediction {
	pm = pm.forWorkload(w)
	b := max(w.Concurrency, 1)
	prompt := float64(w.Prompt)
	gen := genTokens(w)
	ctx := float64(w.Depth) + prompt + gen/2
	step, bound := pm.decodeStep(b, ctx)
	tpot := step
	tPre := pm.prefill(math.Max(prompt, 1), float64(w.Depth))
	ttft := tPre
	if w.Serving && b > 1 {
		// Continuous batching (modeling.md §3.2): in each request's cycle
		// the server also runs the other b−1 requests' prefills. On
		// arrival a request waits for the step in flight (½ step); where
		// the engine mixes prefills into decode steps (mixedSteps) its
		// prefill also rides in a step with the others' decodes (+1 step),
		// while a prefill-first engine runs it alone.
		chunk := pm.prefillCompute(prompt, float64(w.Depth))
		arrive := 0.5 * step
		if pm.mixed {
			arrive += step
		}
		others := float64(b-1) * chunk
		gaps := math.Max(gen-1, 1) // inter-token gaps of one request
		if w.Rate > 0 {
			// Open-loop Poisson arrivals spread the others' prefills over
			// this request's decode steps, and the prefills queued ahead
			// of it are those that arrived during the step in flight,
			// λ·t_step (M/D/1-like).
			tpot += others / gaps
			ttft += arrive + w.Rate*step/1000*chunk
		} else {
			// A closed loop of b clients: the others' prefills take the
			// same GPU time per cycle however they fall, so they are split
			// between waiting before the first token (a share σ: requests
			// that arrive together in waves queue for each other's whole
			// prefills) and pauses between tokens (1−σ: arrivals spread
			// out interleave with the decode steps). σ is fitted per
			// queueing regime (queueKey); the cycle, and so throughput,
			// does not depend on it.
			sigma := pm.queue[0]
			if w.VariableLengths {
				sigma = pm.queue[1]
			}
			tpot += (1 - sigma) * others / gaps
			ttft += arrive + sigma*others
		}
	}
	if w.Serving {
		// The request's own trip through the front end (requestCosts).
		ttft += pm.loneFE
	}
	src := pm.source
	cycle := ttft + (gen-1)*tpot
	pr := Prediction{
		PrefillTPS:  TokensPerSecond(math.Max(prompt, 1) / tPre * 1000),
		DecodeTPS:   TokensPerSecond(1000 / tpot),
		RequestTPS:  requestTPS(gen, ttft, tpot),
		TTFT:        Milliseconds(ttft),
		TPOT:        Milliseconds(tpot),
		StepMs:      Milliseconds(step),
		Bound:       bound,
		DecodeEff:   pm.effD,
		PrefillEff:  pm.effP,
		Source:      src,
		Concurrency: b,
	}
	if w.Serving {
		pr.TotalTPS = TokensPerSecond(float64(b) * gen / cycle * 1000)
		pr.ReqPerS = float64(b) / cycle * 1000
	} else {
		pr.TotalTPS = TokensPerSecond(float64(b) * 1000 / tpot)
		pr.ReqPerS = float64(b) / cycle * 1000
	}
	return pr
}

// requestTPS is one request's tokens over its whole time in the server,
// TTFT included: gen / (TTFT + (gen−1)·TPOT), times in ms.
func requestTPS(gen, ttft, tpot float64) TokensPerSecond {
	return TokensPerSecond(gen / (ttft + (gen-1)*tpot) * 1000)
}

// PrefillBatch returns aggregate prefill tokens/s when b sequences of n
// tokens are prefilled together (llama-batched-bench S_PP).
func PrefillBatch(s Scenario, n Tokens, b int, p *PerfParams) TokensPerSecond {
	return prefillBatchWith(newPerfModel(s, p), n, b)
}

// batchPrefillCompute is the compute-only ms to prefill b sequences of n
// tokens: linear layers see all tokens at once, attention is per sequence
// (2·N_act·b·n + b·2·L·d_attn·n² FLOPs, modeling.md §3.1).
func (pm perfModel) batchPrefillCompute(n Tokens, b int) float64 {
	m := pm.s.Model
	seqs := float64(max(b, 1))
	tot := float64(n) * seqs
	flops := pm.linearPrefillFLOPs(tot) + seqs*2*float64(m.Layers)*attnDim(m)*float64(n)*float64(n)
	return flops / float64(speedDevices(pm.s)) / (pm.peak * pm.effP) * 1000
}

func prefillBatchWith(pm perfModel, n Tokens, b int) TokensPerSecond {
	s := pm.s
	tot := float64(n) * float64(max(b, 1))
	m := s.Model
	comp := pm.batchPrefillCompute(n, b)
	read := pm.wt.bytes(m, int(tot)) / (pm.bw * pm.effD) * 1000
	t := pm.ovh + math.Max(read, comp) + allReduceMs(s, tot) + pipelineTransferMs(s, tot)
	return TokensPerSecond(tot / t * 1000)
}
