//go:build exp

package planner

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
