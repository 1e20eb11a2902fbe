package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

func TestMachineShowsProbe(t *testing.T) {
	win, _ := newTestWindow(t)
	s := win.Machine
	s.Refresh()
	win.wait()
	if s.title.Text != "Example Workstation" {
		t.Errorf("title %q", s.title.Text)
	}
	if !strings.Contains(s.subtitle.Text, "AMD Ryzen 9 7950X") || !strings.Contains(s.subtitle.Text, "plans use NVIDIA GeForce RTX 4090") {
		t.Errorf("subtitle %q", s.subtitle.Text)
	}
	if len(s.devices.Objects) != 1 {
		t.Fatalf("%d device cards, want 1", len(s.devices.Objects))
	}
	if got := s.ramLabel.Text; !strings.Contains(got, "21.0 GiB used of 64.0 GiB") {
		t.Errorf("RAM caption %q", got)
	}
	if got := s.calib.Text; !strings.HasPrefix(got, "Calibrated 3 days ago on host") {
		t.Errorf("calibration %q, want the age from the fixed clock", got)
	}
	if !s.warnings.Visible() || !strings.Contains(s.warnings.Text, "SMBIOS") {
		t.Errorf("warnings %v %q", s.warnings.Visible(), s.warnings.Text)
	}
	// The probe relabels "This machine" on the other screens.
	if got := win.CanRun.hardware.sel.Selected; got != "This machine (NVIDIA GeForce RTX 4090)" {
		t.Errorf("Can I run it? hardware option %q", got)
	}
	test.AssertRendersToMarkup(t, "machine.xml", win.Canvas())
}

func TestMachineCalibrateButtonSwitchesTab(t *testing.T) {
	win, _ := newTestWindow(t)
	win.Machine.Refresh()
	win.wait()
	test.Tap(win.Machine.calibrate)
	if got := win.Tabs.SelectedIndex(); got != TabCalibrate {
		t.Errorf("Calibrate… selected tab %d, want %d", got, TabCalibrate)
	}
}

func TestMachineProbeErrorInline(t *testing.T) {
	win, svc := newTestWindow(t)
	svc.machineErr = errors.New("reading /sys: permission denied")
	test.Tap(win.Machine.refresh)
	win.wait()
	s := win.Machine
	if !s.errLine.Visible() || !strings.Contains(s.errLine.Text, "permission denied") {
		t.Fatalf("probe error: %v %q", s.errLine.Visible(), s.errLine.Text)
	}
	if s.refresh.Disabled() {
		t.Error("Probe again stays disabled after a failure")
	}
	svc.machineErr = nil
	test.Tap(s.refresh)
	win.wait()
	if s.errLine.Visible() {
		t.Errorf("error still shown after a good probe: %q", s.errLine.Text)
	}
}

func TestMachineUsageUnknown(t *testing.T) {
	bar := newMemBar(10, false)
	l := newErrorLabel()
	setUsage(bar, l.Label, MemoryUse{Kind: MemGTT, Total: 8 << 30})
	if len(bar.segs) != 0 || !strings.Contains(l.Text, "use not readable") {
		t.Errorf("unknown use: segments %v, caption %q", bar.segs, l.Text)
	}
}
