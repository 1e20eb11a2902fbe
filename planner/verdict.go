package planner

// FitsWithLimits is the verdict of a configuration that runs, but not as
// asked: fewer of the requested users are resident at once, or less than
// the requested context fits (the application layer sets it from a Fits
// result and the request; Fit itself answers Fits with the reason).
const FitsWithLimits Verdict = "fits with limits"

// Verdicts in order from best to worst, for front ends that list or sort
// them.
var Verdicts = []Verdict{Fits, FitsWithLimits, FitsWithOffload, DoesNotFit}

// Runs reports whether the verdict is one the engine starts with (every
// verdict but DoesNotFit).
func (v Verdict) Runs() bool { return v != DoesNotFit && v != "" }
