package app

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
	"github.com/headroom-planner/headroom/profiles"
	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/profiles/modelsrc"
)

// Options configure an App. The zero value uses the embedded catalog, the
// user's profile and calibration directories, and probes "/".
type Options struct {
	// ProfilesDir is an extra directory of catalog TOML files, read after
	// the user's own (--profiles); "" for none. It must exist.
	ProfilesDir string
	// CalibrationDir holds calibration profiles (--calibrations); "" is
	// the user config directory's headroom/calibrations.
	CalibrationDir string
	// NoUserDirs skips the user's config directories (tests, servers that
	// must not depend on the account they run as).
	NoUserDirs bool
	// Root is the machine to probe: "" or "/" for this one, or a saved
	// machine tree (--root).
	Root string
	// PCIIDs is a pci.ids file for device names (--pci-ids); "" = the
	// system's.
	PCIIDs string
	// Remote allows model references on the Hugging Face Hub and the
	// Ollama registry (ORG/NAME, hf.co/…, ollama:…); Hub says where and
	// how (endpoint, token, cache, offline). A server leaves it off unless
	// its user enables it.
	Remote bool
	Hub    hub.Options
	// ProbeTimeout bounds one probe (default 10 s).
	ProbeTimeout time.Duration
	// Warn receives problems that do not stop the answer (a bad user
	// profile file); nil drops them.
	Warn func(msg string)
	// Now is the clock for calibration timestamps (default time.Now).
	Now func() time.Time
}

// App answers front ends' questions. It is safe for concurrent use; the
// catalog is replaced, never changed in place, when a calibration is saved.
type App struct {
	opt Options
	cat atomic.Pointer[planner.Catalog]

	mu     sync.Mutex
	probed *probedMachine // the last probe of opt.Root, nil before one
}

// Open loads the catalog (embedded, user profiles, ProfilesDir) and applies
// the saved calibrations.
func Open(opt Options) (*App, error) {
	if opt.ProbeTimeout <= 0 {
		opt.ProbeTimeout = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	a := &App{opt: opt}
	c, err := a.loadCatalog()
	if err != nil {
		return nil, err
	}
	a.cat.Store(c)
	return a, nil
}

// Catalog is the current catalog (with calibrations applied). Callers must
// not change it.
func (a *App) Catalog() *planner.Catalog { return a.cat.Load() }

// Root is the probed machine's root ("" = this machine).
func (a *App) Root() string { return a.opt.Root }

// userDir is the user config directory's headroom/NAME ("" when there is
// none, or NoUserDirs).
func (a *App) userDir(name string) string {
	if a.opt.NoUserDirs {
		return ""
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "headroom", name)
}

// CalibrationDir is where calibration profiles are read and saved ("" =
// nowhere: calibrations are neither applied nor saved).
func (a *App) CalibrationDir() string {
	if a.opt.CalibrationDir != "" {
		return a.opt.CalibrationDir
	}
	return a.userDir("calibrations")
}

// loadCatalog reads the embedded catalog, the user's profiles and
// ProfilesDir, and applies the saved calibrations.
func (a *App) loadCatalog() (*planner.Catalog, error) {
	var dirs []string
	if d := a.userDir("profiles"); d != "" {
		dirs = append(dirs, d)
	}
	if a.opt.ProfilesDir != "" {
		if st, err := os.Stat(a.opt.ProfilesDir); err != nil || !st.IsDir() {
			return nil, Usagef("--profiles %s: not a directory", a.opt.ProfilesDir)
		}
		dirs = append(dirs, a.opt.ProfilesDir)
	}
	c, probs, err := profiles.Load(profiles.Options{Dirs: dirs})
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		a.opt.Warn(p.Error())
	}
	a.applyCalibrations(c)
	return c, nil
}

// applyCalibrations puts the saved calibration profiles into c's fitted
// parameters (a copy: the embedded ones are shared).
func (a *App) applyCalibrations(c *planner.Catalog) {
	dir := a.CalibrationDir()
	if dir == "" {
		return
	}
	ps, errs := calibrate.Load(dir)
	for _, e := range errs {
		a.opt.Warn(e.Error())
	}
	if len(ps) == 0 {
		return
	}
	perf := *c.Perf
	perf.Calibrations = map[string]planner.Calibrated{}
	calibrate.Apply(&perf, ps)
	c.Perf = &perf
}

// ReloadCalibrations re-applies the saved calibrations to a copy of the
// catalog, so that answers from now on use them.
func (a *App) ReloadCalibrations() {
	c := *a.Catalog()
	perf := *c.Perf
	perf.Calibrations = nil
	c.Perf = &perf
	a.applyCalibrations(&c)
	a.cat.Store(&c)
}

// OpenModelFile reads a model's architecture from a GGUF file, a
// config.json or a model directory.
func (a *App) OpenModelFile(path string) (planner.Model, error) {
	m, err := modelsrc.Open(path)
	if err != nil {
		return m, fmt.Errorf("model %s: %w", path, err)
	}
	return m, nil
}

// probedMachine is one probe and what was matched in it.
type probedMachine struct {
	m       probe.Machine
	matches []probe.MatchedDevice
	err     error
}
