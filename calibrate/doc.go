// Package calibrate makes Headroom's predictions true for this machine. It
// measures (host microbenchmarks in calibrate/host, a running engine in
// calibrate/endpoint), imports benchmark outputs people already have
// (calibrate/importer), fits this machine's efficiencies with
// planner.FitCalibration, and stores the result as a TOML profile keyed by
// hardware × engine × backend that fit, plan and compare then apply,
// labelling those figures "calibrated".
//
// A profile is checked before it is saved and when it is loaded (Check):
// terms no device can have (an efficiency at the fit's clamps, or above 1
// on a device with a datasheet; a bandwidth under 1 GB/s or above the
// device's peak) are refused; a noisy or short measurement is flagged, and
// a flagged profile does not replace a clean one unless the caller forces
// it (SaveChecked, whose Comparison says what changed). Remove deletes
// only the profile whose key is given exactly.
package calibrate
