package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles"
)

// userProfileDir is where a user's own catalog TOML files live
// ($XDG_CONFIG_HOME/headroom/profiles on Linux).
func userProfileDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "headroom", "profiles")
}

// loadCatalog loads the embedded catalog plus the user's profile directory
// and --profiles. Problems in user files are printed as warnings; the rest
// of the catalog still loads.
func loadCatalog(g *globalOptions) (*planner.Catalog, error) {
	dirs := []string{}
	if d := userProfileDir(); d != "" {
		dirs = append(dirs, d)
	}
	if g.profilesDir != "" {
		if st, err := os.Stat(g.profilesDir); err != nil || !st.IsDir() {
			return nil, withCode(exitUsage, fmt.Errorf("--profiles %s: not a directory", g.profilesDir))
		}
		dirs = append(dirs, g.profilesDir)
	}
	c, probs, err := profiles.Load(profiles.Options{Dirs: dirs})
	if err != nil {
		return nil, err
	}
	for _, p := range probs {
		fmt.Fprintf(os.Stderr, "headroom: warning: %v\n", p)
	}
	applyCalibrations(g, c)
	return c, nil
}
