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

// An endpoint or a benchmark output: only that target's entry is enabled,
// an empty entry and an unreachable server or missing file are errors,
// and a good one calibrates; back on the host, the entry is disabled.
func TestCalibrateTargetErrors(t *testing.T) {
	for _, tc := range []struct {
		target              string
		entry, other        func(*CalibrateScreen) *entry
		emptyErr            string
		bad, badErr         string
		good, summaryPrefix string
	}{
		{targetEndpoint, func(s *CalibrateScreen) *entry { return s.url }, func(s *CalibrateScreen) *entry { return s.file }, "URL",
			"http://refused:1", "connection refused", "http://127.0.0.1:8000", "Calibrated http://127.0.0.1:8000"},
		{targetImport, func(s *CalibrateScreen) *entry { return s.file }, func(s *CalibrateScreen) *entry { return s.url }, "benchmark output",
			"/tmp/missing.json", "no such file", "/tmp/bench.json", "Calibrated /tmp/bench.json"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			win, _ := newTestWindow(t)
			s := win.Calibrate
			e := tc.entry(s)
			if !e.Disabled() {
				t.Fatal("the entry should start disabled (host selected)")
			}
			s.target.SetSelected(tc.target)
			if e.Disabled() || !tc.other(s).Disabled() {
				t.Fatalf("entry disabled %v, the other target's entry disabled %v", e.Disabled(), tc.other(s).Disabled())
			}
			test.Tap(s.run)
			win.wait()
			if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, tc.emptyErr) {
				t.Errorf("empty: error %q", s.errLine.Text)
			}
			test.Type(e, tc.bad)
			test.Tap(s.run)
			win.wait()
			if !strings.Contains(s.errLine.Text, tc.badErr) || s.step.Text != "Failed." {
				t.Errorf("%s: error %q, step %q", tc.bad, s.errLine.Text, s.step.Text)
			}
			setText(e, tc.good)
			test.Tap(s.run)
			win.wait()
			if s.errLine.Visible() || !strings.HasPrefix(s.summary.Text, tc.summaryPrefix) {
				t.Errorf("%s: error %q, summary %q", tc.good, s.errLine.Text, s.summary.Text)
			}
			s.target.SetSelected(targetHost)
			if !e.Disabled() {
				t.Error("the entry should be disabled for the host")
			}
		})
	}
}
