package planner

import (
	"math"
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

// defaultServingPrompt and defaultServingGen are the mean request lengths
// assumed for a serving run that states none (MLPerf's OpenOrca set
// averages ~300 tokens in and out [U: approximate dataset means]).
const defaultServingPrompt, defaultServingGen = 300, 300

// defaultPrefillPrompt is the prompt of a prefill-speed figure that states
// no length ("prompt ingestion speed").
const defaultPrefillPrompt = 2048

// servingRow reports whether a row's figure comes from requests to a
// continuously batching server rather than from a kernel benchmark
// (llama-bench, llama-batched-bench): every closed, burst, rate or offline
// run, and a single-request run's latency figures when a prompt was sent.
func servingRow(m Measurement) bool {
	k := WorkloadKindOf(m)
	if k.Serving() {
		return true
	}
	if k != WorkloadSingle {
		return false
	}
	switch m.Metric {
	case MetricTTFT, MetricTPOT, MetricITL, MetricReqPerS:
		return m.PromptTokens > 0
	}
	return false
}

// IsServing reports whether a row comes from a serving benchmark
// (servingRow): read from its scenario columns, never its notes.
func IsServing(m Measurement) bool { return servingRow(m) }

// WorkloadFor returns the workload a measurement row describes, from its
// columns alone (scenario, lengths, request_rate, concurrency ...).
func WorkloadFor(m Measurement) Workload {
	kind := WorkloadKindOf(m)
	w := Workload{Kind: kind, Prompt: Tokens(m.PromptTokens), Gen: Tokens(m.GenTokens), Concurrency: max(m.Concurrency, 1),
		Depth: Tokens(m.ContextDepth), Serving: servingRow(m), VariableLengths: m.Lengths == LengthsVariable,
		Median: m.Statistic == StatMedian}
	if m.Metric == MetricPP && w.Prompt == 0 {
		w.Prompt = defaultPrefillPrompt
	}
	switch kind {
	case WorkloadOffline, WorkloadRate:
		w.Saturate = true
		w.Rate = m.RequestRate
		w.Requests = max(m.NumPrompts, 0)
		if kind == WorkloadOffline {
			w.Rate, w.Requests = 0, 0
		}
		if w.Prompt == 0 && w.Gen == 0 {
			w.Prompt, w.Gen = defaultServingPrompt, defaultServingGen
		}
	case WorkloadBurst:
		w.Burst = w.Concurrency
	}
	if m.Metric == MetricTG && !w.Serving {
		// llama-bench tgN decodes from depth d with no prompt in the cache.
		w.Prompt = 0
	}
	return w
}

// saturatedBatch is the decode batch of a saturated server: the engine's
// sequence cap, or fewer when the KV pool holds fewer sequences at their
// mean resident context (residentContext).
func saturatedBatch(s Scenario, w Workload) int {
	return kvSequences(s, residentContext(w), limitsFor(s).maxSeqs)
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
		// The engine's defaults: a row's notes may name other settings,
		// but predictions read columns only.
		s.Concurrency = 1
		s.Context = s.Model.MaxContext
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
	pr := predictScheduled(s, pm, w, p, effD, effP)
	if m.Metric == MetricTG && w.Serving {
		// A request's own rate in a serving run is its tokens over its
		// whole time in the server, TTFT included (benchmark_llm_serving's
		// speed_from_beginning, io_classes.py
		// QueryOutput.calculate_derived_stats; the only serving tool in
		// the data that reports a per-request rate).
		return float64(pr.RequestTPS), nil
	}
	return metricOf(pr, m.Metric)
}

// predictScheduled predicts w by its arrival pattern: a burst by
// predictBurst, an offline or rate run by predictSaturated (the batch the
// engine's limits and the KV pool allow, or what the rate keeps in
// flight), one request or a closed loop of clients by predictWith. effD
// and effP force the efficiencies when positive (the fitter).
func predictScheduled(s Scenario, pm perfModel, w Workload, p *PerfParams, effD, effP float64) Prediction {
	switch {
	case w.Saturate || w.Kind == WorkloadOffline || w.Kind == WorkloadRate:
		return predictSaturated(s, w, p, effD, effP, true)
	case w.Burst > 1:
		return predictBurst(pm, w)
	}
	return predictWith(pm, w)
}

// predictSaturated predicts a throughput run with no stated concurrency:
// the batch is what the KV pool holds (offline) or what the arrival rate
// keeps in flight (server). With replicate, a multi-device system is
// evaluated at every power-of-two tensor-parallel width that divides it
// (replicas of that width), keeping the best throughput: whoever runs an
// offline or rate benchmark on N devices picks the layout that serves
// most (MLPerf submitters run 8 replicas of one or two GPUs; a model that
// needs all N devices gets all N, as no narrower layout fits it).
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
// and keepsUp is true. At or above it (keepsUp false) the server runs
// its full batch and completes capacity's requests; pr is that batch
// under Poisson arrivals at the rate it serves (atCapacity), so a rate a
// little past capacity predicts what one a little below it does rather
// than jumping to a closed loop's queueing, plus the backlog a run of
// w.Requests builds meanwhile (runBacklog).
func operatingPoint(pm perfModel, w Workload, rate float64, capN int) (pr, capacity Prediction, keepsUp bool) {
	w.Rate, w.Concurrency = 0, capN
	capacity = predictWith(pm, w)
	if !(rate > 0) || !(capacity.ReqPerS > 0) || math.IsInf(capacity.ReqPerS, 0) {
		return capacity, capacity, false
	}
	if rate >= capacity.ReqPerS {
		return atCapacity(pm, w, rate, capacity), capacity, false
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

// atCapacity is a server's operating point when requests arrive at rate,
// at or above the capacity it completes (w.Concurrency is its full
// batch): the step times of that batch under open-loop arrivals at the
// served rate, capacity's throughput, and TTFT plus the mean backlog wait
// of the run (runBacklog); a request's own rate follows its TTFT.
func atCapacity(pm perfModel, w Workload, rate float64, capacity Prediction) Prediction {
	mu := capacity.ReqPerS
	w.Rate = mu
	pr := predictWith(pm, w)
	pr.ReqPerS, pr.TotalTPS = mu, capacity.TotalTPS
	if wait := runBacklog(w.Requests, rate, mu); wait > 0 {
		pr.TTFT += Milliseconds(wait)
		pr.RequestTPS = requestTPS(genTokens(w), float64(pr.TTFT), float64(pr.TPOT))
	}
	return pr
}

// runBacklog is the mean ms a request of a run of n requests, sent at
// rate λ to a server that completes μ < λ per second, waits for the
// requests ahead of it: the i-th arrives at i/λ and is admitted at i/μ
// (fluid approximation), so the mean wait is (n−1)/2·(1/μ − 1/λ). Zero
// when the server keeps up or the run's length is unknown (an unbounded
// run's queue has no mean; a published server run that states no length
// is read at the operating point it held).
func runBacklog(n int, rate, mu float64) float64 {
	if n < 2 || !(mu > 0) || rate <= mu {
		return 0
	}
	return float64(n-1) / 2 * (1/mu - 1/rate) * 1000
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
