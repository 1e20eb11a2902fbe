//go:build !cgo && !ci

package main

import (
	"errors"

	"github.com/headroom-planner/headroom/app"
)

// A binary built without cgo imports no Fyne (package ui) at all: Fyne does
// not compile without cgo on macOS, and the CLI must build for every OS.

// errNoGUI says why a binary built without cgo has no desktop app.
var errNoGUI = errors.New("this headroom was built without cgo and has no desktop app; " +
	"build with CGO_ENABLED=1 (needs X11/GL headers), or with -tags ci for --screenshots with Fyne's software renderer")

// runGUI fails: Fyne's OpenGL driver needs cgo.
func runGUI(*app.App) error { return errNoGUI }

// renderScreenshots fails: Fyne's software renderer comes with -tags ci.
func renderScreenshots(*app.App, *guiOptions) ([]string, error) { return nil, errNoGUI }
