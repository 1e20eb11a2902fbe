package planner

import (
	"math"
	"strconv"
)

// CalibratedCV is the source cross-validation a second time, as a user
// who has calibrated sees it: every held-out setup (device, engine,
// backend, device count) is calibrated on one run of its own, the first
// row of each metric it has (one benchmark output's worth: llama-bench's
// pp and tg rows, a serving run's throughput, TTFT and TPOT), the way
// `calibrate import --save` does (FitRowsCalibration), and its other rows
// are predicted with the calibration. The rows of those first runs are
// not scored, and neither is a setup with a single row per metric.
type CalibratedCV struct {
	// Metrics are the calibrated predictions' errors and Plain the
	// uncalibrated ones of the same rows, so the two compare.
	Metrics map[Metric]MetricReport `json:"metrics"`
	Plain   map[Metric]MetricReport `json:"plain"`
	// Setups counts the setups a factor was saved for; Refused those
	// whose factor fell at an end of the search range (calibrate.Check
	// refuses them, so their rows are scored uncalibrated).
	Setups  int         `json:"setups"`
	Refused int         `json:"refused"`
	Results []RowResult `json:"-"`
}

// calibrationRun is the key one run of a setup is picked by: the
// calibration key and the device count.
func calibrationRun(c *Catalog, m Measurement) (string, bool) {
	s, b, err := setupOf(c, m)
	if err != nil {
		return "", false
	}
	return CalibrationKey(m.Hardware, s.Engine.ID, b) + "|" + strconv.Itoa(m.Devices), true
}

// calibratedFoldResult is one fold's part of a CalibratedCV: the
// calibrated and the plain predictions of the rows scored, and how many
// setups were calibrated and refused.
type calibratedFoldResult struct {
	cal, plain      []RowResult
	setups, refused int
}

// calibratedFold predicts a held-out group's rows with each setup
// calibrated on its first run (CalibratedCV), fitted parameters p of the
// fold.
func calibratedFold(c *Catalog, held []Measurement, p *PerfParams) (r calibratedFoldResult) {
	first := map[string]int{} // run|metric → index in held
	runs := make([]string, len(held))
	for i, m := range held {
		k, ok := calibrationRun(c, m)
		if !ok {
			runs[i] = "-"
			continue
		}
		runs[i] = k
		if _, seen := first[k+"|"+string(m.Metric)]; !seen {
			first[k+"|"+string(m.Metric)] = i
		}
	}
	isFirst := func(i int) bool {
		j, ok := first[runs[i]+"|"+string(held[i].Metric)]
		return ok && j == i
	}
	var calRows []Measurement
	for i, m := range held {
		if isFirst(i) {
			calRows = append(calRows, m)
		}
	}
	pc := *p
	pc.Calibrations = map[string]Calibrated{}
	if cals, err := FitRowsCalibration(c, calRows, p); err == nil {
		for _, x := range cals {
			if !DecodeScaleUsable(x.Terms.DecodeScale) {
				r.refused++
				continue
			}
			pc.Calibrations[x.Key()] = x.Terms
			r.setups++
		}
	}
	for i, m := range held {
		if runs[i] == "-" || isFirst(i) {
			continue
		}
		r.plain = append(r.plain, predictRow(c, m, p))
		r.cal = append(r.cal, predictRow(c, m, &pc))
	}
	return r
}

// calibratedCV sums the folds' parts into a CalibratedCV.
func calibratedCV(folds []calibratedFoldResult) *CalibratedCV {
	x := &CalibratedCV{}
	var plain []RowResult
	for _, f := range folds {
		x.Results = append(x.Results, f.cal...)
		plain = append(plain, f.plain...)
		x.Setups += f.setups
		x.Refused += f.refused
	}
	x.Metrics, x.Plain = summarizeMetrics(x.Results), summarizeMetrics(plain)
	return x
}

// minCalibratedBandRows is the fewest held-out rows a calibrated band is
// measured on (requests/s has 2 once the first runs are taken out).
const minCalibratedBandRows = 10

// CalibratedErrorBands are the error bands of a setup calibrated on one
// run of its own (PerfParams.CalibratedErrorBand): per metric where the
// calibration lowered the held-out error on the same rows, the larger of
// the in-sample MdAPE and the calibrated held-out one, and never more
// than the uncalibrated band (bands). A metric the calibration did not
// help, or with fewer than minCalibratedBandRows rows, keeps its band, so
// it is left out.
func CalibratedErrorBands(inSample Report, cv *CalibratedCV, bands map[string]float64) map[string]float64 {
	out := map[string]float64{}
	if cv == nil {
		return out
	}
	for m, r := range cv.Metrics {
		pl, ok := cv.Plain[m]
		if r.Predicted < minCalibratedBandRows || !ok || pl.Predicted == 0 || !(r.MdAPE < pl.MdAPE) {
			continue
		}
		v := math.Round(r.MdAPE*10) / 10
		if in, ok := inSample.Metrics[m]; ok {
			v = math.Max(v, math.Round(in.MdAPE*10)/10)
		}
		if b, ok := bands[string(m)]; ok && b < v {
			continue
		}
		out[string(m)] = v
	}
	return out
}

// summarizeMetrics is the per-metric summary of results (summarize).
func summarizeMetrics(res []RowResult) map[Metric]MetricReport {
	by := map[Metric][]RowResult{}
	for _, r := range res {
		by[r.Row.Metric] = append(by[r.Row.Metric], r)
	}
	out := map[Metric]MetricReport{}
	for m, rs := range by {
		out[m] = summarize(rs)
	}
	return out
}
