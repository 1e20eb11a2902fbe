//go:build exp

package planner_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// expHeldFit opens the embedded catalog and the measurements ($EXP_DATA,
// else the embedded ones) and refits the efficiencies with the embedded
// host overheads held ($EXP_SOURCE_WEIGHT sets FitOptions.SourceWeight).
func expHeldFit(t *testing.T) (planner.Catalog, app.Measurements, planner.FitOptions, planner.PerfParams) {
	a, err := app.Open(app.Options{NoUserDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := app.LoadMeasurements(os.Getenv("EXP_DATA"))
	if err != nil {
		t.Fatal(err)
	}
	c := *a.Catalog()
	fo := planner.FitOptions{Ridge: planner.DefaultRidge, InteractionRidge: planner.DefaultInteractionRidge}
	if v, err := strconv.ParseFloat(os.Getenv("EXP_SOURCE_WEIGHT"), 64); err == nil {
		fo.SourceWeight = v
	}
	fo.FoldRequestOverheads = os.Getenv("EXP_FOLD_REQ") != ""
	held := *c.Perf
	if v := os.Getenv("EXP_REQ"); v != "" {
		// EXP_REQ=vllm=0,sglang=2 replaces the front-end costs held.
		held.RequestOverheadMs = map[string]float64{}
		for _, kv := range strings.Split(v, ",") {
			k, x, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(x, 64)
			held.RequestOverheadMs[k] = f
		}
	}
	for env, dst := range map[string]*map[string]float64{"EXP_LAYER": &held.LayerOverheadUs, "EXP_SEQ": &held.SeqOverheadUs} {
		if v := os.Getenv(env); v != "" {
			// EXP_LAYER=cuda=50 / EXP_SEQ=vllm=160 override one held overhead each.
			m := map[string]float64{}
			for k, x := range *dst {
				m[k] = x
			}
			for _, kv := range strings.Split(v, ",") {
				k, x, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(x, 64)
				m[k] = f
			}
			*dst = m
		}
	}
	return c, ms, fo, planner.FitPerfHeldOverheads(&c, ms.Rows, fo, held)
}

// TestExpLOSO (go test -tags exp -run ExpLOSO ./planner) refits with the
// embedded overheads held, prints in-sample and leave-one-source-out
// MdAPE, and writes every held-out row to $EXP_OUT (default
// /tmp/loso.csv): the experiment loop behind docs/predictions.md.
// EXP_DATA names another measurement CSV; EXP_SOURCE_WEIGHT sets
// FitOptions.SourceWeight.
func TestExpLOSO(t *testing.T) {
	t0 := time.Now()
	c, ms, fo, full := expHeldFit(t)
	in := planner.Validate(&c, ms.Rows, &full)
	fmt.Printf("in-sample (%s): %s\n", time.Since(t0).Round(time.Second), in.Describe())
	lo := planner.LeaveOneSourceOut(&c, ms.Rows, fo, full)
	s := ""
	for _, m := range planner.Metrics {
		if r, ok := lo.Metrics[m]; ok {
			s += fmt.Sprintf("%s %.1f (%d/%d); ", m, r.MdAPE, r.Predicted, r.Rows)
		}
	}
	fmt.Printf("LOSO (%s): %s\n", time.Since(t0).Round(time.Second), s)
	for _, sc := range planner.WorkloadKinds {
		if cell, ok := lo.ByScenario[string(sc)]; ok {
			s := ""
			for _, m := range planner.Metrics {
				if r, ok := cell[m]; ok {
					s += fmt.Sprintf("%s %.1f (%d) ", m, r.MdAPE, r.Rows)
				}
			}
			fmt.Printf("  LOSO %-9s %s\n", sc, s)
		}
	}
	out := os.Getenv("EXP_OUT")
	if out == "" {
		out = "/tmp/loso.csv"
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"source", "hardware", "devices", "engine", "backend", "engine_version", "model", "quant", "scenario", "prompt", "gen", "conc", "metric", "value", "loso", "insample"})
	insample := map[int]float64{}
	for i, r := range in.Results {
		insample[i] = r.Predicted
	}
	idx := map[planner.Measurement]int{}
	for i, m := range ms.Rows {
		idx[m] = i
	}
	for _, r := range lo.Results {
		m := r.Row
		w.Write([]string{planner.SourceKey(m), m.Hardware, strconv.Itoa(m.Devices), m.Engine, m.Backend, m.EngineVersion, m.Model, m.Quant, string(planner.WorkloadKindOf(m)),
			strconv.Itoa(m.PromptTokens), strconv.Itoa(m.GenTokens), strconv.Itoa(m.Concurrency), string(m.Metric),
			strconv.FormatFloat(m.Value, 'g', 6, 64), strconv.FormatFloat(r.Predicted, 'g', 6, 64), strconv.FormatFloat(insample[idx[m]], 'g', 6, 64)})
	}
	w.Flush()
}

func TestExpClosedCaps(t *testing.T) {
	a, _ := app.Open(app.Options{NoUserDirs: true})
	ms, _ := app.LoadMeasurements("")
	c := a.Catalog()
	for _, m := range ms.Rows {
		k := planner.WorkloadKindOf(m)
		if k != planner.WorkloadClosed && k != planner.WorkloadRate {
			continue
		}
		capN, w, err := planner.RowAdmission(c, m)
		if err != nil {
			continue
		}
		if capN < w.Concurrency || k == planner.WorkloadRate {
			pred, _ := planner.PredictMeasurement(c, m, c.Perf)
			fmt.Printf("%-8s %-26s %d %-9s %-40s %-9s c=%-4d cap=%-5d %-8s meas %.4g pred %.4g\n", k, m.Hardware, m.Devices, m.Engine, m.Model, m.Quant, w.Concurrency, capN, m.Metric, m.Value, pred)
		}
	}
}

func TestExpBurstCaps(t *testing.T) {
	a, _ := app.Open(app.Options{NoUserDirs: true})
	ms, _ := app.LoadMeasurements("")
	c := a.Catalog()
	for _, m := range ms.Rows {
		if planner.WorkloadKindOf(m) != planner.WorkloadBurst {
			continue
		}
		capN, w, err := planner.RowAdmission(c, m)
		if err != nil {
			continue
		}
		pred, _ := planner.PredictMeasurement(c, m, c.Perf)
		fmt.Printf("%-22s %d %-7s %-10s %-28s %-6s p%-5d g%-4d N=%-5d cap=%-5d %-13s meas %9.4g pred %9.4g %+5.0f%%\n", m.Hardware, m.Devices, m.Engine, m.EngineVersion, m.Model[max(0, len(m.Model)-28):], m.Quant, m.PromptTokens, m.GenTokens, w.Burst, capN, m.Metric, m.Value, pred, (pred/m.Value-1)*100)
	}
}

// TestExpInSample (go test -tags exp -run ExpInSample ./planner) refits
// with the embedded overheads held and prints in-sample MdAPE and the
// named groups' medians: a quick look before a leave-one-source-out run.
func TestExpInSample(t *testing.T) {
	c, ms, _, full := expHeldFit(t)
	in := planner.Validate(&c, ms.Rows, &full)
	fmt.Printf("in-sample: %s\n", in.Describe())
	groups := map[string]func(planner.Measurement) bool{
		"trtllm offline": func(m planner.Measurement) bool { return m.Engine == "trtllm" && m.Scenario == planner.WorkloadOffline },
		"bursts >=900":   func(m planner.Measurement) bool { return m.Scenario == planner.WorkloadBurst && m.Concurrency >= 900 },
		"sglang rate":    func(m planner.Measurement) bool { return m.Engine == "sglang" && m.Scenario == planner.WorkloadRate },
	}
	for name, in := range groups {
		var sel []planner.Measurement
		for _, m := range ms.Rows {
			if in(m) {
				sel = append(sel, m)
			}
		}
		rep := planner.Validate(&c, sel, &full)
		var ape []float64
		for _, r := range rep.Results {
			if r.Err == "" {
				ape = append(ape, r.APE)
			}
		}
		sort.Float64s(ape)
		fmt.Printf("  %-15s %d rows, median %.1f%%\n", name, len(ape), (ape[(len(ape)-1)/2]+ape[len(ape)/2])/2)
	}
}

// TestExpRequestOverheads searches the front-end cost per request on its
// grid with the current speed model and the other overheads held.
func TestExpRequestOverheads(t *testing.T) {
	c, ms, _, full := expHeldFit(t)
	fmt.Println("held:", full.RequestOverheadMs)
	fmt.Println("searched:", planner.FitRequestOverheads(&c, ms.Rows, full, []string{"sglang", "trtllm", "vllm"}))
}

// TestExpBurstAnatomy prints what binds each burst row's prediction under
// a held-overheads refit.
func TestExpBurstAnatomy(t *testing.T) {
	c, ms, _, full := expHeldFit(t)
	for _, m := range ms.Rows {
		if planner.WorkloadKindOf(m) != planner.WorkloadBurst || m.Concurrency < 100 {
			continue
		}
		pred, _ := planner.PredictMeasurement(&c, m, &full)
		fmt.Printf("%-7s %-14s %-9s %d %-24s %-5s p%-5d g%-3d %-13s meas %8.4g pred %8.4g %+4.0f%% | %s\n", m.Engine, m.EngineVersion, m.Hardware[:min(9, len(m.Hardware))], m.Devices, m.Model[max(0, len(m.Model)-24):], m.Quant, m.PromptTokens, m.GenTokens, m.Metric, m.Value, pred, (pred/m.Value-1)*100, planner.BurstAnatomy(&c, m, &full))
	}
}

// TestExpCalibrated: held out by source, each held-out setup calibrated
// on its first run (planner.CalibratedCV), against the same rows
// uncalibrated.
func TestExpCalibrated(t *testing.T) {
	c, ms, fo, full := expHeldFit(t)
	cv := planner.LeaveOneSourceOut(&c, ms.Rows, fo, full).Calibrated
	for _, x := range []struct {
		name string
		r    map[planner.Metric]planner.MetricReport
	}{{"held out, same rows", cv.Plain}, {"held out, calibrated on one run", cv.Metrics}} {
		s := ""
		for _, m := range planner.Metrics {
			if r, ok := x.r[m]; ok {
				s += fmt.Sprintf("%s %.1f (%d/%d); ", m, r.MdAPE, r.Predicted, r.Rows)
			}
		}
		fmt.Printf("%s: %s\n", x.name, s)
	}
	fmt.Printf("setups calibrated %d, refused %d\n", cv.Setups, cv.Refused)
	res := cv.Results
	out := os.Getenv("EXP_OUT")
	if out == "" {
		return
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"source", "engine", "hardware", "scenario", "metric", "value", "calibrated"})
	for _, r := range res {
		m := r.Row
		w.Write([]string{planner.SourceKey(m), m.Engine, m.Hardware, string(planner.WorkloadKindOf(m)), string(m.Metric),
			strconv.FormatFloat(m.Value, 'g', 6, 64), strconv.FormatFloat(r.Predicted, 'g', 6, 64)})
	}
	w.Flush()
}
