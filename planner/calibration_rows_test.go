package planner_test

import (
	"errors"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// meanLogErr is the mean log error of p's speed over rows of decode
// metrics: log(predicted/measured) for rates, log(measured/predicted) for
// times, so that a positive value is a prediction too fast.
func meanLogErr(t *testing.T, c *planner.Catalog, rows []planner.Measurement, p *planner.PerfParams) (float64, int) {
	t.Helper()
	var s float64
	n := 0
	for _, m := range rows {
		switch m.Metric {
		case planner.MetricTG, planner.MetricTPOT, planner.MetricITL, planner.MetricTotalOut, planner.MetricReqPerS:
		default:
			continue
		}
		v, err := planner.PredictMeasurement(c, m, p)
		if err != nil || !(v > 0) {
			continue
		}
		e := math.Log(v / m.Value)
		if m.Metric == planner.MetricTPOT || m.Metric == planner.MetricITL {
			e = -e
		}
		s += e
		n++
	}
	return s / float64(max(n, 1)), n
}

// Published rows of one setup each (seed 002's vLLM runs on a Strix Halo,
// GPUStack's vLLM runs on one H100) calibrate it: one calibration per
// setup, a finite factor, and the setup's decode-side rows predicted with
// it are on average closer to what was measured than without it.
func TestFitRowsCalibration(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		source, hardware, engine, key string
		devices                       int
	}{
		{"002_2b0a8c2b1e11073a.txt", "amd-ryzen-ai-max-395", "vllm", "amd-ryzen-ai-max-395/vllm/rocm", 1},
		{"gpustack/gpustack", "nvidia-h100-sxm5-80gb", "vllm", "nvidia-h100-sxm5-80gb/vllm/cuda", 1},
	} {
		var setup []planner.Measurement
		for _, m := range rows {
			if planner.SourceKey(m) == tc.source && m.Hardware == tc.hardware && m.Engine == tc.engine && m.Devices == tc.devices {
				setup = append(setup, m)
			}
		}
		if len(setup) < 5 {
			t.Fatalf("%s: only %d rows of the setup", tc.source, len(setup))
		}
		cals, err := planner.FitRowsCalibration(c, setup, c.Perf)
		if err != nil {
			t.Fatalf("%s: %v", tc.source, err)
		}
		if len(cals) != 1 || cals[0].Key() != tc.key {
			t.Fatalf("%s: calibrations %+v, want one for %s", tc.source, cals, tc.key)
		}
		cal := cals[0]
		if k := cal.Terms.DecodeScale; !(k > 0.05 && k < 20) || cal.Fit.DecodePoints < 2 || len(cal.Fit.Residuals) < cal.Fit.DecodePoints {
			t.Fatalf("%s: factor %g from %d points, %d residuals", tc.source, k, cal.Fit.DecodePoints, len(cal.Fit.Residuals))
		}
		if cal.MaxImpliedEff > 1 {
			t.Errorf("%s: a published row implies decode efficiency %.2f (> 1)", tc.source, cal.MaxImpliedEff)
		}
		before, n := meanLogErr(t, c, setup, c.Perf)
		p := *c.Perf
		p.Calibrations = map[string]planner.Calibrated{cal.Key(): cal.Terms}
		after, n2 := meanLogErr(t, c, setup, &p)
		if n != n2 || math.Abs(after) >= math.Abs(before) {
			t.Errorf("%s: mean log error of %d decode rows %+.3f before, %+.3f (%d rows) calibrated ×%.3f", tc.source, n, before, after, n2, cal.Terms.DecodeScale)
		}
	}
}

// Prefill rows calibrate nothing, and rows of no catalog device say why.
func TestFitRowsCalibrationRefuses(t *testing.T) {
	c := catalog(t)
	pp := planner.Measurement{Hardware: "nvidia-rtx-4090", Devices: 1, Engine: "llama.cpp", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", KVType: "f16",
		PromptTokens: 512, Metric: planner.MetricPP, Value: 9000, Scenario: planner.WorkloadSingle}
	if _, err := planner.FitRowsCalibration(c, []planner.Measurement{pp}, c.Perf); !errors.Is(err, planner.ErrTooFewPoints) {
		t.Errorf("prefill only: %v, want ErrTooFewPoints", err)
	}
	tg := pp
	tg.PromptTokens, tg.GenTokens, tg.Metric, tg.Value, tg.Hardware = 0, 128, planner.MetricTG, 120, "no-such-device"
	_, err := planner.FitRowsCalibration(c, []planner.Measurement{tg}, c.Perf)
	if !errors.Is(err, planner.ErrTooFewPoints) || !strings.Contains(err.Error(), "no-such-device") {
		t.Errorf("unknown device: %v", err)
	}
}

// A calibration's decode factor scales the fitted decode efficiency: a
// single stream bound by memory decodes at about the factor's speed.
func TestDecodeScaleApplies(t *testing.T) {
	c := catalog(t)
	tg := planner.Measurement{Hardware: "nvidia-rtx-4090", Devices: 1, Engine: "llama.cpp", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", KVType: "f16",
		GenTokens: 128, Metric: planner.MetricTG, Value: 120, Scenario: planner.WorkloadSingle}
	v0, err := planner.PredictMeasurement(c, tg, c.Perf)
	if err != nil {
		t.Fatal(err)
	}
	p := *c.Perf
	p.Calibrations = map[string]planner.Calibrated{"nvidia-rtx-4090/llama.cpp/cuda": {DecodeScale: 0.5}}
	v1, err := planner.PredictMeasurement(c, tg, &p)
	if err != nil {
		t.Fatal(err)
	}
	if r := v1 / v0; r < 0.5 || r > 0.65 {
		t.Errorf("decode at ×0.5: %.1f → %.1f tok/s (×%.2f), want about ×0.5 (the step's fixed cost does not scale)", v0, v1, r)
	}
}

// A file of any length fits on at most MaxCalibrationRows decode rows per setup, so its
// time is bounded; the rest are counted as left out.
func TestFitRowsCalibrationBounded(t *testing.T) {
	c := catalog(t)
	tg := planner.Measurement{Hardware: "nvidia-rtx-4090", Devices: 1, Engine: "llama.cpp", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", KVType: "f16",
		GenTokens: 128, Metric: planner.MetricTG, Value: 120, Scenario: planner.WorkloadSingle}
	rows := make([]planner.Measurement, planner.MaxCalibrationRows+44)
	for i := range rows {
		rows[i] = tg
	}
	cals, err := planner.FitRowsCalibration(c, rows, c.Perf)
	if err != nil {
		t.Fatal(err)
	}
	if len(cals) != 1 || cals[0].Fit.DecodePoints != planner.MaxCalibrationRows || cals[0].Unreached != 44 {
		t.Errorf("%d calibrations, %d points, %d left out; want 1, %d, 44", len(cals), cals[0].Fit.DecodePoints, cals[0].Unreached, planner.MaxCalibrationRows)
	}
}

// A plan on a setup with a saved decode factor carries the calibrated
// error band where the fit has one; other setups of the same plan, and
// metrics without a calibrated band, keep the fitted band.
func TestPlanCalibratedErrorBand(t *testing.T) {
	c := catalog(t)
	cc := *c
	p := *c.Perf
	p.ErrorBand = map[string]float64{"tpot_ms": 35.9, "ttft_ms": 33.5, "pp_tps": 19}
	p.CalibratedErrorBand = map[string]float64{"tpot_ms": 20.9, "ttft_ms": 30.7}
	p.ScenarioErrorBand = nil // TestPlanScenarioErrorBand has them with a calibration
	p.Calibrations = map[string]planner.Calibrated{"nvidia-rtx-4090/llama.cpp/cuda": {DecodeScale: 0.8}}
	cc.Perf = &p
	m, _ := c.FindModel("meta-llama/Llama-3.1-8B-Instruct")
	h, _ := c.FindHardware("nvidia-rtx-4090")
	res := planner.Plan(planner.PlanRequest{Catalog: &cc, Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{"llama.cpp", "vllm"},
		Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}})
	seen := map[planner.EngineID]bool{}
	for _, x := range res.Ranked {
		want := p.ErrorBand
		if x.Engine == "llama.cpp" {
			want = map[string]float64{"tpot_ms": 20.9, "ttft_ms": 30.7, "pp_tps": 19}
		}
		if !maps.Equal(x.ErrorBand, want) {
			t.Errorf("%s: band %v, want %v", x.Label(), x.ErrorBand, want)
		}
		seen[x.Engine] = true
	}
	if !seen["llama.cpp"] || !seen["vllm"] {
		t.Fatalf("want plans of both engines, got %v", seen)
	}
	if p.ErrorBand["tpot_ms"] != 35.9 {
		t.Errorf("the fitted band changed: %v", p.ErrorBand)
	}
	// Without a calibrated band (a profile fitted before there was one)
	// a calibrated setup keeps the fitted band.
	p.CalibratedErrorBand = nil
	res = planner.Plan(planner.PlanRequest{Catalog: &cc, Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{"llama.cpp"},
		Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}})
	if b, ok := res.Best(); !ok || !maps.Equal(b.ErrorBand, p.ErrorBand) {
		t.Errorf("no calibrated band: got %v (a plan: %v), want %v", b.ErrorBand, ok, p.ErrorBand)
	}
}

// The calibrated bands keep a metric only where the calibration lowered
// the held-out error on the same rows, are never under the in-sample
// error nor over the fitted band.
func TestCalibratedErrorBands(t *testing.T) {
	rep := func(v float64) planner.MetricReport { return planner.MetricReport{Rows: 10, Predicted: 10, MdAPE: v} }
	in := planner.Report{Metrics: map[planner.Metric]planner.MetricReport{
		planner.MetricTPOT: rep(19.7), planner.MetricTG: rep(7.5), planner.MetricPP: rep(10.1), planner.MetricTTFT: rep(23.8)}}
	cv := &planner.CalibratedCV{
		Metrics: map[planner.Metric]planner.MetricReport{
			planner.MetricTPOT: rep(12.34), planner.MetricTG: rep(15.6), planner.MetricPP: rep(17.7), planner.MetricTTFT: rep(30.7)},
		Plain: map[planner.Metric]planner.MetricReport{
			planner.MetricTPOT: rep(32.3), planner.MetricTG: rep(18.4), planner.MetricPP: rep(17.7), planner.MetricTTFT: rep(32.4)},
	}
	bands := map[string]float64{"tpot_ms": 35.9, "tg_tps": 14.6, "pp_tps": 19, "ttft_ms": 33.5}
	got := planner.CalibratedErrorBands(in, cv, bands)
	want := map[string]float64{
		"tpot_ms": 19.7, // the calibrated 12.3 is under the in-sample error
		"ttft_ms": 30.7,
		// tg: 15.6 is over the fitted band of 14.6; pp: not lowered.
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	cv.Metrics[planner.MetricReqPerS] = planner.MetricReport{Rows: 2, Predicted: 2, MdAPE: 0.1}
	cv.Plain[planner.MetricReqPerS] = planner.MetricReport{Rows: 2, Predicted: 2, MdAPE: 5.1}
	if got := planner.CalibratedErrorBands(in, cv, bands); !maps.Equal(got, want) {
		t.Errorf("with two requests/s rows: got %v, want %v (too few rows for a band)", got, want)
	}
	if got := planner.CalibratedErrorBands(in, nil, bands); len(got) != 0 {
		t.Errorf("no calibrated CV: got %v", got)
	}
}

// Rows of two models on one setup give each model its own factor, which
// its predictions take; a model the rows did not run takes the setup's.
func TestFitRowsCalibrationPerModel(t *testing.T) {
	c := catalog(t)
	row := func(model string) planner.Measurement {
		return planner.Measurement{Hardware: "nvidia-rtx-4090", Devices: 1, Engine: "llama.cpp", Model: model, Quant: "q4_k_m", KVType: "f16",
			GenTokens: 128, Metric: planner.MetricTG, Scenario: planner.WorkloadSingle}
	}
	llama, qwen, other := row("meta-llama/Llama-3.1-8B-Instruct"), row("Qwen/Qwen2.5-7B-Instruct"), row("mistralai/Mistral-7B-Instruct-v0.3")
	speed := map[string]float64{}
	for _, m := range []planner.Measurement{llama, qwen, other} {
		v, err := planner.PredictMeasurement(c, m, c.Perf)
		if err != nil || !(v > 0) {
			t.Fatalf("%s: %v %v", m.Model, v, err)
		}
		speed[m.Model] = v
	}
	// Llama measured at 60% of its fitted speed, Qwen at 90%.
	llama.Value, qwen.Value = 0.6*speed[llama.Model], 0.9*speed[qwen.Model]
	cals, err := planner.FitRowsCalibration(c, []planner.Measurement{llama, qwen}, c.Perf)
	if err != nil || len(cals) != 1 {
		t.Fatalf("%v %v", cals, err)
	}
	terms := cals[0].Terms
	if len(terms.ModelDecodeScale) != 2 {
		t.Fatalf("per-model factors %v, want two", terms.ModelDecodeScale)
	}
	p := *c.Perf
	p.Calibrations = map[string]planner.Calibrated{cals[0].Key(): terms}
	for _, m := range []planner.Measurement{llama, qwen} {
		v, err := planner.PredictMeasurement(c, m, &p)
		if err != nil || math.Abs(v/m.Value-1) > 0.02 {
			t.Errorf("%s: calibrated %.1f tok/s, measured %.1f (factor ×%.3f)", m.Model, v, m.Value, terms.ModelDecodeScale[m.Model])
		}
	}
	// The other model: between the two, as the setup's factor is.
	v, err := planner.PredictMeasurement(c, other, &p)
	if r := v / speed[other.Model]; err != nil || !(r > 0.6 && r < 0.9) {
		t.Errorf("a third model: ×%.2f of its fitted speed (setup factor ×%.3f), want between the two models' ×0.6 and ×0.9", r, terms.DecodeScale)
	}
	// One model: its factor is the setup's, and none per model.
	one, err := planner.FitRowsCalibration(c, []planner.Measurement{llama}, c.Perf)
	if err != nil || len(one) != 1 || one[0].Terms.ModelDecodeScale != nil {
		t.Errorf("one model: %+v %v, want no per-model factors", one, err)
	}
}

// Every metric of the schema has a title of its own.
func TestMetricTitles(t *testing.T) {
	seen := map[string]planner.Metric{}
	for _, m := range planner.Metrics {
		ti := m.Title()
		if ti == "" || ti == string(m) {
			t.Errorf("%s: title %q", m, ti)
		}
		if o, ok := seen[ti]; ok {
			t.Errorf("%s and %s share the title %q", m, o, ti)
		}
		seen[ti] = m
	}
	if got := planner.Metric("joules").Title(); got != "joules" {
		t.Errorf("an unknown metric: %q", got)
	}
}

// A plan's error band is its workload kind's where the profile has one
// (ScenarioErrorBand): a rate plan's TPOT far wider than a closed loop's,
// a single stream's TPOT its decode band, a kind without a band the
// overall one; a calibrated setup takes its calibrated band only where
// that is the smaller.
func TestPlanScenarioErrorBand(t *testing.T) {
	c := catalog(t)
	cc := *c
	p := *c.Perf
	p.ErrorBand = map[string]float64{"tpot_ms": 35.9, "ttft_ms": 33.5, "tg_tps": 14.6, "pp_tps": 19}
	p.ScenarioErrorBand = map[string]map[string]float64{
		"closed": {"tpot_ms": 12, "ttft_ms": 32.4, "tg_tps": 17.1},
		"rate":   {"tpot_ms": 95.8, "ttft_ms": 37.6},
		"single": {"tg_tps": 14.2, "pp_tps": 19.2},
	}
	p.CalibratedErrorBand = map[string]float64{"tpot_ms": 20.7, "tg_tps": 12.8}
	p.Calibrations = nil
	cc.Perf = &p
	m, h := modelOn(t, c, "meta-llama/Llama-3.1-8B-Instruct", "nvidia-h100-sxm5-80gb")
	plan := func(cc *planner.Catalog, w planner.Workload) planner.PlanResult {
		return planner.Plan(planner.PlanRequest{Catalog: cc, Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{planner.VLLM}, Workload: w})
	}
	for _, tc := range []struct {
		name string
		w    planner.Workload
		kind planner.WorkloadKind
		want map[string]float64
	}{
		{"closed loop", planner.Workload{Prompt: 512, Gen: 128, Concurrency: 16}, planner.WorkloadClosed,
			map[string]float64{"tpot_ms": 12, "ttft_ms": 32.4, "tg_tps": 17.1, "pp_tps": 19}},
		{"rate", planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1, Rate: 2}, planner.WorkloadRate,
			map[string]float64{"tpot_ms": 95.8, "ttft_ms": 37.6, "tg_tps": 14.6, "pp_tps": 19}},
		{"single stream: TPOT is decode", planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}, planner.WorkloadSingle,
			map[string]float64{"tpot_ms": 14.2, "ttft_ms": 33.5, "tg_tps": 14.2, "pp_tps": 19.2}},
		{"burst: no band of its own", planner.Workload{Prompt: 512, Gen: 128, Concurrency: 100, Burst: 100}, "", p.ErrorBand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := plan(&cc, tc.w)
			b, ok := res.Best()
			if !ok {
				t.Fatalf("no plan: %v", res.Dropped)
			}
			if res.ErrorBandWorkload != tc.kind || !maps.Equal(b.ErrorBand, tc.want) {
				t.Errorf("bands of %q %v, want of %q %v", res.ErrorBandWorkload, b.ErrorBand, tc.kind, tc.want)
			}
		})
	}
	// Calibrated: each metric's smaller band.
	p.Calibrations = map[string]planner.Calibrated{"nvidia-h100-sxm5-80gb/vllm/cuda": {DecodeScale: 0.9}}
	b, ok := plan(&cc, planner.Workload{Prompt: 512, Gen: 128, Concurrency: 16}).Best()
	want := map[string]float64{"tpot_ms": 12, "ttft_ms": 32.4, "tg_tps": 12.8, "pp_tps": 19}
	if !ok || !maps.Equal(b.ErrorBand, want) {
		t.Errorf("calibrated closed loop: %v, want %v", b.ErrorBand, want)
	}
	if p.ErrorBand["tpot_ms"] != 35.9 || p.ScenarioErrorBand["closed"]["tpot_ms"] != 12 {
		t.Errorf("a plan changed the profile's bands: %v %v", p.ErrorBand, p.ScenarioErrorBand)
	}
}

// Scenario bands: the larger of a kind's in-sample and held-out MdAPE,
// only on a cell of at least 10 held-out rows, and not capped at the
// overall band.
func TestScenarioErrorBands(t *testing.T) {
	rep := func(n int, v float64) planner.MetricReport {
		return planner.MetricReport{Rows: n, Predicted: n, MdAPE: v}
	}
	in := planner.Report{ByScenario: map[string]map[planner.Metric]planner.MetricReport{
		"closed": {planner.MetricTPOT: rep(18, 12.04), planner.MetricTTFT: rep(36, 24)},
		"rate":   {planner.MetricTPOT: rep(17, 16)},
	}}
	lo := planner.CrossValidation{ByScenario: map[string]map[planner.Metric]planner.MetricReport{
		"closed": {planner.MetricTPOT: rep(18, 11.4), planner.MetricTTFT: rep(36, 32.44)},
		"rate":   {planner.MetricTPOT: rep(17, 95.8), planner.MetricReqPerS: rep(3, 7.1)},
		"single": {planner.MetricTPOT: rep(3, 14.5)},
	}}
	got := planner.ScenarioErrorBands(in, lo)
	want := map[string]map[string]float64{"closed": {"tpot_ms": 12, "ttft_ms": 32.4}, "rate": {"tpot_ms": 95.8}}
	if len(got) != len(want) || !maps.Equal(got["closed"], want["closed"]) || !maps.Equal(got["rate"], want["rate"]) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// ErrorBandText names the workload kind and lists the bands it has.
func TestErrorBandText(t *testing.T) {
	best := planner.Candidate{ErrorBand: map[string]float64{"tg_tps": 17.1, "tpot_ms": 11.4, "ttft_ms": 32.4}}
	for _, tc := range []struct {
		res  planner.PlanResult
		want string
	}{
		{planner.PlanResult{Ranked: []planner.Candidate{best}, ErrorBandWorkload: planner.WorkloadClosed},
			"typical error (median, on sources held out of the fit, for closed loops of users): decode ±17%, TTFT ±32%, TPOT ±11%"},
		{planner.PlanResult{Ranked: []planner.Candidate{best}},
			"typical error (median, on sources held out of the fit): decode ±17%, TTFT ±32%, TPOT ±11%"},
		{planner.PlanResult{Ranked: []planner.Candidate{{}}}, ""},
		{planner.PlanResult{}, ""},
	} {
		if got := tc.res.ErrorBandText(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
