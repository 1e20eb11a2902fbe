package planner

import "math"

// PerfParams are the fitted efficiencies of the performance model. Each
// efficiency is exp(intercept + Σ effects) over the scenario's features
// (device kind, architecture, vendor, engine, backend, weight format and a
// few interactions), so a device never seen in the data still gets the
// effects of its architecture, engine and format. They are fitted on
// published measurements by FitPerf (profiles/catalog/fitted.toml,
// `headroom refit`) and replaced per machine by calibration.
type PerfParams struct {
	// Fitted records provenance: data, date, fit quality.
	Fitted string `toml:"fitted" json:"fitted"`
	// Source labels figures: "prior", "fitted" or "calibrated".
	Source string `toml:"source" json:"source"`
	// Decode is the log-efficiency model of achieved ÷ peak memory
	// bandwidth in decode steps.
	Decode Effects `toml:"decode" json:"decode"`
	// Prefill is the log-efficiency model of achieved ÷ peak FLOP/s.
	Prefill Effects `toml:"prefill" json:"prefill"`
	// QueueFactor is the share of other requests' prefills a new request
	// waits for in a continuously batched server (TTFT term), per engine.
	QueueFactor map[string]float64 `toml:"queue_factor" json:"queue_factor"`
	// LayerOverheadUs is the fixed cost per layer per step by backend
	// (kernel launches and synchronization), microseconds.
	LayerOverheadUs map[string]float64 `toml:"layer_overhead_us" json:"layer_overhead_us"`
	// SeqOverheadUs is the host-side cost per running sequence per step
	// by engine (scheduling, sampling, detokenizing and streaming each
	// request's token), microseconds; fitted (FitPerfWithOverheads).
	SeqOverheadUs map[string]float64 `toml:"seq_overhead_us" json:"seq_overhead_us"`
	// RequestOverheadMs is the serial front-end cost of admitting one
	// request by engine (HTTP handling, tokenization, hand-off to the
	// engine core), milliseconds; it spreads a burst's arrivals at the
	// engine over N times it. Fitted (fitRequestOverheads).
	RequestOverheadMs map[string]float64 `toml:"request_overhead_ms" json:"request_overhead_ms"`
	// Calibrations are this machine's measured terms, keyed by
	// CalibrationKey (hardware/engine/backend); they replace the fitted
	// efficiencies for that key and label figures "calibrated".
	Calibrations map[string]Calibrated `toml:"-" json:"calibrations,omitempty"`
	// ErrorBand holds validation MdAPE per metric (percent), shown as ±.
	ErrorBand map[string]float64 `toml:"error_band" json:"error_band"`
	// CalibratedErrorBand holds, per metric, the band of a setup
	// calibrated on one run of its own (Calibrated.DecodeScale, from
	// `calibrate import --save`): held out by source, every held-out
	// setup calibrated on its first run (CalibratedErrorBands). A metric
	// absent keeps ErrorBand.
	CalibratedErrorBand map[string]float64 `toml:"calibrated_error_band,omitempty" json:"calibrated_error_band,omitempty"`
	// ScenarioErrorBand holds the bands of one workload kind (closed,
	// burst, rate, offline, single, batched → metric → percent), from that
	// kind's rows alone (ScenarioErrorBands); a plan of that kind shows
	// them over ErrorBand.
	ScenarioErrorBand map[string]map[string]float64 `toml:"scenario_error_band,omitempty" json:"scenario_error_band,omitempty"`
	// inverting is set while FitPerf inverts rows to efficiencies. The
	// per-request costs (requestCosts: the front end's and the engine
	// loop's admission) are set after the efficiencies and move only
	// bursts and TTFT, so the inversion leaves them out.
	inverting bool
}

// Calibrated holds efficiencies measured on one machine and engine.
// Zero fields keep the fitted value.
type Calibrated struct {
	DecodeEff      float64 `toml:"decode_bw_efficiency" json:"decode_bw_efficiency"`
	PrefillEff     float64 `toml:"prefill_compute_efficiency" json:"prefill_compute_efficiency"`
	StepOverheadMs float64 `toml:"step_overhead_ms" json:"step_overhead_ms"`
	// BandwidthGBs and TFLOPS replace the catalog's peaks when measured
	// (calibrate host).
	BandwidthGBs float64 `toml:"bandwidth_gb_s" json:"bandwidth_gb_s"`
	TFLOPS       float64 `toml:"tflops" json:"tflops"`
	// GEMVBandwidth says BandwidthGBs was measured with a matrix-vector
	// kernel (calibrate host's GEMV), the kernel class of a one-sequence
	// decode step, so that rate already carries the step's arithmetic:
	// a batch of one is bound by it alone, not also by TFLOPS, which a
	// portable GEMM measures below the vector units an engine's own
	// kernels use.
	GEMVBandwidth bool `toml:"gemv_bandwidth,omitempty" json:"gemv_bandwidth,omitempty"`
	// DecodeScale multiplies the fitted decode efficiency of every
	// scenario on this key (0: none): a calibration from imported
	// benchmark rows (FitRowsCalibration) keeps what the fit knows about
	// each model and format and moves the setup as a whole.
	DecodeScale float64 `toml:"decode_scale,omitempty" json:"decode_scale,omitempty"`
	// ModelDecodeScale replaces DecodeScale for the models it names
	// (catalog model IDs): the factors of each model where the imported
	// rows ran several (FitRowsCalibration, perModelScales).
	ModelDecodeScale map[string]float64 `toml:"model_decode_scale,omitempty" json:"model_decode_scale,omitempty"`
}

// CalibrationKey names a calibration: hardware/engine/backend.
func CalibrationKey(hw string, e EngineID, b Backend) string {
	return hw + "/" + string(e) + "/" + string(b)
}

// Effects is an additive model in log space: intercept plus one term per
// present feature ("arch=ada", "engine=vllm", "quant=q4_k_m" ...).
type Effects struct {
	Intercept float64            `toml:"intercept" json:"intercept"`
	Terms     map[string]float64 `toml:"terms" json:"terms"`
}

// Eval returns exp(intercept + Σ terms of features), clamped to [lo, hi].
func (e Effects) Eval(features []string, lo, hi float64) float64 {
	v := e.Intercept
	for _, f := range features {
		v += e.Terms[f]
	}
	return math.Min(hi, math.Max(lo, math.Exp(v)))
}

// DefaultPerfParams are priors used when nothing is fitted: 70% of peak
// bandwidth in decode (consumer and APU llama.cpp decode reaches 60-80%
// MBU, modeling.md §3.5) and 45% of peak FLOP/s in prefill (RTX 4080 pp512
// ≈ 111 of ~200 TFLOP/s, ibid.).
func DefaultPerfParams() PerfParams {
	return PerfParams{
		Fitted:      "prior (no fit)",
		Source:      "prior",
		Decode:      Effects{Intercept: math.Log(0.7), Terms: map[string]float64{}},
		Prefill:     Effects{Intercept: math.Log(0.45), Terms: map[string]float64{}},
		QueueFactor: map[string]float64{},
		// ~5 kernels per layer at a few µs each [U]; fitted per backend.
		LayerOverheadUs: map[string]float64{},
		SeqOverheadUs:   map[string]float64{},
		ErrorBand:       map[string]float64{},
	}
}
