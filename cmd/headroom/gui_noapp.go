//go:build !cgo && !ci

package main

import "errors"

// errNoGUI says why a binary built without cgo has no desktop app.
var errNoGUI = errors.New("this headroom was built without cgo and has no desktop app; " +
	"build with CGO_ENABLED=1 (needs X11/GL headers), or with -tags ci for --screenshots with Fyne's software renderer")

// runGUI fails: Fyne's OpenGL driver needs cgo.
func runGUI(*guiService) error { return errNoGUI }

// renderScreenshots fails: Fyne's software renderer comes with -tags ci.
func renderScreenshots(*guiService, *guiOptions) ([]string, error) { return nil, errNoGUI }
