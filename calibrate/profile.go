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
	"github.com/headroom-planner/headroom/internal/atomicfile"
	"github.com/headroom-planner/headroom/internal/redact"
	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
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

// MaxFileBytes bounds one calibration file: a profile is a few KiB.
const MaxFileBytes = 1 << 20

// Save writes p to dir atomically (internal/atomicfile: temporary file,
// fsync, rename), so an interrupted save leaves the previous profile
// intact; dir, Headroom's own calibration directory, is created if
// missing. It is SaveChecked with no hardware and no force: a profile
// whose terms no device can have is refused with a *CheckError, and a
// flagged one (noisy, too short) does not replace a clean previous
// profile (ErrKeptPrevious). Credentials in p.Source (an endpoint URL's
// user information or query) are redacted.
func Save(dir string, p Profile) (string, error) {
	path, _, err := SaveChecked(dir, p, SaveOptions{})
	return path, err
}

// write saves p under dir without comparing it with what is there.
func write(dir string, p Profile) (string, error) {
	if p.Key == "" {
		p.Key = planner.CalibrationKey(p.Hardware, planner.EngineID(p.Engine), planner.Backend(p.Backend))
	}
	if ps := Check(p, planner.Hardware{}); Fatal(ps) {
		return "", &CheckError{Key: p.Key, Problems: fatalOnly(ps)}
	}
	p.Source = textsafe.Printable(redact.String(p.Source), 512)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("calibration directory %s: %w", dir, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Headroom calibration for %s, made %s from %s.\n", p.Key, p.Created.Format(time.RFC3339), strings.ReplaceAll(p.Source, "\n", " "))
	if err := toml.NewEncoder(&buf).Encode(p); err != nil {
		return "", fmt.Errorf("calibration %s: encode: %w", p.Key, err)
	}
	path := filepath.Join(dir, fileName(p.Key))
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return "", fmt.Errorf("saving calibration: %w", err)
	}
	return path, nil
}

// Load reads every profile in dir. Unreadable or malformed files, and
// profiles no device can have, are reported (with their path) and skipped;
// FIFOs, devices and files over MaxFileBytes are refused without reading;
// a missing dir is empty.
func Load(dir string) ([]Profile, []error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	sort.Strings(files)
	var out []Profile
	var errs []error
	for _, f := range files {
		p, err := loadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	return out, errs
}

// loadFile reads and checks one calibration file.
func loadFile(f string) (Profile, error) {
	data, err := safefile.ReadFile(f, MaxFileBytes)
	if err != nil {
		return Profile{}, fmt.Errorf("calibration %s: %w", f, err)
	}
	return decodeProfile(f, data)
}

// decodeProfile parses and checks the calibration file f holding data.
func decodeProfile(f string, data []byte) (Profile, error) {
	var p Profile
	if _, err := toml.Decode(string(data), &p); err != nil {
		return p, fmt.Errorf("calibration %s: %w", f, err)
	}
	if p.Key == "" || p.Hardware == "" || p.Engine == "" {
		return p, fmt.Errorf("calibration %s: missing key, hardware or engine", f)
	}
	if ps := Check(p, planner.Hardware{}); Fatal(ps) {
		return p, fmt.Errorf("calibration %s: %w", f, &CheckError{Key: p.Key, Problems: fatalOnly(ps)})
	}
	return p, nil
}

func fatalOnly(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if p.Fatal {
			out = append(out, p)
		}
	}
	return out
}

// ErrNoProfile means no calibration has that key.
var ErrNoProfile = errors.New("no such calibration")

// Remove deletes the profile whose key is exactly key, as List and `calibrate
// list` show it, and returns the file it deleted. An empty key, a prefix or
// a near miss is refused: nothing is deleted unless it is the profile the
// user named. The file deleted is the one Load read that profile from.
func Remove(dir, key string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fmt.Errorf("remove: no calibration key given (see `headroom calibrate list`)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	sort.Strings(files)
	var known []string
	for _, f := range files {
		p, err := loadFile(f)
		if err != nil {
			continue
		}
		if p.Key == key {
			if err := os.Remove(f); err != nil {
				return "", fmt.Errorf("remove calibration %s: %w", key, err)
			}
			return f, nil
		}
		known = append(known, p.Key)
	}
	return "", fmt.Errorf("%w %q in %s (calibrations: %s)", ErrNoProfile, key, dir, strings.Join(known, ", "))
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
