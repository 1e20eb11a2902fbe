// Package ui is Headroom's desktop app: one window of six screens built with
// Fyne.
//
//   - My machine: probed devices, their memory (VRAM, GTT, unified) as bars,
//     the catalog profile each was matched to, and calibration status.
//   - Can I run it?: a model, engine, format, context and number of users
//     give a verdict card and a stacked memory bar.
//   - Plan: a workload and latency target give ranked configurations and
//     charts of throughput and TTFT against concurrency.
//   - Compare hardware: several devices side by side, per dollar and per
//     watt.
//   - Calibrate: measure this machine or a running server, with progress and
//     Cancel, and see predicted against measured.
//   - Export: the chosen plan's launch command, copied or saved as TOML,
//     JSON or a shell script.
//
// The package holds no planning logic. Every figure comes from a [Service],
// a small interface that package main fills with planner, profiles, probe
// and calibrate, and that tests fill with a fake. Each screen is a struct
// that builds its widgets and exposes onX callbacks; work that may take
// longer than a frame runs on its own goroutine and comes back to the UI
// through fyne.Do, the newest request winning. Errors are shown inline in
// red, never as a crash.
//
// ui never creates the Fyne app: package main does (only it imports
// fyne.io/fyne/v2/app), and passes it to [New].
package ui
