package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// open starts the application layer with the global flags: the catalog
// (warnings go to stderr), the calibrations, and root as the machine to
// probe when --hardware is not given.
//
// Models on the Hugging Face Hub and the Ollama registry are read with the
// environment's settings (HF_ENDPOINT, HF_TOKEN or the Hugging Face CLI's
// token file, HF_HUB_OFFLINE, HEADROOM_OLLAMA_REGISTRY, HEADROOM_HUB_CACHE)
// and --offline; progress on slow reads goes to stderr.
func (g *globalOptions) open(root string) (*app.App, error) {
	h := hub.FromEnv(os.Getenv)
	h.Offline = h.Offline || g.offline
	h.OnProgress = hubProgress()
	return app.Open(app.Options{
		ProfilesDir:    g.profilesDir,
		CalibrationDir: g.calibrationDir,
		Root:           root,
		Remote:         true,
		Hub:            h,
		Warn:           func(msg string) { fmt.Fprintf(os.Stderr, "headroom: warning: %s\n", msg) },
	})
}

// hubProgress prints a line to stderr every 4 MB read from the Hub or the
// Ollama registry (GGUF headers can be several MB: vocabularies), so a
// slow connection does not look like a hang.
func hubProgress() func(hub.Progress) {
	var next int64 = 4 << 20
	return func(p hub.Progress) {
		if p.RefRead >= next {
			fmt.Fprintf(os.Stderr, "headroom: read %s of model metadata\n", planner.Bytes(p.RefRead))
			next = p.RefRead + 4<<20
		}
	}
}

// appCode maps the application layer's sentinel errors to exit codes.
func appCode(err error) int {
	switch {
	case errors.Is(err, app.ErrNoFit):
		return exitNoFit
	case errors.Is(err, app.ErrUsage):
		return exitUsage
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
