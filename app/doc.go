// Package app is Headroom's application layer: the one place that answers
// every question a front end asks. The CLI (cmd/headroom), the desktop app
// (ui) and any server call it, so the same question gets the same answer
// everywhere.
//
// An App owns the catalog (embedded TOML, the user's profile directories
// and this machine's calibrations) and the machine it plans for (probed, a
// saved machine tree, or a catalog id). Each job takes one request struct
// and returns a typed answer:
//
//   - ResolveModel: a catalog id or name fragment, or a model file.
//   - Machine: a catalog device, or the probed one with per-engine usable
//     memory (llama.cpp and vLLM see different limits on the same APU).
//   - Scenario / Fit: "can I run it?" with a four-state Verdict (fits, fits
//     with limits, fits only with weights in system RAM, does not fit).
//   - Plan / Compare: ranked configurations for a workload and target.
//   - Launch / Export: the launch command and the exported plan, encoded
//     by one function for every front end.
//   - Calibrate: host and endpoint calibrations, saved and applied.
//
// Errors that are the user's to fix (unknown ids, bad values) wrap
// ErrUsage; a configuration that cannot run wraps ErrNoFit. Front ends map
// them to exit codes or HTTP statuses. The package reads no flags and no
// environment: front ends put what they read into Options and requests.
package app
