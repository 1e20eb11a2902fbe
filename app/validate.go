package app

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// Measurements are rows read from a measurement CSV.
type Measurements struct {
	Rows []planner.Measurement
	// Name is the file's base name, or "published measurements.csv" for
	// the embedded collection.
	Name string
	// Skipped are the rows that could not be read, each naming its line.
	Skipped []error
}

// maxMeasurementsBytes caps a measurement CSV (the published collection is
// 0.5 MB; a million rows is under 256 MB).
const maxMeasurementsBytes = 256 << 20

// LoadMeasurements reads a CSV in the measurement schema, or the embedded
// published measurements when path is "".
func LoadMeasurements(path string) (Measurements, error) {
	if path == "" {
		rows, bad, err := measurements.LoadPublished()
		return Measurements{Rows: rows, Name: "published measurements.csv", Skipped: bad}, err
	}
	f, err := safefile.Open(path, maxMeasurementsBytes)
	if err != nil {
		return Measurements{}, Usage(err)
	}
	defer f.Close()
	rows, bad, err := measurements.Read(f, path)
	return Measurements{Rows: rows, Name: filepath.Base(path), Skipped: bad}, err
}

// Validate predicts every row with the catalog's fitted (and calibrated)
// efficiencies and reports the error per metric.
func (a *App) Validate(ms Measurements) planner.Report {
	c := a.Catalog()
	return planner.Validate(c, ms.Rows, c.Perf)
}

// RefitOptions control Refit.
type RefitOptions struct {
	Ridge float64 // L2 penalty of the effect terms (planner.DefaultRidge)
	// InteractionRidge multiplies Ridge for interaction terms (0 = 1;
	// planner.FitOptions).
	InteractionRidge float64
	// SourceWeight weighs rows by their source's size (planner.FitOptions).
	SourceWeight float64
	CV           bool   // also run leave-one-hardware-out cross-validation
	Date         string // the date recorded in the profile (YYYY-MM-DD)
	// HoldOverheads keeps the catalog profile's host overheads (per
	// layer, per sequence, per request) and fits only the efficiencies
	// (planner.FitPerfHeldOverheads), instead of searching them anew.
	HoldOverheads bool
	// FoldRequestOverheads searches the front end's cost per request
	// again in every cross-validation fold (planner.FitOptions).
	FoldRequestOverheads bool
}

// Refitted is a refit: the memory and performance profiles and how well
// they predict the rows.
type Refitted struct {
	Memory   planner.MemoryParams
	KVReport planner.MetricReport
	Perf     planner.PerfParams
	InSample planner.Report
	// CV is the leave-one-hardware-out result and SourceCV the
	// leave-one-source-out one (nil without RefitOptions.CV).
	CV, SourceCV *planner.CrossValidation
}

// Refit fits the memory and performance models on rows. The error bands
// users see are the larger of the in-sample and held-out MdAPE per metric.
func (a *App) Refit(ms Measurements, opt RefitOptions) Refitted {
	c := *a.Catalog()
	var r Refitted
	r.Memory, r.KVReport = planner.FitMemory(&c, ms.Rows)
	c.Memory = &r.Memory
	fo := planner.FitOptions{Ridge: opt.Ridge, InteractionRidge: opt.InteractionRidge, SourceWeight: opt.SourceWeight,
		FoldRequestOverheads: opt.FoldRequestOverheads}
	how := "host overheads searched"
	if opt.HoldOverheads && c.Perf != nil {
		r.Perf = planner.FitPerfHeldOverheads(&c, ms.Rows, fo, *c.Perf)
		how = "host overheads held from the previous profile"
	} else {
		r.Perf = planner.FitPerfWithOverheads(&c, ms.Rows, fo)
	}
	r.InSample = planner.Validate(&c, ms.Rows, &r.Perf)
	r.Perf.ErrorBand = map[string]float64{}
	for m, rep := range r.InSample.Metrics {
		r.Perf.ErrorBand[string(m)] = round(rep.MdAPE, 1)
	}
	ridge := fmt.Sprintf("ridge %g", fo.Ridge)
	if fo.InteractionRidge > 0 {
		ridge += fmt.Sprintf(" (×%g on interaction terms)", fo.InteractionRidge)
	}
	if fo.SourceWeight != 0 {
		ridge += fmt.Sprintf(", rows weighted by source size^-%g", fo.SourceWeight)
	}
	r.Perf.Fitted = fmt.Sprintf("%s on %s (%d rows), %s, %s; in-sample: %s", opt.Date, ms.Name, len(ms.Rows), ridge, how, r.InSample.Describe())
	if !opt.CV {
		return r
	}
	x := planner.LeaveOneHardwareOut(&c, ms.Rows, fo, r.Perf)
	r.CV = &x
	lo := planner.LeaveOneSourceOut(&c, ms.Rows, fo, r.Perf)
	r.SourceCV = &lo
	// The error bands users see are the larger of in-sample and held out
	// by source: a new user's benchmark is a source Headroom never saw.
	r.Perf.ErrorBand = planner.ErrorBands(r.InSample, lo)
	r.Perf.CalibratedErrorBand = planner.CalibratedErrorBands(r.InSample, lo.Calibrated, r.Perf.ErrorBand)
	r.Perf.ScenarioErrorBand = planner.ScenarioErrorBands(r.InSample, lo)
	r.Perf.Fitted += "; leave-one-hardware-out: " + cvText(x) + "; leave-one-source-out: " + cvText(lo)
	return r
}

// cvText summarizes a cross-validation per metric.
func cvText(x planner.CrossValidation) string {
	s := ""
	for _, m := range planner.Metrics {
		if rep, ok := x.Metrics[m]; ok {
			s += fmt.Sprintf("%s MdAPE %.1f%% (%d/%d); ", m, rep.MdAPE, rep.Predicted, rep.Rows)
		}
	}
	return s
}

// EncodeFitted writes a refit as the catalog's fitted.toml.
func (r Refitted) EncodeFitted() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Fitted by `headroom refit` (see the README). Do not edit by hand; refit instead.\n\n")
	err := toml.NewEncoder(&buf).Encode(map[string]any{"memory": r.Memory, "perf": r.Perf})
	return buf.Bytes(), err
}
