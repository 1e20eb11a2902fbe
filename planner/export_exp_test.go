//go:build exp

package planner

import "fmt"

// RowAdmission is the admission cap and the workload of a row (experiments).
func RowAdmission(c *Catalog, m Measurement) (int, Workload, error) {
	s, err := ScenarioFor(c, m)
	if err != nil {
		return 0, Workload{}, err
	}
	w := WorkloadFor(m)
	return admissionCap(s, w), w, nil
}

// FitRequestOverheads is fitRequestOverheads (experiments).
func FitRequestOverheads(c *Catalog, rows []Measurement, p PerfParams, engines []string) map[string]float64 {
	return fitRequestOverheads(c, rows, p, engines)
}

// BurstAnatomy describes what binds a burst row's prediction (experiments):
// the admission cap, the waves, one wave's chunked prefill, the decode
// step at that batch and the front end's floor.
func BurstAnatomy(c *Catalog, m Measurement, p *PerfParams) string {
	s, err := ScenarioFor(c, m)
	if err != nil {
		return err.Error()
	}
	w := WorkloadFor(m)
	if w.Burst <= 1 {
		return ""
	}
	pm := newPerfModel(s, p)
	capN := min(admissionCap(s, w), w.Burst)
	lim := limitsFor(s)
	pre := pm.chunkedPrefillMs(w.Prompt, capN, lim.budget)
	step, bound := pm.decodeStep(capN, float64(w.Prompt)+genTokens(w)/2)
	pr := predictBurst(pm, w)
	fe := float64(w.Burst) * pm.reqOvh
	pm.reqOvh = 0
	pr0 := predictBurst(pm, w)
	return fmt.Sprintf("cap=%d/%d seqs=%d budget=%d waves=%d prefill=%.0fms step=%.1fms(%s) fe=%.0fms mixed=%v | ttft %.0f (fe0 %.0f) tpot %.1f (fe0 %.1f) tps %.0f (fe0 %.0f)",
		capN, w.Burst, lim.maxSeqs, lim.budget, (w.Burst+capN-1)/capN, pre, step, bound, fe, pm.mixed,
		pr.TTFT, pr0.TTFT, pr.TPOT, pr0.TPOT, pr.TotalTPS, pr0.TotalTPS)
}
