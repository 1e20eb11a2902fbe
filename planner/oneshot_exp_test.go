//go:build exp

package planner

import (
	"math"
	"os"
	"strconv"
)

// calKey is what a saved calibration is keyed by.
func calKey(c *Catalog, m Measurement) (string, Scenario, Backend, bool) {
	s, err := ScenarioFor(c, m)
	if err != nil {
		return "", s, "", false
	}
	b, err := s.ResolveBackend()
	if err != nil {
		return "", s, "", false
	}
	return CalibrationKey(m.Hardware, s.Engine.ID, b) + "|" + strconv.Itoa(m.Devices), s, b, true
}

// LeaveOneSourceOutCalibrated is LeaveOneSourceOut where, for every
// calibration key (device, engine, backend, device count) of the held-out
// source, the first run's rows scale the fold's efficiencies for that key
// (the geometric mean of implied over fitted η_d and η_p), and the key's
// other rows are predicted with them. Rows of the first runs are not
// scored.
func LeaveOneSourceOutCalibrated(c *Catalog, rows []Measurement, opt FitOptions, full PerfParams) ([]RowResult, []RowResult) {
	groups := map[string][]Measurement{}
	var names []string
	for _, m := range rows {
		g := SourceKey(m)
		if _, ok := groups[g]; !ok {
			names = append(names, g)
		}
		groups[g] = append(groups[g], m)
	}
	perFold := make([][]RowResult, len(names))
	plain := make([][]RowResult, len(names))
	parallelFor(len(names), func(i int) {
		var train []Measurement
		for _, m := range rows {
			if SourceKey(m) != names[i] {
				train = append(train, m)
			}
		}
		p := FitPerfHeldOverheads(c, train, opt, full)
		// The calibration rows: the first row of each metric of each key
		// (one benchmark output's worth: llama-bench's pp and tg rows, a
		// serving run's throughput, TTFT and TPOT).
		first := map[string]Measurement{}
		isCal := func(k string, m Measurement) bool {
			f, ok := first[k+"|"+string(m.Metric)]
			return ok && f == m
		}
		for _, m := range groups[names[i]] {
			k, _, _, ok := calKey(c, m)
			if !ok {
				continue
			}
			if _, seen := first[k+"|"+string(m.Metric)]; !seen {
				first[k+"|"+string(m.Metric)] = m
			}
		}
		var calRows []Measurement
		for _, m := range groups[names[i]] {
			if k, _, _, ok := calKey(c, m); ok && isCal(k, m) {
				calRows = append(calRows, m)
			}
		}
		p2 := p
		p2.Calibrations = map[string]Calibrated{}
		if cals, err := FitRowsCalibration(c, calRows, &p); err == nil {
			for _, cal := range cals {
				if cal.Terms.DecodeScale > MinDecodeScale*1.02 && cal.Terms.DecodeScale < MaxDecodeScale/1.02 {
					t := cal.Terms
					if v, err := strconv.ParseFloat(os.Getenv("EXP_SHRINK"), 64); err == nil {
						// EXP_SHRINK=a uses the factor to the power a.
						t.DecodeScale = math.Pow(t.DecodeScale, v)
					}
					p2.Calibrations[cal.Key()] = t
				}
			}
		}
		for _, m := range groups[names[i]] {
			k, _, _, ok := calKey(c, m)
			if ok && isCal(k, m) {
				continue
			}
			plain[i] = append(plain[i], predictRow(c, m, &p))
			perFold[i] = append(perFold[i], predictRow(c, m, &p2))
		}
	})
	var res, pl []RowResult
	for i := range perFold {
		res = append(res, perFold[i]...)
		pl = append(pl, plain[i]...)
	}
	return res, pl
}
