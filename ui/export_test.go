package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// planRow returns the fake service's best plan for the 8B model.
func planRow(t *testing.T, svc *fakeService) PlanRow {
	t.Helper()
	in := PlanInput{Scenario: ScenarioInput{Model: model(t, svc, "8B")}, MaxTTFT: 2000, MaxTPOT: 100}
	in.Workload.Prompt, in.Workload.Gen, in.Workload.Concurrency = 1024, 256, 8
	v, err := svc.Plan(in)
	if err != nil || len(v.Rows) == 0 {
		t.Fatalf("plan: %v, %d rows", err, len(v.Rows))
	}
	return v.Rows[0]
}

func TestExportEmptyState(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Tabs.SelectIndex(TabExport)
	if !win.Export.empty.Visible() || win.Export.results.Visible() {
		t.Fatal("Export with no plan should show its empty state")
	}
	test.AssertRendersToMarkup(t, "export_empty.xml", win.Canvas())
}

func TestExportCopyAndSave(t *testing.T) {
	win, svc := newTestWindow(t)
	s := win.Export
	win.Tabs.SelectIndex(TabExport)
	r := planRow(t, svc)
	s.SetRow(r)
	win.wait()
	if s.command.Text != r.Launch {
		t.Errorf("command %q, want %q", s.command.Text, r.Launch)
	}
	if !strings.HasPrefix(s.preview.Text, "engine = ") {
		t.Errorf("TOML preview %q", s.preview.Text)
	}

	test.Tap(s.copyBtn)
	if got := fyne.CurrentApp().Clipboard().Content(); got != r.Launch {
		t.Errorf("clipboard %q, want the launch command", got)
	}
	if !strings.Contains(s.status.Text, "copied") {
		t.Errorf("status %q", s.status.Text)
	}

	s.format.SetSelected("JSON")
	win.wait()
	if !strings.Contains(s.preview.Text, `"command": `) {
		t.Errorf("JSON preview %q", s.preview.Text)
	}
	var savedName string
	var savedData []byte
	s.onSave = func(name string, data []byte) { savedName, savedData = name, data }
	test.Tap(s.save)
	if !strings.HasPrefix(savedName, "headroom-llama-3.1-8b-instruct-") || !strings.HasSuffix(savedName, ".json") || string(savedData) != s.preview.Text {
		t.Errorf("saved %q (%d bytes)", savedName, len(savedData))
	}
	s.Saved("/tmp/plan.json", nil)
	if s.status.Text != "Saved /tmp/plan.json." {
		t.Errorf("status %q", s.status.Text)
	}
	s.format.SetSelected("Shell script")
	win.wait()
	if !strings.HasPrefix(s.preview.Text, "#!/bin/sh") || !strings.HasSuffix(s.fileName(), ".sh") {
		t.Errorf("shell preview %q, file %q", s.preview.Text, s.fileName())
	}
	test.AssertRendersToMarkup(t, "export.xml", win.Canvas())
}

func TestExportSaveDialog(t *testing.T) {
	win, svc := newTestWindow(t)
	win.Tabs.SelectIndex(TabExport)
	win.Export.SetRow(planRow(t, svc))
	win.wait()
	test.Tap(win.Export.save)
	if win.Canvas().Overlays().Top() == nil {
		t.Error("Save… did not open a file dialog")
	}
}
