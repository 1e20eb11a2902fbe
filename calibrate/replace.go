package calibrate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// ErrKeptPrevious means SaveChecked kept the profile already saved under
// the key, because the new one is flagged (noisy, too short) and the
// previous one is not. SaveOptions.Force replaces it anyway.
var ErrKeptPrevious = errors.New("kept the previous calibration")

// SaveOptions say what SaveChecked checks a profile against.
type SaveOptions struct {
	// Hardware is the catalog device the profile is for; its datasheet
	// bounds efficiencies and measured rates (Check). The zero value checks
	// only what holds on every device.
	Hardware planner.Hardware
	// Force replaces a clean previous profile with a flagged new one.
	// Profiles no device can have are refused even then.
	Force bool
}

// Change is one term that differs between the previous and the new profile.
type Change struct {
	Term     string
	Old, New float64
}

// Ratio is New/Old (+Inf when Old is 0).
func (c Change) Ratio() float64 {
	if c.Old == 0 {
		return math.Inf(1)
	}
	return c.New / c.Old
}

// Comparison says what saving a profile did, or would do, to the one saved
// under its key: the front ends print it after a calibration.
type Comparison struct {
	Key      string
	New      Profile
	Problems []Problem // the new profile's
	// Previous is the profile saved under Key before, nil when none was;
	// PreviousProblems are its problems on the same hardware.
	Previous         *Profile
	PreviousProblems []Problem
	Changes          []Change // terms that moved by more than 1%
	Saved            bool
	// Reason says why the new profile was refused or the previous kept;
	// empty when it was saved.
	Reason string
}

// String is the comparison for a terminal: what changed, and what was kept
// or flagged and why.
func (c Comparison) String() string {
	var b strings.Builder
	switch {
	case c.Saved && c.Previous == nil:
		fmt.Fprintf(&b, "calibration %s saved (no previous one)\n", c.Key)
	case c.Saved:
		fmt.Fprintf(&b, "calibration %s replaced the one made %s\n", c.Key, c.Previous.Created.Format("2006-01-02 15:04"))
	default:
		fmt.Fprintf(&b, "calibration %s NOT saved: %s\n", c.Key, c.Reason)
	}
	for _, ch := range c.Changes {
		fmt.Fprintf(&b, "  %-28s %10.4g -> %-10.4g (%+.0f%%)\n", ch.Term, ch.Old, ch.New, (ch.Ratio()-1)*100)
	}
	for _, p := range c.Problems {
		sev := "flagged"
		if p.Fatal {
			sev = "refused"
		}
		fmt.Fprintf(&b, "  %s: %s\n", sev, p)
	}
	return b.String()
}

// Compare compares a new profile with the previous one under its key (nil:
// none) on hardware hw. It decides nothing; SaveChecked does.
func Compare(prev *Profile, next Profile, hw planner.Hardware) Comparison {
	c := Comparison{Key: keyOf(next), New: next, Problems: Check(next, hw), Previous: prev}
	if prev == nil {
		return c
	}
	c.PreviousProblems = Check(*prev, hw)
	o, n := prev.Terms, next.Terms
	for _, t := range []Change{
		{"decode_bw_efficiency", o.DecodeEff, n.DecodeEff},
		{"prefill_compute_efficiency", o.PrefillEff, n.PrefillEff},
		{"step_overhead_ms", o.StepOverheadMs, n.StepOverheadMs},
		{"bandwidth_gb_s", o.BandwidthGBs, n.BandwidthGBs},
		{"tflops", o.TFLOPS, n.TFLOPS},
		{"decode_scale", o.DecodeScale, n.DecodeScale},
	} {
		if changed(t) {
			c.Changes = append(c.Changes, t)
		}
	}
	// Per-model factors: a model either names is compared, 0 where the
	// other has none.
	models := map[string]float64{}
	maps.Copy(models, o.ModelDecodeScale)
	maps.Copy(models, n.ModelDecodeScale)
	for _, id := range slices.Sorted(maps.Keys(models)) {
		if t := (Change{"decode_scale " + id, o.ModelDecodeScale[id], n.ModelDecodeScale[id]}); changed(t) {
			c.Changes = append(c.Changes, t)
		}
	}
	return c
}

// changed says a term moved by more than 1%.
func changed(t Change) bool {
	return math.Abs(t.New-t.Old) > 0.01*math.Max(math.Abs(t.Old), 1e-12)
}

// SaveChecked saves p under dir unless it should not replace what is there:
// a profile no device can have (Check on opt.Hardware) is refused with a
// *CheckError; a flagged one (noisy, too short) does not replace a clean
// previous profile unless opt.Force, and the error wraps ErrKeptPrevious.
// Either way the Comparison says what happened and what changed.
func SaveChecked(dir string, p Profile, opt SaveOptions) (string, Comparison, error) {
	p.Key = keyOf(p)
	prev := previous(dir, p.Key)
	c := Compare(prev, p, opt.Hardware)
	switch {
	case Fatal(c.Problems):
		c.Reason = "its terms are impossible on " + hwName(opt.Hardware)
		return "", c, &CheckError{Key: p.Key, Problems: fatalOnly(c.Problems)}
	case len(c.Problems) > 0 && prev != nil && len(c.PreviousProblems) == 0 && !opt.Force:
		c.Reason = "the new measurement is flagged and the previous one is not; kept the previous one (force to replace it)"
		return "", c, fmt.Errorf("calibration %s: %w: %s", p.Key, ErrKeptPrevious, c.Problems[0])
	}
	path, err := write(dir, p)
	if err != nil {
		c.Reason = err.Error()
		return "", c, err
	}
	c.Saved = true
	return path, c, nil
}

// previous reads the profile saved under key, nil when there is none or it
// cannot be read (a broken file is replaced, as Load already reports it).
func previous(dir, key string) *Profile {
	p, err := loadFile(filepath.Join(dir, fileName(key)))
	if err != nil || p.Key != key {
		return nil
	}
	return &p
}

func keyOf(p Profile) string {
	if p.Key != "" {
		return p.Key
	}
	return planner.CalibrationKey(p.Hardware, planner.EngineID(p.Engine), planner.Backend(p.Backend))
}

func hwName(h planner.Hardware) string {
	if h.ID == "" {
		return "any device"
	}
	return h.ID
}
