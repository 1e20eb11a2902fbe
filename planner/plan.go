package planner

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// SLO is a latency target; zero fields are unconstrained.
type SLO struct {
	TTFT Milliseconds `json:"ttft_ms,omitempty"`
	TPOT Milliseconds `json:"tpot_ms,omitempty"`
	// MinUserTPS is the decode speed each user must see.
	MinUserTPS TokensPerSecond `json:"min_user_tps,omitempty"`
}

// Meets reports whether a prediction satisfies the SLO.
func (o SLO) Meets(p Prediction) bool {
	return (o.TTFT == 0 || p.TTFT <= o.TTFT) && (o.TPOT == 0 || p.TPOT <= o.TPOT) &&
		(o.MinUserTPS == 0 || p.DecodeTPS >= o.MinUserTPS)
}

// String reads like the --slo flag: "TTFT ≤ 1 s, TPOT ≤ 50.0 ms".
func (o SLO) String() string {
	var parts []string
	if o.TTFT > 0 {
		parts = append(parts, "TTFT ≤ "+o.TTFT.String())
	}
	if o.TPOT > 0 {
		parts = append(parts, "TPOT ≤ "+o.TPOT.String())
	}
	if o.MinUserTPS > 0 {
		parts = append(parts, "≥ "+o.MinUserTPS.String()+" per user")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// PlanRequest asks for the best configurations of a model on a machine.
type PlanRequest struct {
	Catalog  *Catalog
	Hardware Hardware
	// Devices is how many devices the machine has; plans use 1..Devices
	// in powers of two for tensor parallel.
	Devices int
	// Nodes is how many such machines a configuration may span (0 or 1 =
	// one): each node's Devices run tensor parallel, nodes are pipeline
	// stages (MultiNode). Engines that stay on one node are left out.
	Nodes int
	// NodeLink is the network between nodes (zero = DefaultNodeLink).
	NodeLink NodeLink
	Model    Model
	Workload Workload // Prompt, Gen, Concurrency = users to serve
	SLO      SLO
	// UsableMemory and HostMemory come from the probe (0 = catalog).
	UsableMemory, HostMemory Bytes
	// UsableFor, when set, is what each engine can allocate with each
	// backend on the probed device (vLLM and llama.cpp see different
	// limits on the same APU); it overrides UsableMemory per candidate.
	UsableFor func(Engine, Backend) Bytes `json:"-"`
	// HostBandwidthGBs is system RAM bandwidth for weights kept there
	// (0 = Scenario's default).
	HostBandwidthGBs float64
	// Engines and Quants restrict the search (empty = all).
	Engines []EngineID
	Quants  []string
	// Releases is the release each engine's rules and predictions follow
	// ("0.6.0" for vLLM, "b4000" for llama.cpp); an engine not named gets
	// its newest. One version string means different things to different
	// engines, so a release is always given with its engine.
	Releases map[EngineID]string
	// bestOnly skips the runner-ups' reasons (Compare reads only the best).
	bestOnly bool
	// bands is the plan's error band (PerfParams.workloadBands), set by Plan.
	bands map[string]float64
}

// Candidate is one configuration at its best concurrency.
type Candidate struct {
	Scenario *Scenario `json:"-"`
	Engine   EngineID  `json:"engine"`
	Backend  Backend   `json:"backend"`
	Quant    string    `json:"quant"`
	KVType   string    `json:"kv_type"`
	Devices  int       `json:"tensor_parallel"`
	// Nodes is the number of nodes (pipeline stages, or llama.cpp RPC
	// hosts) one replica spans; 0 or 1 = one node.
	Nodes int        `json:"nodes,omitempty"`
	Fit   FitResult  `json:"fit"`
	Pred  Prediction `json:"prediction"`
	// Concurrency is the most users served at once within the SLO (the
	// batch the engine should allow, e.g. --max-num-seqs / -np).
	Concurrency int  `json:"concurrency"`
	MeetsSLO    bool `json:"meets_slo"`
	// Curve is the prediction at each concurrency swept (for charts).
	Curve []Prediction `json:"curve,omitempty"`
	// Why says why the candidate lost to the best, or was dropped.
	Why string `json:"why,omitempty"`
	// ErrorBand is the validation MdAPE (percent) per metric of the
	// parameters used; Source is prior, fitted or calibrated.
	ErrorBand map[string]float64 `json:"error_band,omitempty"`
	Source    string             `json:"source"`
	// For an open-loop arrival rate (Workload.Rate): CapacityReqPerS is
	// the most requests/s the configuration completes (at the largest
	// batch its KV pool holds) and Utilization the rate's share of it.
	CapacityReqPerS float64 `json:"capacity_req_per_s,omitempty"`
	Utilization     float64 `json:"utilization,omitempty"`
	// Fleet is how many replicas of this configuration serve the rate at
	// or under MaxPlannedUtilization each (nil without a rate).
	Fleet *Fleet `json:"fleet,omitempty"`
}

// ReplicaDevices is the devices one replica holds: TP × nodes for
// pipeline engines, the layer-split devices of every node for GGML ones.
func (c Candidate) ReplicaDevices() int {
	if c.Scenario != nil && c.Scenario.Engine.IsGGML() {
		return max(c.Devices, 1)
	}
	return max(c.Devices, 1) * max(c.Nodes, 1)
}

// Label is a short human name: "vllm awq-int4 (fp8 KV, TP2)",
// "llama.cpp q4_k_m (2 devices, layer split)".
func (c Candidate) Label() string {
	s := fmt.Sprintf("%s %s", c.Engine, c.Quant)
	extra := []string{}
	if c.KVType != "f16" && c.KVType != "bf16" {
		extra = append(extra, c.KVType+" KV")
	}
	if shape := ShapeLabel(c.Scenario != nil && c.Scenario.Engine.IsGGML(), c.Devices, c.Nodes); shape != "" {
		extra = append(extra, shape)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// ShapeLabel names how a configuration spans devices and nodes: "" on one
// device, DevicesLabel on one node, "TP8 × PP2 over 2 nodes", or for a
// GGML engine "4 devices over 2 nodes, layer split over RPC".
func ShapeLabel(ggml bool, devices, nodes int) string {
	switch {
	case nodes > 1 && ggml:
		return fmt.Sprintf("%d devices over %d nodes, layer split over RPC", devices, nodes)
	case nodes > 1:
		return fmt.Sprintf("TP%d × PP%d over %d nodes", devices, nodes, nodes)
	case devices > 1:
		return DevicesLabel(ggml, devices)
	}
	return ""
}

// DevicesLabel names how n devices share a configuration: "TP4", or for
// llama.cpp and Ollama (ggml), which split layers over devices (-sm
// layer, a pipeline rather than tensor parallel; modeling.md §3.4),
// "2 devices, layer split".
func DevicesLabel(ggml bool, n int) string {
	if ggml {
		return fmt.Sprintf("%d devices, layer split", n)
	}
	return fmt.Sprintf("TP%d", n)
}

// PlanResult is the ranked answer to "what should I run?".
type PlanResult struct {
	Ranked []Candidate `json:"ranked"` // fits; best first
	// Pareto is the front of total vs per-user tok/s; at a fixed rate,
	// where every configuration that keeps up delivers the same total,
	// of capacity (req/s) vs per-user tok/s instead.
	Pareto  []Candidate `json:"pareto"`
	Dropped []Rejection `json:"dropped"`
	Notes   []string    `json:"notes,omitempty"`
	// Workload is the arrival pattern planned for, as parsed.
	Workload Pattern `json:"workload"`
	// ErrorBandWorkload is the workload kind whose held-out errors the
	// candidates' ErrorBand comes from (PerfParams.ScenarioErrorBand), ""
	// when it is all rows'.
	ErrorBandWorkload WorkloadKind `json:"error_band_workload,omitempty"`
	// Cost prices the best configuration (CostOf); the application layer
	// sets it when a price is given or in the catalog.
	Cost *Cost `json:"cost,omitempty"`
}

// Best returns the top candidate, if any.
func (r PlanResult) Best() (Candidate, bool) {
	if len(r.Ranked) == 0 {
		return Candidate{}, false
	}
	return r.Ranked[0], true
}

// concurrencySweep is the batch sizes a plan tries.
var concurrencySweep = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// candidateQuants lists the formats worth trying for a model: its native
// dtype, FP8, W8A8-INT8, AWQ/GPTQ 4-bit and the GGUF ladder; MXFP4 only for
// models that ship in it.
func candidateQuants(c *Catalog, m Model, only []string) []Quant {
	want := []string{"bf16", "f16", "fp8", "w8a8-int8", "awq-int4", "gptq-int4", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0"}
	if m.NativeDType == "mxfp4" {
		want = []string{"mxfp4", "bf16", "q8_0"}
	}
	if m.FileQuant != "" {
		want = []string{m.FileQuant}
	}
	if len(only) > 0 {
		want = only
	}
	var out []Quant
	for _, id := range want {
		if q, err := c.FindQuant(id); err == nil {
			if q.ID == "f16" && m.NativeDType == "bfloat16" && len(only) == 0 {
				continue // bf16 covers it
			}
			if q.ID == "bf16" && (m.NativeDType == "float16" || m.NativeDType == "float32") && len(only) == 0 {
				continue
			}
			out = append(out, q)
		}
	}
	return out
}

// lowBitQuantIDs are the sub-4-bit GGUF formats a plan falls back to when
// nothing fits at 4 bits or more, largest first.
var lowBitQuantIDs = []string{"q3_k_xl", "q3_k_m", "q2_k"}

func lowBitQuants(c *Catalog) []Quant {
	var out []Quant
	for _, id := range lowBitQuantIDs {
		if q, err := c.FindQuant(id); err == nil {
			out = append(out, q)
		}
	}
	return out
}

// kvChoices lists KV types worth trying on an engine: the model dtype and
// the engine's 8-bit type.
func kvChoices(c *Catalog, e Engine, q Quant) []KVType {
	ids := []string{"f16"}
	if q.ID == "bf16" && e.HasKVType("bf16") {
		ids = []string{"bf16"}
	}
	for _, x := range []string{"fp8", "q8_0"} {
		if e.HasKVType(x) {
			ids = append(ids, x)
			break
		}
	}
	var out []KVType
	for _, id := range ids {
		if k, err := c.FindKVType(id); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// kernelProblem says why a format has no usable kernel on the device, or
// "": the engine's refusals (Supported's rules, engine_rules.go) and, for
// planning only, W8A8-INT8 where it runs emulated (it starts, but slower
// than the BF16 it replaces).
func kernelProblem(s Scenario, b Backend) string {
	h, q := s.Hardware, s.Quant
	if u := supportedOn(s, b); u != nil {
		return u.Detail
	}
	if q.NeedsNative == INT8 && !h.SupportsNative(INT8) {
		return fmt.Sprintf("W8A8-INT8 has no native INT8 matrix path on %s (where it runs emulated it is slow: 2.2× slower than FP16 on RDNA3.5, seed 002)", h.Arch)
	}
	return ""
}

// Plan enumerates engine × backend × format × KV type × tensor parallel ×
// concurrency, drops what does not fit or has no kernel, and ranks the rest
// by total throughput within the SLO.
func Plan(req PlanRequest) PlanResult {
	res := PlanResult{Workload: req.Workload.Pattern()}
	c := req.Catalog
	perf := c.Perf
	users := max(req.Workload.Concurrency, 1)
	devs := max(req.Devices, 1)
	nodes := max(req.Nodes, 1)
	quants := candidateQuants(c, req.Model, req.Quants)
	if perf != nil {
		req.bands, res.ErrorBandWorkload = perf.workloadBands(req.Workload)
	}
	terms := map[termsKey]fittedTerms{}
	// Candidates are large structs: collect them in pooled scratch and
	// copy out once at their final size, rather than regrow two slices
	// per plan (BenchmarkPlanAllDevices: a quarter of its allocation).
	scratch := candidateScratch.Get().(*[2][]Candidate)
	ranked := scratch[0][:0]
	var dropped []Rejection
	if req.Hardware.Kind != KindGPU {
		devs = 1 // APUs, SoCs and CPUs are one device
	}
	sweep := func(quants []Quant) {
		for _, e := range c.Engines {
			if len(req.Engines) > 0 && !containsEngine(req.Engines, e.ID) {
				continue
			}
			if e.ID == IKLlamaCpp || e.ID == Transformers {
				continue // measured for validation, not recommended for serving
			}
			if !runsOn(e, req.Hardware) || nodes > 1 && MultiNode(e) == MultiNodeNone {
				continue
			}
			for _, q := range quants {
				kvs := kvChoices(c, e, q)
				for _, tp := range nodeTPChoices(e, devs, nodes) {
					var full Candidate // the unquantized-KV row of this format and TP
					haveFull := false
					for _, kv := range kvs {
						cand, reason, ok := evaluate(req, e, q, kv, tp, users, perf, terms)
						if ok && haveFull && kvQuantized(kv) {
							if why := quantizedKVWhyNot(req.Workload, full, cand, users); why != "" {
								cand.Why, reason, ok = why, DropKVSavesNothing, false
							}
						}
						if !ok {
							if cand.Why != "" {
								dropped = append(dropped, rejection(cand, reason))
							}
							continue
						}
						ranked = append(ranked, cand)
						if !kvQuantized(kv) {
							full, haveFull = cand, true
						}
					}
				}
			}
		}
	}
	sweep(quants)
	lowBits := false
	// (Not for MXFP4-native models: their low-bit GGUFs keep the MXFP4
	// experts, so they are no smaller.)
	if len(ranked) == 0 && len(req.Quants) == 0 && req.Model.FileQuant == "" && req.Model.NativeDType != "mxfp4" {
		// Nothing fits at 4 bits or more: try the sub-4-bit GGUF
		// formats people run big MoE models in on 128 GB machines
		// (Qwen3-235B at Q3_K_XL on Strix Halo, measurements.csv).
		if low := lowBitQuants(c); len(low) > 0 {
			sweep(low)
			lowBits = len(ranked) > 0
		}
	}
	res.Ranked, res.Dropped = cloneCandidates(ranked), slices.Clone(dropped)
	clear(ranked) // drop the references the pool would otherwise keep alive
	scratch[0] = ranked[:0]
	candidateScratch.Put(scratch)
	explained := func() []Candidate {
		if req.bestOnly && len(res.Ranked) > 1 {
			return res.Ranked[:1]
		}
		return res.Ranked
	}
	if rate := req.Workload.Rate; rate > 0 {
		rankAtRate(res.Ranked)
		res.Pareto = paretoAtRate(res.Ranked)
		explainAtRate(explained(), req.SLO, rate)
	} else {
		rank(res.Ranked, users)
		res.Pareto = pareto(res.Ranked)
		explain(explained(), req.SLO, req.Workload)
	}
	if nodes > 1 {
		l := req.NodeLink
		if l.Gbps <= 0 {
			l = DefaultNodeLink(req.Hardware)
		}
		res.Notes = append(res.Notes, MultiNodeNote(nodes, devs, l))
	}
	res.Notes = append(res.Notes, "GGUF formats (q8_0 … q4_0) run only in llama.cpp and Ollama; AWQ/GPTQ/FP8/INT8 checkpoints only in vLLM, SGLang, TGI and TensorRT-LLM")
	if lowBits {
		res.Notes = append(res.Notes, "nothing fits at 4 bits or more; these plans use sub-4-bit GGUF formats, which lose noticeably more quality (perplexity) than Q4_K_M")
	}
	if len(res.Ranked) == 0 {
		res.Notes = append(res.Notes, "no configuration fits this machine; see the dropped list for why")
	} else if !res.Ranked[0].MeetsSLO {
		res.Notes = append(res.Notes, advise(req, res.Ranked)...)
	}
	return res
}

var candidateScratch = sync.Pool{New: func() any { return new([2][]Candidate) }}

// cloneCandidates copies cs into a slice of its own length (nil if empty).
func cloneCandidates(cs []Candidate) []Candidate {
	if len(cs) == 0 {
		return nil
	}
	return append(make([]Candidate, 0, len(cs)), cs...)
}

// advise says what would make an unmet SLO or arrival rate reachable,
// from the best figures any configuration reached.
func advise(req PlanRequest, cs []Candidate) []string {
	var out []string
	fastest, quickest := cs[0], cs[0]
	for _, c := range cs {
		if c.Curve[0].TPOT < fastest.Curve[0].TPOT {
			fastest = c
		}
		if c.Curve[0].TTFT < quickest.Curve[0].TTFT {
			quickest = c
		}
	}
	slo, w := req.SLO, req.Workload
	tpot := fastest.Curve[0].TPOT
	need := 0.0
	if slo.TPOT > 0 && tpot > slo.TPOT {
		need = float64(tpot / slo.TPOT)
	}
	if slo.MinUserTPS > 0 && fastest.Curve[0].DecodeTPS < slo.MinUserTPS {
		need = math.Max(need, float64(slo.MinUserTPS/fastest.Curve[0].DecodeTPS))
	}
	if need > 0 {
		msg := fmt.Sprintf("one user decodes at best at TPOT %s (%s); the SLO needs %.2g× that speed. Decode reads every weight each step: a smaller model or fewer bits per weight, a device with more memory bandwidth", tpot, fastest.Label(), need)
		if req.Hardware.Kind == KindGPU {
			if n := nextPow2(int(math.Ceil(need * 1.25))); n <= 8 && n > max(req.Devices, 1) {
				msg += fmt.Sprintf(", or tensor parallel over about %d devices (--devices %d; all-reduce costs keep it below linear)", n, n)
			}
		}
		out = append(out, msg)
	}
	if ttft := quickest.Curve[0].TTFT; slo.TTFT > 0 && ttft > slo.TTFT {
		p := Tokens(float64(w.Prompt) * float64(slo.TTFT/ttft))
		out = append(out, fmt.Sprintf("one user's first token comes at best after %s (%s) for %d-token prompts; prefill time grows with the prompt, so prompts of about %d tokens or fewer, more compute (another device, tensor parallel) or a lower-precision format with native kernels would meet TTFT %s", ttft, quickest.Label(), w.Prompt, p, slo.TTFT))
	}
	if w.Rate > 0 {
		best := cs[0]
		for _, c := range cs {
			if c.CapacityReqPerS > best.CapacityReqPerS {
				best = c
			}
		}
		if best.CapacityReqPerS > 0 && w.Rate > MaxPlannedUtilization*best.CapacityReqPerS && best.Fleet != nil {
			n := best.Fleet.Replicas
			out = append(out, fmt.Sprintf("%.3g req/s is more than one server can take: the highest capacity here is %.3g req/s (%s); at %.0f%% load each, %d replicas of it behind a load balancer, or shorter prompts and outputs", w.Rate, best.CapacityReqPerS, best.Label(), 100*MaxPlannedUtilization, n))
		}
	}
	return out
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// runsOn reports whether the engine shares a backend with the device.
func runsOn(e Engine, h Hardware) bool {
	for _, b := range e.Backends {
		if h.HasBackend(b) {
			return true
		}
	}
	return false
}

func containsEngine(es []EngineID, e EngineID) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// tpChoices is 1, 2, 4, 8 up to devs for tensor-parallel engines; GGML
// engines split layers over all devices.
// nodeTPChoices is tpChoices on one node; over several nodes, every
// device of a node in tensor parallel (a replica that leaves devices idle
// on each node is never the plan) for pipeline engines, and every device
// of every node for GGML engines (llama.cpp RPC).
func nodeTPChoices(e Engine, devs, nodes int) []int {
	switch {
	case nodes <= 1:
		return tpChoices(e, devs)
	case e.IsGGML():
		return []int{devs * nodes}
	}
	return []int{devs}
}

func tpChoices(e Engine, devs int) []int {
	if e.IsGGML() {
		return []int{devs}
	}
	var out []int
	for tp := 1; tp <= devs && tp <= 8; tp *= 2 {
		out = append(out, tp)
	}
	return out
}

// evaluate sizes and predicts one configuration; terms memoizes the
// fitted terms of the plan's configurations (fittedTerms).
func evaluate(req PlanRequest, e Engine, q Quant, kv KVType, tp, users int, perf *PerfParams, terms map[termsKey]fittedTerms) (Candidate, DropReason, bool) {
	s := Scenario{Hardware: req.Hardware, Devices: tp, Engine: e, EngineVersion: req.Releases[e.ID], Model: req.Model,
		Quant: q, KV: kv, Concurrency: users, UsableMemory: req.UsableMemory, HostMemory: req.HostMemory, HostBandwidthGBs: req.HostBandwidthGBs,
		Context: ctxFor(req), Mem: req.Catalog.Memory, Nodes: req.Nodes, NodeLink: req.NodeLink}
	cand := Candidate{Engine: e.ID, Quant: q.ID, KVType: kv.ID, Devices: tp}
	if req.Nodes > 1 {
		cand.Nodes = req.Nodes
	}
	if perf != nil {
		cand.Source, cand.ErrorBand = perf.Source, req.bands
	}
	b, err := s.ResolveBackend()
	if err != nil {
		return cand, "", false // engine not on this hardware: not worth listing
	}
	cand.Backend = b
	s.Backend = b
	if perf != nil && len(perf.Calibrations) > 0 {
		cand.ErrorBand = perf.bandsFor(CalibrationKey(req.Hardware.ID, e.ID, b), req.bands)
	}
	if req.UsableFor != nil {
		if u := req.UsableFor(e, b); u > 0 {
			s.UsableMemory = u
		}
	}
	if !e.Loads(b, q.Family) {
		// Format families an engine never loads (GGUF outside llama.cpp,
		// AWQ in llama.cpp) are noted once, not listed per format.
		if (q.Family == FamilyGGUF) == e.IsGGML() {
			cand.Why = fmt.Sprintf("%s on %s does not load %s", e.Name, b, q.ID)
		}
		return cand, DropFormat, false
	}
	if p := kernelProblem(s, b); p != "" {
		cand.Why = p
		return cand, DropNoKernel, false
	}
	if err := s.Validate(); err != nil {
		cand.Why = err.Error()
		if errors.Is(err, ErrUnsupported) {
			return cand, DropUnsupported, false
		}
		return cand, DropInvalid, false
	}
	if e.IsGGML() {
		// A GGML server runs the slots it is launched with (limitsFor)
		// and sizes its KV cells for them: a rate, a burst or an offline
		// batch gets the slots its pattern needs (ggmlSlots); users in a
		// loop get one each.
		if n := ggmlSlots(s, req.Workload, perf, terms); n > 0 {
			s.Concurrency = n
		}
	}
	fit, err := Fit(s)
	if err != nil {
		cand.Why = err.Error()
		return cand, DropInvalid, false
	}
	cand.Fit = fit
	if fit.Verdict == DoesNotFit {
		cand.Why = "does not fit: " + strings.Join(fit.Reasons, "; ")
		return cand, DropMemory, false
	}
	s = s.WithPlacement(fit)
	// A copy, so that s itself stays on the stack for the many candidates
	// dropped above (BenchmarkPlanAllDevices: a third of its allocation).
	kept := s
	cand.Scenario = &kept
	maxC := max(fit.MaxConcurrencyAtContext, 1)
	w := req.Workload
	w.Serving = true
	rate := w.Rate
	w.Rate = 0 // the curve is closed-loop: N users, each sending again when answered
	if rate > 0 {
		users = min(maxC, concurrencySweep[len(concurrencySweep)-1])
	}
	best := -1
	pm := planPerfModel(s, b, perf, terms) // one model, many batch sizes
	cand.Curve = make([]Prediction, 0, len(concurrencySweep)+1)
	for _, n := range concurrencySweep {
		if n > users && n > 1 || n > maxC {
			break
		}
		best = sweepPoint(&cand, pm, w, n, req.SLO, best)
	}
	if top := min(users, maxC); top > 0 && (len(cand.Curve) == 0 || cand.Curve[len(cand.Curve)-1].Concurrency != top) {
		best = sweepPoint(&cand, pm, w, top, req.SLO, best)
	}
	if len(cand.Curve) > 0 {
		cand.Source = cand.Curve[0].Source // "calibrated" where this machine's profile applies
	}
	switch {
	case rate > 0:
		atRate(&cand, pm, w, rate, users, req.SLO)
	case w.Kind == WorkloadOffline || w.Saturate:
		// The largest batch the engine runs: the KV pool or its sequence
		// cap binds (predictSaturated, as validate predicts offline rows).
		cand.Pred = predictSaturated(s, w, perf, 0, 0, false)
		cand.Concurrency, cand.MeetsSLO = max(cand.Pred.Concurrency, 1), req.SLO.Meets(cand.Pred)
	case w.Burst > 1:
		// All prompts at once: the engine admits what its cap and the KV
		// pool allow, the rest wait (predictBurst; TTFT includes the wait).
		cand.Pred = predictBurst(pm, w)
		cand.Concurrency, cand.MeetsSLO = max(cand.Pred.Concurrency, 1), req.SLO.Meets(cand.Pred)
	case best < 0:
		// Nothing meets the SLO: report single-user figures.
		cand.Pred, cand.Concurrency = cand.Curve[0], 1
	default:
		cand.Pred, cand.Concurrency, cand.MeetsSLO = cand.Curve[best], cand.Curve[best].Concurrency, true
	}
	return cand, "", true
}

// quantizedKVWhyNot says why a GGML plan's quantized KV (q8_0, q4_0)
// buys nothing over its f16 row full, or "" when it does. Users in a loop:
// f16 already holds every user on the device (quantizedKVSaves). A rate,
// a burst or an offline batch, whose slots are sized for it (ggmlSlots):
// the quantized row must run more slots than f16 does, and to more
// effect: at a rate, where f16's slots do not keep up; otherwise with
// more throughput.
func quantizedKVWhyNot(w Workload, full, cand Candidate, users int) string {
	slots, more := full.Scenario.Concurrency, cand.Scenario.Concurrency > full.Scenario.Concurrency
	switch {
	case w.Rate > 0:
		if full.Utilization <= MaxPlannedUtilization {
			return fmt.Sprintf("%s KV saves nothing here: %s KV's %s already keep up with %.3g req/s", cand.KVType, full.KVType, Plural(slots, "slot"), w.Rate)
		}
		if !more {
			return fmt.Sprintf("%s KV saves nothing here: it fits no more slots than %s KV's %d", cand.KVType, full.KVType, slots)
		}
	case w.RunsAtOnce():
		if !more || !(cand.Pred.TotalTPS > full.Pred.TotalTPS) {
			return fmt.Sprintf("%s KV saves nothing here: %s KV already runs %d sequences at once to as much effect", cand.KVType, full.KVType, slots)
		}
	default:
		need := max(users, slots)
		if !quantizedKVSaves(full, need) {
			return fmt.Sprintf("%s KV saves nothing here: %s KV already holds %s on the device", cand.KVType, full.KVType, Plural(need, "user"))
		}
	}
	return ""
}

// ggmlMaxSlots is the most slots a plan gives a GGML server for a rate
// or an offline batch: the top of the closed-loop sweep.
var ggmlMaxSlots = concurrencySweep[len(concurrencySweep)-1]

// ggmlSlots is the slots (llama-server -np, OLLAMA_NUM_PARALLEL) a GGML
// server is launched with for w's arrival pattern, or 0 for users in a
// loop (one slot each). Of the slot counts that fit the way one slot
// does (ggmlSlotsThatFit; at most the burst's prompts, else ggmlMaxSlots),
// doubling: for a rate, the fewest whose closed-loop capacity takes it
// within MaxPlannedUtilization; otherwise, and for a burst or an offline
// batch, the fewest that reach 95% of the best capacity among them (a
// burst's throughput to its last answer, else the closed loop's), since
// past that more slots only lengthen every request. A GGML server sizes
// its KV cells for its slots at launch: sized for one user, Qwen3-30B-A3B
// at 2 req/s on an RTX 4090 ran one request at a time (0.56 req/s, five
// replicas) on a card with room for a dozen; sized for all the memory
// holds, an M4 Max ran 256 slots at 1.5 s per token.
func ggmlSlots(s Scenario, w Workload, perf *PerfParams, terms map[termsKey]fittedTerms) int {
	limit := ggmlMaxSlots
	switch {
	case w.Rate > 0, w.Offline():
	case w.Burst > 1:
		limit = w.Burst
	default:
		return 0
	}
	most := ggmlSlotsThatFit(s, limit)
	if most <= 1 {
		return most
	}
	s.Concurrency = most
	pm := planPerfModel(s, s.Backend, perf, terms)
	rate := w.Rate
	closed := w
	closed.Serving, closed.Rate, closed.Burst, closed.Saturate = true, 0, 0, false
	// capacity is what n slots complete: a burst's throughput to its last
	// answer (predictBurst), else the closed loop's requests/s.
	capacity := func(n int) float64 {
		if w.Burst > 1 {
			p := pm
			p.s.Concurrency = n
			return float64(predictBurst(p, w).TotalTPS)
		}
		closed.Concurrency = n
		return predictWith(pm, closed).ReqPerS
	}
	var counts []int
	var caps []float64
	best := 0.0
	for n := 1; ; n = min(n*2, most) {
		c := capacity(n)
		counts, caps = append(counts, n), append(caps, c)
		best = math.Max(best, c)
		if n == most {
			break
		}
	}
	if rate > 0 {
		for i, c := range caps {
			if c*MaxPlannedUtilization >= rate {
				return counts[i]
			}
		}
	}
	for i, c := range caps {
		if c >= 0.95*best {
			return counts[i]
		}
	}
	return most
}

// ggmlSlotsThatFit is the most slots, doubling from one up to limit
// (and limit itself), whose KV cells of s.Context each fit as well as one
// slot's do: the same verdict, no more weights moved to system RAM. Sized
// for all of a 1000-prompt burst, Qwen3-8B on an RTX 4090 had put 30 of
// its 37 layers in system RAM to make room for 1.5M KV cells.
func ggmlSlotsThatFit(s Scenario, limit int) int {
	n := 1
	s.Concurrency = n
	base, err := Fit(s)
	if err != nil || base.Verdict == DoesNotFit {
		return n
	}
	fitsAsWell := func(k int) bool {
		s.Concurrency = k
		r, err := Fit(s)
		return err == nil && r.Verdict == base.Verdict && r.OffloadBytes <= base.OffloadBytes &&
			r.GPULayers >= base.GPULayers && r.CPUMoELayers <= base.CPUMoELayers
	}
	for next := 2; next <= limit; next *= 2 {
		if !fitsAsWell(next) {
			return n
		}
		n = next
	}
	if n < limit && fitsAsWell(limit) {
		n = limit
	}
	return n
}

// planPerfModel is newPerfModel with the fitted terms looked up once per
// termsKey of a plan.
func planPerfModel(s Scenario, b Backend, perf *PerfParams, terms map[termsKey]fittedTerms) perfModel {
	if perf == nil {
		d := DefaultPerfParams()
		perf = &d
	}
	k := termsKey{engine: s.Engine.ID, backend: b, quant: s.Quant.ID, multi: s.devices() > 1}
	t, ok := terms[k]
	if !ok {
		t = lookupTerms(s, b, perf)
		terms[k] = t
	}
	return newPerfModelTerms(s, b, perf, t)
}

// MaxPlannedUtilization is the share of a configuration's capacity a plan
// may use at a fixed arrival rate. Queueing delay grows as ρ/(1−ρ) (4× a
// service time at 0.8, 9× at 0.9), and the speed predictions carry the
// error bands validate reports, so a plan keeps a fifth in reserve.
const MaxPlannedUtilization = 0.8

// atRate sets a candidate's operating point for open-loop Poisson arrivals
// at rate requests/s (modeling.md §3.2). Capacity is the request rate at
// the largest batch the KV pool holds (capN); at or above it the queue
// grows without bound and the candidate cannot serve the workload. Below
// it the batch in flight is the fixed point of Little's law (littleBatch)
// and the engine is given n + 3√n slots: the number in flight of an
// infinite-server queue is Poisson(n), so bursts rarely wait for a slot.
func atRate(cand *Candidate, pm perfModel, w Workload, rate float64, capN int, slo SLO) {
	pr, capacity, keepsUp := operatingPoint(pm, w, rate, capN)
	cand.Pred = pr
	if !(capacity.ReqPerS > 0) || math.IsInf(capacity.ReqPerS, 0) {
		// No usable capacity figure: say it cannot keep up rather than
		// put NaN or Inf into the plan (and its JSON).
		cand.Concurrency, cand.Utilization = capN, 1
		return
	}
	cand.CapacityReqPerS = capacity.ReqPerS
	cand.Utilization = rate / capacity.ReqPerS
	cand.Fleet = fleetFor(pm, w, rate, capacity.ReqPerS, capN, cand.ReplicaDevices(), slo)
	if !keepsUp {
		cand.Concurrency = capN
		return
	}
	n := float64(pr.Concurrency)
	cand.Concurrency = min(capN, int(math.Ceil(n+3*math.Sqrt(n))))
	cand.MeetsSLO = slo.Meets(pr) && cand.Utilization <= MaxPlannedUtilization
}

func sweepPoint(cand *Candidate, pm perfModel, w Workload, n int, slo SLO, best int) int {
	w.Concurrency = n
	p := predictWith(pm, w)
	cand.Curve = append(cand.Curve, p)
	if slo.Meets(p) && (best < 0 || p.TotalTPS >= cand.Curve[best].TotalTPS) {
		return len(cand.Curve) - 1
	}
	return best
}

// ctxFor is the per-sequence context a workload needs, with room for the
// chat template (WorkloadContext).
func ctxFor(req PlanRequest) Tokens {
	ctx := WorkloadContext(req.Workload.Prompt, req.Workload.Gen)
	if ctx <= 0 {
		ctx = 4096
	}
	if req.Model.MaxContext > 0 && ctx > req.Model.MaxContext {
		ctx = req.Model.MaxContext
	}
	return ctx
}

// rank orders candidates: those meeting the SLO first, then by total
// throughput at their concurrency; within 3% the one with more weight bits
// (quality) and fewer devices wins.
func rank(cs []Candidate, users int) {
	score := func(c Candidate) float64 {
		if !c.MeetsSLO {
			return -1e9 + float64(c.Pred.DecodeTPS)
		}
		return float64(c.Pred.TotalTPS)
	}
	// Sort indices, then permute once: candidates are large structs.
	idx, sc := keyedIndex(cs, score)
	sort.SliceStable(idx, func(x, y int) bool {
		i, j := idx[x], idx[y]
		a, b := sc[i], sc[j]
		if a > 0 && b > 0 && math.Abs(a-b) <= 0.03*math.Max(a, b) {
			if qa, qb := cs[i].Scenario.Quant.LinearBPW, cs[j].Scenario.Quant.LinearBPW; bitsDiffer(qa, qb) {
				return qa > qb
			}
			if cs[i].Devices != cs[j].Devices {
				return cs[i].Devices < cs[j].Devices
			}
		}
		return a > b
	})
	permute(cs, idx)
}

// bitsDiffer reports whether two formats' weight bits differ enough to
// rank one above the other for quality: by more than a quarter of a bit.
// FP8 (8.002 bits with its scales) and W8A8-INT8 (8.004) are both 8-bit
// formats; ordered by the scales' thousandths, a plan at a fixed rate put
// INT8 first at 14.8 ms TPOT over FP8 at 8.8 ms and said FP8 had "fewer
// weight bits (8 vs 8)".
func bitsDiffer(a, b float64) bool { return math.Abs(a-b) > 0.25 }

// keyedIndex returns the identity order of cs and each candidate's key,
// for sorting indices instead of 584-byte candidates.
func keyedIndex(cs []Candidate, key func(Candidate) float64) ([]int, []float64) {
	idx := make([]int, len(cs))
	keys := make([]float64, len(cs))
	for i := range cs {
		idx[i], keys[i] = i, key(cs[i])
	}
	return idx, keys
}

// permute reorders cs in place so that cs[k] becomes the old cs[idx[k]],
// following each cycle of the permutation with one spare element (idx
// is consumed).
func permute(cs []Candidate, idx []int) {
	for start := range idx {
		if idx[start] < 0 || idx[start] == start {
			continue
		}
		tmp := cs[start]
		k := start
		for {
			src := idx[k]
			idx[k] = -1
			if src == start {
				cs[k] = tmp
				break
			}
			cs[k] = cs[src]
			k = src
		}
	}
}

// pareto returns candidates not dominated in (total tok/s, per-user tok/s).
func pareto(cs []Candidate) []Candidate {
	return paretoBy(cs, func(c Candidate) float64 { return float64(c.Pred.TotalTPS) })
}

// paretoAtRate returns the candidates that keep up with the rate and are
// not dominated in (capacity req/s, per-user tok/s): how much room is left
// against how fast each request is served.
func paretoAtRate(cs []Candidate) []Candidate {
	var up []Candidate
	for _, c := range cs {
		if c.CapacityReqPerS > 0 && c.Utilization < 1 {
			up = append(up, c)
		}
	}
	return paretoBy(up, func(c Candidate) float64 { return c.CapacityReqPerS })
}

// paretoBy returns the candidates not dominated in (x, per-user tok/s):
// swept by x descending, each one kept whose per-user speed beats every
// candidate with more x.
func paretoBy(cs []Candidate, x func(Candidate) float64) []Candidate {
	// Sort indices by precomputed keys: candidates are large structs.
	idx, key := keyedIndex(cs, x)
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if key[i] != key[j] {
			return key[i] > key[j]
		}
		return cs[i].Pred.DecodeTPS > cs[j].Pred.DecodeTPS
	})
	var out []Candidate
	bestUser := TokensPerSecond(-1)
	lastKey := math.NaN()
	for _, i := range idx {
		// An exact tie with the last kept candidate is not dominated by
		// it either: keep both.
		tie := len(out) > 0 && key[i] == lastKey && cs[i].Pred.DecodeTPS == bestUser
		if cs[i].Pred.DecodeTPS > bestUser || tie {
			out = append(out, cs[i])
			bestUser, lastKey = cs[i].Pred.DecodeTPS, key[i]
		}
	}
	return out
}

// offloadNote is the suffix a runner-up's reason gets when some of its
// weights sit in system RAM.
func offloadNote(f FitResult) string {
	switch {
	case f.Verdict != FitsWithOffload:
		return ""
	case f.CPUMoELayers > 0:
		return fmt.Sprintf("; experts of %d layers in system RAM", f.CPUMoELayers)
	}
	return "; layers offloaded to system RAM"
}

// explain fills Why for every runner-up of a plan for workload w.
func explain(cs []Candidate, slo SLO, w Workload) {
	if len(cs) == 0 {
		return
	}
	best := cs[0]
	if !best.MeetsSLO {
		cs[0].Why = sloMiss(best.Curve[0], slo, "even with one user")
	}
	for i := 1; i < len(cs); i++ {
		c := &cs[i]
		switch {
		case !c.MeetsSLO:
			c.Why = sloMiss(c.Curve[0], slo, "even with one user")
		case best.MeetsSLO && c.Pred.TotalTPS < best.Pred.TotalTPS:
			at := "at " + Plural(c.Concurrency, "user")
			if w.RunsAtOnce() {
				// Sequences the engine runs at once, not users in a loop.
				at = fmt.Sprintf("with %d at once", c.Concurrency)
			}
			c.Why = fmt.Sprintf("%.0f%% lower total throughput (%s vs %s %s)", 100*(1-float64(c.Pred.TotalTPS)/float64(best.Pred.TotalTPS)), c.Pred.TotalTPS, best.Pred.TotalTPS, at)
		default:
			c.Why = "within 3% of the best; ranked by weight precision and device count"
		}
		c.Why += offloadNote(c.Fit)
	}
}

// rankAtRate orders candidates for a fixed arrival rate. Every candidate
// that keeps up delivers the same throughput, so among those meeting the
// SLO the fewest devices win, then the most weight bits (quality), then
// the lowest TPOT; the rest follow by capacity.
func rankAtRate(cs []Candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := &cs[i], &cs[j]
		if a.MeetsSLO != b.MeetsSLO {
			return a.MeetsSLO
		}
		if !a.MeetsSLO {
			return a.CapacityReqPerS > b.CapacityReqPerS
		}
		if a.Devices != b.Devices {
			return a.Devices < b.Devices
		}
		if qa, qb := a.Scenario.Quant.LinearBPW, b.Scenario.Quant.LinearBPW; bitsDiffer(qa, qb) {
			return qa > qb
		}
		return a.Pred.TPOT < b.Pred.TPOT
	})
}

// explainAtRate fills Why for every runner-up of a fixed-rate plan.
func explainAtRate(cs []Candidate, slo SLO, rate float64) {
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Utilization >= 1:
			c.Why = fmt.Sprintf("cannot keep up with %.3g req/s: capacity %.3g req/s at %s", rate, c.CapacityReqPerS, Plural(c.Pred.Concurrency, "sequence"))
		case !slo.Meets(c.Pred):
			c.Why = sloMiss(c.Pred, slo, fmt.Sprintf("at %.3g req/s", rate))
		case !c.MeetsSLO:
			c.Why = fmt.Sprintf("would run at %.0f%% of its capacity (%.3g req/s); plans keep under %.0f%%", 100*c.Utilization, c.CapacityReqPerS, 100*MaxPlannedUtilization)
		case i == 0:
			continue
		case c.Devices > cs[0].Devices:
			c.Why = fmt.Sprintf("needs %d devices, the best %d", c.Devices, cs[0].Devices)
		case c.Scenario.Quant.LinearBPW < cs[0].Scenario.Quant.LinearBPW && bitsDiffer(c.Scenario.Quant.LinearBPW, cs[0].Scenario.Quant.LinearBPW):
			c.Why = fmt.Sprintf("fewer weight bits (%.3g vs %.3g)", c.Scenario.Quant.LinearBPW, cs[0].Scenario.Quant.LinearBPW)
		default:
			c.Why = fmt.Sprintf("slower per user (TPOT %s vs %s)", c.Pred.TPOT, cs[0].Pred.TPOT)
		}
		c.Why += offloadNote(c.Fit)
	}
}

// sloMiss names the SLO terms p misses; when says under what load.
func sloMiss(p Prediction, slo SLO, when string) string {
	var miss []string
	if slo.TTFT > 0 && p.TTFT > slo.TTFT {
		miss = append(miss, fmt.Sprintf("TTFT %s > %s", p.TTFT, slo.TTFT))
	}
	if slo.TPOT > 0 && p.TPOT > slo.TPOT {
		miss = append(miss, fmt.Sprintf("TPOT %s > %s", p.TPOT, slo.TPOT))
	}
	if slo.MinUserTPS > 0 && p.DecodeTPS < slo.MinUserTPS {
		miss = append(miss, fmt.Sprintf("%s per user < %s", p.DecodeTPS, slo.MinUserTPS))
	}
	return "misses the SLO " + when + ": " + strings.Join(miss, ", ")
}
