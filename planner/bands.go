package planner

import (
	"fmt"
	"maps"
	"math"
	"strings"
)

// minScenarioBandRows is the fewest held-out rows of one workload kind a
// scenario's band is measured on; a metric with fewer keeps the band of
// all rows (ErrorBand).
const minScenarioBandRows = 10

// ScenarioErrorBands are the error bands by workload kind
// (PerfParams.ScenarioErrorBand): for each kind and metric with at least
// minScenarioBandRows rows held out by source, the larger of the kind's
// in-sample and leave-one-source-out MdAPE, as ErrorBands does for all
// rows. Unlike the calibrated bands they may exceed the overall band: a
// request-rate plan's TPOT is far less certain than a closed loop's, and
// the band says so.
func ScenarioErrorBands(inSample Report, loso CrossValidation) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for kind, cell := range loso.ByScenario {
		for m, r := range cell {
			if r.Predicted < minScenarioBandRows {
				continue
			}
			v := math.Round(r.MdAPE*10) / 10
			if in, ok := inSample.ByScenario[kind][m]; ok && in.Predicted > 0 {
				v = math.Max(v, math.Round(in.MdAPE*10)/10)
			}
			if out[kind] == nil {
				out[kind] = map[string]float64{}
			}
			out[kind][string(m)] = v
		}
	}
	return out
}

// bandKind is the workload kind whose held-out errors band a plan of w: a
// closed loop of one user is a single stream, whose TPOT is its decode
// speed's inverse.
func bandKind(w Workload) WorkloadKind {
	p := w.Pattern()
	if p.Kind == WorkloadClosed && p.Users <= 1 {
		return WorkloadSingle
	}
	return p.Kind
}

// workloadBands is the error band of a plan of w: ErrorBand, with the
// band of w's kind (ScenarioErrorBand) over it where the kind has one.
// A single stream's TPOT takes its decode band when it has none of its
// own (TPOT = 1000 / decode tok/s). It returns the kind when any metric
// came from it, "" otherwise.
func (p *PerfParams) workloadBands(w Workload) (map[string]float64, WorkloadKind) {
	kind := bandKind(w)
	cell := p.ScenarioErrorBand[string(kind)]
	if len(cell) == 0 {
		return p.ErrorBand, ""
	}
	out := make(map[string]float64, len(p.ErrorBand))
	maps.Copy(out, p.ErrorBand)
	maps.Copy(out, cell)
	if _, ok := cell[string(MetricTPOT)]; !ok && kind == WorkloadSingle {
		if v, ok := cell[string(MetricTG)]; ok {
			out[string(MetricTPOT)] = v
		}
	}
	return out, kind
}

// bandsFor is the error band of a plan on a calibration key, base being
// the plan's band (workloadBands): where the key has a saved factor on
// the fitted decode efficiency, each metric's calibrated band
// (CalibratedErrorBand) where it is the smaller; base otherwise.
func (p *PerfParams) bandsFor(key string, base map[string]float64) map[string]float64 {
	cal, ok := p.Calibrations[key]
	if !ok || cal.DecodeScale <= 0 || len(p.CalibratedErrorBand) == 0 {
		return base
	}
	out := make(map[string]float64, len(base))
	maps.Copy(out, base)
	for m, v := range p.CalibratedErrorBand {
		if b, ok := out[m]; !ok || v < b {
			out[m] = v
		}
	}
	return out
}

// ErrorBandText says how far the best candidate's figures typically are
// from measurements (BandText); "" without a plan.
func (r PlanResult) ErrorBandText() string {
	best, ok := r.Best()
	if !ok {
		return ""
	}
	return BandText(best.ErrorBand, r.ErrorBandWorkload)
}

// BandText says how far figures with error band band (a Candidate's
// ErrorBand) typically are from measurements, kind being the workload
// kind the band comes from (PlanResult.ErrorBandWorkload): "typical error
// (median, on sources held out of the fit, for closed loops of users):
// decode ±17%, prefill ±19%, output throughput ±18%, TTFT ±32%, TPOT
// ±11%"; "" without a band.
func BandText(band map[string]float64, kind WorkloadKind) string {
	var parts []string
	for _, m := range []struct {
		name string
		m    Metric
	}{{"decode", MetricTG}, {"prefill", MetricPP}, {"output throughput", MetricTotalOut}, {"TTFT", MetricTTFT}, {"TPOT", MetricTPOT}} {
		if v, ok := band[string(m.m)]; ok && v > 0 {
			parts = append(parts, fmt.Sprintf("%s ±%.0f%%", m.name, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	scope := "on sources held out of the fit"
	if kind != "" {
		scope += ", for " + kind.Plural()
	}
	return "typical error (median, " + scope + "): " + strings.Join(parts, ", ")
}
