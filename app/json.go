package app

import (
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// The types in this file are the JSON every front end prints: `headroom
// fit --json`, `headroom probe --json`, the REST API and the MCP tools
// encode these values, so the same question gets byte-identical JSON.

// ScenarioJSON names the configuration a fit answered.
type ScenarioJSON struct {
	Model    string  `json:"model"`
	Hardware string  `json:"hardware"`
	Devices  int     `json:"devices"`
	Engine   string  `json:"engine"`
	Quant    string  `json:"quant"`
	KVType   string  `json:"kv_type"`
	GPUUtil  float64 `json:"gpu_memory_utilization,omitempty"`
}

// FitJSON is the JSON of a fit: the scenario, the verdict with its memory
// breakdown, and one user's speed when it runs.
type FitJSON struct {
	Scenario ScenarioJSON      `json:"scenario"`
	Machine  string            `json:"machine,omitempty"`
	Fit      planner.FitResult `json:"fit"`
	// Speed is one user's speed (omitted when it does not fit).
	Speed *planner.Prediction `json:"speed,omitempty"`
	// Limits says what was cut from the request ("fits with limits").
	Limits []string `json:"limits,omitempty"`
	// Automatic says which format "automatic" chose when the model's own
	// does not fit.
	Automatic string `json:"automatic,omitempty"`
	// Source is where a model from the Hub or the Ollama registry came
	// from: repository, commit, files, exact weight bytes, bytes read.
	Source *hub.Result `json:"source,omitempty"`
	// Free is the probed device's memory free now (with --free); Setup
	// the APU or Mac settings that would make it fit.
	Free  *probe.Occupancy `json:"free_now,omitempty"`
	Setup *probe.Advice    `json:"setup,omitempty"`
}

// NewFitJSON is ans as FitJSON (Speed only when the verdict runs).
func NewFitJSON(ans FitAnswer) FitJSON {
	j := FitJSON{Scenario: DescribeScenario(ans.Scenario), Machine: ans.Machine.Note, Fit: ans.Fit, Limits: ans.Limits, Automatic: ans.Automatic, Source: ans.Remote, Free: ans.Free, Setup: ans.Setup}
	if ans.Fit.Verdict.Runs() {
		sp := ans.Speed
		j.Speed = &sp
	}
	return j
}

// DescribeScenario names s's model, hardware, devices (at least 1),
// engine, formats and memory share.
func DescribeScenario(s planner.Scenario) ScenarioJSON {
	return ScenarioJSON{Model: s.Model.ID, Hardware: s.Hardware.ID, Devices: max(s.Devices, 1), Engine: string(s.Engine.ID),
		Quant: s.Quant.ID, KVType: s.KV.ID, GPUUtil: s.GPUMemoryUtilization}
}

// ProbeJSON is the JSON of a probe: the machine and every device with its
// catalog match and per-engine usable memory.
type ProbeJSON struct {
	Machine probe.Machine    `json:"machine"`
	Matches []ProbeMatchJSON `json:"matches"`
}

// ProbeMatchJSON is one probed device (Usable is empty for a CPU).
type ProbeMatchJSON struct {
	probe.MatchedDevice
	Usable []probe.Usable `json:"usable"`
}

// NewProbeJSON is ProbeReport's answer as ProbeJSON.
func NewProbeJSON(m probe.Machine, devs []ProbedDevice) ProbeJSON {
	rep := ProbeJSON{Machine: m}
	for _, d := range devs {
		rep.Matches = append(rep.Matches, ProbeMatchJSON(d))
	}
	return rep
}

// LaunchJSON is the JSON of a launch command (the REST API's and MCP's
// flags): the shell text `headroom flags` prints, its parts, and a hint
// when the command differs from the request.
type LaunchJSON struct {
	Command string         `json:"command"`
	Launch  planner.Launch `json:"launch"`
	Hint    string         `json:"hint,omitempty"`
}

// NewLaunchJSON is ans as LaunchJSON.
func NewLaunchJSON(ans LaunchAnswer) LaunchJSON {
	return LaunchJSON{Command: ans.Launch.String(), Launch: ans.Launch, Hint: ans.Hint}
}
