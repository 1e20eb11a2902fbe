package calibrate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

func TestSaveLoadRemove(t *testing.T) {
	dir := t.TempDir()
	p := Profile{Hardware: "generic-cpu", Engine: "llama.cpp", Backend: "cpu", Created: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		Source: "host", Terms: planner.Calibrated{BandwidthGBs: 25.5, TFLOPS: 0.011, DecodeEff: 0.6}}
	path, err := Save(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "generic-cpu__llama.cpp__cpu.toml" {
		t.Errorf("file %s", path)
	}
	ps, errs := Load(dir)
	if len(errs) != 0 || len(ps) != 1 || !reflect.DeepEqual(ps[0].Terms, p.Terms) || ps[0].Key != "generic-cpu/llama.cpp/cpu" {
		t.Fatalf("load: %+v %v", ps, errs)
	}
	perf := planner.DefaultPerfParams()
	Apply(&perf, ps)
	if perf.Calibrations["generic-cpu/llama.cpp/cpu"].BandwidthGBs != 25.5 {
		t.Error("apply")
	}
	if _, err := Remove(dir, "generic-cpu/llama.cpp"); !errors.Is(err, ErrNoProfile) {
		t.Fatalf("removing by a key prefix: %v, want ErrNoProfile", err)
	}
	if got, err := Remove(dir, "generic-cpu/llama.cpp/cpu"); err != nil || got != path {
		t.Fatalf("Remove = %q, %v, want %s", got, err, path)
	}
	if ps, _ := Load(dir); len(ps) != 0 {
		t.Error("not removed")
	}
	if _, err := Remove(dir, "nope"); err == nil {
		t.Error("removing a missing key must fail")
	}
}

func TestLoadSkipsBadFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.toml"), []byte("key = [unterminated"), 0o644)
	os.WriteFile(filepath.Join(dir, "neg.toml"), []byte("key=\"a/b/c\"\nhardware=\"a\"\nengine=\"b\"\n[terms]\nbandwidth_gb_s = -3\n"), 0o644)
	Save(dir, Profile{Hardware: "h", Engine: "vllm", Backend: "cuda", Terms: planner.Calibrated{DecodeEff: 0.5}})
	ps, errs := Load(dir)
	if len(ps) != 1 || len(errs) != 2 {
		t.Fatalf("want 1 good profile and 2 errors, got %d and %v", len(ps), errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), dir) {
			t.Errorf("error should name the file: %v", e)
		}
	}
}

// A save that fails midway leaves the previous profile intact.
func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	old := Profile{Hardware: "h", Engine: "vllm", Backend: "cuda", Terms: planner.Calibrated{DecodeEff: 0.5}}
	path, _ := Save(dir, old)
	before, _ := os.ReadFile(path)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Skip(err)
	}
	defer os.Chmod(dir, 0o755)
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	if _, err := Save(dir, Profile{Hardware: "h", Engine: "vllm", Backend: "cuda", Terms: planner.Calibrated{DecodeEff: 0.9}}); err == nil {
		t.Fatal("save into a read-only dir must fail")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("previous profile changed")
	}
}
