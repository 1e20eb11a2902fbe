package ui

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/calibrate/endpoint"
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/calibrate/importer"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
)

// appService is the Service of the real app: every answer comes from the
// application layer (package app), the same one the CLI calls; this file
// only maps answers to the screens' views.
type appService struct {
	a *app.App
}

// NewService serves the screens from the application layer.
func NewService(a *app.App) Service { return &appService{a: a} }

// Catalog returns the current catalog.
func (s *appService) Catalog() *planner.Catalog { return s.a.Catalog() }

// Machine probes the machine (again) and describes it.
func (s *appService) Machine(ctx context.Context) (MachineView, error) {
	m, matches, err := s.a.Probe(ctx)
	if err != nil {
		return MachineView{}, err
	}
	this, _ := s.a.ProbedMachine(ctx)
	return machineView(m, matches, this.Hardware, s.calibrationStatus(this.Hardware.ID)), nil
}

// machineView turns a probe into what the My machine screen shows.
func machineView(m probe.Machine, matches []probe.MatchedDevice, this planner.Hardware, cal CalibrationStatus) MachineView {
	v := MachineView{
		Name:     strings.TrimSpace(m.System.Vendor + " " + m.System.Product),
		CPU:      cpuText(m.CPU),
		Kernel:   m.Kernel,
		Memory:   MemoryUse{Kind: MemSystem, Total: m.Memory.Total},
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
func deviceView(md probe.MatchedDevice, m probe.Machine) DeviceView {
	d := md.Device
	v := DeviceView{
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
		v.Memory = []MemoryUse{{Kind: MemSystem, Total: m.Memory.Total, Used: m.Memory.Total - m.Memory.Available,
			UsedKnown: m.Memory.Available > 0, Note: "CPU inference reads weights from system RAM"}}
		return v
	}
	src := strings.Join(d.Sources, ", ")
	if d.VRAMTotal > 0 {
		kind := MemVRAM
		note := src
		if d.Integrated {
			note = "BIOS carve-out"
		}
		v.Memory = append(v.Memory, MemoryUse{Kind: kind, Total: d.VRAMTotal, Used: d.VRAMUsed, UsedKnown: d.VRAMUsed > 0 || src != "", Note: note})
	}
	if d.GTTTotal > 0 {
		total, note := d.GTTTotal, "system RAM the GPU maps"
		if d.GTTCeiling > 0 && d.GTTCeiling < total {
			total, note = d.GTTCeiling, "capped by "+d.GTTCeilingSource
		}
		v.Memory = append(v.Memory, MemoryUse{Kind: MemGTT, Total: total, Used: d.GTTUsed, UsedKnown: true, Note: note})
	}
	if d.Integrated && d.Vendor != "AMD" {
		v.Memory = append(v.Memory, MemoryUse{Kind: MemUnified, Total: m.Memory.Total, Used: m.Memory.Total - m.Memory.Available,
			UsedKnown: m.Memory.Available > 0, Note: "shared with the CPU"})
	}
	return v
}

// request maps a screen's choices to the application layer's request.
func request(in ScenarioInput) app.ScenarioRequest {
	m := in.Model
	return app.ScenarioRequest{ModelValue: &m, Hardware: in.Hardware, Devices: in.Devices, Engine: in.Engine,
		Quant: in.Quant, KVType: in.KV, Context: in.Context, Concurrency: in.Users}
}

// Scenario completes the screen's choices exactly as `headroom fit` does
// (app.Scenario).
func (s *appService) Scenario(in ScenarioInput) (planner.Scenario, error) {
	sc, _, err := s.a.Scenario(context.Background(), request(in))
	return sc, err
}

// Fit answers "can I run it?" with the four-state verdict of app.Fit:
// a scenario that serves fewer users or less context than it asks for
// reads FitsWithLimits.
func (s *appService) Fit(sc planner.Scenario) (planner.FitResult, error) {
	ans, err := s.a.FitScenario(sc, app.Machine{}, app.ScenarioRequest{Concurrency: sc.Concurrency, Context: sc.Context})
	return ans.Fit, err
}

// Predict runs planner.Predict with the catalog's fitted efficiencies.
func (s *appService) Predict(sc planner.Scenario, w planner.Workload) planner.Prediction {
	return planner.Predict(sc, w, s.a.Catalog().Perf)
}

// Curve predicts w at each concurrency (a continuously batching server
// above one user). A concurrency whose sequences do not all fit in memory
// at once gets a zero Prediction: charts leave it out rather than show a
// speed the machine cannot serve.
func (s *appService) Curve(sc planner.Scenario, w planner.Workload, cs []int) []planner.Prediction {
	out := make([]planner.Prediction, len(cs))
	perSeq := sc
	perSeq.Concurrency = 1
	fit, err := planner.Fit(perSeq)
	for i, c := range cs {
		if err == nil && fit.MaxConcurrencyAtContext > 0 && c > fit.MaxConcurrencyAtContext {
			continue
		}
		w.Concurrency, w.Serving = c, c > 1 || w.Serving
		out[i] = planner.Predict(sc, w, s.a.Catalog().Perf)
	}
	return out
}

// maxDroppedRows caps the "does not fit" rows listed under a plan.
const maxDroppedRows = 8

// Plan ranks configurations with app.Plan; the configurations that do
// not fit follow the ranked ones with their reason.
func (s *appService) Plan(in PlanInput) (PlanView, error) {
	m := in.Scenario.Model
	req := app.PlanRequest{ModelValue: &m, Hardware: in.Scenario.Hardware, Devices: in.Scenario.Devices, Nodes: in.Scenario.Nodes, Workload: in.Workload,
		SLO: planner.SLO{TTFT: in.MaxTTFT, TPOT: in.MaxTPOT}}
	if in.Scenario.Engine != "" {
		req.Engines = []string{in.Scenario.Engine}
	}
	if in.Scenario.Quant != "" {
		req.Quants = []string{in.Scenario.Quant}
	}
	ans, err := s.a.Plan(context.Background(), req)
	if err != nil {
		return PlanView{}, err
	}
	res := ans.Result
	v := PlanView{Hardware: deviceName(ans.Request.Hardware, ans.Request.Devices), Notes: res.Notes, BandKind: res.ErrorBandWorkload}
	if ans.Request.Nodes > 1 {
		v.Hardware = fmt.Sprintf("%d nodes of %s", ans.Request.Nodes, v.Hardware)
	}
	for _, c := range res.Ranked {
		v.Rows = append(v.Rows, s.planRow(c, ans.Request.Workload, true))
	}
	seen := map[string]bool{}
	for _, c := range res.Dropped {
		key := string(c.Engine) + " " + c.Quant
		if seen[key] || len(seen) >= maxDroppedRows {
			continue
		}
		seen[key] = true
		// A dropped configuration is a row too, with why (no speed).
		row := planner.Candidate{Engine: c.Engine, Backend: c.Backend, Quant: c.Quant, KVType: c.KVType, Devices: c.Devices, Fit: c.Fit, Why: c.Why}
		v.Rows = append(v.Rows, s.planRow(row, ans.Request.Workload, false))
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
func (s *appService) planRow(c planner.Candidate, w planner.Workload, fits bool) PlanRow {
	name := string(c.Engine)
	e, err := s.a.Catalog().FindEngine(string(c.Engine))
	if err == nil && e.Label() != "" {
		name = e.Label() // "TGI", not "Text Generation Inference"
	}
	if shape := planner.ShapeLabel(err == nil && e.IsGGML(), c.Devices, c.Nodes); shape != "" {
		name += " " + shape
	}
	w.Serving = true
	var sc planner.Scenario // dropped candidates carry none
	if c.Scenario != nil {
		sc = *c.Scenario
	}
	r := PlanRow{
		Engine: name, Quant: c.Quant, KV: c.KVType, Concurrency: c.Concurrency, Context: c.Fit.Context,
		TTFT: c.Pred.TTFT, TPOT: c.Pred.TPOT, PerUser: perUser(c.Pred), Stream: c.Pred.DecodeTPS, Total: c.Pred.TotalTPS,
		Source: c.Source, ErrorBand: c.ErrorBand[string(planner.MetricTG)],
		Fits: fits, MeetsSLO: fits && c.MeetsSLO, WhyNot: c.Why, Scenario: sc, Workload: w,
		Capacity: c.CapacityReqPerS, Utilization: c.Utilization, Candidate: c,
	}
	if r.Source == "" {
		r.Source = "prior"
	}
	if fits {
		if l, err := s.a.Launch(context.Background(), c, app.LaunchRequest{Users: app.LaunchUsers(c, w), Model: app.ResolvedModel{Model: sc.Model}}); err == nil {
			r.Launch = strings.TrimSpace(l.String())
		}
	}
	return r
}

// perUser is one user's tok/s over a request's whole time, TTFT
// included (Prediction.RequestTPS), the figure that the total is a sum of:
// the decode speed alone (DecodeTPS) is higher, and one user's total fell
// below it. A prediction without RequestTPS gives DecodeTPS.
func perUser(p planner.Prediction) planner.TokensPerSecond {
	if p.RequestTPS > 0 {
		return p.RequestTPS
	}
	return p.DecodeTPS
}

// Compare runs app.Compare over the chosen devices; "" is this machine
// with its probed memory. Each row's SingleUser is app's one-user figure:
// the device's best for one user alone, which does not change with the
// users asked for.
func (s *appService) Compare(in CompareInput) ([]CompareRow, error) { return s.compare(in) }

// compare is one app.Compare mapped to rows.
func (s *appService) compare(in CompareInput) ([]CompareRow, error) {
	m := in.Model
	req := app.CompareRequest{ModelValue: &m, Workload: in.Workload}
	for _, id := range in.Hardware {
		req.Machines = append(req.Machines, app.MachineSpec{Hardware: id, Count: 1, This: id == ""})
	}
	if in.Engine != "" {
		req.Engines = []string{in.Engine}
	}
	if in.Quant != "" {
		req.Quants = []string{in.Quant}
	}
	ans, err := s.a.Compare(context.Background(), req)
	if err != nil {
		return nil, err
	}
	out := make([]CompareRow, len(ans.Rows))
	for i, r := range ans.Rows {
		h := r.Hardware
		out[i] = CompareRow{
			Hardware: in.Hardware[i], Name: h.Name, Memory: h.UsableGPUMemory(), BandwidthGBs: h.BandwidthGBs,
			PriceUSD: r.PriceUSD, Watts: r.Watts, Verdict: r.Verdict, Config: r.Best,
			Users: r.MaxUsers, SingleUser: r.SingleUserTPS, Total: r.TotalTPS, TTFT: r.TTFT,
			PerKiloUSD: r.PerDollar, PerWatt: r.PerWatt, Source: r.Source, Note: r.Why,
		}
	}
	return out, nil
}

// CalibrateHost runs the CPU microbenchmarks through app.CalibrateHost
// (which saves and applies the profiles) and sets what they measured
// beside the catalog's figures for this machine's CPU.
func (s *appService) CalibrateHost(ctx context.Context, progress Progress) (CalibrationView, error) {
	hc, err := s.a.CalibrateHost(ctx, host.Options{}, false, func(step string, frac float64) { progress(frac, step) })
	res := hc.Result
	if res.Duration == 0 {
		return CalibrationView{}, err
	}
	v := CalibrationView{Target: "host", When: time.Now(), Notes: res.Notes}
	v.Params = []Param{
		{Name: "memory bandwidth", Value: fmt.Sprintf("%.1f GB/s", res.MemBandwidthGBs), Note: fmt.Sprintf("triad %.1f, read %.1f, %d threads", res.TriadGBs, res.ReadGBs, res.Threads)},
		{Name: "one thread", Value: fmt.Sprintf("%.1f GB/s", res.SingleThreadBandwidthGBs), Note: "read kernel on one core"},
		{Name: "gemv (decode)", Value: fmt.Sprintf("%.1f GB/s", res.GEMVGBs), Note: fmt.Sprintf("in cache %.1f GB/s", res.GEMVCachedGBs)},
		{Name: "sgemm (prefill)", Value: fmt.Sprintf("%.0f GFLOP/s", res.SgemmGFLOPS), Note: "float32, best size"},
		{Name: "dgemm", Value: fmt.Sprintf("%.0f GFLOP/s", res.DgemmGFLOPS), Note: "float64"},
	}
	this, errThis := s.a.ProbedMachine(ctx)
	if h := this.Hardware; errThis == nil && (h.Kind == planner.KindCPU || h.Kind == planner.KindAPU || h.Kind == planner.KindSoC) {
		// The catalog's peak figures are what the model starts from.
		if h.BandwidthGBs > 0 && res.MemBandwidthGBs > 0 {
			v.Points = append(v.Points, CalibrationPoint{Label: "memory bandwidth", Metric: "GB/s", Predicted: h.BandwidthGBs, Measured: res.MemBandwidthGBs})
			v.Params = append(v.Params, Param{Name: "bandwidth efficiency", Value: fmt.Sprintf("%.2f", res.MemBandwidthGBs/h.BandwidthGBs), Note: "measured ÷ " + h.Name + " peak"})
		}
		if f := h.TFLOPS[planner.FP32]; f > 0 && res.SgemmGFLOPS > 0 {
			v.Points = append(v.Points, CalibrationPoint{Label: "fp32 GEMM", Metric: "GFLOP/s", Predicted: f * 1000, Measured: res.SgemmGFLOPS})
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
	for _, c := range hc.Comparisons {
		v.Notes = append(v.Notes, strings.TrimSpace(c.String()))
	}
	return v, err
}

// CalibrateEndpoint measures a running server and sets each measurement
// beside the model's prediction for it; the profile is saved and applied
// as by `headroom calibrate endpoint`.
func (s *appService) CalibrateEndpoint(ctx context.Context, url string, progress Progress) (CalibrationView, error) {
	samples, err := endpoint.Run(ctx, endpoint.Options{URL: url}, func(done, total int, step string) {
		if total > 0 {
			progress(float64(done)/float64(total), step)
		}
	})
	if err != nil {
		return CalibrationView{}, err
	}
	v := CalibrationView{Target: samples.URL, When: time.Now(), Notes: samples.Notes}
	v.Params = endpointParams(samples)
	this, errThis := s.a.ProbedMachine(ctx)
	hw := ""
	if errThis == nil {
		hw = this.Hardware.ID
	}
	cat := s.a.Catalog()
	unpredicted := map[string]int{}
	for _, m := range samples.Measurements(hw, "", "") {
		p, err := planner.PredictMeasurement(cat, m, cat.Perf)
		if err != nil {
			unpredicted[err.Error()]++
			continue
		}
		label := fmt.Sprintf("%s c=%d p=%d", m.Metric, max(m.Concurrency, 1), m.PromptTokens)
		v.Points = append(v.Points, CalibrationPoint{Label: label, Metric: string(m.Metric), Predicted: p, Measured: m.Value})
	}
	whys := make([]string, 0, len(unpredicted))
	for why := range unpredicted {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	for _, why := range whys {
		v.Notes = append(v.Notes, fmt.Sprintf("%d measurements not predicted: %s", unpredicted[why], why))
	}
	v.MdAPE = mdape(v.Points)
	if errThis != nil {
		v.Notes = append(v.Notes, "not saved as a calibration profile: "+errThis.Error())
		return v, nil
	}
	p, err := s.a.EndpointProfile(ctx, this, "", samples)
	if err != nil {
		v.Notes = append(v.Notes, "not saved as a calibration profile: "+err.Error())
		return v, nil
	}
	path, cmp, err := s.a.SaveCalibration(p, this, false)
	v.Notes = append(v.Notes, strings.TrimSpace(cmp.String()))
	if err != nil {
		v.Notes = append(v.Notes, "not saved: "+err.Error())
	} else {
		v.Notes = append(v.Notes, "saved "+path)
	}
	return v, nil
}

// CalibrateImport reads a benchmark output (calibrate/importer's formats)
// and calibrates each setup it measured through app.ImportCalibrations,
// saving and applying the profiles as `headroom calibrate import --save`
// does. Rows that do not name their device are taken as this machine's.
func (s *appService) CalibrateImport(ctx context.Context, path string, progress Progress) (CalibrationView, error) {
	progress(0, "reading "+filepath.Base(path))
	res, err := importer.ImportFile(path, importer.Context{Catalog: s.a.Catalog()})
	if err != nil {
		return CalibrationView{}, err
	}
	v := CalibrationView{Target: filepath.Base(path), When: time.Now()}
	for _, w := range res.Warnings {
		v.Notes = append(v.Notes, w.String())
	}
	progress(0.3, "fitting")
	o, err := s.a.CalibrateFromRows(ctx, res.Rows, filepath.Base(path), false)
	if err != nil {
		return v, err
	}
	if o.Note != "" {
		v.Notes = append(v.Notes, o.Note)
	}
	for _, si := range o.Setups {
		p := si.Profile
		v.Params = append(v.Params, Param{Name: "decode factor", Value: fmt.Sprintf("×%.3f", p.Terms.DecodeScale),
			Note: p.Key + " · " + planner.Plural(p.Fit.DecodePoints, "decode row")})
		for _, id := range slices.Sorted(maps.Keys(p.Terms.ModelDecodeScale)) {
			v.Params = append(v.Params, Param{Name: "decode factor", Value: fmt.Sprintf("×%.3f", p.Terms.ModelDecodeScale[id]), Note: id + " · its own rows"})
		}
		for _, r := range p.Fit.Residuals {
			v.Points = append(v.Points, CalibrationPoint{Label: r.Label, Metric: string(r.Metric), Predicted: r.Predicted, Measured: r.Measured})
		}
		v.Notes = append(v.Notes, strings.TrimSpace(si.Comparison.String()))
		if si.Err != nil {
			v.Notes = append(v.Notes, "not saved: "+si.Err.Error())
		} else {
			v.Notes = append(v.Notes, "saved "+si.Path)
		}
	}
	if o.Saved() {
		for _, b := range s.a.CalibratedBands() {
			v.Params = append(v.Params, Param{Name: b.Metric.Title() + " error band", Value: fmt.Sprintf("±%.0f%%", b.Calibrated),
				Note: fmt.Sprintf("plans on this setup (±%.0f%% uncalibrated), or their workload's own band where narrower: held out by source, calibrated on one run", b.Fitted)})
		}
	}
	v.Notes = append(v.Notes, "chart: each row measured (y) against its prediction with the calibration (x); prefill is left to the fit")
	v.MdAPE = mdape(v.Points)
	progress(1, "done")
	return v, nil
}

func endpointParams(s endpoint.Samples) []Param {
	ps := []Param{
		{Name: "engine", Value: string(s.Engine), Note: s.EngineVersion},
		{Name: "model", Value: s.Model, Note: s.Quant},
	}
	if s.ServerParallel > 0 {
		ps = append(ps, Param{Name: "server parallel", Value: fmt.Sprint(s.ServerParallel), Note: "requests run at once"})
	}
	for _, p := range s.Prefill {
		ps = append(ps, Param{Name: fmt.Sprintf("prefill %d tokens", p.PromptTokens), Value: p.Rate.String(), Note: p.RateSource})
	}
	for _, d := range s.Decode {
		ps = append(ps, Param{Name: "decode, " + planner.Plural(d.Concurrency, "user"), Value: d.Rate.String() + " each",
			Note: "total " + d.TotalRate.String()})
	}
	return ps
}

// mdape is the median absolute percentage error of predictions (0 for
// none).
func mdape(pts []CalibrationPoint) float64 {
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
func (s *appService) calibrationStatus(id string) CalibrationStatus {
	st := s.a.CalibrationFor(id)
	if st.Profile == nil {
		return CalibrationStatus{}
	}
	p := st.Profile
	detail := fmt.Sprintf("%s with %s on %s", p.Hardware, p.Engine, p.Backend)
	if k := p.Terms.DecodeScale; k > 0 {
		// Imported benchmark rows (calibrate import --save) scale the fit.
		detail += fmt.Sprintf(", decode ×%.2f of the fit", k)
		if n := len(p.Terms.ModelDecodeScale); n > 0 {
			detail += fmt.Sprintf(" (%s with their own)", planner.Plural(n, "model"))
		}
	}
	if st.Other {
		detail += " (not the device plans use)"
	}
	return CalibrationStatus{Calibrated: true, When: p.Created, Source: p.Source, Detail: detail}
}

// OpenModelFile reads a GGUF file, config.json or model directory, or a
// model reference (a Hub repository, hf.co/ORG/NAME:QUANT, ollama:NAME:TAG)
// as `headroom fit -m` does, within two minutes.
func (s *appService) OpenModelFile(ref string) (planner.Model, error) {
	if app.LooksLikePath(ref) {
		return s.a.OpenModelFile(ref)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rm, err := s.a.ResolveModel(ctx, ref, "")
	return rm.Model, err
}

// Export writes a plan row with app.NewExport and Export.Encode: the same
// bytes as `headroom plan --export` for the same configuration.
func (s *appService) Export(r PlanRow, format string) ([]byte, error) {
	if !r.Fits || r.Candidate.Scenario == nil {
		return nil, fmt.Errorf("this configuration does not fit; choose one that does")
	}
	l, err := s.a.Launch(context.Background(), r.Candidate, app.LaunchRequest{Users: app.LaunchUsers(r.Candidate, r.Workload),
		Model: app.ResolvedModel{Model: r.Candidate.Scenario.Model}})
	if err != nil {
		return nil, err
	}
	e, err := app.NewExport(r.Candidate, l)
	if err != nil {
		return nil, err
	}
	return e.Encode(format)
}
