package planner

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// CalPoint is one measurement on this machine with the scenario it ran.
type CalPoint struct {
	Scenario Scenario
	Row      Measurement
}

// CalFit is the quality of a calibration fit.
type CalFit struct {
	DecodePoints  int     `json:"decode_points" toml:"decode_points"`
	PrefillPoints int     `json:"prefill_points" toml:"prefill_points"`
	DecodeR2      float64 `json:"decode_r2" toml:"decode_r2"`
	PrefillR2     float64 `json:"prefill_r2" toml:"prefill_r2"`
	// Residuals are (predicted − measured)/measured in percent, per point,
	// after the fit.
	Residuals []CalResidual `json:"residuals" toml:"residuals"`
}

// CalResidual is one point's measured and fitted value.
type CalResidual struct {
	Metric    Metric  `json:"metric" toml:"metric"`
	Label     string  `json:"label" toml:"label"`
	Measured  float64 `json:"measured" toml:"measured"`
	Predicted float64 `json:"predicted" toml:"predicted"`
}

// ErrTooFewPoints means a calibration has no usable decode or prefill rows.
var ErrTooFewPoints = errors.New("too few measurements to calibrate")

// FitCalibration fits this machine's decode and prefill terms from
// measurements, with the step model of Predict:
//
//	decode step (ms)  = overhead + bytes_per_step / (BW · η_d)
//	prefill (ms)      = overhead + FLOPs / (P · η_p)
//
// Both are linear in one unknown slope and an intercept, fitted by least
// squares (gonum/stat.LinearRegression) over single-stream decode rows
// (tg_tps at concurrency 1, or tpot_ms) and prefill rows (pp_tps). With a
// single distinct size the overhead keeps its prior and only η is solved.
// bwGBs and tflops replace the catalog peaks when a host benchmark
// measured them (0 = catalog).
func FitCalibration(points []CalPoint, bwGBs, tflops float64, p *PerfParams) (Calibrated, CalFit, error) {
	var cal Calibrated
	var q CalFit
	cal.BandwidthGBs, cal.TFLOPS = bwGBs, tflops
	var dx, dy, px, py []float64
	var bw, peak, ovh float64
	for _, cp := range points {
		s, m := cp.Scenario, cp.Row
		pm := newPerfModel(s, p)
		pm.applyCalibration(Calibrated{BandwidthGBs: bwGBs, TFLOPS: tflops}, s.Model.ID)
		bw, peak, ovh = pm.bw, pm.peak, pm.ovh
		w := WorkloadFor(m)
		switch {
		case (m.Metric == MetricTG && max(m.Concurrency, 1) == 1 && !w.Serving) || (m.Metric == MetricTPOT && max(m.Concurrency, 1) == 1):
			ms := m.Value
			if m.Metric == MetricTG {
				ms = 1000 / m.Value
			}
			ctx := float64(w.Depth) + float64(w.Prompt) + float64(max(w.Gen, 2))/2
			dx = append(dx, pm.wt.bytes(s.Model, 1)+ctx*pm.kvTok)
			dy = append(dy, ms)
		case m.Metric == MetricPP && max(m.Concurrency, 1) == 1 && m.PromptTokens > 0:
			n := float64(m.PromptTokens)
			flops := 2*float64(s.Model.active())*n + 2*float64(s.Model.Layers)*attnDim(s.Model)*(n*n+2*n*float64(m.ContextDepth))
			px = append(px, flops/float64(speedDevices(s)))
			py = append(py, n/m.Value*1000)
		}
	}
	if len(dx) == 0 && len(px) == 0 {
		return cal, q, ErrTooFewPoints
	}
	q.DecodePoints, q.PrefillPoints = len(dx), len(px)
	if len(dx) > 0 {
		a, b := lineFit(dx, dy, ovh)
		cal.StepOverheadMs = math.Max(a, 0.01)
		cal.DecodeEff = clampEff(1 / (b * bw / 1000))
		q.DecodeR2 = r2(dx, dy, a, b)
	}
	if len(px) > 0 {
		// Predict adds the step overhead to prefill: fit the slope through it.
		a, b := lineFit(px, py, cal.StepOverheadMs)
		if a != cal.StepOverheadMs {
			a, b = cal.StepOverheadMs, throughIntercept(px, py, cal.StepOverheadMs)
		}
		cal.PrefillEff = clampEff(1 / (b * peak / 1000))
		q.PrefillR2 = r2(px, py, a, b)
	}
	for _, cp := range points {
		pp := *p
		pp.Calibrations = map[string]Calibrated{}
		b, _ := cp.Scenario.ResolveBackend()
		pp.Calibrations[CalibrationKey(cp.Scenario.Hardware.ID, cp.Scenario.Engine.ID, b)] = cal
		v, err := predictScenario(cp.Scenario, cp.Row, &pp)
		if err != nil {
			continue
		}
		q.Residuals = append(q.Residuals, CalResidual{Metric: cp.Row.Metric, Label: calLabel(cp), Measured: cp.Row.Value, Predicted: v})
	}
	return cal, q, nil
}

func calLabel(cp CalPoint) string {
	r := cp.Row
	return fmt.Sprintf("%s %s p%d g%d c%d", cp.Scenario.Model.ID, r.Quant, r.PromptTokens, r.GenTokens, max(r.Concurrency, 1))
}

// lineFit fits y = a + b·x; with one distinct x it keeps a = prior.
func lineFit(x, y []float64, prior float64) (a, b float64) {
	distinct := false
	for _, v := range x {
		if math.Abs(v-x[0]) > 1e-9*math.Abs(x[0]) {
			distinct = true
		}
	}
	if distinct {
		a, b = stat.LinearRegression(x, y, nil, false)
		if b > 0 && a >= 0 {
			return a, b
		}
		if b > 0 {
			prior = 0 // a negative overhead is noise: fit through the origin
		}
	}
	// Through the prior intercept: b = Σ(y − a)x / Σx².
	var num, den float64
	for i := range x {
		num += (y[i] - prior) * x[i]
		den += x[i] * x[i]
	}
	if den == 0 || num <= 0 {
		return prior, 1e-12
	}
	return prior, num / den
}

func throughIntercept(x, y []float64, a float64) float64 {
	var num, den float64
	for i := range x {
		num += (y[i] - a) * x[i]
		den += x[i] * x[i]
	}
	if den == 0 || num <= 0 {
		return 1e-12
	}
	return num / den
}

func r2(x, y []float64, a, b float64) float64 {
	if len(x) < 3 {
		return math.NaN() // two points always fit exactly
	}
	return stat.RSquared(x, y, nil, a, b)
}

func clampEff(e float64) float64 {
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return 0
	}
	return math.Min(5, math.Max(0.005, e)) // >1 only against a guessed peak (generic hardware)
}

// predictScenario predicts a row for an explicit scenario (a model read
// from a file rather than the catalog).
func predictScenario(s Scenario, m Measurement, p *PerfParams) (float64, error) {
	return metricOf(Predict(s, WorkloadFor(m), p), m.Metric)
}

// PredictRow predicts a measurement row for an explicit scenario.
func PredictRow(s Scenario, m Measurement, p *PerfParams) (float64, error) {
	return predictScenario(s, m, p)
}

// RowsCalibration is a calibration fitted from benchmark rows of one
// setup (FitRowsCalibration).
type RowsCalibration struct {
	Hardware string
	Engine   EngineID
	Backend  Backend
	Terms    Calibrated
	Fit      CalFit
	// MaxImpliedEff is the largest decode efficiency a single-stream
	// decode row implied: above 1, the row ran faster than the device's
	// memory allows. (Serving rows are left out: their implied efficiency
	// also carries what the model misses of queueing and host costs, and
	// published H100 bursts imply up to 1.6.)
	MaxImpliedEff float64
	// Unreached counts decode rows left out of the factor: rows the model
	// cannot predict, and rows past the first MaxCalibrationRows.
	Unreached int
}

// Key is the calibration key (CalibrationKey) the result is saved under.
func (r RowsCalibration) Key() string { return CalibrationKey(r.Hardware, r.Engine, r.Backend) }

// FitRowsCalibration fits, for each setup (device, engine, backend) of
// rows, the factor on the fitted decode efficiency that best reproduces
// the setup's decode-side rows (tg, TPOT, ITL, output throughput,
// requests/s): the factor k in [1/20, 20] minimizing the sum of squared
// log errors of their predictions with it (golden-section search on
// log k), so every scenario and workload the model predicts counts, and a
// row the factor barely moves (its time goes to prefill or host costs)
// barely moves it. Residuals list every row of the setup, prefill and
// TTFT included, predicted with the factor.
//
// Prefill is not calibrated from rows. Measured on the published rows
// held out by source (docs/predictions.md, "Your own benchmark run"),
// scaling each held-out setup's decode by its first row of each metric
// lowered the decode-side errors, while doing the same for prefill with
// the first pp row made the setup's other prefill rows worse: a prefill
// factor learned on one model and prompt length does not carry to others.
func FitRowsCalibration(c *Catalog, rows []Measurement, p *PerfParams) ([]RowsCalibration, error) {
	type acc struct {
		cal    RowsCalibration
		dec    []Measurement
		models []string // the catalog model of each of dec
		rows   []Measurement
		order  int
	}
	setups := map[string]*acc{}
	var skipped []string
	for _, m := range rows {
		s, b, err := setupOf(c, m)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s %s: %v", m.Model, m.Metric, err))
			continue
		}
		k := CalibrationKey(s.Hardware.ID, s.Engine.ID, b)
		a := setups[k]
		if a == nil {
			a = &acc{cal: RowsCalibration{Hardware: s.Hardware.ID, Engine: s.Engine.ID, Backend: b}, order: len(setups)}
			setups[k] = a
		}
		a.rows = append(a.rows, m)
		if !decodeMetric(m.Metric) {
			continue
		}
		if v, err := PredictMeasurement(c, m, p); err != nil || !(v > 0) || math.IsInf(v, 0) || !(m.Value > 0) {
			a.cal.Unreached++
			continue
		}
		if len(a.dec) >= MaxCalibrationRows {
			a.cal.Unreached++
			continue
		}
		a.dec = append(a.dec, m)
		a.models = append(a.models, s.Model.ID)
		if w := WorkloadFor(m); !w.Serving && w.Concurrency <= 1 {
			a.cal.MaxImpliedEff = math.Max(a.cal.MaxImpliedEff, singleStreamEff(c, m, p))
		}
	}
	var out []RowsCalibration
	for _, a := range setups {
		if len(a.dec) == 0 {
			continue
		}
		key := a.cal.Key()
		with := func(t Calibrated) *PerfParams {
			pp := *p
			pp.Calibrations = map[string]Calibrated{key: t}
			return &pp
		}
		// fit is the factor of the rows dec.
		fit := func(dec []Measurement) float64 {
			loss := func(logK float64) float64 {
				pk := with(Calibrated{DecodeScale: math.Exp(logK)})
				var sum float64
				for _, m := range dec {
					v, err := PredictMeasurement(c, m, pk)
					if err != nil || !(v > 0) {
						return math.Inf(1)
					}
					e := math.Log(v / m.Value)
					sum += e * e
				}
				return sum
			}
			return math.Exp(goldenMin(loss, math.Log(MinDecodeScale), math.Log(MaxDecodeScale), 40))
		}
		a.cal.Terms.DecodeScale = fit(a.dec)
		a.cal.Terms.ModelDecodeScale = perModelScales(a.dec, a.models, fit)
		a.cal.Fit.DecodePoints = len(a.dec)
		pk := with(a.cal.Terms)
		for _, m := range a.rows {
			v, err := PredictMeasurement(c, m, pk)
			if err != nil || !(v > 0) {
				continue
			}
			a.cal.Fit.Residuals = append(a.cal.Fit.Residuals, CalResidual{Metric: m.Metric, Label: rowLabel(m), Measured: m.Value, Predicted: v})
		}
		out = append(out, a.cal)
	}
	if len(out) == 0 {
		why := "no row of a decode metric (tg_tps, tpot_ms, itl_ms, total_out_tps, req_per_s) that the model predicts"
		if len(skipped) > 0 {
			why += "; skipped: " + skipped[0]
		}
		return nil, fmt.Errorf("%w: %s", ErrTooFewPoints, why)
	}
	sort.Slice(out, func(i, j int) bool { return setups[out[i].Key()].order < setups[out[j].Key()].order })
	return out, nil
}

// setupOf is the scenario a row describes and the backend it runs on:
// the setup a calibration is keyed by.
func setupOf(c *Catalog, m Measurement) (Scenario, Backend, error) {
	s, err := ScenarioFor(c, m)
	if err != nil {
		return s, "", err
	}
	b, err := s.ResolveBackend()
	return s, b, err
}

// perModelScales fits, where a setup's decode rows ran more than one
// model, each model's own factor on its rows (fit), keyed by catalog
// model; nil for one model, whose factor is the setup's. A factor at an
// end of the range is left out, and that model's plans take the setup's.
// At most MaxCalibrationModels models, the first ones in the rows.
//
// Measured on the published rows held out by source (docs/predictions.md,
// "Your own benchmark run"): with a setup's first run spanning several
// models, a row predicted with its own model's factor rather than the
// setup's took held-out decode from 15.6 to 12.8% and TTFT from 30.7 to
// 29.4%, TPOT from 20.9 to 20.7%, and left output throughput at 27.2%.
// Part of a setup's residual on one model's row is that model's (its
// format's kernels, its attention), not the setup's.
func perModelScales(dec []Measurement, models []string, fit func([]Measurement) float64) map[string]float64 {
	by := map[string][]Measurement{}
	var order []string
	for i, m := range dec {
		id := models[i]
		if _, ok := by[id]; !ok {
			if len(order) == MaxCalibrationModels {
				continue
			}
			order = append(order, id)
		}
		by[id] = append(by[id], m)
	}
	if len(order) < 2 {
		return nil
	}
	out := map[string]float64{}
	for _, id := range order {
		if k := fit(by[id]); DecodeScaleUsable(k) {
			out[id] = k
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// MaxCalibrationModels bounds the per-model factors of one setup
// (Calibrated.ModelDecodeScale): a benchmark output sweeps a few models.
const MaxCalibrationModels = 32

// singleStreamEff is the decode efficiency a single-stream decode row
// implies (impliedEfficiency); past the inversion's range, how much faster
// than at efficiency 1 it ran (the speed ratio, also above 1).
func singleStreamEff(c *Catalog, m Measurement, p *PerfParams) float64 {
	if e, ok := impliedEfficiency(c, m, p, true); ok {
		return e
	}
	v, err := predictMeasurementEff(c, m, p, 1, 0)
	if err != nil || !(v > 0) {
		return 0
	}
	if m.Metric == MetricTPOT || m.Metric == MetricITL {
		return v / m.Value
	}
	return m.Value / v
}

// MaxCalibrationRows bounds the decode rows one setup's factor is fitted
// on (the first ones in the file; the rest count as Unreached): the search
// predicts each of them about 45 times, and an imported file may hold
// any number of rows.
const MaxCalibrationRows = 256

// The range FitRowsCalibration searches a decode factor in: the
// published rows held out by source are off by 2-3× at worst, so a factor
// at either end means the rows describe another setup than the one they
// name (calibrate.Check refuses it).
const MinDecodeScale, MaxDecodeScale = 0.05, 20.0

// decodeScale is the factor on the fitted decode efficiency for model: its
// own (ModelDecodeScale) where the rows measured it, the setup's
// otherwise (0: none).
func (c Calibrated) decodeScale(model string) float64 {
	if k, ok := c.ModelDecodeScale[model]; ok {
		return k
	}
	return c.DecodeScale
}

// DecodeScaleUsable says a fitted decode factor is a measurement: finite
// and more than 2% inside [MinDecodeScale, MaxDecodeScale]. One at an end
// is a failed fit, the rows describing another setup than the one they
// name (calibrate.Check refuses it).
func DecodeScaleUsable(k float64) bool {
	return k >= MinDecodeScale*1.02 && k <= MaxDecodeScale/1.02
}

// goldenMin is the x in [lo, hi] minimizing f, by golden-section search
// with n steps (f unimodal or nearly so).
func goldenMin(f func(float64) float64, lo, hi float64, n int) float64 {
	g := (math.Sqrt(5) - 1) / 2
	a, b := lo, hi
	x1, x2 := b-g*(b-a), a+g*(b-a)
	f1, f2 := f(x1), f(x2)
	for i := 0; i < n; i++ {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - g*(b-a)
			f1 = f(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + g*(b-a)
			f2 = f(x2)
		}
	}
	return (a + b) / 2
}

// rowLabel names a measurement row in a calibration's residuals.
func rowLabel(m Measurement) string {
	l := fmt.Sprintf("%s %s %s p%d g%d", m.Model, m.Quant, WorkloadKindOf(m), m.PromptTokens, m.GenTokens)
	switch {
	case m.RequestRate > 0:
		l += fmt.Sprintf(" %g req/s", m.RequestRate)
	case m.Concurrency > 1:
		l += fmt.Sprintf(" c%d", m.Concurrency)
	}
	return l
}
