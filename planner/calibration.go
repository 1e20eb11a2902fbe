package planner

import (
	"errors"
	"fmt"
	"math"

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
		pm.applyCalibration(Calibrated{BandwidthGBs: bwGBs, TFLOPS: tflops})
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
