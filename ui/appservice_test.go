package ui

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/planner"
)

// appTestService is the real Service over the application layer with the
// embedded catalog, an empty calibration directory (returned) and this
// machine probed.
func appTestService(t *testing.T) (*appService, string) {
	t.Helper()
	dir := t.TempDir()
	a, err := app.Open(app.Options{CalibrationDir: dir, NoUserDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	return NewService(a).(*appService), dir
}

func TestGUIServicePlanAndExport(t *testing.T) {
	s, _ := appTestService(t)
	m, err := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-rtx-4090"}, MaxTTFT: 2000, MaxTPOT: 100}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 8, Serving: true}
	v, err := s.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) == 0 || !v.Rows[0].Fits || v.Rows[0].Launch == "" {
		t.Fatalf("plan rows %+v", v.Rows)
	}
	// A row's detail says how far its figures typically are: for 8 users
	// in a loop, the closed loops' held-out band (embedded fitted.toml).
	closed := s.a.Catalog().Perf.ScenarioErrorBand["closed"]
	want := fmt.Sprintf("Figures are fitted; typical error (median, on sources held out of the fit, for closed loops of users): decode ±%.0f%%", closed["tg_tps"])
	if d := rowDetail(v.Rows[0], v, in); v.BandKind != planner.WorkloadClosed || !strings.Contains(d, want) || !strings.Contains(d, fmt.Sprintf("TPOT ±%.0f%%.", closed["tpot_ms"])) {
		t.Errorf("bands of %q; detail %q, want it to say %q", v.BandKind, d, want)
	}
	// and ends with the plan's notes, which the screen shows nowhere else
	// once something fits.
	if d := rowDetail(v.Rows[0], v, in); len(v.Notes) == 0 || !strings.Contains(d, "About this plan:\n• "+v.Notes[0]) {
		t.Errorf("notes %q not in the detail %q", v.Notes, d)
	}
	for _, f := range ExportFormats {
		data, err := s.Export(v.Rows[0], f.ID)
		if err != nil || len(data) == 0 {
			t.Errorf("export %s: %v (%d bytes)", f.ID, err, len(data))
		}
		if f.ID == "sh" && !strings.HasPrefix(string(data), "#!/bin/sh") {
			t.Errorf("shell export starts %q", data[:20])
		}
		if f.ID == "toml" {
			var back app.Export
			if _, err := toml.Decode(string(data), &back); err != nil || back.Launch != v.Rows[0].Launch+"\n" || back.Model != m.ID {
				t.Errorf("TOML export does not read back: %v\n%s", err, data)
			}
		}
	}
	if _, err := s.Export(v.Rows[0], "yaml"); err == nil {
		t.Error("an unknown format exported")
	}
}

// The Plan screen's rate goes through the real planner: every row that
// fits carries its capacity and the rate's share of it, the best one keeps
// up within the planned utilization, and the slots it is given exceed
// nothing the KV pool cannot hold.
func TestGUIServicePlanAtRate(t *testing.T) {
	s, _ := appTestService(t)
	m, err := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-rtx-4090"}, MaxTTFT: 1000, MaxTPOT: 50}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Rate: 2, Serving: true}
	v, err := s.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) == 0 {
		t.Fatal("no rows")
	}
	best := v.Rows[0]
	if !best.Fits || !best.MeetsSLO {
		t.Fatalf("best row %+v does not serve 2 req/s", best)
	}
	for _, r := range v.Rows {
		if !r.Fits {
			continue
		}
		if !(r.Capacity > 0) || math.Abs(r.Utilization*r.Capacity-2) > 1e-6 {
			t.Errorf("%s %s: capacity %g req/s, utilization %g", r.Engine, r.Quant, r.Capacity, r.Utilization)
		}
	}
	if best.Utilization > planner.MaxPlannedUtilization || best.Concurrency < 1 {
		t.Errorf("best row at %.0f%% with %d slots", 100*best.Utilization, best.Concurrency)
	}
	if best.Workload.Rate != 2 {
		t.Errorf("the row's workload lost the rate: %+v", best.Workload)
	}
}

func TestGUIServiceMachineAndCompare(t *testing.T) {
	s, _ := appTestService(t)
	mv, err := s.Machine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if mv.Hardware == "" || len(mv.Devices) == 0 {
		t.Fatalf("machine view %+v", mv)
	}
	m, _ := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	rows, err := s.Compare(CompareInput{Hardware: []string{"", "nvidia-rtx-4090", "amd-ryzen-ai-max-395"}, Model: m,
		Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].Verdict != planner.Fits || rows[1].PerKiloUSD <= 0 || rows[1].PerWatt <= 0 {
		t.Errorf("compare rows %+v", rows)
	}
	sc, err := s.Scenario(ScenarioInput{Model: m, Hardware: "nvidia-rtx-4090", Context: 8192, Users: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Engine.ID != planner.VLLM || sc.KV.ID != "bf16" {
		t.Errorf("automatic choices: engine %s, KV %s", sc.Engine.ID, sc.KV.ID)
	}
}

func TestMdAPE(t *testing.T) {
	pts := []CalibrationPoint{{Predicted: 110, Measured: 100}, {Predicted: 80, Measured: 100}, {Predicted: 100, Measured: 100}}
	if got := mdape(pts); got != 10 {
		t.Errorf("mdape = %v, want 10", got)
	}
	if mdape(nil) != 0 {
		t.Error("mdape of nothing should be 0")
	}
}

// BenchmarkGUIServicePlan is the Plan screen's service call on the real
// catalog: planner.Plan for an 8B model on an RTX 4090.
func BenchmarkGUIServicePlan(b *testing.B) {
	a, err := app.Open(app.Options{CalibrationDir: b.TempDir(), NoUserDirs: true})
	if err != nil {
		b.Fatal(err)
	}
	s := NewService(a)
	m, _ := a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-rtx-4090"}, MaxTTFT: 2000, MaxTPOT: 100}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 8, Serving: true}
	for b.Loop() {
		if _, err := s.Plan(in); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGUIServiceCalibrationStatus(t *testing.T) {
	s, dir := appTestService(t)
	mv, err := s.Machine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if mv.Calibration.Calibrated {
		t.Fatalf("an empty profile directory reads as calibrated: %+v", mv.Calibration)
	}
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := calibrate.Profile{Hardware: mv.Hardware, Engine: string(planner.LlamaCpp), Backend: string(planner.CPU),
		Created: when, Source: "calibrate host", Terms: planner.Calibrated{BandwidthGBs: 40, TFLOPS: 1}}
	if _, err := calibrate.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	st := s.calibrationStatus(mv.Hardware)
	if !st.Calibrated || !st.When.Equal(when) || st.Source != "calibrate host" || strings.Contains(st.Detail, "not the device") {
		t.Errorf("status %+v", st)
	}
	if other := s.calibrationStatus("nvidia-rtx-4090"); !strings.Contains(other.Detail, "not the device plans use") {
		t.Errorf("a profile of other hardware: %+v", other)
	}
}

// The Plan table names multi-device configurations as the engines run
// them: tensor parallel for vLLM, a layer split for llama-server.
func TestGUIPlanRowDeviceLabels(t *testing.T) {
	s, _ := appTestService(t)
	w := planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}
	if got := s.planRow(planner.Candidate{Engine: planner.LlamaCpp, Quant: "q4_0", Devices: 2}, w, false).Engine; !strings.HasSuffix(got, " 2 devices, layer split") {
		t.Errorf("llama.cpp on 2 devices shown as %q", got)
	}
	if got := s.planRow(planner.Candidate{Engine: planner.VLLM, Quant: "bf16", Devices: 4}, w, false).Engine; !strings.HasSuffix(got, " TP4") {
		t.Errorf("vLLM on 4 devices shown as %q", got)
	}
}

// Dropped configurations are rows too (why each lost); they carry no
// scenario, and a plan where nothing fits is all such rows. The Plan screen
// panicked on them (nil scenario) when a 70B model was planned on a 4090.
func TestGUIServicePlanWithDroppedRows(t *testing.T) {
	s, _ := appTestService(t)
	for _, c := range []struct{ model, hw string }{
		{"meta-llama/Llama-3.3-70B-Instruct", "nvidia-rtx-4090"},
		{"deepseek-ai/DeepSeek-R1", "apple-m1-7c"},
	} {
		m, err := s.a.Catalog().FindModel(c.model)
		if err != nil {
			t.Fatal(err)
		}
		in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: c.hw}}
		in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1, Serving: true}
		v, err := s.Plan(in)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.model, c.hw, err)
		}
		dropped := 0
		for _, r := range v.Rows {
			if !r.Fits {
				dropped++
				if r.WhyNot == "" {
					t.Errorf("%s on %s: dropped row %s %s says nothing", c.model, c.hw, r.Engine, r.Quant)
				}
			}
		}
		if dropped == 0 {
			t.Errorf("%s on %s: no dropped rows to show", c.model, c.hw)
		}
	}
}

// Every catalog model on one device of each kind, through every service
// call a screen makes (Can I run it?, Plan with its rows' curves and
// exports, Compare): answers or errors, never a panic.
func TestGUIServiceEveryModelEveryKind(t *testing.T) {
	s, _ := appTestService(t)
	hws := []string{"nvidia-rtx-3060-12gb", "nvidia-h100-sxm5-80gb", "amd-ryzen-ai-max-395", "apple-m1-7c", "cpu-core-i5-9500-ddr4"}
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 4, Serving: true}
	plans, exported := 0, 0
	for _, m := range s.a.Catalog().Models {
		for _, hw := range hws {
			if sc, err := s.Scenario(ScenarioInput{Model: m, Hardware: hw, Users: 4}); err == nil {
				if fr, err := s.Fit(sc); err == nil && fr.Verdict != planner.DoesNotFit {
					s.Predict(sc.WithPlacement(fr), w)
				}
			}
			v, err := s.Plan(PlanInput{Scenario: ScenarioInput{Model: m, Hardware: hw}, Workload: w})
			if err != nil {
				t.Errorf("%s on %s: plan: %v", m.ID, hw, err)
				continue
			}
			plans++
			for i, r := range v.Rows {
				if i >= 3 {
					break
				}
				if r.Fits {
					s.Curve(r.Scenario, w, []int{1, 4, 16})
				}
				for _, f := range ExportFormats {
					if data, err := s.Export(r, f.ID); err == nil && len(data) > 0 {
						exported++
					}
				}
			}
		}
		if rows, err := s.Compare(CompareInput{Hardware: hws, Model: m, Workload: w}); err != nil || len(rows) != len(hws) {
			t.Errorf("%s: compare: %d rows, %v", m.ID, len(rows), err)
		}
	}
	if n := len(s.a.Catalog().Models) * len(hws); plans != n || exported < n {
		t.Errorf("%d of %d plans answered, %d rows exported", plans, n, exported)
	}
}

// TestGUIServiceSpeedDefinitions: a plan row's total is never below its
// per-user figure (one user's total is that user's tok/s), and the
// compare's one-user figure does not change with the users asked for.
func TestGUIServiceSpeedDefinitions(t *testing.T) {
	s, _ := appTestService(t)
	m, err := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	for _, users := range []int{1, 8} {
		in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-rtx-4090"}, MaxTTFT: 2000, MaxTPOT: 100}
		in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: users, Serving: true}
		v, err := s.Plan(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Rows {
			if r.Fits && r.Total > 0 && r.Total < r.PerUser*0.999 {
				t.Errorf("%d users, #%d %s %s: total %v below per user %v", users, r.Rank, r.Engine, r.Quant, r.Total, r.PerUser)
			}
			if r.Fits && r.Stream < r.PerUser {
				t.Errorf("#%d: streaming %v below per-user %v (TTFT included)", r.Rank, r.Stream, r.PerUser)
			}
		}
	}
	one := map[int][]planner.TokensPerSecond{}
	for _, users := range []int{1, 4, 16} {
		rows, err := s.Compare(CompareInput{Hardware: []string{"nvidia-rtx-4090", "amd-ryzen-ai-max-395"}, Model: m,
			Workload: planner.Workload{Prompt: 1024, Gen: 256, Concurrency: users, Serving: users > 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			one[users] = append(one[users], r.SingleUser)
			if r.Total > 0 && r.Total < r.SingleUser*0.999 {
				t.Errorf("%s at %d users: total %v below one user's %v", r.Name, users, r.Total, r.SingleUser)
			}
		}
	}
	for _, users := range []int{4, 16} {
		for i := range one[1] {
			if one[users][i] != one[1][i] {
				t.Errorf("device %d: 1-user tok/s %v at %d users, %v at 1", i, one[users][i], users, one[1][i])
			}
		}
	}
}

// The GUI plans over nodes and across replicas as the CLI does: DeepSeek-R1
// on 2 nodes of 8 H100 names TP8 × PP2 in its rows, and a rate one H100
// cannot serve says how many replicas, with each one's load at or under
// the ceiling and replicas × capacity covering the rate.
func TestGUIServicePlanNodesAndReplicas(t *testing.T) {
	s, _ := appTestService(t)
	r1, err := s.a.Catalog().FindModel("deepseek-ai/DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	in := PlanInput{Scenario: ScenarioInput{Model: r1, Hardware: "nvidia-h100-sxm5-80gb", Devices: 8, Nodes: 2, Quant: "fp8"}}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 16, Serving: true}
	v, err := s.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) == 0 || !v.Rows[0].Fits || v.Rows[0].Candidate.Nodes != 2 {
		t.Fatalf("DeepSeek-R1 over 2 nodes: %+v", v.Rows)
	}
	if !strings.Contains(v.Rows[0].Engine, "PP2") || !strings.Contains(v.Hardware, "2 nodes of 8 × ") {
		t.Errorf("row %q on %q: want the nodes named", v.Rows[0].Engine, v.Hardware)
	}

	m, err := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	in = PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-h100-sxm5-80gb", Quant: "fp8"}}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Rate: 500, Serving: true}
	v, err = s.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	f := v.Rows[0].Candidate.Fleet
	if f == nil || f.Replicas < 2 {
		t.Fatalf("500 req/s on one H100: fleet %+v", f)
	}
	if f.Utilization > planner.MaxPlannedUtilization+1e-9 || float64(f.Replicas)*f.CapacityReqPerS*f.Utilization < 500-1e-6 {
		t.Errorf("fleet %+v does not carry 500 req/s at or under the ceiling", f)
	}
	sum := planSummary(v, in)
	t.Log(sum)
	if !strings.Contains(sum, fmt.Sprintf("%d replicas of 1 device", f.Replicas)) {
		t.Errorf("summary %q does not give the replicas", sum)
	}
}

// A burst through the real planner: the best row runs no more at once
// than the burst, says when the last prompt is answered, and its chart is
// the closed loop up to what it runs at once (every point had been the
// same burst prediction).
func TestGUIServicePlanBurst(t *testing.T) {
	s, _ := appTestService(t)
	m, err := s.a.Catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	in := PlanInput{Scenario: ScenarioInput{Model: m, Hardware: "nvidia-h100-sxm5-80gb", Users: 500}}
	in.Workload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 500, Burst: 500, Kind: planner.WorkloadBurst, Serving: true}
	v, err := s.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) == 0 || !v.Rows[0].Fits {
		t.Fatalf("plan rows %+v", v.Rows)
	}
	best := v.Rows[0]
	if best.Concurrency < 2 || best.Concurrency > 500 {
		t.Errorf("best runs %d of 500 at once", best.Concurrency)
	}
	if got := planSummary(v, in); !strings.Contains(got, "all answered in ") || strings.Contains(got, "answered in –") {
		t.Errorf("summary %q", got)
	}
	curve := (&PlanScreen{svc: s}).curveFor(best, in)
	if len(curve) < 3 || curve[0].Concurrency != 1 {
		t.Fatalf("curve %+v", curve)
	}
	last := curve[len(curve)-1]
	if last.Concurrency > 2*best.Concurrency || !(last.Total > 2*curve[0].Total) {
		t.Errorf("curve from %+v to %+v: want the closed loop up to %d at once", curve[0], last, best.Concurrency)
	}
}

// A vllm bench serve result that names its device calibrates that setup
// through the application layer: the view sets every row beside its
// calibrated prediction and the profile is saved and applied; a file of
// no known format is an error that names it.
func TestGUIServiceCalibrateImport(t *testing.T) {
	s, dir := appTestService(t)
	noop := func(float64, string) {}
	v, err := s.CalibrateImport(context.Background(), "../calibrate/importer/testdata/vllm-serve-result.json", noop)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Params) < 2 || !strings.HasPrefix(v.Params[0].Note, "amd-ryzen-ai-max-395/vllm/rocm") || !strings.HasPrefix(v.Params[0].Value, "×") || len(v.Points) != 5 {
		t.Fatalf("view %+v", v)
	}
	// After the factor, the error bands plans on the setup now carry.
	if band := v.Params[len(v.Params)-1]; band.Name != "TPOT error band" || !strings.HasPrefix(band.Value, "±") || !strings.Contains(band.Note, "uncalibrated") {
		t.Errorf("the last line %+v, want TPOT's calibrated error band", band)
	}
	if _, err := os.Stat(filepath.Join(dir, "amd-ryzen-ai-max-395__vllm__rocm.toml")); err != nil {
		t.Errorf("not saved: %v (notes %q)", err, v.Notes)
	}
	if st := s.calibrationStatus("amd-ryzen-ai-max-395"); !st.Calibrated || !strings.Contains(st.Detail, "decode ×") {
		t.Errorf("status %+v", st)
	}
	bad := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(bad, []byte("nothing a benchmark prints\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CalibrateImport(context.Background(), bad, noop); err == nil {
		t.Error("a file of no known format calibrated")
	}
}
