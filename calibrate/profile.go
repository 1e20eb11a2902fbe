package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
)

// Profile is one saved calibration.
type Profile struct {
	Key      string             `toml:"key" json:"key"` // hardware/engine/backend
	Hardware string             `toml:"hardware" json:"hardware"`
	Engine   string             `toml:"engine" json:"engine"`
	Backend  string             `toml:"backend" json:"backend"`
	Created  time.Time          `toml:"created" json:"created"`
	Source   string             `toml:"source" json:"source"` // host, endpoint URL, import FILE
	Terms    planner.Calibrated `toml:"terms" json:"terms"`
	Fit      planner.CalFit     `toml:"fit" json:"fit"`
	Host     *host.Result       `toml:"host,omitempty" json:"host,omitempty"`
}

// Age is how long ago the profile was made.
func (p Profile) Age(now time.Time) time.Duration { return now.Sub(p.Created) }

// fileName turns a key into a safe file name.
func fileName(key string) string {
	r := strings.NewReplacer("/", "__", "\\", "_", ":", "_", " ", "_")
	return r.Replace(key) + ".toml"
}

// Save writes p to dir atomically (temporary file, fsync, rename), so an
// interrupted save leaves the previous profile intact.
func Save(dir string, p Profile) (string, error) {
	if p.Key == "" {
		p.Key = planner.CalibrationKey(p.Hardware, planner.EngineID(p.Engine), planner.Backend(p.Backend))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("calibration directory %s: %w", dir, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Headroom calibration for %s, made %s from %s.\n", p.Key, p.Created.Format(time.RFC3339), p.Source)
	if err := toml.NewEncoder(&buf).Encode(p); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fileName(p.Key))
	tmp, err := os.CreateTemp(dir, ".calibration-*.tmp")
	if err != nil {
		return "", fmt.Errorf("saving %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return "", fmt.Errorf("saving %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("saving %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("saving %s: %w", path, err)
	}
	return path, nil
}

// Load reads every profile in dir. Unreadable or malformed files are
// reported (with their path) and skipped; a missing dir is empty.
func Load(dir string) ([]Profile, []error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	sort.Strings(files)
	var out []Profile
	var errs []error
	for _, f := range files {
		var p Profile
		md, err := toml.DecodeFile(f, &p)
		if err != nil {
			errs = append(errs, fmt.Errorf("calibration %s: %w", f, err))
			continue
		}
		_ = md
		if p.Key == "" || p.Hardware == "" || p.Engine == "" {
			errs = append(errs, fmt.Errorf("calibration %s: missing key, hardware or engine", f))
			continue
		}
		if bad := badTerms(p.Terms); bad != "" {
			errs = append(errs, fmt.Errorf("calibration %s: %s", f, bad))
			continue
		}
		out = append(out, p)
	}
	return out, errs
}

func badTerms(t planner.Calibrated) string {
	for name, v := range map[string]float64{"decode_bw_efficiency": t.DecodeEff, "prefill_compute_efficiency": t.PrefillEff,
		"step_overhead_ms": t.StepOverheadMs, "bandwidth_gb_s": t.BandwidthGBs, "tflops": t.TFLOPS} {
		if v < 0 || v > 1e6 || v != v {
			return fmt.Sprintf("terms.%s = %g is not sane", name, v)
		}
	}
	return ""
}

// ErrNoProfile means no calibration has that key.
var ErrNoProfile = errors.New("no such calibration")

// Remove deletes the profile with key (or a unique key prefix).
func Remove(dir, key string) (string, error) {
	ps, _ := Load(dir)
	var hits []Profile
	for _, p := range ps {
		if p.Key == key || strings.HasPrefix(p.Key, key) {
			hits = append(hits, p)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("%w %q in %s", ErrNoProfile, key, dir)
	case 1:
		return hits[0].Key, os.Remove(filepath.Join(dir, fileName(hits[0].Key)))
	}
	return "", fmt.Errorf("%q matches %d calibrations; give the full key", key, len(hits))
}

// Apply installs profiles into the planner's parameters: figures for their
// hardware × engine × backend become "calibrated".
func Apply(p *planner.PerfParams, ps []Profile) {
	if len(ps) == 0 {
		return
	}
	if p.Calibrations == nil {
		p.Calibrations = map[string]planner.Calibrated{}
	}
	for _, x := range ps {
		p.Calibrations[x.Key] = x.Terms
	}
}
