package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/calibrate/endpoint"
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
)

// GenericCPU is the hardware id host calibrations are saved for when the
// probed machine has no catalog CPU entry.
const GenericCPU = "generic-cpu"

// HostCalibration is a host benchmark and the profiles saved from it.
type HostCalibration struct {
	Result   host.Result
	Hardware string // the CPU id the profiles are for
	Saved    []string
	// Comparisons say, per profile, what changed from the one saved
	// before, what looks wrong with the new measurement, and whether it
	// was saved (a noisy run does not replace a clean one unless forced).
	Comparisons []calibrate.Comparison
}

// CalibrateHost runs the CPU microbenchmarks, then saves the llama.cpp and
// Ollama CPU profiles for the probed CPU (Options.Root) and applies them:
// a run whose figures no CPU can have is refused, and one that looks
// noisy (short, spread between passes, far below the datasheet) does not
// replace a clean profile unless force is set. progress may be nil. A
// cancelled ctx saves nothing.
func (a *App) CalibrateHost(ctx context.Context, opt host.Options, force bool, progress func(step string, frac float64)) (HostCalibration, error) {
	if opt.Budget != 0 && opt.Budget < host.MinBudget {
		return HostCalibration{}, Usagef("calibrate host: budget %v is too short to measure anything: use at least %v", opt.Budget, host.MinBudget)
	}
	res, err := host.Run(ctx, opt, progress)
	if err != nil {
		if errors.Is(err, host.ErrBadOptions) {
			return HostCalibration{}, Usage(fmt.Errorf("calibrate host: %w", err))
		}
		return HostCalibration{}, fmt.Errorf("calibrate host: %w", err)
	}
	cpu := a.hostCPU(ctx)
	hc := HostCalibration{Result: res, Hardware: cpu.ID}
	dir := a.CalibrationDir()
	if dir == "" {
		return hc, errors.New("calibrate host: measured, but there is no calibration directory to save to (pass --calibrations DIR)")
	}
	now := a.opt.Now().UTC()
	terms := calibrate.HostTerms(res)
	var errs []error
	for _, e := range []planner.EngineID{planner.LlamaCpp, planner.Ollama} {
		r := res
		p := calibrate.Profile{Hardware: cpu.ID, Engine: string(e), Backend: string(planner.CPU),
			Key: planner.CalibrationKey(cpu.ID, e, planner.CPU), Created: now, Source: "calibrate host", Terms: terms, Host: &r}
		path, cmp, err := calibrate.SaveChecked(dir, p, calibrate.SaveOptions{Hardware: cpu, Force: force})
		hc.Comparisons = append(hc.Comparisons, cmp)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hc.Saved = append(hc.Saved, path)
	}
	a.ReloadCalibrations()
	if len(errs) > 0 {
		return hc, fmt.Errorf("calibrate host: measured, but %w", errors.Join(errs...))
	}
	return hc, nil
}

// hostCPU is the probed machine's CPU catalog entry, or a generic CPU
// (GenericCPU) when the machine plans for a GPU or has no catalog CPU.
func (a *App) hostCPU(ctx context.Context) planner.Hardware {
	if m, err := a.ProbedMachine(ctx); err == nil && m.Hardware.Kind == planner.KindCPU {
		return m.Hardware
	}
	return planner.Hardware{ID: GenericCPU, Name: "this machine's CPU", Kind: planner.KindCPU}
}

// ErrUnknownServedModel is returned when an endpoint's model is not one
// Headroom knows, so no calibration can be fitted for it.
var ErrUnknownServedModel = errors.New("the served model is not in the catalog")

// EndpointProfile fits a calibration profile from an endpoint's samples for
// machine mach. served names the model the server runs (a catalog id or a
// GGUF file; "" = the name the server reports).
func (a *App) EndpointProfile(ctx context.Context, mach Machine, served string, s endpoint.Samples) (calibrate.Profile, error) {
	c := a.Catalog()
	if served == "" {
		served = strings.TrimSuffix(s.Model, ":latest")
	}
	rm, err := a.ResolveModel(ctx, served, s.Quant)
	if err != nil {
		return calibrate.Profile{}, fmt.Errorf("%w: %q (%v)", ErrUnknownServedModel, served, err)
	}
	m := rm.Model
	e, err := c.FindEngine(string(s.Engine))
	if err != nil {
		return calibrate.Profile{}, asUsage(err)
	}
	q, err := a.quantFor(m, s.Quant)
	if err != nil {
		q, _ = a.quantFor(m, "")
	}
	kv, _ := c.FindKVType("f16")
	sc := planner.Scenario{Hardware: mach.Hardware, Devices: 1, Engine: e, Model: m, Quant: q, KV: kv, Concurrency: 1, UsableMemory: mach.Usable}
	b, err := sc.ResolveBackend()
	if err != nil {
		return calibrate.Profile{}, asUsage(err)
	}
	sc.Backend = b
	var points []planner.CalPoint
	for _, r := range s.Measurements(mach.Hardware.ID, m.ID, string(e.ID)) {
		points = append(points, planner.CalPoint{Scenario: sc, Row: r})
	}
	terms, fit, err := planner.FitCalibration(points, 0, 0, c.Perf)
	if err != nil {
		return calibrate.Profile{}, fmt.Errorf("calibrate endpoint: %w", err)
	}
	return calibrate.Profile{Hardware: mach.Hardware.ID, Engine: string(e.ID), Backend: string(b),
		Key: planner.CalibrationKey(mach.Hardware.ID, e.ID, b), Created: a.opt.Now().UTC(),
		Source: "calibrate endpoint " + s.URL, Terms: terms, Fit: fit}, nil
}

// SaveCalibration saves a profile for machine mach in CalibrationDir and
// applies it: a profile whose terms are impossible on the device is
// refused, and a flagged one does not replace a clean one unless force.
// The Comparison says what changed and why it was or was not saved.
func (a *App) SaveCalibration(p calibrate.Profile, mach Machine, force bool) (string, calibrate.Comparison, error) {
	dir := a.CalibrationDir()
	if dir == "" {
		return "", calibrate.Comparison{}, errors.New("no calibration directory to save to (pass --calibrations DIR)")
	}
	path, cmp, err := calibrate.SaveChecked(dir, p, calibrate.SaveOptions{Hardware: mach.Hardware, Force: force})
	if err != nil {
		return "", cmp, err
	}
	a.ReloadCalibrations()
	return path, cmp, nil
}

// Calibrations lists the saved calibration profiles and the problems of
// files that could not be read.
func (a *App) Calibrations() ([]calibrate.Profile, []error) {
	dir := a.CalibrationDir()
	if dir == "" {
		return nil, nil
	}
	return calibrate.Load(dir)
}

// CalibrationStatus is the newest saved calibration for hardware id (of any
// hardware when none is for it).
type CalibrationStatus struct {
	Profile *calibrate.Profile
	// Other is true when the profile is for another device than id.
	Other bool
}

// CalibrationFor finds the newest saved calibration of hardware id.
func (a *App) CalibrationFor(id string) CalibrationStatus {
	ps, _ := a.Calibrations() // unreadable profiles are warned about at Open
	var best *calibrate.Profile
	for i := range ps {
		p := &ps[i]
		mine, bestMine := p.Hardware == id, best != nil && best.Hardware == id
		if best == nil || mine && !bestMine || mine == bestMine && p.Created.After(best.Created) {
			best = p
		}
	}
	if best == nil {
		return CalibrationStatus{}
	}
	return CalibrationStatus{Profile: best, Other: best.Hardware != id}
}

// RemoveCalibration deletes the saved calibration whose key is exactly key
// (as `calibrate list` shows it) and applies what is left.
func (a *App) RemoveCalibration(key string) (string, error) {
	dir := a.CalibrationDir()
	if dir == "" {
		return "", Usagef("no calibration directory")
	}
	if key == "" {
		return "", Usagef("no calibration key given (see `headroom calibrate list`)")
	}
	k, err := calibrate.Remove(dir, key)
	if err != nil {
		return "", Usage(err)
	}
	a.ReloadCalibrations()
	return k, nil
}

// ImportedCalibration is a profile fitted from imported benchmark rows
// and the device it is for.
type ImportedCalibration struct {
	Profile calibrate.Profile
	Machine Machine
	// Unreached counts the setup's decode rows left out of the factor
	// (planner.RowsCalibration.Unreached).
	Unreached int
}

// ImportCalibrations fits one calibration per setup (device, engine,
// backend) of rows, benchmark results imported from a file (source names
// it): the factor the setup's decode-side rows say the fitted decode
// efficiency is off by (planner.FitRowsCalibration). A setup whose
// single-stream decode rows imply a decode efficiency above 1 on a catalog
// device ran faster than its memory allows: the rows name another device, device count or
// format, and the import is refused with the row's setup named. Save
// each result with SaveCalibration.
func (a *App) ImportCalibrations(rows []planner.Measurement, source string) ([]ImportedCalibration, error) {
	c := a.Catalog()
	cals, err := planner.FitRowsCalibration(c, rows, c.Perf)
	if err != nil {
		return nil, Usage(fmt.Errorf("calibrate import %s: %w", source, err))
	}
	var out []ImportedCalibration
	for _, cal := range cals {
		h, err := c.FindHardware(cal.Hardware)
		if err != nil {
			return nil, err
		}
		if cal.MaxImpliedEff > 1 && !strings.HasPrefix(h.ID, "generic") {
			return nil, Usagef("calibrate import %s: a %s row on %s implies a decode efficiency of %.2f, faster than the device's %.0f GB/s allow: check --hardware, --devices and --quant",
				source, cal.Engine, h.ID, cal.MaxImpliedEff, h.BandwidthGBs)
		}
		out = append(out, ImportedCalibration{
			Profile: calibrate.Profile{Hardware: h.ID, Engine: string(cal.Engine), Backend: string(cal.Backend), Key: cal.Key(),
				Created: a.opt.Now().UTC(), Source: "calibrate import " + source, Terms: cal.Terms, Fit: cal.Fit},
			Machine:   Machine{Hardware: h},
			Unreached: cal.Unreached,
		})
	}
	return out, nil
}

// RowsOnThisMachine gives the rows of a benchmark file that name no device
// this machine's device (ProbedMachine): a benchmark output run here, from
// a tool that does not write the GPU's name (llama-bench's ROCm and Vulkan
// builds, vllm bench serve). The rows are a copy; note says what was done
// ("" when every row names its device). A machine that cannot be probed
// is an error naming file.
func (a *App) RowsOnThisMachine(ctx context.Context, rows []planner.Measurement, file string) ([]planner.Measurement, string, error) {
	if !slices.ContainsFunc(rows, func(m planner.Measurement) bool { return m.Hardware == "" }) {
		return rows, "", nil
	}
	this, err := a.ProbedMachine(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("%s does not name the device it ran on, and this machine's could not be read (name it with --hardware): %w", file, err)
	}
	if _, err := a.Catalog().FindHardware(this.Hardware.ID); err != nil {
		// A probed device the catalog lacks (generic-cpu) has no fitted
		// speeds to calibrate.
		return nil, "", Usagef("%s does not name the device it ran on, and this machine's (%s) is not in the catalog: name the device the benchmark ran on with --hardware", file, this.Hardware.Name)
	}
	out := slices.Clone(rows)
	for i := range out {
		if out[i].Hardware == "" {
			out[i].Hardware = this.Hardware.ID
		}
	}
	return out, fmt.Sprintf("%s does not name its device: taken as this machine's (%s)", file, this.Hardware.Name), nil
}

// ImportOutcome is what CalibrateFromRows did: the note of
// RowsOnThisMachine, and each setup's calibration with its save.
type ImportOutcome struct {
	Note   string
	Setups []SavedImport
}

// SavedImport is one setup's calibration from imported rows and what
// saving it did: where (Path) or why not (Err), and the comparison with
// the profile it replaces.
type SavedImport struct {
	ImportedCalibration
	Path       string
	Comparison calibrate.Comparison
	Err        error
}

// Saved says at least one setup's calibration was saved.
func (o ImportOutcome) Saved() bool {
	return slices.ContainsFunc(o.Setups, func(s SavedImport) bool { return s.Err == nil })
}

// Err is the first setup's save error (nil when all were saved).
func (o ImportOutcome) Err() error {
	for _, s := range o.Setups {
		if s.Err != nil {
			return s.Err
		}
	}
	return nil
}

// CalibrateFromRows is `calibrate import --save` for every front end:
// rows that name no device taken as this machine's (RowsOnThisMachine),
// one calibration per setup (ImportCalibrations), each saved through the
// checks (SaveCalibration; force replaces a clean profile with a flagged
// one). A setup that is not saved does not stop the others: its error is
// in its SavedImport, and ImportOutcome.Err returns the first.
func (a *App) CalibrateFromRows(ctx context.Context, rows []planner.Measurement, file string, force bool) (ImportOutcome, error) {
	var o ImportOutcome
	rows, note, err := a.RowsOnThisMachine(ctx, rows, file)
	if err != nil {
		return o, err
	}
	o.Note = note
	if err := ctx.Err(); err != nil {
		return o, err
	}
	cals, err := a.ImportCalibrations(rows, file)
	if err != nil {
		return o, err
	}
	for _, ic := range cals {
		path, cmp, err := a.SaveCalibration(ic.Profile, ic.Machine, force)
		o.Setups = append(o.Setups, SavedImport{ImportedCalibration: ic, Path: path, Comparison: cmp, Err: err})
	}
	return o, nil
}

// CalibratedBand is a metric's error band on a setup calibrated from its
// own run (planner.PerfParams.CalibratedErrorBand) next to the fitted one.
type CalibratedBand struct {
	Metric             planner.Metric
	Calibrated, Fitted float64 // percent
}

// CalibratedBands are the error bands plans on a calibrated setup carry,
// in the order of planner.Metrics; none where the profile has no
// calibrated band.
func (a *App) CalibratedBands() []CalibratedBand {
	p := a.Catalog().Perf
	if p == nil {
		return nil
	}
	var out []CalibratedBand
	for _, m := range planner.Metrics {
		if v, ok := p.CalibratedErrorBand[string(m)]; ok {
			out = append(out, CalibratedBand{Metric: m, Calibrated: v, Fitted: p.ErrorBand[string(m)]})
		}
	}
	return out
}
