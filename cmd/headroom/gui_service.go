package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/calibrate/endpoint"
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
	"github.com/headroom-planner/headroom/profiles/modelsrc"
	"github.com/headroom-planner/headroom/ui"
)

// guiService is the desktop app's ui.Service: the catalog, the probe of
// this machine, planner.Fit/Predict/Plan/Compare/LaunchCommand, and the
// host and endpoint calibrations.
type guiService struct {
	g *globalOptions
	// cat is the catalog, replaced (never changed in place) when a
	// calibration adds a profile.
	cat atomic.Pointer[planner.Catalog]
	// root is the directory probed ("/" = this machine).
	root string
	now  func() time.Time

	mu      sync.Mutex
	probed  bool
	machine probe.Machine
	matches []probe.MatchedDevice
	// this is what "this machine" plans for: the first matched device not
	// skipped, with probed memory limits.
	this     planner.Hardware
	usable   planner.Bytes
	hostRAM  planner.Bytes
	probeErr error
}

// newGUIService serves cat (loaded with this machine's calibrations); root
// is the machine to probe; g locates the calibration profiles.
func newGUIService(g *globalOptions, cat *planner.Catalog, root string) *guiService {
	s := &guiService{g: g, root: root, now: time.Now}
	s.cat.Store(cat)
	return s
}

// catalog is the current catalog.
func (s *guiService) catalog() *planner.Catalog { return s.cat.Load() }

var _ ui.Service = (*guiService)(nil)

// Catalog returns the loaded catalog.
func (s *guiService) Catalog() *planner.Catalog { return s.catalog() }

// Machine probes the machine (again) and describes it.
func (s *guiService) Machine(ctx context.Context) (ui.MachineView, error) {
	m, err := probe.Probe(ctx, probe.Options{Root: s.root})
	if err != nil {
		return ui.MachineView{}, err
	}
	matches := probe.Match(m, s.catalog())
	s.mu.Lock()
	s.setMachine(m, matches)
	this := s.this
	s.mu.Unlock()
	return machineView(m, matches, this, s.calibrationStatus(this.ID)), nil
}

// setMachine records a probe (s.mu held).
func (s *guiService) setMachine(m probe.Machine, matches []probe.MatchedDevice) {
	s.probed, s.machine, s.matches, s.probeErr = true, m, matches, nil
	for _, md := range matches {
		if md.Skip != "" {
			continue
		}
		s.this, s.usable, s.hostRAM, _ = probe.ForPlanner(md, m)
		return
	}
	s.probeErr = errors.New("the probe found no device to plan for")
}

// thisMachine returns the probed hardware, probing once if needed.
func (s *guiService) thisMachine() (planner.Hardware, planner.Bytes, planner.Bytes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.probed {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m, err := probe.Probe(ctx, probe.Options{Root: s.root})
		if err != nil {
			return planner.Hardware{}, 0, 0, fmt.Errorf("probing this machine: %w", err)
		}
		s.setMachine(m, probe.Match(m, s.catalog()))
	}
	if s.probeErr != nil {
		return planner.Hardware{}, 0, 0, s.probeErr
	}
	return s.this, s.usable, s.hostRAM, nil
}

// machineView turns a probe into what the My machine screen shows.
func machineView(m probe.Machine, matches []probe.MatchedDevice, this planner.Hardware, cal ui.CalibrationStatus) ui.MachineView {
	v := ui.MachineView{
		Name:     strings.TrimSpace(m.System.Vendor + " " + m.System.Product),
		CPU:      cpuText(m.CPU),
		Kernel:   m.Kernel,
		Memory:   ui.MemoryUse{Kind: ui.MemSystem, Total: m.Memory.Total},
		Hardware: this.ID, HardwareName: this.Name,
		Warnings:    m.Warnings,
		Calibration: cal,
	}
	if v.Name == "" {
		v.Name = m.CPU.Model
	}
	if m.Memory.Available > 0 {
		v.Memory.Used, v.Memory.UsedKnown = m.Memory.Total-m.Memory.Available, true
	}
	if m.Memory.Installed > 0 && m.Memory.Installed != m.Memory.Total {
		v.Memory.Note = fmt.Sprintf("%.0f GiB installed", m.Memory.Installed.GiBf())
	}
	for _, md := range matches {
		v.Devices = append(v.Devices, deviceView(md, m))
	}
	return v
}

func cpuText(c probe.CPU) string {
	if c.Model == "" {
		return ""
	}
	if c.Cores > 0 {
		return fmt.Sprintf("%s (%d cores, %d threads)", c.Model, c.Cores, c.Threads)
	}
	return c.Model
}

// deviceView describes one matched device and its memory pools.
func deviceView(md probe.MatchedDevice, m probe.Machine) ui.DeviceView {
	d := md.Device
	v := ui.DeviceView{
		Name: d.Name, Vendor: d.Vendor, Kind: d.Kind,
		Profile: md.Hardware.ID, ProfileName: md.Hardware.Name, MatchedBy: md.By,
		Generic: md.Generic, Skip: md.Skip, Notes: md.Notes,
	}
	if md.Hint != "" {
		v.Notes = append(v.Notes, md.Hint)
	}
	if d.Kind == planner.KindCPU || d.Name == "" && d.PCIID == "" {
		v.Name = "CPU: " + m.CPU.Model
		v.Kind = planner.KindCPU
		v.Memory = []ui.MemoryUse{{Kind: ui.MemSystem, Total: m.Memory.Total, Used: m.Memory.Total - m.Memory.Available,
			UsedKnown: m.Memory.Available > 0, Note: "CPU inference reads weights from system RAM"}}
		return v
	}
	src := strings.Join(d.Sources, ", ")
	if d.VRAMTotal > 0 {
		kind := ui.MemVRAM
		note := src
		if d.Integrated {
			note = "BIOS carve-out"
		}
		v.Memory = append(v.Memory, ui.MemoryUse{Kind: kind, Total: d.VRAMTotal, Used: d.VRAMUsed, UsedKnown: d.VRAMUsed > 0 || src != "", Note: note})
	}
	if d.GTTTotal > 0 {
		total, note := d.GTTTotal, "system RAM the GPU maps"
		if d.GTTCeiling > 0 && d.GTTCeiling < total {
			total, note = d.GTTCeiling, "capped by "+d.GTTCeilingSource
		}
		v.Memory = append(v.Memory, ui.MemoryUse{Kind: ui.MemGTT, Total: total, Used: d.GTTUsed, UsedKnown: true, Note: note})
	}
	if d.Integrated && d.Vendor != "AMD" {
		v.Memory = append(v.Memory, ui.MemoryUse{Kind: ui.MemUnified, Total: m.Memory.Total, Used: m.Memory.Total - m.Memory.Available,
			UsedKnown: m.Memory.Available > 0, Note: "shared with the CPU"})
	}
	return v
}

// Scenario completes the screen's choices like `headroom fit` does:
// engine by hardware and format, the model's own format, f16 (or bf16)
// KV cache, and this machine's probed memory.
func (s *guiService) Scenario(in ui.ScenarioInput) (planner.Scenario, error) {
	var sc planner.Scenario
	if in.Model.Layers == 0 {
		return sc, errors.New("no model chosen")
	}
	if err := s.setHardware(&sc, in.Hardware); err != nil {
		return sc, err
	}
	q, err := quantFor(s.catalog(), in.Model, in.Quant)
	if err != nil {
		return sc, err
	}
	eng := in.Engine
	if eng == "" {
		eng = defaultEngine(sc.Hardware, q)
	}
	if sc.Engine, err = s.catalog().FindEngine(eng); err != nil {
		return sc, err
	}
	kv := in.KV
	if kv == "" {
		kv = "f16"
		if q.ID == "bf16" && sc.Engine.HasKVType("bf16") {
			kv = "bf16" // "auto" = the model dtype
		}
	}
	if sc.KV, err = s.catalog().FindKVType(kv); err != nil {
		return sc, err
	}
	sc.Model, sc.Quant, sc.Devices = in.Model, q, max(in.Devices, 1)
	sc.Context, sc.Concurrency, sc.Mem = in.Context, max(in.Users, 1), s.catalog().Memory
	return sc, sc.Validate()
}

// setHardware fills the device: a catalog id, or "" for this machine.
func (s *guiService) setHardware(sc *planner.Scenario, id string) error {
	if id != "" {
		h, err := s.catalog().FindHardware(id)
		sc.Hardware = h
		return err
	}
	h, usable, hostRAM, err := s.thisMachine()
	sc.Hardware, sc.UsableMemory, sc.HostMemory = h, usable, hostRAM
	return err
}

// Fit runs planner.Fit.
func (s *guiService) Fit(sc planner.Scenario) (planner.FitResult, error) { return planner.Fit(sc) }

// Predict runs planner.Predict with the catalog's fitted efficiencies.
func (s *guiService) Predict(sc planner.Scenario, w planner.Workload) planner.Prediction {
	return planner.Predict(sc, w, s.catalog().Perf)
}

// Curve predicts w at each concurrency (a continuously batching server
// above one user).
func (s *guiService) Curve(sc planner.Scenario, w planner.Workload, cs []int) []planner.Prediction {
	out := make([]planner.Prediction, len(cs))
	for i, c := range cs {
		w.Concurrency, w.Serving = c, c > 1 || w.Serving
		out[i] = planner.Predict(sc, w, s.catalog().Perf)
	}
	return out
}

// planRequest builds the request Plan and Compare share.
func (s *guiService) planRequest(m planner.Model, engine, quant string, w planner.Workload, slo planner.SLO) (planner.PlanRequest, error) {
	req := planner.PlanRequest{Catalog: s.catalog(), Model: m, Workload: w, SLO: slo, Devices: 1}
	if m.Layers == 0 {
		return req, errors.New("no model chosen")
	}
	if engine != "" {
		e, err := s.catalog().FindEngine(engine)
		if err != nil {
			return req, err
		}
		req.Engines = []planner.EngineID{e.ID}
	}
	if quant != "" {
		req.Quants = []string{quant}
	}
	return req, nil
}

// maxDroppedRows caps the "does not fit" rows listed under a plan.
const maxDroppedRows = 8

// Plan ranks configurations with planner.Plan; the configurations that do
// not fit follow the ranked ones with their reason.
func (s *guiService) Plan(in ui.PlanInput) (ui.PlanView, error) {
	req, err := s.planRequest(in.Scenario.Model, in.Scenario.Engine, in.Scenario.Quant, in.Workload,
		planner.SLO{TTFT: in.MaxTTFT, TPOT: in.MaxTPOT})
	if err != nil {
		return ui.PlanView{}, err
	}
	var sc planner.Scenario
	if err := s.setHardware(&sc, in.Scenario.Hardware); err != nil {
		return ui.PlanView{}, err
	}
	req.Hardware, req.UsableMemory, req.HostMemory = sc.Hardware, sc.UsableMemory, sc.HostMemory
	req.Devices = max(in.Scenario.Devices, 1)
	res := planner.Plan(req)
	v := ui.PlanView{Hardware: deviceName(req.Hardware, req.Devices), Notes: res.Notes}
	for _, c := range res.Ranked {
		v.Rows = append(v.Rows, s.planRow(c, req.Workload, true))
	}
	seen := map[string]bool{}
	for _, c := range res.Dropped {
		key := string(c.Engine) + " " + c.Quant
		if seen[key] || len(seen) >= maxDroppedRows {
			continue
		}
		seen[key] = true
		v.Rows = append(v.Rows, s.planRow(c, req.Workload, false))
	}
	for i := range v.Rows {
		v.Rows[i].Rank = i + 1
	}
	return v, nil
}

func deviceName(h planner.Hardware, n int) string {
	if n > 1 {
		return fmt.Sprintf("%d × %s", n, h.Name)
	}
	return h.Name
}

// planRow turns a candidate into a table row with its launch command.
func (s *guiService) planRow(c planner.Candidate, w planner.Workload, fits bool) ui.PlanRow {
	name := string(c.Engine)
	e, err := s.catalog().FindEngine(string(c.Engine))
	if err == nil && e.Label() != "" {
		name = e.Label() // "TGI", not "Text Generation Inference"
	}
	if c.Devices > 1 {
		name += " " + planner.DevicesLabel(err == nil && e.IsGGML(), c.Devices)
	}
	w.Serving = true
	var sc planner.Scenario // dropped candidates carry none
	if c.Scenario != nil {
		sc = *c.Scenario
	}
	r := ui.PlanRow{
		Engine: name, Quant: c.Quant, KV: c.KVType, Concurrency: c.Concurrency, Context: c.Fit.Context,
		TTFT: c.Pred.TTFT, TPOT: c.Pred.TPOT, PerUser: c.Pred.DecodeTPS, Total: c.Pred.TotalTPS,
		Source: c.Source, ErrorBand: c.ErrorBand[string(planner.MetricTG)],
		Fits: fits, MeetsSLO: fits && c.MeetsSLO, WhyNot: c.Why, Scenario: sc, Workload: w,
		Capacity: c.CapacityReqPerS, Utilization: c.Utilization,
	}
	if r.Source == "" {
		r.Source = "prior"
	}
	if fits {
		if l, err := planner.LaunchCommand(c, false); err == nil {
			r.Launch = strings.TrimSpace(l.String())
		}
	}
	return r
}

// Compare runs planner.Compare over the chosen devices; "" is this
// machine with its probed memory.
func (s *guiService) Compare(in ui.CompareInput) ([]ui.CompareRow, error) {
	req, err := s.planRequest(in.Model, in.Engine, in.Quant, in.Workload, planner.SLO{})
	if err != nil {
		return nil, err
	}
	machines := make([]planner.Hardware, 0, len(in.Hardware))
	for _, id := range in.Hardware {
		var sc planner.Scenario
		if err := s.setHardware(&sc, id); err != nil {
			return nil, err
		}
		machines = append(machines, sc.Hardware)
	}
	rows := planner.Compare(req, machines, nil)
	out := make([]ui.CompareRow, len(rows))
	for i, r := range rows {
		h := r.Hardware
		out[i] = ui.CompareRow{
			Hardware: in.Hardware[i], Name: h.Name, Memory: h.UsableGPUMemory(), BandwidthGBs: h.BandwidthGBs,
			PriceUSD: r.PriceUSD, Watts: r.Watts, Verdict: planner.DoesNotFit, Config: r.Best,
			Users: r.MaxUsers, SingleUser: r.SingleUserTPS, Total: r.TotalTPS, TTFT: r.TTFT,
			PerKiloUSD: r.PerDollar, PerWatt: r.PerWatt, Source: r.Source, Note: r.Why,
		}
		if r.Fits {
			out[i].Verdict = planner.Fits
		}
	}
	return out, nil
}

// CalibrateHost runs the CPU microbenchmarks and sets what they measured
// beside the catalog's figures for this machine's CPU.
func (s *guiService) CalibrateHost(ctx context.Context, progress ui.Progress) (ui.CalibrationView, error) {
	res, err := host.Run(ctx, host.Options{}, func(step string, frac float64) { progress(frac, step) })
	if err != nil {
		return ui.CalibrationView{}, fmt.Errorf("calibrate host: %w", err)
	}
	v := ui.CalibrationView{Target: "host", When: s.now(), Notes: res.Notes}
	v.Params = []ui.Param{
		{Name: "memory bandwidth", Value: fmt.Sprintf("%.1f GB/s", res.MemBandwidthGBs), Note: fmt.Sprintf("triad %.1f, read %.1f, %d threads", res.TriadGBs, res.ReadGBs, res.Threads)},
		{Name: "one thread", Value: fmt.Sprintf("%.1f GB/s", res.SingleThreadBandwidthGBs), Note: "read kernel on one core"},
		{Name: "gemv (decode)", Value: fmt.Sprintf("%.1f GB/s", res.GEMVGBs), Note: fmt.Sprintf("in cache %.1f GB/s", res.GEMVCachedGBs)},
		{Name: "sgemm (prefill)", Value: fmt.Sprintf("%.0f GFLOP/s", res.SgemmGFLOPS), Note: "float32, best size"},
		{Name: "dgemm", Value: fmt.Sprintf("%.0f GFLOP/s", res.DgemmGFLOPS), Note: "float64"},
	}
	h, _, _, err := s.thisMachine()
	if err == nil && (h.Kind == planner.KindCPU || h.Kind == planner.KindAPU || h.Kind == planner.KindSoC) {
		// The catalog's peak figures are what the model starts from.
		if h.BandwidthGBs > 0 && res.MemBandwidthGBs > 0 {
			v.Points = append(v.Points, ui.CalibrationPoint{Label: "memory bandwidth", Metric: "GB/s", Predicted: h.BandwidthGBs, Measured: res.MemBandwidthGBs})
			v.Params = append(v.Params, ui.Param{Name: "bandwidth efficiency", Value: fmt.Sprintf("%.2f", res.MemBandwidthGBs/h.BandwidthGBs), Note: "measured ÷ " + h.Name + " peak"})
		}
		if f := h.TFLOPS[planner.FP32]; f > 0 && res.SgemmGFLOPS > 0 {
			v.Points = append(v.Points, ui.CalibrationPoint{Label: "fp32 GEMM", Metric: "GFLOP/s", Predicted: f * 1000, Measured: res.SgemmGFLOPS})
		}
		if len(v.Points) > 0 {
			v.Notes = append(v.Notes, "chart: the catalog's peak figures for "+h.Name+" (x) against what this run measured (y)")
		} else {
			v.Notes = append(v.Notes, "the catalog has no peak figures for "+h.Name+" to set these measurements beside")
		}
	} else {
		v.Notes = append(v.Notes, "this machine plans for a GPU: the CPU figures matter only for offloaded layers")
	}
	v.MdAPE = mdape(v.Points)
	paths, err := saveHostCalibration(s.g, res)
	if err != nil {
		return v, fmt.Errorf("calibrate host: measured, but saving the profile failed: %w", err)
	}
	for _, p := range paths {
		v.Notes = append(v.Notes, "saved "+p)
	}
	s.reloadCalibrations()
	return v, nil
}

// CalibrateEndpoint measures a running server and sets each measurement
// beside the model's prediction for it.
func (s *guiService) CalibrateEndpoint(ctx context.Context, url string, progress ui.Progress) (ui.CalibrationView, error) {
	samples, err := endpoint.Run(ctx, endpoint.Options{URL: url}, func(done, total int, step string) {
		if total > 0 {
			progress(float64(done)/float64(total), step)
		}
	})
	if err != nil {
		return ui.CalibrationView{}, err
	}
	v := ui.CalibrationView{Target: samples.URL, When: s.now(), Notes: samples.Notes}
	v.Params = endpointParams(samples)
	hw := ""
	if h, _, _, err := s.thisMachine(); err == nil {
		hw = h.ID
	}
	unpredicted := map[string]int{}
	for _, m := range samples.Measurements(hw, "", "") {
		p, err := planner.PredictMeasurement(s.catalog(), m, s.catalog().Perf)
		if err != nil {
			unpredicted[err.Error()]++
			continue
		}
		label := fmt.Sprintf("%s c=%d p=%d", m.Metric, max(m.Concurrency, 1), m.PromptTokens)
		v.Points = append(v.Points, ui.CalibrationPoint{Label: label, Metric: string(m.Metric), Predicted: p, Measured: m.Value})
	}
	for why, n := range unpredicted {
		v.Notes = append(v.Notes, fmt.Sprintf("%d measurements not predicted: %s", n, why))
	}
	v.MdAPE = mdape(v.Points)
	// Save a profile as `headroom calibrate endpoint` does, and use it.
	if h, usable, _, err := s.thisMachine(); err == nil {
		p, err := endpointProfile(s.catalog(), resolvedHardware{Hardware: h, usable: usable}, "", samples)
		switch {
		case err != nil:
			v.Notes = append(v.Notes, "not saved as a calibration profile: "+err.Error())
		default:
			if path, err := calibrate.Save(calibrationDir(s.g), p); err != nil {
				v.Notes = append(v.Notes, "saving the calibration failed: "+err.Error())
			} else {
				v.Notes = append(v.Notes, "saved "+path)
				s.reloadCalibrations()
			}
		}
	}
	return v, nil
}

func endpointParams(s endpoint.Samples) []ui.Param {
	ps := []ui.Param{
		{Name: "engine", Value: string(s.Engine), Note: s.EngineVersion},
		{Name: "model", Value: s.Model, Note: s.Quant},
	}
	if s.ServerParallel > 0 {
		ps = append(ps, ui.Param{Name: "server parallel", Value: fmt.Sprint(s.ServerParallel), Note: "requests run at once"})
	}
	for _, p := range s.Prefill {
		ps = append(ps, ui.Param{Name: fmt.Sprintf("prefill %d tokens", p.PromptTokens), Value: p.Rate.String(), Note: p.RateSource})
	}
	for _, d := range s.Decode {
		ps = append(ps, ui.Param{Name: "decode, " + planner.Plural(d.Concurrency, "user"), Value: d.Rate.String() + " each",
			Note: "total " + d.TotalRate.String()})
	}
	return ps
}

// mdape is the median absolute percentage error of predictions (0 for
// none).
func mdape(pts []ui.CalibrationPoint) float64 {
	var errs []float64
	for _, p := range pts {
		if p.Measured > 0 {
			errs = append(errs, math.Abs(p.Predicted-p.Measured)/p.Measured*100)
		}
	}
	if len(errs) == 0 {
		return 0
	}
	sort.Float64s(errs)
	if n := len(errs); n%2 == 0 {
		return (errs[n/2-1] + errs[n/2]) / 2
	}
	return errs[len(errs)/2]
}

// calibrationStatus describes the newest saved calibration profile of
// hardware id (of any hardware when none is for it).
func (s *guiService) calibrationStatus(id string) ui.CalibrationStatus {
	dir := calibrationDir(s.g)
	if dir == "" {
		return ui.CalibrationStatus{}
	}
	ps, _ := calibrate.Load(dir) // unreadable profiles are warned about at start
	var best *calibrate.Profile
	for i := range ps {
		p := &ps[i]
		mine, bestMine := p.Hardware == id, best != nil && best.Hardware == id
		if best == nil || mine && !bestMine || mine == bestMine && p.Created.After(best.Created) {
			best = p
		}
	}
	if best == nil {
		return ui.CalibrationStatus{}
	}
	detail := fmt.Sprintf("%s with %s on %s", best.Hardware, best.Engine, best.Backend)
	if best.Hardware != id {
		detail += " (not the device plans use)"
	}
	return ui.CalibrationStatus{Calibrated: true, When: best.Created, Source: best.Source, Detail: detail}
}

// reloadCalibrations applies the saved profiles to a copy of the catalog,
// so that predictions made from now on use them.
func (s *guiService) reloadCalibrations() {
	c := *s.catalog()
	applyCalibrations(s.g, &c)
	s.cat.Store(&c)
}

// OpenModelFile reads a GGUF file, config.json or model directory.
func (s *guiService) OpenModelFile(path string) (planner.Model, error) { return modelsrc.Open(path) }

// Export writes a plan row like `headroom plan --export` does.
func (s *guiService) Export(r ui.PlanRow, format string) ([]byte, error) {
	if !r.Fits {
		return nil, errors.New("this configuration does not fit; choose one that does")
	}
	sc := r.Scenario
	fit, err := planner.Fit(sc)
	if err != nil {
		return nil, err
	}
	e := planExport{
		Model: sc.Model.ID, Hardware: sc.Hardware.ID, Engine: string(sc.Engine.ID), Backend: string(sc.Backend),
		Quant: sc.Quant.ID, KVType: sc.KV.ID, TP: max(sc.Devices, 1), Concurrency: r.Concurrency,
		Context: int64(r.Context), KVTokens: int64(fit.MaxKVTokens),
		TTFTms: round(float64(r.TTFT), 1), TPOTms: round(float64(r.TPOT), 2),
		UserTPS: round(float64(r.PerUser), 2), TotalTPS: round(float64(r.Total), 1), Source: r.Source, Launch: r.Launch + "\n",
	}
	if r.ErrorBand > 0 {
		e.ErrorBand = map[string]float64{string(planner.MetricTG): r.ErrorBand}
	}
	var buf bytes.Buffer
	switch format {
	case "toml":
		err = encodePlanTOML(&buf, e)
	case "json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(e)
	case "sh":
		buf.WriteString("#!/bin/sh\n# Generated by headroom gui\nset -e\n" + e.Launch)
	default:
		return nil, fmt.Errorf("unknown export format %q (toml, json, sh)", format)
	}
	return buf.Bytes(), err
}

// planExportTOML is planExport without the launch command and error band,
// which encodePlanTOML writes itself. Converting between the two fails to
// compile if planExport's fields change.
type planExportTOML struct {
	Model       string             `toml:"model"`
	Hardware    string             `toml:"hardware"`
	Engine      string             `toml:"engine"`
	Backend     string             `toml:"backend"`
	Quant       string             `toml:"quant"`
	KVType      string             `toml:"kv_type"`
	TP          int                `toml:"tensor_parallel"`
	Concurrency int                `toml:"concurrency"`
	Context     int64              `toml:"context"`
	KVTokens    int64              `toml:"kv_tokens"`
	TTFTms      float64            `toml:"ttft_ms"`
	TPOTms      float64            `toml:"tpot_ms"`
	UserTPS     float64            `toml:"tokens_per_s_per_user"`
	TotalTPS    float64            `toml:"tokens_per_s_total"`
	Source      string             `toml:"source"`
	ErrorBand   map[string]float64 `toml:"-"`
	Launch      string             `toml:"-"`
}

// encodePlanTOML writes e like `headroom plan --export FILE.toml`, but
// with the launch command as a multi-line literal string, so the Export
// screen's preview reads as the command itself.
func encodePlanTOML(buf *bytes.Buffer, e planExport) error {
	if strings.Contains(e.Launch, "'''") {
		return toml.NewEncoder(buf).Encode(e)
	}
	if err := toml.NewEncoder(buf).Encode(planExportTOML(e)); err != nil {
		return err
	}
	fmt.Fprintf(buf, "launch = '''\n%s'''\n", e.Launch)
	if len(e.ErrorBand) == 0 {
		return nil
	}
	buf.WriteString("\n")
	return toml.NewEncoder(buf).Encode(map[string]map[string]float64{"error_band_pct": e.ErrorBand})
}

// round rounds x to n decimals.
func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}
