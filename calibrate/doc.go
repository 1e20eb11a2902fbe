// Package calibrate makes Headroom's predictions true for this machine. It
// measures (host microbenchmarks in calibrate/host, a running engine in
// calibrate/endpoint), imports benchmark outputs people already have
// (calibrate/importer), fits this machine's efficiencies with
// planner.FitCalibration, and stores the result as a TOML profile keyed by
// hardware × engine × backend that fit, plan and compare then apply,
// labelling those figures "calibrated".
package calibrate
