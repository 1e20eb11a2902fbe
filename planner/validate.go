package planner

import (
	"math"
	"sort"
	"strconv"
	"strings"

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
	// Beyond is set when the measured value lies beyond what the row's
	// own columns allow physically (RowBound): the bound and why.
	Beyond *PhysicalBound `json:"beyond,omitempty"`
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
	// ByScenario breaks errors down by the rows' workload (single,
	// batched, closed, burst, rate, offline, capacity).
	ByScenario map[string]map[Metric]MetricReport `json:"by_scenario"`
	// BySource breaks errors down by the rows' source (a file, page or
	// seed), the unit leave-one-source-out holds out.
	BySource map[string]map[Metric]MetricReport `json:"by_source"`
	Worst    map[Metric][]RowResult             `json:"worst"`
	// Unpredicted counts rows the model could not predict, by reason.
	Unpredicted map[string]int `json:"unpredicted"`
	// Beyond lists the rows whose measured value lies beyond the physical
	// bound of their stated columns (RowResult.Beyond); they stay in
	// every figure above.
	Beyond  []RowResult `json:"beyond_physical_bound,omitempty"`
	Results []RowResult `json:"-"`
}

// Validate predicts every row and reports error statistics per metric,
// engine and hardware kind. Rows it cannot predict are counted, not hidden.
func Validate(c *Catalog, rows []Measurement, p *PerfParams) Report {
	res := make([]RowResult, len(rows))
	for i, m := range rows {
		res[i] = predictRow(c, m, p)
		// The bound needs no fit: here, not in predictRow, which the
		// overhead search and the folds call for every row again.
		if b, ok := RowBound(c, m); ok && b.Breached(m.Value) {
			res[i].Beyond = &b
		}
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
	rep := Report{Metrics: map[Metric]MetricReport{}, Worst: map[Metric][]RowResult{}, Unpredicted: map[string]int{}, Results: res}
	byMetric := map[Metric][]RowResult{}
	for _, r := range res {
		byMetric[r.Row.Metric] = append(byMetric[r.Row.Metric], r)
		if r.Beyond != nil {
			rep.Beyond = append(rep.Beyond, r)
		}
		if r.Err != "" {
			rep.Unpredicted[r.Err]++
		}
	}
	rep.ByEngine = breakdown(res, func(m Measurement) string { return m.Engine })
	rep.ByKind = breakdown(res, func(m Measurement) string {
		if h, err := c.FindHardware(m.Hardware); err == nil {
			return string(h.Kind)
		}
		return "unknown"
	})
	rep.ByScenario = breakdown(res, func(m Measurement) string { return string(WorkloadKindOf(m)) })
	rep.BySource = breakdown(res, SourceKey)
	for m, rs := range byMetric {
		rep.Metrics[m] = summarize(rs)
		w := predicted(rs)
		sort.Slice(w, func(i, j int) bool { return w[i].APE > w[j].APE })
		if len(w) > 5 {
			w = w[:5]
		}
		rep.Worst[m] = w
	}
	return rep
}

// breakdown summarizes results per group (group(row)) and metric.
func breakdown(res []RowResult, group func(Measurement) string) map[string]map[Metric]MetricReport {
	type key struct {
		group  string
		metric Metric
	}
	cells := map[key][]RowResult{}
	for _, r := range res {
		k := key{group(r.Row), r.Row.Metric}
		cells[k] = append(cells[k], r)
	}
	out := map[string]map[Metric]MetricReport{}
	for k, rs := range cells {
		if out[k.group] == nil {
			out[k.group] = map[Metric]MetricReport{}
		}
		out[k.group][k.metric] = summarize(rs)
	}
	return out
}

// SourceKey names the publisher of a row, the unit leave-one-source-out
// holds out: a GitHub repository (owner/repo; its discussions, issues
// and pull requests each count as their own source, being written by
// different people), a seed document, or a web page's host and first
// path segment. Only grouping reads it, never a prediction.
func SourceKey(m Measurement) string {
	s := strings.TrimSpace(m.Source)
	if strings.HasPrefix(s, "seed ") {
		return firstField(s[len("seed "):], " ;,(")
	}
	s = firstField(s, " ;#(")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	parts := strings.Split(s, "/")
	if parts[0] == "github.com" && len(parts) >= 3 {
		key := strings.Join(parts[1:3], "/")
		if len(parts) >= 5 && (parts[3] == "discussions" || parts[3] == "issues" || parts[3] == "pull") {
			key += "/" + parts[3] + "/" + parts[4]
		}
		return key
	}
	if len(parts) >= 2 {
		return parts[0] + "/" + parts[1]
	}
	return s
}

// firstField is s up to the first of the bytes in cut.
func firstField(s, cut string) string {
	if i := strings.IndexAny(s, cut); i >= 0 {
		return s[:i]
	}
	return s
}

// MdAPEText is the MdAPE as a report prints it: "no rows predicted" when
// none was, rather than a misleading 0.0.
func (r MetricReport) MdAPEText() string {
	if r.Predicted == 0 {
		return "no rows predicted"
	}
	return strconv.FormatFloat(r.MdAPE, 'f', 1, 64)
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
