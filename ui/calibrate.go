package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Calibration targets offered by the radio group.
const (
	targetHost     = "This machine (host)"
	targetEndpoint = "A running server (endpoint)"
	targetImport   = "A benchmark output you have (file)"
)

// CalibrateScreen runs a host, endpoint or benchmark-file calibration with a progress bar
// and Cancel, then shows the fitted parameters and predicted against
// measured.
type CalibrateScreen struct {
	svc Service
	job job
	now func() time.Time
	do  func(func()) // runs on the UI thread

	target   *widget.RadioGroup
	url      *entry
	file     *entry
	run      *widget.Button
	cancel   *widget.Button
	progress *widget.ProgressBar
	step     *widget.Label
	errLine  errorLabel
	params   *dataTable
	summary  *widget.Label
	notes    *widget.Label
	chart    *chartView
	empty    fyne.CanvasObject
	results  fyne.CanvasObject

	// onCalibrated is called after a successful run.
	onCalibrated func(CalibrationView)

	stop    context.CancelFunc
	running bool
	view    CalibrationView
	content fyne.CanvasObject
}

// NewCalibrateScreen builds the screen.
func NewCalibrateScreen(svc Service, opts Options) *CalibrateScreen {
	s := &CalibrateScreen{svc: svc, job: opts.job(false), now: opts.now(), do: opts.do}
	s.url = newEntry()
	s.url.SetPlaceHolder("http://127.0.0.1:8000")
	s.url.Disable()
	s.file = newEntry()
	s.file.SetPlaceHolder("/path/to/bench.json")
	s.file.Disable()
	s.target = widget.NewRadioGroup([]string{targetHost, targetEndpoint, targetImport}, func(v string) {
		for _, e := range []struct {
			w  *entry
			on bool
		}{{s.url, v == targetEndpoint}, {s.file, v == targetImport}} {
			if e.on {
				e.w.Enable()
			} else {
				e.w.Disable()
			}
		}
	})
	s.target.SetSelected(targetHost)
	s.target.Required = true
	s.run = widget.NewButtonWithIcon("Run calibration", theme.MediaPlayIcon(), s.Run)
	s.run.Importance = widget.HighImportance
	s.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), s.Cancel)
	s.cancel.Disable()
	s.progress = widget.NewProgressBar()
	s.step = caption("Not running.")
	s.errLine = newErrorLabel()
	s.params = newDataTable([]string{"Parameter", "Value", "Note"}, 1)
	s.summary = widget.NewLabel("")
	s.summary.TextStyle.Bold = true
	s.notes = caption("")
	s.chart = newChartView("No measurements.", fyne.NewSize(320, 260))

	left := container.NewVBox(
		section("Measure", s.target, form(formRow("Server URL", s.url), formRow("Benchmark file", s.file))),
		caption("Host calibration times memory bandwidth and matrix math on this machine. "+
			"Endpoint calibration sends timed requests to a running inference server (vLLM, llama-server, Ollama, SGLang, TGI). "+
			"A benchmark output (llama-bench, llama-batched-bench, vllm bench serve, happy_vllm, TGI) calibrates the setups it measured "+
			"from their decode rows; a file that does not name its device is taken as this machine's."),
		container.NewHBox(s.run, s.cancel),
		s.progress,
		s.step,
		s.errLine,
	)
	s.results = container.NewBorder(s.summary, s.notes, nil, nil,
		container.NewGridWithColumns(2, sized(s.params.content, fyne.NewSize(300, 200)), s.chart))
	s.empty, _ = emptyState("No calibration run yet. Choose what to measure and press Run calibration.")
	s.results.Hide()
	split := container.NewHSplit(container.NewVScroll(container.NewPadded(left)),
		container.NewPadded(container.NewStack(s.empty, s.results)))
	split.SetOffset(0.32)
	s.content = split
	return s
}

// Content is the screen's root object.
func (s *CalibrateScreen) Content() fyne.CanvasObject { return s.content }

// Run starts a calibration off the UI thread; a second Run while one is
// going is ignored.
func (s *CalibrateScreen) Run() {
	if s.running {
		return
	}
	endpoint := s.target.Selected == targetEndpoint
	imported := s.target.Selected == targetImport
	url := strings.TrimSpace(s.url.Text)
	file := strings.TrimSpace(s.file.Text)
	if endpoint && url == "" {
		s.errLine.set(errors.New("enter the server's URL, e.g. http://127.0.0.1:8000"))
		return
	}
	if imported && file == "" {
		s.errLine.set(errors.New("enter the path of a benchmark output, e.g. /home/me/bench.json"))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.running = cancel, true
	s.errLine.set(nil)
	s.run.Disable()
	s.cancel.Enable()
	s.target.Disable()
	s.progress.SetValue(0)
	s.step.SetText("Starting…")
	progress := func(f float64, step string) {
		s.do(func() {
			if s.running {
				s.progress.SetValue(min(max(f, 0), 1))
				s.step.SetText(step)
			}
		})
	}
	s.job.now(func() func() {
		var v CalibrationView
		var err error
		switch {
		case endpoint:
			v, err = s.svc.CalibrateEndpoint(ctx, url, progress)
		case imported:
			v, err = s.svc.CalibrateImport(ctx, file, progress)
		default:
			v, err = s.svc.CalibrateHost(ctx, progress)
		}
		cancelled := ctx.Err() != nil
		cancel()
		return func() { s.finish(v, err, cancelled) }
	})
}

// Cancel stops a running calibration.
func (s *CalibrateScreen) Cancel() {
	if s.stop != nil && s.running {
		s.stop()
		s.step.SetText("Cancelling…")
		s.cancel.Disable()
	}
}

// finish applies a run's result (UI thread).
func (s *CalibrateScreen) finish(v CalibrationView, err error, cancelled bool) {
	s.running, s.stop = false, nil
	s.run.Enable()
	s.cancel.Disable()
	s.target.Enable()
	switch {
	case cancelled:
		s.progress.SetValue(0)
		s.step.SetText("Cancelled. Nothing was saved.")
		return
	case err != nil:
		s.step.SetText("Failed.")
		s.errLine.set(err)
		return
	}
	s.progress.SetValue(1)
	s.step.SetText("Done " + age(s.now(), v.When) + ".")
	s.show(v)
	if s.onCalibrated != nil {
		s.onCalibrated(v)
	}
}

// show displays a calibration result (UI thread).
func (s *CalibrateScreen) show(v CalibrationView) {
	s.view = v
	s.empty.Hide()
	s.results.Show()
	cells := make([][]string, len(v.Params))
	for i, p := range v.Params {
		cells[i] = []string{p.Name, p.Value, p.Note}
	}
	s.params.set(cells, nil)
	sum := fmt.Sprintf("Calibrated %s: %d measurements", v.Target, len(v.Points))
	if v.MdAPE > 0 {
		sum += fmt.Sprintf(", the model's median error on them %.1f%%", v.MdAPE)
	}
	s.summary.SetText(sum)
	s.notes.SetText(bulletText(v.Notes, "• "))
	pts := v.Points
	s.chart.set(func(w, h int, st chartStyle) (image.Image, error) { return scatterChart(pts, w, h, st) })
}
