package app

import (
	"context"
	"fmt"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// FitAnswer is "can I run it?" for one configuration.
type FitAnswer struct {
	Scenario planner.Scenario
	Machine  Machine
	// Fit is the memory answer. Fit.Verdict has four states: Fits,
	// FitsWithLimits (fewer users or less context than asked), FitsWith-
	// Offload (weights or KV in system RAM), DoesNotFit.
	Fit planner.FitResult
	// Speed is one user's speed with a 512-token prompt and 128 generated
	// tokens, in the placement Fit found (zero when it does not fit).
	Speed planner.Prediction
	// Limits says what was cut from the request (empty unless
	// FitsWithLimits).
	Limits []string
	// Automatic says which format "automatic" chose and why, when the
	// model's own format does not fit and another does ("" otherwise).
	Automatic string
	// Remote is where a model read from the Hub or the Ollama registry
	// came from (nil for catalog models and local files).
	Remote *hub.Result
	// Free is the probed device's memory free now and what other
	// processes hold (with ScenarioRequest.Free).
	Free *probe.Occupancy
	// Setup says which settings of a probed APU or Mac (carve-out,
	// amdgpu.gttsize, ttm.pages_limit, --gpu-memory-utilization;
	// iogpu.wired_limit_mb) would let a configuration that does not fit,
	// or spills to system RAM, fit (nil elsewhere).
	Setup *probe.Advice
}

// speedWorkload is the single-user workload FitAnswer.Speed is for.
var speedWorkload = planner.Workload{Prompt: 512, Gen: 128, Concurrency: 1}

// Fit answers "can I run it?" for a request. A configuration that does not
// fit is an answer, not an error: Fit.Verdict says so.
//
// "Automatic" weights (req.Quant "") mean the same here as on Plan and
// Compare: the model's own format when it runs, else the format the
// planner ranks best on this machine (with the engine and KV type the
// request fixes), said in FitAnswer.Automatic.
func (a *App) Fit(ctx context.Context, req ScenarioRequest) (FitAnswer, error) {
	s, mach, remote, err := a.scenario(ctx, req)
	if err != nil {
		return FitAnswer{Scenario: s, Machine: mach, Remote: remote}, err
	}
	ans, err := a.FitScenario(s, mach, req)
	ans.Remote = remote
	if err != nil || req.Quant != "" || ans.Fit.Verdict != planner.DoesNotFit {
		return ans, err
	}
	alt, ok := a.automaticFormat(s, mach, req)
	if !ok {
		return ans, nil
	}
	alt.Automatic = fmt.Sprintf("automatic format: %s with %s (the model's own %s does not fit)", alt.Scenario.Quant.ID, alt.Scenario.Engine.Label(), s.Quant.ID)
	alt.Remote = remote
	return alt, nil
}

// automaticFormat fits the best configuration the planner finds for the
// request's model, machine, devices, users and context, keeping the
// engine, backend and KV type the request names.
func (a *App) automaticFormat(s planner.Scenario, mach Machine, req ScenarioRequest) (FitAnswer, bool) {
	pr, err := a.plannerRequest(s.Model, mach, PlanRequest{Devices: req.Devices,
		Workload: planner.Workload{Prompt: DefaultWorkload.Prompt, Gen: DefaultWorkload.Gen, Concurrency: max(req.Concurrency, 1)}})
	if err != nil {
		return FitAnswer{}, false
	}
	if req.Engine != "" {
		pr.Engines = []planner.EngineID{s.Engine.ID}
	}
	for _, c := range planner.Plan(pr).Ranked {
		if req.KVType != "" && c.KVType != s.KV.ID || req.Backend != "" && c.Backend != s.Backend {
			continue
		}
		alt := req
		alt.Quant, alt.Engine = c.Quant, string(c.Engine)
		if req.KVType == "" {
			alt.KVType = c.KVType
		}
		as, err := a.scenarioOn(s.Model, mach, alt)
		if err != nil {
			continue
		}
		ans, err := a.FitScenario(as, mach, alt)
		if err == nil && ans.Fit.Verdict.Runs() {
			return ans, true
		}
	}
	return FitAnswer{}, false
}

// FitScenario fits a scenario built by Scenario; req says what was asked,
// so that a cut in users or context reads as FitsWithLimits.
func (a *App) FitScenario(s planner.Scenario, mach Machine, req ScenarioRequest) (FitAnswer, error) {
	ans := FitAnswer{Scenario: s, Machine: mach}
	r, err := planner.Fit(s)
	if err != nil {
		return ans, asUsage(err)
	}
	ans.Fit = r
	if req.Free {
		if occ, ok := mach.FreeFor(s.Engine); ok {
			ans.Free = &occ
		}
	}
	if r.Verdict == planner.DoesNotFit || r.Verdict == planner.FitsWithOffload {
		if adv, ok := mach.Setup(s.Engine, needBytes(s, r)); ok && !adv.Fits {
			ans.Setup = &adv
		}
	}
	if r.Verdict == planner.DoesNotFit {
		return ans, nil
	}
	ans.Limits = limits(r, req)
	if r.Verdict == planner.Fits && len(ans.Limits) > 0 {
		ans.Fit.Verdict = planner.FitsWithLimits
	}
	ans.Speed = planner.Predict(s.WithPlacement(r), speedWorkload, a.Catalog().Perf)
	return ans, nil
}

// limits lists what of the request the fit could not give: users resident
// at once, and the context asked for.
func limits(r planner.FitResult, req ScenarioRequest) []string {
	var out []string
	if n := max(req.Concurrency, 1); n > 1 && r.MaxConcurrencyAtContext < n {
		out = append(out, fmt.Sprintf("%d of the %d users fit at %d tokens each; the rest wait", max(r.MaxConcurrencyAtContext, 0), n, r.Context))
	}
	if req.Context > 0 && r.Context > 0 && r.Context < req.Context {
		out = append(out, fmt.Sprintf("context %d tokens, not the %d asked", r.Context, req.Context))
	}
	return out
}

// needBytes is the memory a configuration needs on its device to run as
// asked with nothing in system RAM: its weights, overheads, and the KV
// cache of its users at its context (at least what the fit placed).
func needBytes(s planner.Scenario, r planner.FitResult) planner.Bytes {
	b := r.Breakdown
	fixed := b.Weights + b.HostWeights + b.Activations + b.ComputeBuffer + b.CUDAGraphs + b.Runtime + b.HostBuffers
	if b.Weights+b.HostWeights < r.WeightBytes/planner.Bytes(max(s.Devices, 1)) {
		fixed += r.WeightBytes/planner.Bytes(max(s.Devices, 1)) - b.Weights - b.HostWeights
	}
	ctx := r.Context
	if ctx <= 0 {
		ctx = max(s.Context, 4096)
	}
	kv := r.KVBytesPerToken * planner.Bytes(ctx) * planner.Bytes(max(s.Concurrency, 1))
	return fixed + max(kv, b.KVCache+b.HostKV)
}
