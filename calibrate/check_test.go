package calibrate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
)

var (
	box     = planner.Hardware{ID: "amd-epyc-9654", BandwidthGBs: 460, TFLOPS: map[planner.Precision]float64{"fp32": 10}}
	generic = planner.Hardware{ID: "generic-cpu", BandwidthGBs: 50}
)

// endpointFit is a profile as calibrate endpoint fits it.
func endpointFit(decode, prefill float64) Profile {
	return Profile{Hardware: box.ID, Engine: "vllm", Backend: "cuda", Source: "calibrate endpoint http://h:8000",
		Terms: planner.Calibrated{DecodeEff: decode, PrefillEff: prefill, StepOverheadMs: 2},
		Fit:   planner.CalFit{DecodePoints: 4, PrefillPoints: 3}}
}

// hostRun is a profile as calibrate host saves it.
func hostRun(bw float64, passes int, spread float64) Profile {
	res := host.Result{Duration: 15 * time.Second, GEMVGBs: bw, Steps: []host.StepStat{
		{Name: "memory: triad, all threads", Passes: passes, Spread: spread},
		{Name: "gemv: float32, all threads", Passes: passes, Spread: spread}}}
	return Profile{Hardware: box.ID, Engine: "llama.cpp", Backend: "cpu", Source: "calibrate host",
		Created: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Terms: HostTerms(res), Host: &res}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     Profile
		hw    planner.Hardware
		terms []string // problem terms expected, in order
		fatal bool
	}{
		{"a good endpoint fit", endpointFit(0.7, 0.4), box, nil, false},
		{"a lying server: prefill 5.0, decode 0", endpointFit(0, 5), box, []string{"decode_bw_efficiency", "prefill_compute_efficiency"}, true},
		{"clamped prefill on any device", endpointFit(0.7, 5), planner.Hardware{}, []string{"prefill_compute_efficiency"}, true},
		{"efficiency 1.2 on a datasheet device", endpointFit(1.2, 0.5), box, []string{"decode_bw_efficiency"}, true},
		{"efficiency 1.2 against a guessed peak", endpointFit(1.2, 0.5), generic, nil, false},
		{"decode only, prefill not fitted", Profile{Terms: planner.Calibrated{DecodeEff: 0.6}, Fit: planner.CalFit{DecodePoints: 2}}, box, nil, false},
		{"a good host run", hostRun(300, 20, 0.05), box, nil, false},
		{"in-cache bandwidth above the peak", hostRun(900, 20, 0.05), box, []string{"bandwidth_gb_s"}, true},
		{"0.14 GB/s on a loaded machine", hostRun(0.14, 20, 0.05), box, []string{"bandwidth_gb_s"}, true},
		{"a 0.14 GB/s triad beside a good GEMV", func() Profile { p := hostRun(300, 20, 0.05); p.Host.TriadGBs = 0.14; return p }(), box, []string{"host: triad_gb_s"}, true},
		{"a busy machine: 20 GB/s of 460", hostRun(20, 20, 0.05), box, []string{"bandwidth_gb_s"}, false},
		{"noisy passes", hostRun(300, 20, 0.8), box, []string{"host: memory: triad, all threads spread", "host: gemv: float32, all threads spread"}, false},
		{"one pass each", hostRun(300, 1, 0), box, []string{"host: memory: triad, all threads passes", "host: gemv: float32, all threads passes"}, false},
		{"negative overhead", Profile{Terms: planner.Calibrated{DecodeEff: 0.5, StepOverheadMs: -1}}, box, []string{"step_overhead_ms"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := Check(tc.p, tc.hw)
			var terms []string
			for _, p := range ps {
				terms = append(terms, p.Term)
			}
			if strings.Join(terms, "|") != strings.Join(tc.terms, "|") {
				t.Errorf("problems %v, want terms %q", ps, tc.terms)
			}
			if Fatal(ps) != tc.fatal {
				t.Errorf("fatal = %v, want %v: %v", Fatal(ps), tc.fatal, ps)
			}
		})
	}
}

// TestImpossibleProfileIsNeverSaved: a server lying about token counts
// gave prefill efficiency 5.0 and decode 0, saved over a good profile and
// then shown as calibrated (issue 15 item 12). Save, SaveChecked and Load
// all refuse it, and the good profile stays.
func TestImpossibleProfileIsNeverSaved(t *testing.T) {
	dir := t.TempDir()
	good := endpointFit(0.7, 0.4)
	path, err := Save(dir, good)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := endpointFit(0, 5)
	if _, err := Save(dir, bad); !errors.Is(err, ErrImplausible) {
		t.Errorf("Save: %v, want ErrImplausible", err)
	}
	_, cmp, err := SaveChecked(dir, bad, SaveOptions{Hardware: box, Force: true})
	if !errors.Is(err, ErrImplausible) || cmp.Saved || cmp.Previous == nil {
		t.Errorf("SaveChecked: %v, comparison %+v", err, cmp)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the good profile changed")
	}
	// A bad file already on disk is reported, not applied.
	if err := os.WriteFile(filepath.Join(dir, "old.toml"), []byte("key=\"x/vllm/cuda\"\nhardware=\"x\"\nengine=\"vllm\"\n[terms]\nprefill_compute_efficiency=5.0\n[fit]\nprefill_points=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, errs := Load(dir)
	if len(ps) != 1 || len(errs) != 1 || !errors.Is(errs[0], ErrImplausible) {
		t.Errorf("Load: %d profiles, errors %v; want the good one and the bad one reported", len(ps), errs)
	}
}

// TestFlaggedRunKeepsCleanPrevious: a noisy host run does not replace a
// clean profile unless forced, and the comparison shows what would change.
func TestFlaggedRunKeepsCleanPrevious(t *testing.T) {
	dir := t.TempDir()
	path, cmp, err := SaveChecked(dir, hostRun(300, 20, 0.05), SaveOptions{Hardware: box})
	if err != nil || !cmp.Saved || cmp.Previous != nil {
		t.Fatalf("first save: %v %+v", err, cmp)
	}
	before, _ := os.ReadFile(path)
	noisy := hostRun(40, 2, 0.9)
	_, cmp, err = SaveChecked(dir, noisy, SaveOptions{Hardware: box})
	if !errors.Is(err, ErrKeptPrevious) || cmp.Saved || cmp.Previous == nil {
		t.Fatalf("noisy save: %v, %+v", err, cmp)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the clean profile was replaced")
	}
	if len(cmp.Changes) == 0 || cmp.Changes[0].Term != "bandwidth_gb_s" || cmp.Changes[0].Old != 300 || cmp.Changes[0].New != 40 {
		t.Errorf("changes %+v, want bandwidth 300 -> 40", cmp.Changes)
	}
	if s := cmp.String(); !strings.Contains(s, "NOT saved") || !strings.Contains(s, "bandwidth_gb_s") || !strings.Contains(s, "flagged") {
		t.Errorf("comparison text:\n%s", s)
	}
	if _, err := Save(dir, noisy); !errors.Is(err, ErrKeptPrevious) {
		t.Errorf("plain Save of the noisy run: %v, want ErrKeptPrevious", err)
	}
	if _, cmp, err = SaveChecked(dir, noisy, SaveOptions{Hardware: box, Force: true}); err != nil || !cmp.Saved {
		t.Fatalf("forced save: %v %+v", err, cmp)
	}
	if after, _ := os.ReadFile(path); string(after) == string(before) {
		t.Error("a forced save did not replace the profile")
	}
}

// TestRemoveMatchesTheListedKeyExactly: `calibrate remove ""` deleted the
// only calibration, and remove could delete another file than the one
// listed (issue 15 item 16).
func TestRemoveMatchesTheListedKeyExactly(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		removed   string // base name of the file removed; "" for an error
	}{
		{"empty", "", ""},
		{"blank", "  ", ""},
		{"prefix", "box/vllm", ""},
		{"unknown", "box/tgi/cuda", ""},
		{"the listed key", "box/vllm/cuda", "custom-name.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// The profile lives in a file not named after its key; a broken
			// file holds the key's own name.
			body := "key=\"box/vllm/cuda\"\nhardware=\"box\"\nengine=\"vllm\"\nbackend=\"cuda\"\n[terms]\ndecode_bw_efficiency=0.5\n"
			if err := os.WriteFile(filepath.Join(dir, "custom-name.toml"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fileName("box/vllm/cuda")), []byte("not toml ["), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Remove(dir, tc.key)
			if tc.removed == "" {
				if err == nil {
					t.Fatalf("Remove(%q) removed %s", tc.key, got)
				}
				if ps, _ := Load(dir); len(ps) != 1 {
					t.Errorf("a failed remove deleted a profile")
				}
				return
			}
			if err != nil || filepath.Base(got) != tc.removed {
				t.Fatalf("Remove = %q, %v, want %s", got, err, tc.removed)
			}
			if _, err := os.Stat(filepath.Join(dir, tc.removed)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s still there", tc.removed)
			}
			if _, err := os.Stat(filepath.Join(dir, fileName("box/vllm/cuda"))); err != nil {
				t.Errorf("the other file was removed: %v", err)
			}
		})
	}
}

// TestSaveRedactsSource: an endpoint URL with credentials is saved without
// them (issue 15 item 2).
func TestSaveRedactsSource(t *testing.T) {
	dir := t.TempDir()
	p := endpointFit(0.7, 0.4)
	p.Source = "calibrate endpoint https://bob:hunter2pw@h:8000?api_key=sk-query-secret"
	path, err := Save(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, secret := range []string{"hunter2pw", "sk-query-secret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("saved file holds %q:\n%s", secret, b)
		}
	}
}

// TestLoadRefusesFIFO: a FIFO among the calibrations is reported, not read
// (issue 15 item 9).
func TestLoadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "fifo.toml"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan []error, 1)
	go func() { _, errs := Load(dir); done <- errs }()
	select {
	case errs := <-done:
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a regular file") {
			t.Errorf("errors %v, want the FIFO refused", errs)
		}
	case <-time.After(time.Minute): // a hang, not a slow machine
		t.Fatal("Load blocked on a FIFO")
	}
}

// FuzzLoadProfile: a calibration file is outside input (hand-edited,
// copied between machines). Any content loads as a profile no device
// rejects, or is reported naming the file; nothing panics.
func FuzzLoadProfile(f *testing.F) {
	dir := f.TempDir()
	good, err := Save(dir, hostRun(300, 20, 0.05))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	f.Add(b)
	f.Add([]byte("key=\"a/b/c\"\nhardware=\"a\"\nengine=\"b\"\n[terms]\nprefill_compute_efficiency=5.0\n[fit]\nprefill_points=3\n"))
	f.Add([]byte("key=\"a/b/c\"\nhardware=\"a\"\nengine=\"b\"\n[terms]\nbandwidth_gb_s=nan\n"))
	f.Add([]byte("key = [unterminated"))
	f.Add([]byte("key=\"a/vllm/cuda\"\nhardware=\"a\"\nengine=\"vllm\"\nbackend=\"cuda\"\n[terms]\ndecode_scale=0.8\n[terms.model_decode_scale]\n\"Qwen/Qwen3-8B\"=0.9\n\"\"=30\n[fit]\ndecode_points=4\n"))
	f.Add([]byte("key=\"a/vllm/cuda\"\nhardware=\"a\"\nengine=\"vllm\"\n[terms]\n[terms.model_decode_scale]\nm=1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "/calibrations/cal.toml"
		p, err := decodeProfile(path, data)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if p.Key == "" || p.Hardware == "" || p.Engine == "" || Fatal(Check(p, planner.Hardware{})) {
			t.Fatalf("loaded an incomplete or impossible profile %+v", p)
		}
	})
}

// An imported calibration carries a factor on the fitted decode efficiency
// and no absolute one: that is not a failed fit. A factor at either end of
// the range the fit searches is refused.
func TestCheckDecodeScale(t *testing.T) {
	imported := func(k float64) Profile {
		return Profile{Hardware: box.ID, Engine: "vllm", Backend: "cuda", Source: "calibrate import result.json",
			Terms: planner.Calibrated{DecodeScale: k}, Fit: planner.CalFit{DecodePoints: 4}}
	}
	for _, tc := range []struct {
		k     float64
		fatal bool
	}{{0.7, false}, {3, false}, {planner.MinDecodeScale, true}, {planner.MaxDecodeScale, true}, {0.0501, true}, {-1, true}} {
		ps := Check(imported(tc.k), box)
		if Fatal(ps) != tc.fatal {
			t.Errorf("factor %g: problems %v, want fatal %v", tc.k, ps, tc.fatal)
		}
		if !tc.fatal && len(ps) > 0 {
			t.Errorf("factor %g: %v", tc.k, ps)
		}
	}
}

// Per-model factors refine a setup's factor: they need one, each names a
// model and lies in the same range, there are boundedly many, and a
// saved profile keeps them (TOML round trip) and compares them.
func TestCheckModelDecodeScale(t *testing.T) {
	withModels := func(k float64, ms map[string]float64) Profile {
		return Profile{Hardware: box.ID, Engine: "vllm", Backend: "cuda", Source: "calibrate import sweep.json",
			Terms: planner.Calibrated{DecodeScale: k, ModelDecodeScale: ms}, Fit: planner.CalFit{DecodePoints: 6}}
	}
	many := map[string]float64{}
	for i := range planner.MaxCalibrationModels + 1 {
		many[fmt.Sprintf("org/model-%d", i)] = 1
	}
	for _, tc := range []struct {
		name  string
		p     Profile
		fatal bool
	}{
		{"two models", withModels(0.8, map[string]float64{"meta-llama/Llama-3.1-8B-Instruct": 0.7, "Qwen/Qwen3-8B": 0.9}), false},
		{"no setup factor", withModels(0, map[string]float64{"Qwen/Qwen3-8B": 0.9}), true},
		{"a factor at an end", withModels(0.8, map[string]float64{"Qwen/Qwen3-8B": planner.MaxDecodeScale}), true},
		{"NaN", withModels(0.8, map[string]float64{"Qwen/Qwen3-8B": math.NaN()}), true},
		{"a blank model", withModels(0.8, map[string]float64{" ": 0.9}), true},
		{"too many models", withModels(0.8, many), true},
	} {
		if ps := Check(tc.p, box); Fatal(ps) != tc.fatal || (!tc.fatal && len(ps) > 0) {
			t.Errorf("%s: problems %v, want fatal %v", tc.name, ps, tc.fatal)
		}
	}
	dir := t.TempDir()
	first := withModels(0.8, map[string]float64{"meta-llama/Llama-3.1-8B-Instruct": 0.7, "Qwen/Qwen3-8B": 0.9})
	if _, _, err := SaveChecked(dir, first, SaveOptions{Hardware: box}); err != nil {
		t.Fatal(err)
	}
	ps, errs := Load(dir)
	if len(errs) != 0 || len(ps) != 1 || !reflect.DeepEqual(ps[0].Terms, first.Terms) {
		t.Fatalf("load: %+v %v, want terms %+v", ps, errs, first.Terms)
	}
	second := withModels(0.8, map[string]float64{"Qwen/Qwen3-8B": 0.9, "google/gemma-3-12b-it": 1.2})
	_, cmp, err := SaveChecked(dir, second, SaveOptions{Hardware: box})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range cmp.Changes {
		got = append(got, fmt.Sprintf("%s %g→%g", ch.Term, ch.Old, ch.New))
	}
	want := []string{"decode_scale google/gemma-3-12b-it 0→1.2", "decode_scale meta-llama/Llama-3.1-8B-Instruct 0.7→0"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
}
