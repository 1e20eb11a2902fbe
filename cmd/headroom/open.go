package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// open starts the application layer with the global flags: the catalog
// (warnings go to stderr), the calibrations, and root as the machine to
// probe when --hardware is not given.
func (g *globalOptions) open(root string) (*app.App, error) {
	return app.Open(app.Options{
		ProfilesDir:    g.profilesDir,
		CalibrationDir: g.calibrationDir,
		Root:           root,
		Warn:           func(msg string) { fmt.Fprintf(os.Stderr, "headroom: warning: %s\n", msg) },
	})
}

// appCode maps the application layer's sentinel errors to exit codes.
func appCode(err error) int {
	switch {
	case errors.Is(err, app.ErrUsage):
		return exitUsage
	case errors.Is(err, app.ErrNoFit):
		return exitNoFit
	}
	return exitError
}

// catalog is the catalog with calibrations, for commands that need nothing
// else of the application layer (list, validate, refit, import).
func (g *globalOptions) catalog() (*planner.Catalog, error) {
	a, err := g.open("")
	if err != nil {
		return nil, err
	}
	return a.Catalog(), nil
}

// calibrationDir is where calibration profiles live ("" when there is no
// user config directory and no --calibrations).
func calibrationDir(g *globalOptions) string {
	a, err := g.open("")
	if err != nil {
		return g.calibrationDir
	}
	return a.CalibrationDir()
}
