package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrUnpredictable marks a measurement the model cannot predict (unknown
// device or model, unsupported metric); validate counts these rows.
type ErrUnpredictable struct{ Why string }

func (e *ErrUnpredictable) Error() string { return "cannot predict: " + e.Why }

// ScenarioFor builds the scenario a measurement row describes.
func ScenarioFor(c *Catalog, m Measurement) (Scenario, error) {
	var s Scenario
	h, err := c.FindHardware(m.Hardware)
	if err != nil {
		return s, &ErrUnpredictable{Why: err.Error()}
	}
	mo, err := c.FindModel(m.Model)
	if err != nil {
		return s, &ErrUnpredictable{Why: err.Error()}
	}
	eng := m.Engine
	e, err := c.FindEngine(eng)
	if err != nil {
		return s, &ErrUnpredictable{Why: err.Error()}
	}
	q, err := c.FindQuant(m.Quant)
	if err != nil {
		return s, &ErrUnpredictable{Why: err.Error()}
	}
	kvID := m.KVType
	if kvID == "" {
		kvID = "f16"
	}
	kv, err := c.FindKVType(kvID)
	if err != nil {
		return s, &ErrUnpredictable{Why: err.Error()}
	}
	s = Scenario{Hardware: h, Devices: max(m.Devices, 1), Engine: e, EngineVersion: m.EngineVersion,
		Backend: Backend(m.Backend), Model: mo, Quant: q, KV: kv, Concurrency: max(m.Concurrency, 1), Mem: c.Memory}
	if s.Backend != "" && !e.HasBackend(s.Backend) {
		// Published rows are facts: an engine seen on a backend runs there.
		e.Backends = append(append([]Backend{}, e.Backends...), s.Backend)
		s.Engine = e
	}
	if s.Backend != "" && !h.HasBackend(s.Backend) {
		h.Backends = append(append([]Backend{}, h.Backends...), s.Backend)
		s.Hardware = h
	}
	if b, err := s.ResolveBackend(); err == nil {
		f := e.Formats[b]
		if !e.Loads(b, q.Family) {
			e.Formats = copyFormats(e.Formats)
			e.Formats[b] = append(append([]QuantFamily{}, f...), q.Family)
			s.Engine = e
		}
	}
	return s, nil
}

func copyFormats(m map[Backend][]QuantFamily) map[Backend][]QuantFamily {
	out := make(map[Backend][]QuantFamily, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// kvOverrides applies the memory settings a kv_tokens row states in its
// notes, in any of the spellings the sources use: "gpu_memory_utilization=0.8",
// "gpu_memory_utilization 0.9", "max_model_len 100000", "--mem-fraction-static
// 0.93". A value that does not parse ("max_model_len=None") leaves the
// engine default.
func kvOverrides(s *Scenario, notes string) {
	for _, key := range []string{"gpu_memory_utilization", "mem-fraction-static", "mem_fraction_static"} {
		if f, ok := noteSetting(notes, key); ok && f > 0 && f <= 1 {
			s.GPUMemoryUtilization = f
		}
	}
	if l, ok := noteSetting(notes, "max_model_len"); ok && l >= 1 && l <= 1<<30 && l == math.Trunc(l) {
		s.Context = Tokens(l)
	}
	if s.Context == 0 {
		s.Context = s.Model.MaxContext
	}
}

// noteSetting reads the number that follows key in a row's notes, after
// optional spaces and one optional '=' or ':'. It reports false when the
// key is absent or no finite number follows it.
func noteSetting(notes, key string) (float64, bool) {
	i := strings.Index(notes, key)
	if i < 0 {
		return 0, false
	}
	rest := strings.TrimLeft(notes[i+len(key):], " ")
	rest = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(rest, "="), ":"), " ")
	end := 0
	for end < len(rest) && strings.IndexByte("0123456789.eE+-", rest[end]) >= 0 {
		end++
	}
	if end < len(rest) && (rest[end]|0x20 >= 'a' && rest[end]|0x20 <= 'z') {
		return 0, false // "32k", "0.9x": a unit or suffix this reader does not know
	}
	f, err := strconv.ParseFloat(rest[:end], 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// IsServing reports whether a row comes from a closed-loop serving
// benchmark (interleaved prefills) rather than an offline batch.
func IsServing(m Measurement) bool {
	if strings.Contains(m.Notes, "batched-bench") {
		return false
	}
	switch m.Metric {
	case MetricTTFT, MetricTPOT, MetricITL, MetricReqPerS:
		return m.PromptTokens > 0
	case MetricTotalOut, MetricTG:
		return m.Concurrency > 1 && m.PromptTokens > 0
	}
	return false
}

// WorkloadFor returns the workload a measurement row describes.
func WorkloadFor(m Measurement) Workload {
	w := Workload{Prompt: Tokens(m.PromptTokens), Gen: Tokens(m.GenTokens), Concurrency: max(m.Concurrency, 1),
		Depth: Tokens(m.ContextDepth), Serving: IsServing(m)}
	if m.Metric == MetricPP && w.Prompt == 0 {
		w.Prompt = 2048 // "prompt ingestion speed" with no length stated
	}
	w.VariableLengths = strings.Contains(m.Notes, "ShareGPT") || strings.Contains(m.Source, "002_2b0a8c2b1e11073a")
	if m.Concurrency == 0 && strings.Contains(m.Notes, "MLPerf") {
		// MLPerf Offline/Server runs saturate the system; OpenOrca requests
		// average ~300 tokens in and out [U: approximate dataset means].
		w.Saturate, w.Serving = true, true
		w.Prompt, w.Gen = 300, 300
		w.Rate = targetQPS(m.Notes)
		// OpenOrca request lengths vary in both scenarios, Offline too.
		w.VariableLengths = true
	}
	if m.Metric == MetricTG && fromBenchmarkLLMServing(m) {
		w.Serving = true // a request to a server, prompt included
	}
	if m.Metric == MetricTG && !w.Serving {
		// llama-bench tgN decodes from depth d with no prompt in the cache.
		w.Prompt = 0
	}
	return w
}

// fromBenchmarkLLMServing reports whether a row was measured by
// France-Travail's benchmark_llm_serving: its notes say so, or it is seed
// 000, a model card that tool wrote (make_readmes.py).
func fromBenchmarkLLMServing(m Measurement) bool {
	return strings.Contains(m.Notes, "benchmark_llm_serving") || strings.Contains(m.Source, "000_c824402b6fa12abf")
}

// saturatedBatch is the decode batch of a saturated server: the engine's
// sequence cap, or fewer when the KV pool holds fewer sequences.
func saturatedBatch(s Scenario, w Workload) int {
	capSeqs := 4096 // offline runs batch as deep as KV allows
	s.Context = w.Prompt + w.Gen
	s.Concurrency = capSeqs
	r, err := Fit(s)
	if err != nil || r.MaxConcurrencyAtContext <= 0 {
		return 1
	}
	return min(capSeqs, r.MaxConcurrencyAtContext)
}

// PredictMeasurement predicts the value of a measurement row in its own
// unit, with the fitted efficiencies p.
func PredictMeasurement(c *Catalog, m Measurement, p *PerfParams) (float64, error) {
	return predictMeasurementEff(c, m, p, 0, 0)
}

func predictMeasurementEff(c *Catalog, m Measurement, p *PerfParams, effD, effP float64) (float64, error) {
	s, err := ScenarioFor(c, m)
	if err != nil {
		return 0, err
	}
	if m.Metric == MetricKV {
		kvOverrides(&s, m.Notes)
		s.Concurrency = 1
		r, err := Fit(s)
		if err != nil {
			return 0, &ErrUnpredictable{Why: err.Error()}
		}
		if r.MaxKVTokens <= 0 {
			return 0, &ErrUnpredictable{Why: "model does not fit"}
		}
		return float64(r.MaxKVTokens), nil
	}
	if err := s.Validate(); err != nil {
		return 0, &ErrUnpredictable{Why: err.Error()}
	}
	w := WorkloadFor(m)
	pm := newPerfModelEff(s, p, effD, effP)
	if m.Metric == MetricPP && w.Concurrency > 1 {
		return float64(prefillBatchWith(pm, w.Prompt, w.Concurrency)), nil
	}
	if w.Saturate {
		pr := predictSaturated(s, w, p, effD, effP, strings.Contains(m.Notes, "MLPerf"))
		return metricOf(pr, m.Metric)
	}
	pr := predictWith(pm, w)
	if m.Metric == MetricTG && fromBenchmarkLLMServing(m) {
		// Its per-request "speed generation" is speed_from_beginning:
		// generated tokens over the whole query time, TTFT included
		// (io_classes.py QueryOutput.calculate_derived_stats).
		return float64(pr.RequestTPS), nil
	}
	return metricOf(pr, m.Metric)
}

// targetQPS reads the offered load of an MLPerf Server run from a row's
// notes ("Server (target 8.6 qps)"); 0 when none is stated.
func targetQPS(notes string) float64 {
	i := strings.Index(notes, "target ")
	if i < 0 {
		return 0
	}
	var q float64
	if _, err := fmt.Sscanf(notes[i+len("target "):], "%g qps", &q); err != nil || !(q > 0) || math.IsInf(q, 0) {
		return 0
	}
	return q
}

// predictSaturated predicts a throughput run with no stated concurrency:
// the batch is what the KV pool holds (offline) or what the arrival rate
// keeps in flight (server). A multi-device system that may split into
// replicas (MLPerf: the submitter tunes its layout) is evaluated at every
// power-of-two tensor-parallel width that divides it, keeping the best
// throughput.
func predictSaturated(s Scenario, w Workload, p *PerfParams, effD, effP float64, replicate bool) Prediction {
	widths := []int{s.devices()}
	if replicate {
		widths = nil
		for tp := 1; tp <= s.devices(); tp *= 2 {
			if s.devices()%tp == 0 {
				widths = append(widths, tp)
			}
		}
	}
	var best Prediction
	bestCap := -1.0
	for _, tp := range widths {
		ss := s
		ss.Devices = tp
		replicas := float64(s.devices() / tp)
		batch := saturatedBatch(ss, w)
		pm := newPerfModelEff(ss, p, effD, effP)
		pr, capacity, _ := operatingPoint(pm, w, w.Rate/replicas, batch)
		capTPS := float64(capacity.TotalTPS) * replicas
		if capTPS <= bestCap {
			continue
		}
		bestCap = capTPS
		pr.TotalTPS *= TokensPerSecond(replicas)
		pr.ReqPerS *= replicas
		best = pr
	}
	return best
}

// operatingPoint is where a server with at most capN sequences runs under
// open-loop arrivals at rate requests/s (0: saturated). capacity is the
// prediction at capN with no rate (closed loop, the most it completes).
// Below capacity the batch is what the rate keeps in flight (littleBatch)
// and keepsUp is true; at or above it the queue grows and the server runs
// saturated, so pr is capacity.
func operatingPoint(pm perfModel, w Workload, rate float64, capN int) (pr, capacity Prediction, keepsUp bool) {
	w.Rate, w.Concurrency = 0, capN
	capacity = predictWith(pm, w)
	if !(rate > 0 && rate < capacity.ReqPerS) {
		return capacity, capacity, false
	}
	w.Rate = rate
	w.Concurrency = littleBatch(pm, w, rate, capN)
	pr = predictWith(pm, w)
	// A server that keeps up completes what arrives (Little's law); the
	// whole batch in flight above only sets the step times. At a rate
	// that keeps less than one request in flight, that batch of one
	// would otherwise claim completions that never arrived.
	pr.ReqPerS = rate
	pr.TotalTPS = TokensPerSecond(rate * genTokens(w))
	return pr, capacity, true
}

// littleBatch is the batch an open-loop arrival rate λ keeps in flight:
// the fixed point of N = λ·T(N), T being a request's time in the system
// (Little's law), capped at what the KV pool holds. Iterated from one
// request with geometric damping; the server keeps up while N < capN.
func littleBatch(pm perfModel, w Workload, rate float64, capN int) int {
	n := 1.0
	for i := 0; i < 40; i++ {
		w.Concurrency = max(int(math.Round(n)), 1)
		pr := predictWith(pm, w)
		// A request's time in the system is the batch over the completion rate.
		next := math.Min(rate*float64(pr.Concurrency)/pr.ReqPerS, float64(capN))
		n = math.Sqrt(n * math.Max(next, 1))
	}
	return min(max(int(math.Round(n)), 1), capN)
}

// metricOf picks one metric out of a prediction, in the schema's unit.
func metricOf(pr Prediction, metric Metric) (float64, error) {
	switch metric {
	case MetricPP:
		return float64(pr.PrefillTPS), nil
	case MetricTG:
		return float64(pr.DecodeTPS), nil
	case MetricTotalOut:
		return float64(pr.TotalTPS), nil
	case MetricTTFT:
		return float64(pr.TTFT), nil
	case MetricTPOT, MetricITL:
		return float64(pr.TPOT), nil
	case MetricReqPerS:
		return pr.ReqPerS, nil
	}
	return 0, &ErrUnpredictable{Why: "unknown metric " + string(metric)}
}
