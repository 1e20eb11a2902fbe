package app

import (
	"context"
	"errors"
	"fmt"
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
	Hardware string   // the CPU id the profiles are for
	Saved    []string // files written
}

// CalibrateHost runs the CPU microbenchmarks, saves the llama.cpp and
// Ollama CPU profiles for the probed CPU (Options.Root) and applies them.
// progress may be nil. A cancelled ctx saves nothing.
func (a *App) CalibrateHost(ctx context.Context, opt host.Options, progress func(step string, frac float64)) (HostCalibration, error) {
	res, err := host.Run(ctx, opt, progress)
	if err != nil {
		if errors.Is(err, host.ErrBadOptions) {
			return HostCalibration{}, Usage(fmt.Errorf("calibrate host: %w", err))
		}
		return HostCalibration{}, fmt.Errorf("calibrate host: %w", err)
	}
	hc := HostCalibration{Result: res, Hardware: a.hostCPU(ctx)}
	dir := a.CalibrationDir()
	if dir == "" {
		return hc, errors.New("calibrate host: measured, but there is no calibration directory to save to (pass --calibrations DIR)")
	}
	now := a.opt.Now().UTC()
	terms := calibrate.HostTerms(res)
	for _, e := range []planner.EngineID{planner.LlamaCpp, planner.Ollama} {
		r := res
		p := calibrate.Profile{Hardware: hc.Hardware, Engine: string(e), Backend: string(planner.CPU),
			Key: planner.CalibrationKey(hc.Hardware, e, planner.CPU), Created: now, Source: "calibrate host", Terms: terms, Host: &r}
		path, err := calibrate.Save(dir, p)
		if err != nil {
			return hc, fmt.Errorf("calibrate host: measured, but saving the profile failed: %w", err)
		}
		hc.Saved = append(hc.Saved, path)
	}
	a.ReloadCalibrations()
	return hc, nil
}

// hostCPU is the catalog id of the probed machine's CPU, or GenericCPU.
func (a *App) hostCPU(ctx context.Context) string {
	if m, err := a.ProbedMachine(ctx); err == nil && m.Hardware.Kind == planner.KindCPU {
		return m.Hardware.ID
	}
	return GenericCPU
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

// SaveCalibration saves a profile in CalibrationDir and applies it.
func (a *App) SaveCalibration(p calibrate.Profile) (string, error) {
	dir := a.CalibrationDir()
	if dir == "" {
		return "", errors.New("no calibration directory to save to (pass --calibrations DIR)")
	}
	path, err := calibrate.Save(dir, p)
	if err != nil {
		return "", err
	}
	a.ReloadCalibrations()
	return path, nil
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
