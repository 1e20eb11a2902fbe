package app

import (
	"context"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// ScenarioRequest is one configuration to fit, as a front end received it.
// Empty strings and zero numbers mean "automatic": the model's own format,
// the engine for the hardware and format, the model dtype's KV cache, the
// largest context that fits, one user, one device.
type ScenarioRequest struct {
	Model string // catalog id or name fragment, or a model file
	// ModelValue is a model already read (a file the desktop app opened);
	// it overrides Model.
	ModelValue *planner.Model
	Hardware   string // catalog id or name fragment; "" = the probed machine
	Devices    int    // tensor-parallel degree (0 = 1)

	Engine, Backend, Quant, KVType string
	EngineVersion                  string

	Context      planner.Tokens // per sequence; 0 = the largest that fits
	TotalContext planner.Tokens // llama.cpp -c (0 = Context × Concurrency)
	Concurrency  int            // users; 0 = 1

	GPUMemoryUtilization float64 // vLLM/SGLang share; 0 = the engine's
	GPULayers            int     // llama.cpp -ngl; 0 = as many as fit
	CPUMoELayers         int     // llama.cpp --n-cpu-moe; 0 = as needed
	UnifiedKV            bool    // llama-server --kv-unified
	HostMemory           planner.Bytes
	// Free plans against the memory free now on the probed device (what
	// other processes hold is taken out), not its total (--free).
	Free bool
}

// Scenario turns a request into a complete, validated planner.Scenario on
// a resolved machine, with the engine's usable memory on a probed device.
// Input problems are usage errors.
func (a *App) Scenario(ctx context.Context, req ScenarioRequest) (planner.Scenario, Machine, error) {
	s, mach, _, err := a.scenario(ctx, req)
	return s, mach, err
}

// scenario is Scenario with the model's provenance.
func (a *App) scenario(ctx context.Context, req ScenarioRequest) (planner.Scenario, Machine, *hub.Result, error) {
	var s planner.Scenario
	rm, err := a.model(ctx, req.Model, req.Quant, req.ModelValue)
	if err != nil {
		return s, Machine{}, nil, err
	}
	mach, err := a.Machine(ctx, MachineRequest{Hardware: req.Hardware})
	if err != nil {
		return s, mach, rm.Remote, err
	}
	s, err = a.scenarioOn(rm.Model, mach, req)
	return s, mach, rm.Remote, err
}

// scenarioOn fills a scenario for model m on machine mach.
func (a *App) scenarioOn(m planner.Model, mach Machine, req ScenarioRequest) (planner.Scenario, error) {
	c := a.Catalog()
	s := planner.Scenario{Model: m, Hardware: mach.Hardware, HostMemory: mach.Host, Mem: c.Memory}
	if err := checkCounts(req); err != nil {
		return s, err
	}
	s.Devices, s.Concurrency = max(req.Devices, 1), max(req.Concurrency, 1)
	var err error
	if s.Quant, err = a.quantFor(m, req.Quant); err != nil {
		return s, err
	}
	eng := req.Engine
	if eng == "" {
		eng = string(DefaultEngine(mach.Hardware, s.Quant))
	}
	if s.Engine, err = c.FindEngine(eng); err != nil {
		return s, asUsage(err)
	}
	if s.KV, err = a.kvFor(s, req.KVType); err != nil {
		return s, err
	}
	s.Backend = planner.Backend(req.Backend)
	s.Context, s.TotalContext = req.Context, req.TotalContext
	if req.HostMemory > 0 {
		s.HostMemory = req.HostMemory
	}
	s.GPUMemoryUtilization, s.GPULayers, s.CPUMoELayers = req.GPUMemoryUtilization, req.GPULayers, req.CPUMoELayers
	s.UnifiedKV, s.EngineVersion = req.UnifiedKV, req.EngineVersion
	if err := s.Validate(); err != nil {
		return s, asUsage(err)
	}
	if mach.Usable > 0 {
		b, _ := s.ResolveBackend()
		s.UsableMemory = mach.UsableFor(s.Engine, b)
	}
	if req.Free {
		occ, ok := mach.FreeFor(s.Engine)
		if !ok {
			return s, Usagef("--free plans against the memory free now, which needs the probed machine (leave out --hardware)")
		}
		s.UsableMemory = max(occ.Free, 1)
	}
	return s, nil
}

// kvFor finds KV type id, or the automatic one: the model dtype where the
// engine keeps it (bf16 weights, bf16 KV), else f16.
func (a *App) kvFor(s planner.Scenario, id string) (planner.KVType, error) {
	c := a.Catalog()
	if id == "" || id == "auto" {
		id = "f16"
		if s.Quant.ID == "bf16" && s.Engine.HasKVType("bf16") {
			id = "bf16"
		}
	}
	kv, err := c.FindKVType(id)
	return kv, asUsage(err)
}

// checkCounts refuses negative or absurd counts.
func checkCounts(req ScenarioRequest) error {
	switch {
	case req.Devices < 0 || req.Devices > 64:
		return Usagef("devices = %d: use 1 to 64", req.Devices)
	case req.Concurrency < 0 || req.Concurrency > 100000:
		return Usagef("concurrency = %d: use 1 to 100000", req.Concurrency)
	case req.GPULayers < 0:
		return Usagef("gpu layers = %d: use 0 (as many as fit) or a layer count", req.GPULayers)
	case req.CPUMoELayers < 0:
		return Usagef("n-cpu-moe = %d: use 0 (as needed) or a layer count", req.CPUMoELayers)
	case req.GPUMemoryUtilization < 0 || req.GPUMemoryUtilization > 1:
		return Usagef("gpu memory utilization = %g: use a share between 0 and 1", req.GPUMemoryUtilization)
	case req.Context < 0 || req.TotalContext < 0 || req.HostMemory < 0:
		return Usagef("context and memory sizes must be positive")
	}
	return nil
}

// model is v when set, else the model ref names (quant picks a GGUF
// repository's file). Every model is checked (planner.Model.Check) before
// it is fitted: a file with zero attention heads or 2^31 layers is an
// error, not an answer.
func (a *App) model(ctx context.Context, ref, quant string, v *planner.Model) (ResolvedModel, error) {
	if v != nil {
		if v.Layers == 0 && v.ID == "" {
			return ResolvedModel{Model: *v}, Usagef("no model chosen")
		}
		return ResolvedModel{Model: *v}, Usage(v.Check())
	}
	rm, err := a.ResolveModel(ctx, ref, quant)
	if err != nil {
		return rm, err
	}
	return rm, Usage(rm.Model.Check())
}
