//go:build cgo || ci

package main

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/ui"
)

// newApp creates the Fyne app with Headroom's theme. Built with -tags ci,
// Fyne gives a headless app with its software renderer.
func newApp() fyne.App {
	a := fyneapp.NewWithID(appID)
	a.Settings().SetTheme(ui.NewTheme())
	return a
}

// softwareDriver reports whether a renders without a display (a binary
// built with -tags ci): it can take screenshots but shows no window.
func softwareDriver(a fyne.App) bool {
	return strings.HasSuffix(fmt.Sprintf("%T", a.Driver()), "test.driver")
}

// runGUI opens the window and returns when it is closed.
func runGUI(h *app.App) error {
	svc := ui.NewService(h)
	a := newApp()
	if softwareDriver(a) {
		return errors.New("this headroom was built with -tags ci (Fyne's software renderer, no window); " +
			"use --screenshots DIR, or build with cgo for the desktop app")
	}
	ui.New(a, svc, ui.Options{}).ShowAndRun()
	return nil
}

// renderScreenshots renders every screen to PNG files with Fyne's
// software renderer and returns their paths. Only a binary built with
// -tags ci has that renderer as its driver; the OpenGL driver's captures
// come back blank under Xvfb, so it is not offered.
func renderScreenshots(hr *app.App, o *guiOptions) ([]string, error) {
	svc := ui.NewService(hr)
	w, h, err := o.windowSize()
	if err != nil {
		return nil, err
	}
	a := newApp()
	if !softwareDriver(a) {
		return nil, withCode(exitUsage, errors.New("--screenshots needs Fyne's software renderer: "+
			"CGO_ENABLED=0 go run -tags ci ./cmd/headroom gui --screenshots DIR"))
	}
	opts := ui.ScreenshotOptions{
		Dir: o.screenshots, Size: fyne.NewSize(w, h), Model: o.model, Compare: o.compareIDs(),
		Dark: []int{ui.TabCanRun, ui.TabPlan}, CalibrateFile: o.calibrateFile,
	}
	return ui.Screenshots(a, svc, opts)
}
