package ui

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/headroom-planner/headroom/planner"
)

// ScreenshotOptions say what Screenshots renders.
type ScreenshotOptions struct {
	// Dir receives the PNG files (created if missing).
	Dir string
	// Size is the window size (0 = 1280 × 800).
	Size fyne.Size
	// Model is the catalog id of the model shown on every screen.
	Model string
	// Compare lists the hardware ids ticked on Compare hardware besides
	// this machine.
	Compare []string
	// Dark lists the tabs (TabMachine …) also rendered in the dark theme.
	Dark []int
	// Now is the clock for ages (nil = time.Now).
	Now func() time.Time
	// CalibrateFile, when set, is a benchmark output the Calibrate
	// screen imports before its screenshot, so that it shows a result.
	// The import saves a calibration through the service: give the
	// service a scratch calibration directory (the tests do; `headroom
	// gui --screenshots` leaves it unset, so the user's profile is never
	// written).
	CalibrateFile string
}

// screenshotNames are the file names of the tabs, in tab order.
var screenshotNames = []string{"machine", "canrun", "plan", "compare", "calibrate", "export"}

// Screenshots renders every screen over svc to PNG files in opts.Dir and
// returns their paths: each tab in the light theme, and the tabs in
// opts.Dark in the dark theme. It sets a's theme for each pass and leaves
// NewTheme() in place.
//
// a must paint in software: an app built with -tags ci, or Fyne's test
// app. The windows' background results are applied on the calling
// goroutine (a uiQueue), so that one goroutine alone touches the widgets.
func Screenshots(a fyne.App, svc Service, opts ScreenshotOptions) ([]string, error) {
	if opts.Size.IsZero() {
		opts.Size = fyne.NewSize(1280, 800)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("screenshots: %w", err)
	}
	m, err := svc.Catalog().FindModel(opts.Model)
	if err != nil {
		return nil, fmt.Errorf("screenshots: %w", err)
	}
	var paths []string
	passes := []struct {
		variant fyne.ThemeVariant
		suffix  string
		tabs    []int
	}{
		{theme.VariantLight, "", []int{TabMachine, TabCanRun, TabPlan, TabCompare, TabCalibrate, TabExport}},
		{theme.VariantDark, "-dark", opts.Dark},
	}
	defer a.Settings().SetTheme(NewTheme())
	for _, p := range passes {
		if len(p.tabs) == 0 {
			continue
		}
		ps, err := screenshotPass(a, svc, m, opts, p.variant, p.suffix, p.tabs)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// screenshotPass renders tabs in one theme variant with a fresh window.
func screenshotPass(a fyne.App, svc Service, m planner.Model, opts ScreenshotOptions, v fyne.ThemeVariant, suffix string, tabs []int) ([]string, error) {
	a.Settings().SetTheme(NewThemeVariant(v))
	win := New(a, svc, Options{Now: opts.Now, queue: make(uiQueue), Stateless: true})
	win.Resize(opts.Size)
	win.Show()
	defer win.Close()
	win.wait()
	win.demo(m, opts)
	var paths []string
	for _, tab := range tabs {
		win.Tabs.SelectIndex(tab)
		win.wait()
		img := win.Canvas().Capture()
		path := filepath.Join(opts.Dir, fmt.Sprintf("%d-%s%s.png", tab+1, screenshotNames[tab], suffix))
		if err := writePNG(path, img); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// demo puts the window in a state worth showing: the model chosen, a few
// users, devices ticked for comparison, and the best plan exported.
func (win *Window) demo(m planner.Model, opts ScreenshotOptions) {
	win.CanRun.picker.choose(m)
	win.CanRun.context.SetText("8k")
	win.CanRun.users.SetText("4")
	win.Compare.SetDevices(append([]string{""}, opts.Compare...)...)
	win.wait()
	if len(win.Plan.view.Rows) > 0 {
		win.Export.SetRow(win.Plan.view.Rows[0])
	}
	if opts.CalibrateFile != "" {
		win.Calibrate.target.SetSelected(targetImport)
		win.Calibrate.file.SetText(opts.CalibrateFile)
		win.Calibrate.Run()
	}
	win.wait()
}

// writePNG saves img at path.
func writePNG(path string, img image.Image) error {
	if img == nil {
		return fmt.Errorf("screenshot %s: nothing captured", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("screenshot %s: %w", path, err)
	}
	return f.Close()
}
