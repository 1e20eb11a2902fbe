package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ExportScreen shows the chosen plan's launch command with a Copy button,
// and saves the plan as TOML, JSON or a shell script.
type ExportScreen struct {
	svc Service
	job job

	summary *widget.Label
	command *widget.Label
	copyBtn *widget.Button
	format  *choiceSelect
	preview *widget.Label
	save    *widget.Button
	status  *widget.Label
	errLine errorLabel
	empty   fyne.CanvasObject
	results fyne.CanvasObject

	// clipboard receives the command on Copy.
	clipboard fyne.Clipboard
	// onSave asks the window to save data under a suggested file name.
	onSave func(name string, data []byte)

	row     PlanRow
	hasRow  bool
	data    []byte // the current format's bytes
	content fyne.CanvasObject
}

// NewExportScreen builds the screen; it is empty until SetRow.
func NewExportScreen(svc Service, opts Options) *ExportScreen {
	s := &ExportScreen{svc: svc, job: opts.job(false)}
	s.summary = widget.NewLabel("")
	s.summary.Wrapping = fyne.TextWrapWord
	s.summary.TextStyle.Bold = true
	s.command = monoLabel()
	s.copyBtn = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), s.Copy)
	labels := make([]string, len(ExportFormats))
	for i, f := range ExportFormats {
		labels[i] = f.Label
	}
	s.format = newChoiceSelect(labels, func(string) { s.render() })
	s.preview = monoLabel()
	s.save = widget.NewButtonWithIcon("Save…", theme.DocumentSaveIcon(), s.Save)
	s.save.Importance = widget.HighImportance
	s.status = widget.NewLabel("")
	s.errLine = newErrorLabel()

	cmdBox := container.NewBorder(nil, nil, nil, container.NewVBox(s.copyBtn), s.command)
	s.results = container.NewBorder(
		container.NewVBox(s.summary, heading("Launch command"), cmdBox, widget.NewSeparator(),
			container.NewHBox(widget.NewLabel("Save as"), s.format, s.save, s.status), s.errLine),
		nil, nil, nil,
		container.NewVScroll(s.preview),
	)
	s.empty, _ = emptyState("No plan chosen yet. Choose a row on the Plan tab and press Export this plan.")
	s.results.Hide()
	s.content = container.NewPadded(container.NewStack(s.empty, s.results))
	s.format.SetSelectedIndex(0)
	return s
}

// monoLabel is selectable monospace text that breaks long lines.
func monoLabel() *widget.Label {
	l := widget.NewLabel("")
	l.TextStyle.Monospace = true
	l.Wrapping = fyne.TextWrapBreak
	l.Selectable = true
	return l
}

// Content is the screen's root object.
func (s *ExportScreen) Content() fyne.CanvasObject { return s.content }

// SetRow makes r the plan to export.
func (s *ExportScreen) SetRow(r PlanRow) {
	s.row, s.hasRow = r, true
	s.empty.Hide()
	s.results.Show()
	s.summary.SetText(fmt.Sprintf("%s on %s: %s, %s weights, KV %s, %s × %s context · %s tok/s each, %s in all",
		modelName(r.Scenario.Model), hardwareName(r), r.Engine, r.Quant, r.KV, usersText(r.Concurrency), tokens(r.Context),
		tps(r.PerUser), tps(r.Total)))
	cmd := r.Launch
	if cmd == "" {
		cmd = "(no launch command for this engine)"
	}
	s.command.SetText(cmd)
	s.copyBtn.Enable()
	if r.Launch == "" {
		s.copyBtn.Disable()
	}
	s.status.SetText("")
	s.render()
}

func hardwareName(r PlanRow) string {
	h := r.Scenario.Hardware
	n := h.Name
	if n == "" {
		n = h.ID
	}
	if r.Scenario.Devices > 1 {
		n = fmt.Sprintf("%d × %s", r.Scenario.Devices, n)
	}
	return n
}

// formatIndex is the chosen export format.
func (s *ExportScreen) formatIndex() int {
	i := s.format.SelectedIndex()
	if i < 0 || i >= len(ExportFormats) {
		return 0
	}
	return i
}

// render exports the row in the chosen format off the UI thread.
func (s *ExportScreen) render() {
	if !s.hasRow {
		return
	}
	r, f := s.row, ExportFormats[s.formatIndex()]
	s.save.Disable()
	s.job.now(func() func() {
		data, err := s.svc.Export(r, f.ID)
		return func() {
			if err != nil {
				s.data = nil
				s.preview.SetText("")
				s.errLine.set(fmt.Errorf("export as %s: %w", f.Label, err))
				return
			}
			s.errLine.set(nil)
			s.data = data
			s.preview.SetText(string(data))
			s.save.Enable()
		}
	})
}

// Copy puts the launch command on the clipboard.
func (s *ExportScreen) Copy() {
	if !s.hasRow || s.row.Launch == "" || s.clipboard == nil {
		return
	}
	s.clipboard.SetContent(s.row.Launch)
	s.status.SetText("Launch command copied to the clipboard.")
}

// Save asks the window to save the current format's bytes.
func (s *ExportScreen) Save() {
	if len(s.data) == 0 || s.onSave == nil {
		return
	}
	s.onSave(s.fileName(), s.data)
}

// fileName suggests a name: headroom-<model>-<engine><ext>.
func (s *ExportScreen) fileName() string {
	clean := func(x string) string {
		if i := strings.LastIndex(x, "/"); i >= 0 {
			x = x[i+1:]
		}
		x = strings.ToLower(x)
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
				return r
			}
			return '-'
		}, x)
	}
	name := "headroom-" + clean(modelName(s.row.Scenario.Model)) + "-" + clean(string(s.row.Scenario.Engine.ID))
	return name + ExportFormats[s.formatIndex()].Ext
}

// Saved reports where the window saved the plan (or why it could not).
func (s *ExportScreen) Saved(where string, err error) {
	if err != nil {
		s.errLine.set(fmt.Errorf("saving: %w", err))
		return
	}
	s.errLine.set(nil)
	s.status.SetText("Saved " + where + ".")
}
