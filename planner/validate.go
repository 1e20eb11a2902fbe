package planner

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// RowResult is one measurement with its prediction.
type RowResult struct {
	Row       Measurement `json:"row"`
	Predicted float64     `json:"predicted"`
	// APE is the absolute percentage error; Signed is (pred−meas)/meas·100.
	APE    float64 `json:"ape"`
	Signed float64 `json:"signed"`
	Err    string  `json:"error,omitempty"`
}

// MetricReport summarizes errors for one metric (or a breakdown cell).
type MetricReport struct {
	Rows      int     `json:"rows"`
	Predicted int     `json:"predicted"`
	MdAPE     float64 `json:"mdape"`
	P90       float64 `json:"p90"`
	Bias      float64 `json:"bias"` // signed median error, percent
}

// Report is the result of validating predictions against measurements.
type Report struct {
	Metrics  map[Metric]MetricReport            `json:"metrics"`
	ByEngine map[string]map[Metric]MetricReport `json:"by_engine"`
	ByKind   map[string]map[Metric]MetricReport `json:"by_hardware_kind"`
	Worst    map[Metric][]RowResult             `json:"worst"`
	// Unpredicted counts rows the model could not predict, by reason.
	Unpredicted map[string]int `json:"unpredicted"`
	Results     []RowResult    `json:"-"`
}

// Validate predicts every row and reports error statistics per metric,
// engine and hardware kind. Rows it cannot predict are counted, not hidden.
func Validate(c *Catalog, rows []Measurement, p *PerfParams) Report {
	res := make([]RowResult, len(rows))
	for i, m := range rows {
		res[i] = predictRow(c, m, p)
	}
	return Summarize(c, res)
}

func predictRow(c *Catalog, m Measurement, p *PerfParams) RowResult {
	r := RowResult{Row: m}
	v, err := PredictMeasurement(c, m, p)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		if err == nil {
			err = &ErrUnpredictable{Why: "non-finite prediction"}
		}
		r.Err = err.Error()
		return r
	}
	r.Predicted = v
	r.Signed = (v - m.Value) / m.Value * 100
	r.APE = math.Abs(r.Signed)
	return r
}

// Summarize builds a Report from row results.
func Summarize(c *Catalog, res []RowResult) Report {
	rep := Report{Metrics: map[Metric]MetricReport{}, ByEngine: map[string]map[Metric]MetricReport{},
		ByKind: map[string]map[Metric]MetricReport{}, Worst: map[Metric][]RowResult{}, Unpredicted: map[string]int{}, Results: res}
	type key struct{ group, metric string }
	byMetric := map[Metric][]RowResult{}
	byEngine := map[key][]RowResult{}
	byKind := map[key][]RowResult{}
	for _, r := range res {
		byMetric[r.Row.Metric] = append(byMetric[r.Row.Metric], r)
		byEngine[key{r.Row.Engine, string(r.Row.Metric)}] = append(byEngine[key{r.Row.Engine, string(r.Row.Metric)}], r)
		kind := "unknown"
		if h, err := c.FindHardware(r.Row.Hardware); err == nil {
			kind = string(h.Kind)
		}
		byKind[key{kind, string(r.Row.Metric)}] = append(byKind[key{kind, string(r.Row.Metric)}], r)
		if r.Err != "" {
			rep.Unpredicted[r.Err]++
		}
	}
	for m, rs := range byMetric {
		rep.Metrics[m] = summarize(rs)
		w := predicted(rs)
		sort.Slice(w, func(i, j int) bool { return w[i].APE > w[j].APE })
		if len(w) > 5 {
			w = w[:5]
		}
		rep.Worst[m] = w
	}
	for k, rs := range byEngine {
		if rep.ByEngine[k.group] == nil {
			rep.ByEngine[k.group] = map[Metric]MetricReport{}
		}
		rep.ByEngine[k.group][Metric(k.metric)] = summarize(rs)
	}
	for k, rs := range byKind {
		if rep.ByKind[k.group] == nil {
			rep.ByKind[k.group] = map[Metric]MetricReport{}
		}
		rep.ByKind[k.group][Metric(k.metric)] = summarize(rs)
	}
	return rep
}

func predicted(rs []RowResult) []RowResult {
	var out []RowResult
	for _, r := range rs {
		if r.Err == "" {
			out = append(out, r)
		}
	}
	return out
}

func summarize(rs []RowResult) MetricReport {
	p := predicted(rs)
	mr := MetricReport{Rows: len(rs), Predicted: len(p)}
	if len(p) == 0 {
		return mr
	}
	ape := make([]float64, len(p))
	sg := make([]float64, len(p))
	for i, r := range p {
		ape[i], sg[i] = r.APE, r.Signed
	}
	sort.Float64s(ape)
	sort.Float64s(sg)
	mr.MdAPE = stat.Quantile(0.5, stat.LinInterp, ape, nil)
	mr.P90 = stat.Quantile(0.9, stat.LinInterp, ape, nil)
	mr.Bias = stat.Quantile(0.5, stat.LinInterp, sg, nil)
	return mr
}
