package calibrate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// Bounds on a profile's terms that hold on every device. planner's fit
// clamps efficiencies to [0.005, 5]: a value at either clamp is a failed
// fit, not a measurement (a server lying about token counts gave 5.0 and
// 0). Above 1 an efficiency is possible only against a guessed peak
// (generic hardware); on a device with a datasheet it must be at most 1.
const (
	minEff          = 0.01
	maxEffGuessed   = 4.9
	maxStepOverhead = 1000.0 // ms; a decode step is never a second of fixed cost
	minBandwidth    = 1.0    // GB/s with all threads: slower than any machine's memory
	maxBandwidth    = 100000.0
	maxTFLOPS       = 1e5
	peakSlack       = 1.10 // measured may pass the datasheet peak by 10% (boost clocks, rounding)
)

// Noise thresholds of a host benchmark: below minPasses repeats, or with
// the median pass more than maxSpread slower than the best, the run
// measured the machine's load, not its speed.
const (
	minHostDuration = host.MinBudget / 2
	minPasses       = 3
	maxSpread       = 0.30
	lowFraction     = 0.10 // of the datasheet peak: the machine was busy
)

// Problem is one reason a profile cannot be trusted. A fatal problem is a
// value no device can have (the profile is never saved or applied); a
// non-fatal one marks a noisy or doubtful measurement.
type Problem struct {
	Term   string  // "decode_bw_efficiency", "bandwidth_gb_s", "host: memory: triad, all threads"
	Value  float64 // the value found
	Reason string
	Fatal  bool
}

func (p Problem) String() string {
	return fmt.Sprintf("%s = %.4g: %s", p.Term, p.Value, p.Reason)
}

// ErrImplausible is wrapped by *CheckError.
var ErrImplausible = errors.New("calibration is not plausible")

// CheckError lists why a profile was refused.
type CheckError struct {
	Key      string
	Problems []Problem
}

func (e *CheckError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("calibration %s: %v: %s", e.Key, ErrImplausible, strings.Join(parts, "; "))
}

func (e *CheckError) Unwrap() error { return ErrImplausible }

// Fatal reports whether any problem is fatal.
func Fatal(ps []Problem) bool {
	for _, p := range ps {
		if p.Fatal {
			return true
		}
	}
	return false
}

// Check returns the problems of p on hardware hw. A zero hw checks only
// the bounds that hold on every device; a catalog device also bounds
// efficiencies by 1 and measured rates by its datasheet peaks (a
// "generic-" device's peaks are guesses and bound nothing).
func Check(p Profile, hw planner.Hardware) []Problem {
	var out []Problem
	add := func(term string, v float64, fatal bool, format string, a ...any) {
		out = append(out, Problem{Term: term, Value: v, Fatal: fatal, Reason: fmt.Sprintf(format, a...)})
	}
	known := hw.ID != "" && !strings.HasPrefix(hw.ID, "generic")
	t := p.Terms
	maxEff := maxEffGuessed
	if known {
		maxEff = 1
	}
	for _, e := range []struct {
		term   string
		v      float64
		fitted int // points the fit had; 0 with v == 0 means "not fitted, keep the prior"
	}{{"decode_bw_efficiency", t.DecodeEff, decodeEffPoints(p)}, {"prefill_compute_efficiency", t.PrefillEff, p.Fit.PrefillPoints}} {
		switch {
		case e.v == 0 && e.fitted == 0:
		case !finite(e.v) || e.v < minEff:
			add(e.term, e.v, true, "an efficiency must be at least %g (the fit failed: did the server report its token counts?)", minEff)
		case e.v > maxEff:
			add(e.term, e.v, true, "an efficiency above %g is faster than the device can run", maxEff)
		}
	}
	if t.DecodeScale != 0 && !planner.DecodeScaleUsable(t.DecodeScale) {
		add("decode_scale", t.DecodeScale, true, "a factor on the fitted decode efficiency must lie inside %g to %g: no published setup is that far from the fit (were the rows imported with the right --hardware, --devices and --quant?)", planner.MinDecodeScale, planner.MaxDecodeScale)
	}
	checkModelScales(t, add)
	if !finite(t.StepOverheadMs) || t.StepOverheadMs < 0 || t.StepOverheadMs > maxStepOverhead {
		add("step_overhead_ms", t.StepOverheadMs, true, "must be between 0 and %g ms", maxStepOverhead)
	}
	checkRate("bandwidth_gb_s", t.BandwidthGBs, minBandwidth, maxBandwidth, peakIf(known, hw.BandwidthGBs), true, add)
	checkRate("tflops", t.TFLOPS, 0, maxTFLOPS, peakIf(known, maxPeak(hw.TFLOPS)), false, add)
	if p.Host != nil {
		checkHost(*p.Host, add)
	}
	checkFit(p.Fit, add)
	return out
}

// checkModelScales: per-model decode factors refine a setup's factor, so
// they need one (the factor of the models they do not name), each names a
// model and lies in the same range, and there are at most
// planner.MaxCalibrationModels.
func checkModelScales(t planner.Calibrated, add adder) {
	if len(t.ModelDecodeScale) == 0 {
		return
	}
	if t.DecodeScale == 0 {
		add("model_decode_scale", float64(len(t.ModelDecodeScale)), true, "per-model decode factors without decode_scale, the factor of the other models")
	}
	if n := len(t.ModelDecodeScale); n > planner.MaxCalibrationModels {
		add("model_decode_scale", float64(n), true, "at most %d models", planner.MaxCalibrationModels)
		return
	}
	for _, id := range slices.Sorted(maps.Keys(t.ModelDecodeScale)) {
		k := t.ModelDecodeScale[id]
		switch {
		case strings.TrimSpace(id) == "" || len(id) > maxModelID:
			add("model_decode_scale", k, true, "a factor for a model named %q: want a model ID", textsafe.Printable(id, 40))
		case !planner.DecodeScaleUsable(k):
			add("model_decode_scale", k, true, "the factor for %s must lie inside %g to %g", textsafe.Printable(id, 0), planner.MinDecodeScale, planner.MaxDecodeScale)
		}
	}
}

// maxModelID is the longest model ID a calibration names (a Hub ID is
// owner/name, at most 96 + 1 + 96 characters).
const maxModelID = 256

// decodeEffPoints is the number of points behind the profile's absolute
// decode efficiency: none when the decode points fitted a factor on the
// fitted efficiency instead (DecodeScale, an imported calibration).
func decodeEffPoints(p Profile) int {
	if p.Terms.DecodeScale != 0 {
		return 0
	}
	return p.Fit.DecodePoints
}

type adder func(term string, v float64, fatal bool, format string, a ...any)

// checkRate bounds a measured rate (0: not measured): at least lo, at most
// hi, at most the peak with slack; with lowWarn, far below the peak is a
// busy machine.
func checkRate(term string, v, lo, hi, peak float64, lowWarn bool, add adder) {
	switch {
	case v == 0:
	case !finite(v) || v < lo || v > hi:
		add(term, v, true, "must be between %g and %g", lo, hi)
	case peak > 0 && v > peak*peakSlack:
		add(term, v, true, "is above the device's peak of %g: the benchmark ran in cache, not memory", peak)
	case lowWarn && peak > 0 && v < peak*lowFraction:
		add(term, v, false, "is under %.0f%% of the device's peak of %g: was the machine busy?", lowFraction*100, peak)
	}
}

// checkHost flags a host benchmark that ran too briefly or too noisily.
func checkHost(r host.Result, add adder) {
	for _, m := range []struct {
		name string
		v    float64
	}{{"host: triad_gb_s", r.TriadGBs}, {"host: read_gb_s", r.ReadGBs}} {
		if m.v > 0 && m.v < minBandwidth {
			add(m.name, m.v, true, "no machine's memory is slower than %g GB/s: other programs held the CPU", minBandwidth)
		}
	}
	if r.Duration > 0 && r.Duration < minHostDuration {
		add("host: duration (s)", r.Duration.Seconds(), false, "the benchmark ran too briefly to measure memory; use the default budget")
	}
	for _, s := range r.Steps {
		if !strings.HasPrefix(s.Name, "memory: triad") && !strings.HasPrefix(s.Name, "gemv: float32") && !strings.HasPrefix(s.Name, "gemm: sgemm") {
			continue
		}
		if s.Passes < minPasses {
			add("host: "+s.Name+" passes", float64(s.Passes), false, "fewer than %d repeats: too short to trust", minPasses)
		}
		if s.Spread > maxSpread {
			add("host: "+s.Name+" spread", s.Spread, false, "the median pass was %.0f%% slower than the best: the machine was busy", s.Spread*100)
		}
	}
}

// checkFit flags an endpoint or import fit whose points disagree with it
// by more than half.
func checkFit(f planner.CalFit, add adder) {
	worst := 0.0
	for _, r := range f.Residuals {
		if r.Measured > 0 && finite(r.Predicted) {
			worst = max(worst, math.Abs(r.Predicted-r.Measured)/r.Measured)
		}
	}
	if worst > 0.5 {
		add("fit: worst residual", worst, false, "a measured point is %.0f%% off the fitted model: noisy or inconsistent measurements", worst*100)
	}
}

func peakIf(known bool, v float64) float64 {
	if !known {
		return 0
	}
	return v
}

func maxPeak(m map[planner.Precision]float64) float64 {
	out := 0.0
	for _, v := range m {
		out = max(out, v)
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
