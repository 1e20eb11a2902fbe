package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

func TestCalibrateHostRun(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.Calibrate
	win.Tabs.SelectIndex(TabCalibrate)
	if !s.empty.Visible() {
		t.Fatal("Calibrate should start with its empty state")
	}
	before := svc.calls.Load()
	test.Tap(s.run)
	win.wait()
	if s.progress.Value != 1 || !strings.HasPrefix(s.step.Text, "Done") {
		t.Errorf("after the run: progress %v, step %q", s.progress.Value, s.step.Text)
	}
	if !strings.HasPrefix(s.summary.Text, "Calibrated host: 3 measurements, the model's median error on them 8.4%") {
		t.Errorf("summary %q", s.summary.Text)
	}
	if got := s.params.text(0, 1); got != "0.81" {
		t.Errorf("first parameter %q", got)
	}
	if s.chart.draw == nil {
		t.Fatal("no predicted-vs-measured chart")
	}
	if img := s.chart.generate(320, 260); inked(img) < 0.01 {
		t.Error("scatter chart is blank")
	}
	if win.Machine.machine.Name == "" || svc.calls.Load() < before+2 {
		t.Error("a finished calibration should re-probe the machine for its status")
	}
	if s.run.Disabled() || !s.cancel.Disabled() {
		t.Error("after the run Run should be enabled and Cancel disabled")
	}
	test.AssertRendersToMarkup(t, "calibrate.xml", win.Canvas())
}

func TestCalibrateCancel(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.Calibrate
	svc.hold = make(chan struct{})
	s.Run()
	if !s.running || s.cancel.Disabled() || !s.run.Disabled() {
		t.Fatalf("while running: running %v, cancel disabled %v, run disabled %v", s.running, s.cancel.Disabled(), s.run.Disabled())
	}
	s.Run() // a second Run while running is ignored
	test.Tap(s.cancel)
	win.wait()
	if s.running || s.step.Text != "Cancelled. Nothing was saved." || s.results.Visible() {
		t.Errorf("after Cancel: running %v, step %q, results shown %v", s.running, s.step.Text, s.results.Visible())
	}
	if s.errLine.Visible() {
		t.Errorf("a cancel is not an error: %q", s.errLine.Text)
	}
}

func TestCalibrateEndpointErrors(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Calibrate
	s.target.SetSelected(targetEndpoint)
	if s.url.Disabled() {
		t.Fatal("the URL entry should be enabled for an endpoint")
	}
	test.Tap(s.run)
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "URL") {
		t.Errorf("no URL: error %q", s.errLine.Text)
	}
	test.Type(s.url, "http://refused:1")
	test.Tap(s.run)
	win.wait()
	if !strings.Contains(s.errLine.Text, "connection refused") || s.step.Text != "Failed." {
		t.Errorf("refused: error %q, step %q", s.errLine.Text, s.step.Text)
	}
	setText(s.url, "http://127.0.0.1:8000")
	test.Tap(s.run)
	win.wait()
	if s.errLine.Visible() || !strings.HasPrefix(s.summary.Text, "Calibrated http://127.0.0.1:8000") {
		t.Errorf("good endpoint: error %q, summary %q", s.errLine.Text, s.summary.Text)
	}
	s.target.SetSelected(targetHost)
	if !s.url.Disabled() {
		t.Error("the URL entry should be disabled for the host")
	}
}

// A benchmark output: the file entry is enabled only for it, an empty
// path and a missing file are errors, a file calibrates.
func TestCalibrateImportScreen(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Calibrate
	if !s.file.Disabled() {
		t.Fatal("the file entry should start disabled")
	}
	s.target.SetSelected(targetImport)
	if s.file.Disabled() || !s.url.Disabled() {
		t.Fatalf("import: file entry disabled %v, URL entry disabled %v", s.file.Disabled(), s.url.Disabled())
	}
	test.Tap(s.run)
	win.wait()
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "benchmark output") {
		t.Errorf("no file: error %q", s.errLine.Text)
	}
	test.Type(s.file, "/tmp/missing.json")
	test.Tap(s.run)
	win.wait()
	if !strings.Contains(s.errLine.Text, "no such file") || s.step.Text != "Failed." {
		t.Errorf("missing file: error %q, step %q", s.errLine.Text, s.step.Text)
	}
	setText(s.file, "/tmp/bench.json")
	test.Tap(s.run)
	win.wait()
	if s.errLine.Visible() || !strings.HasPrefix(s.summary.Text, "Calibrated /tmp/bench.json") {
		t.Errorf("a file: error %q, summary %q", s.errLine.Text, s.summary.Text)
	}
}
