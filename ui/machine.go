package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// probeTimeout bounds one probe of the machine.
const probeTimeout = 30 * time.Second

// MachineScreen shows what the probe found: devices, their memory as bars,
// the catalog profile each was matched to, and calibration status.
type MachineScreen struct {
	svc Service
	job job
	now func() time.Time

	title     *widget.Label
	subtitle  *widget.Label
	refresh   *widget.Button
	calibrate *widget.Button
	busy      *widget.Activity
	ram       *memBar
	ramLabel  *widget.Label
	devices   *fyne.Container
	body      *fyne.Container
	calib     *widget.Label
	warnings  *widget.Label
	errLine   errorLabel

	// onMachine is called with every new probe result.
	onMachine func(MachineView)
	// onCalibrate is called by the Calibrate button.
	onCalibrate func()

	machine MachineView // last probe shown (tests)
	content fyne.CanvasObject
}

// NewMachineScreen builds the screen; call Refresh to probe.
func NewMachineScreen(svc Service, opts Options) *MachineScreen {
	s := &MachineScreen{svc: svc, job: opts.job(false), now: opts.now()}
	s.title = heading("This machine")
	s.title.SizeName = theme.SizeNameHeadingText
	s.subtitle = caption("Probing…")
	s.refresh = widget.NewButtonWithIcon("Probe again", theme.ViewRefreshIcon(), s.Refresh)
	s.calibrate = widget.NewButtonWithIcon("Calibrate…", theme.MediaPlayIcon(), func() {
		if s.onCalibrate != nil {
			s.onCalibrate()
		}
	})
	s.busy = widget.NewActivity()
	s.busy.Hide()
	s.ram = newMemBar(18, false)
	s.ramLabel = widget.NewLabel("")
	s.devices = container.NewVBox()
	s.calib = widget.NewLabel("")
	s.calib.Wrapping = fyne.TextWrapWord
	s.warnings = widget.NewLabel("")
	s.warnings.Importance = widget.WarningImportance
	s.warnings.Wrapping = fyne.TextWrapWord
	s.warnings.Hide()
	s.errLine = newErrorLabel()

	header := container.NewBorder(nil, nil, nil, container.NewVBox(container.NewHBox(s.busy, s.refresh)),
		container.NewVBox(s.title, s.subtitle))
	s.body = container.NewVBox(
		s.errLine,
		heading("System memory"),
		s.ram, s.ramLabel,
		widget.NewSeparator(),
		heading("Devices"),
		s.devices,
		widget.NewSeparator(),
		heading("Calibration"),
		container.NewBorder(nil, nil, nil, container.NewVBox(s.calibrate), s.calib),
		s.warnings,
	)
	s.content = container.NewBorder(container.NewPadded(header), nil, nil, nil,
		container.NewVScroll(container.NewPadded(s.body)))
	return s
}

// Content is the screen's root object.
func (s *MachineScreen) Content() fyne.CanvasObject { return s.content }

// Refresh probes the machine off the UI thread.
func (s *MachineScreen) Refresh() {
	s.busy.Show()
	s.busy.Start()
	s.refresh.Disable()
	s.job.now(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		mv, err := s.svc.Machine(ctx)
		return func() {
			s.busy.Stop()
			s.busy.Hide()
			s.refresh.Enable()
			if err != nil {
				s.subtitle.SetText("The probe failed.")
				s.errLine.set(fmt.Errorf("probing this machine: %w", err))
				return
			}
			s.show(mv)
		}
	})
}

// show applies a probe result (UI thread).
func (s *MachineScreen) show(mv MachineView) {
	s.machine = mv
	s.errLine.set(nil)
	name := mv.Name
	if name == "" {
		name = "This machine"
	}
	s.title.SetText(name)
	var sub []string
	for _, x := range []string{mv.CPU, kernelText(mv.Kernel), profileText(mv)} {
		if x != "" {
			sub = append(sub, x)
		}
	}
	s.subtitle.SetText(strings.Join(sub, "  ·  "))
	setUsage(s.ram, s.ramLabel, mv.Memory)

	s.devices.Objects = nil
	if len(mv.Devices) == 0 {
		s.devices.Add(caption("No accelerator found: models run on the CPU from system RAM."))
	}
	for _, d := range mv.Devices {
		s.devices.Add(deviceCard(d))
	}
	s.devices.Refresh()
	s.calib.SetText(calibrationText(mv.Calibration, s.now()))
	s.warnings.SetText(bulletText(mv.Warnings, "• "))
	s.warnings.Hidden = len(mv.Warnings) == 0
	s.warnings.Refresh()
	s.body.Refresh() // the device cards changed its height
	if s.onMachine != nil {
		s.onMachine(mv)
	}
}

func kernelText(k string) string {
	if k == "" {
		return ""
	}
	return "Linux " + k
}

func profileText(mv MachineView) string {
	if mv.Hardware == "" {
		return "no catalog profile"
	}
	return "plans use " + mv.HardwareName
}

// deviceCard shows one device: name, profile match, a bar per memory pool.
func deviceCard(d DeviceView) fyne.CanvasObject {
	match := "Matched to " + d.ProfileName
	if d.Profile != "" && d.Profile != d.ProfileName {
		match += " (" + d.Profile + ")"
	}
	if d.MatchedBy != "" {
		match += " by " + d.MatchedBy
	}
	if d.Generic {
		match = "No catalog entry: generic profile from probed memory. Calibrate for speed figures."
	}
	box := container.NewVBox()
	sub := caption(match)
	if d.Generic {
		sub.Importance = widget.WarningImportance
	}
	box.Add(sub)
	for _, m := range d.Memory {
		bar := newMemBar(14, false)
		l := widget.NewLabel("")
		setUsage(bar, l, m)
		box.Add(container.NewBorder(nil, nil, sizedLabel(string(m.Kind), 90), nil, container.NewVBox(bar, l)))
	}
	if d.Skip != "" {
		box.Add(caption("Left out of plans: " + d.Skip))
	}
	if len(d.Notes) > 0 {
		box.Add(caption(strings.Join(d.Notes, "; ")))
	}
	title := d.Name
	if title == "" {
		title = "Unknown device"
	}
	kind := strings.ToUpper(string(d.Kind))
	if d.Vendor != "" {
		kind = d.Vendor + " " + kind
	}
	return widget.NewCard(title, kind, box)
}

// sizedLabel is a label in a column at least width wide.
func sizedLabel(text string, width float32) fyne.CanvasObject {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return sized(l, fyne.NewSize(width, 0))
}

// setUsage fills a bar and its caption from one memory pool.
func setUsage(bar *memBar, l *widget.Label, m MemoryUse) {
	if !m.UsedKnown {
		bar.set(m.Total, nil)
		l.SetText(fmt.Sprintf("%s in all (use not readable)%s", gib(m.Total), noteSuffix(m.Note)))
		return
	}
	bar.set(m.Total, []memSegment{{"Used", m.Used, palette.weights}})
	l.SetText(fmt.Sprintf("%s used of %s · %s free%s", gib(m.Used), gib(m.Total), gib(max(m.Total-m.Used, 0)), noteSuffix(m.Note)))
}

func noteSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " · " + n
}

// calibrationText says whether and when the machine was calibrated.
func calibrationText(c CalibrationStatus, now time.Time) string {
	if !c.Calibrated {
		return "Not calibrated. Speed figures come from the catalog and published measurements; " +
			"calibrating measures this machine and narrows the error band."
	}
	t := fmt.Sprintf("Calibrated %s", age(now, c.When))
	if c.Source != "" {
		t += " on " + c.Source
	}
	if c.Detail != "" {
		t += ": " + c.Detail
	}
	if now.Sub(c.When) > 30*24*time.Hour {
		t += ". It is over a month old; drivers or engines may have changed since."
	}
	return t
}
