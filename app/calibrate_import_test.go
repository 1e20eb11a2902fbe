package app

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/planner"
)

// importApp is an App on the embedded catalog that saves calibrations in
// a directory of the test's own.
func importApp(t *testing.T) *App {
	t.Helper()
	a, err := Open(Options{NoUserDirs: true, CalibrationDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// rtx3060Decode is a llama-bench tg128 row: Llama-3.1-8B Q4_K_M at
// 40 tok/s on an RTX 3060.
func rtx3060Decode() planner.Measurement {
	return planner.Measurement{Hardware: "nvidia-rtx-3060-12gb", Devices: 1, Engine: "llama.cpp", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", KVType: "f16",
		GenTokens: 128, Metric: planner.MetricTG, Value: 40, Scenario: planner.WorkloadSingle}
}

// One single-stream decode row calibrates a setup; saving applies it, so
// the next prediction for that setup comes from the calibration. A row
// faster than the named device's memory allows is refused, naming the
// flags to check.
func TestImportCalibrations(t *testing.T) {
	a, tg := importApp(t), rtx3060Decode()
	before, err := planner.PredictMeasurement(a.Catalog(), tg, a.Catalog().Perf)
	if err != nil {
		t.Fatal(err)
	}
	cals, err := a.ImportCalibrations([]planner.Measurement{tg}, "bench.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(cals) != 1 || cals[0].Profile.Key != "nvidia-rtx-3060-12gb/llama.cpp/cuda" || cals[0].Profile.Source != "calibrate import bench.md" {
		t.Fatalf("calibrations %+v", cals)
	}
	if _, _, err := a.SaveCalibration(cals[0].Profile, cals[0].Machine, false); err != nil {
		t.Fatal(err)
	}
	after, err := planner.PredictMeasurement(a.Catalog(), tg, a.Catalog().Perf)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(after/tg.Value-1) < 0.02) || math.Abs(before/tg.Value-1) < 0.05 {
		t.Errorf("decode predicted %.1f tok/s before, %.1f after calibrating on %.0f", before, after, tg.Value)
	}
	// Plans on the calibrated setup carry the calibrated bands, never
	// wider than the fitted ones, unless the plan's workload has a
	// narrower band of its own (a closed loop's TPOT); the embedded
	// profile has both.
	bands := a.CalibratedBands()
	if len(bands) == 0 {
		t.Fatal("the embedded profile has no calibrated error band (refit --cv writes it)")
	}
	m, _ := a.Catalog().FindModel(tg.Model)
	h, _ := a.Catalog().FindHardware(tg.Hardware)
	res := planner.Plan(planner.PlanRequest{Catalog: a.Catalog(), Hardware: h, Devices: 1, Model: m, Engines: []planner.EngineID{"llama.cpp"},
		Workload: planner.Workload{Prompt: 512, Gen: 128, Concurrency: 4}})
	best, ok := res.Best()
	if !ok || best.Source != "calibrated" || res.ErrorBandWorkload != planner.WorkloadClosed {
		t.Fatalf("plan on the calibrated setup: %+v, bands of %q", best, res.ErrorBandWorkload)
	}
	closed := a.Catalog().Perf.ScenarioErrorBand[string(planner.WorkloadClosed)]
	narrower := 0
	for _, b := range bands {
		want := b.Calibrated
		if v, ok := closed[string(b.Metric)]; ok && v < want {
			want, narrower = v, narrower+1
		}
		if got := best.ErrorBand[string(b.Metric)]; got != want || b.Calibrated > b.Fitted {
			t.Errorf("%s: the plan's band ±%g, want ±%g (calibrated ±%g, fitted ±%g, closed loops ±%g)", b.Metric, got, want, b.Calibrated, b.Fitted, closed[string(b.Metric)])
		}
	}
	if narrower == 0 || narrower == len(bands) {
		t.Errorf("%d of %d calibrated bands narrower than the closed loops' own: the test no longer tells the two apart", narrower, len(bands))
	}

	fast := tg
	fast.Value = 400 // 4.9 GB of weights 400 times a second: 2 TB/s on a 360 GB/s card
	_, err = a.ImportCalibrations([]planner.Measurement{fast}, "bench.md")
	if err == nil || !strings.Contains(err.Error(), "faster than the device") || !strings.Contains(err.Error(), "--hardware") {
		t.Errorf("a row 5× faster than the card's memory: %v", err)
	}
}

// Rows of a file that names no device are this machine's: a copy with the
// probed device filled in and a note saying so; rows that name their
// device are left as they are.
func TestRowsOnThisMachine(t *testing.T) {
	a, err := Open(Options{NoUserDirs: true, CalibrationDir: t.TempDir(), Root: "../probe/testdata/strix-halo-128-gtt"})
	if err != nil {
		t.Fatal(err)
	}
	tg := planner.Measurement{Devices: 1, Engine: "llama.cpp", Backend: "rocm", Model: "meta-llama/Llama-2-7b-hf", Quant: "q4_0", KVType: "f16",
		GenTokens: 128, Metric: planner.MetricTG, Value: 39.33, Scenario: planner.WorkloadSingle}
	named := tg
	named.Hardware = "nvidia-rtx-4090"
	rows := []planner.Measurement{tg, named}
	got, note, err := a.RowsOnThisMachine(context.Background(), rows, "bench.json")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Hardware != "amd-ryzen-ai-max-395" || got[1].Hardware != "nvidia-rtx-4090" || rows[0].Hardware != "" {
		t.Errorf("rows %q, %q (the caller's first row: %q)", got[0].Hardware, got[1].Hardware, rows[0].Hardware)
	}
	if !strings.Contains(note, "bench.json does not name its device") || !strings.Contains(note, "Ryzen AI Max") {
		t.Errorf("note %q", note)
	}
	// Every row named: nothing probed, nothing said.
	if got, note, err := a.RowsOnThisMachine(context.Background(), rows[1:], "bench.json"); err != nil || note != "" || len(got) != 1 {
		t.Errorf("%v %q %v", got, note, err)
	}
}

// Each setup of an import is saved on its own: one whose factor no
// published setup comes near (an H100 decoding an 8B model at 1 tok/s)
// is refused and reported, and the good one beside it is still saved.
func TestCalibrateFromRows(t *testing.T) {
	a, good := importApp(t), rtx3060Decode()
	slow := good
	slow.Hardware, slow.Value = "nvidia-h100-sxm5-80gb", 1
	o, err := a.CalibrateFromRows(context.Background(), []planner.Measurement{good, slow}, "bench.md", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Setups) != 2 || o.Note != "" {
		t.Fatalf("outcome %+v", o)
	}
	byKey := map[string]SavedImport{}
	for _, si := range o.Setups {
		byKey[si.Profile.Key] = si
	}
	ok, bad := byKey["nvidia-rtx-3060-12gb/llama.cpp/cuda"], byKey["nvidia-h100-sxm5-80gb/llama.cpp/cuda"]
	if ok.Err != nil || ok.Path == "" || !ok.Comparison.Saved {
		t.Errorf("the good setup: saved at %q, err %v", ok.Path, ok.Err)
	}
	var ce *calibrate.CheckError
	if !errors.As(bad.Err, &ce) || bad.Path != "" {
		t.Errorf("the 1 tok/s H100: saved at %q, err %v; want a CheckError", bad.Path, bad.Err)
	}
	if !o.Saved() || !errors.Is(o.Err(), bad.Err) {
		t.Errorf("Saved %v, Err %v", o.Saved(), o.Err())
	}
	if v, err := planner.PredictMeasurement(a.Catalog(), good, a.Catalog().Perf); err != nil || math.Abs(v/good.Value-1) > 0.02 {
		t.Errorf("the saved calibration is not applied: %.1f tok/s against %.0f (%v)", v, good.Value, err)
	}
}
