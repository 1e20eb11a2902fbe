package app

import (
	"context"
	"fmt"
	"math"

	"github.com/headroom-planner/headroom/planner"
)

// PlanRequest asks which configuration to run for a workload and target.
type PlanRequest struct {
	Model string
	// ModelValue is a model already read; it overrides Model.
	ModelValue *planner.Model
	// Hardware is a catalog id, or NODESxDEVICESxID such as
	// "2x8xnvidia-h100-sxm5-80gb" (ParseHardwareSpec); "" = the probed
	// machine.
	Hardware string
	Devices  int // devices per node; 0 = 1
	// Nodes is how many such machines one replica may span (0 or 1 = one).
	Nodes int
	// NodeLink is the network between nodes, as planner.ParseNodeLink
	// reads it ("ib400", "eth25"; "" = planner.DefaultNodeLink).
	NodeLink string
	Workload planner.Workload
	SLO      planner.SLO
	// Engines and Quants restrict the search (ids or aliases); empty = all.
	Engines, Quants []string
	// HostMemory is system RAM for weights that do not fit the device (0 =
	// probed, or unknown for a catalog machine); HostBandwidthGBs its read
	// speed (0 = the planner's default).
	HostMemory       planner.Bytes
	HostBandwidthGBs float64
	// Free plans against the memory free now on the probed device
	// (llama.cpp's view of it), not its total.
	Free bool
	// DeviceHourUSD prices the plan per device-hour (0 = the catalog's
	// cloud list price, if any).
	DeviceHourUSD float64
	// EngineVersion is the engine release the predictions and launch
	// commands follow, as EngineReleases reads it ("vllm=0.6.0,llama.cpp=
	// b4000", or a bare release for ForEngine or the only engine asked);
	// "" = each engine's newest.
	EngineVersion string
	// ForEngine is the engine a bare EngineVersion belongs to (plan's
	// --emit); "" = the only engine in Engines.
	ForEngine string
}

// PlanAnswer is a ranked plan with the request it answered.
type PlanAnswer struct {
	Request planner.PlanRequest
	Result  planner.PlanResult
	Machine Machine
	// Model is the model planned and where it came from (for the launch
	// command's checkpoint).
	Model ResolvedModel
}

// Best is the first ranked configuration of the given engine ("" = any),
// or false when none fits.
func (p PlanAnswer) Best(engine planner.EngineID) (planner.Candidate, bool) {
	for _, c := range p.Result.Ranked {
		if engine == "" || c.Engine == engine {
			return c, true
		}
	}
	return planner.Candidate{}, false
}

// Release is the release engine's predictions followed ("" = its newest),
// the one its launch command is for.
func (p PlanAnswer) Release(engine planner.EngineID) string { return p.Request.Releases[engine] }

// Rank is c's place in the ranking, from 1 (0 when it is not ranked).
func (p PlanAnswer) Rank(c planner.Candidate) int {
	for i, r := range p.Result.Ranked {
		if r.Engine == c.Engine && r.Quant == c.Quant && r.KVType == c.KVType && r.Devices == c.Devices && r.Concurrency == c.Concurrency && r.Backend == c.Backend {
			return i + 1
		}
	}
	return 0
}

// Shortfall says how the best configuration falls short of the users the
// workload asks for (a closed loop of N users): "" when it serves them all
// within the target, for an arrival-rate workload (its own notes say
// whether it keeps up), and for a burst or an offline batch, whose prompts
// wait for a slot by design (their TTFT carries the wait; plan had warned
// that a 1000-prompt burst running 158 at once "serves 158 users" and
// exited 5). "users=64 --slo ttft=100ms" on one GPU had printed "Best: …
// 1 user" and exited 0.
func (p PlanAnswer) Shortfall() string {
	w := p.Request.Workload
	best, ok := p.Best("")
	if !ok || w.Rate > 0 || w.RunsAtOnce() || w.Concurrency <= 1 || best.Concurrency >= w.Concurrency {
		return ""
	}
	replicas := (w.Concurrency + best.Concurrency - 1) / best.Concurrency
	target := "the target"
	if p.Request.SLO != (planner.SLO{}) {
		target = "the target (" + p.Request.SLO.String() + ")"
	}
	return fmt.Sprintf("no configuration serves %d users within %s: the best serves %s at once; %d replicas of it, a looser target, or more devices would serve them",
		w.Concurrency, target, planner.Plural(best.Concurrency, "user"), replicas)
}

// Plan ranks configurations (engine × format × KV type × concurrency × TP)
// for the request's workload and target.
func (a *App) Plan(ctx context.Context, req PlanRequest) (PlanAnswer, error) {
	quant := ""
	if len(req.Quants) == 1 {
		quant = req.Quants[0]
	}
	if err := req.applyHardwareSpec(); err != nil {
		return PlanAnswer{}, err
	}
	rm, err := a.model(ctx, req.Model, quant, req.ModelValue)
	if err != nil {
		return PlanAnswer{}, err
	}
	m := rm.Model
	mach, err := a.Machine(ctx, MachineRequest{Hardware: req.Hardware})
	if err != nil {
		return PlanAnswer{}, err
	}
	pr, err := a.plannerRequest(m, mach, req)
	if err != nil {
		return PlanAnswer{}, err
	}
	if req.Free {
		occ, ok := mach.FreeFor(planner.Engine{Policy: planner.PolicyLlamaCpp})
		if !ok {
			return PlanAnswer{}, Usagef("--free plans against the memory free now, which needs the probed machine (leave out --hardware)")
		}
		pr.UsableMemory = max(occ.Free, 1)
		pr.UsableFor = func(e planner.Engine, _ planner.Backend) planner.Bytes {
			if o, ok := mach.FreeFor(e); ok {
				return max(o.Free, 1)
			}
			return pr.UsableMemory
		}
		mach.Note += fmt.Sprintf("; free now %s (other processes hold %s, %s)", occ.Free, occ.Held, occ.Source)
	}
	res := planner.Plan(pr)
	res.Cost = planCost(res, pr, req.DeviceHourUSD)
	return PlanAnswer{Request: pr, Result: res, Machine: mach, Model: rm}, nil
}

// plannerRequest checks a request and builds the planner's.
func (a *App) plannerRequest(m planner.Model, mach Machine, req PlanRequest) (planner.PlanRequest, error) {
	c := a.Catalog()
	if req.Devices < 0 || req.Devices > 64 {
		return planner.PlanRequest{}, Usagef("devices = %d: use 1 to 64", req.Devices)
	}
	if u := req.DeviceHourUSD; u < 0 || u > 10000 || math.IsNaN(u) {
		return planner.PlanRequest{}, Usagef("device-hour price = %g: want US$ between 0 and 10000", u)
	}
	if req.Nodes < 0 || req.Nodes > 64 {
		return planner.PlanRequest{}, Usagef("nodes = %d: use 1 to 64", req.Nodes)
	}
	if req.Nodes > 1 && mach.Hardware.Kind == planner.KindCPU {
		return planner.PlanRequest{}, Usagef("nodes = %d: multi-node plans need GPUs, APUs or SoCs (%s is a CPU)", req.Nodes, mach.Hardware.ID)
	}
	link, err := nodeLink(req.NodeLink)
	if err != nil {
		return planner.PlanRequest{}, err
	}
	if b := req.HostBandwidthGBs; b < 0 || b > 10000 || math.IsNaN(b) {
		return planner.PlanRequest{}, Usagef("host bandwidth = %g: want GB/s between 1 and 10000", b)
	}
	if req.HostMemory < 0 {
		return planner.PlanRequest{}, Usagef("host memory must be positive")
	}
	w := req.Workload
	if w.Prompt == 0 && w.Gen == 0 && w.Concurrency == 0 && w.Rate == 0 {
		w = DefaultWorkload
	}
	w.Concurrency = max(w.Concurrency, 1)
	pr := planner.PlanRequest{Catalog: c, Hardware: mach.Hardware, Devices: max(req.Devices, 1), Model: m, Workload: w,
		SLO: req.SLO, UsableMemory: mach.Usable, HostMemory: mach.Host, HostBandwidthGBs: req.HostBandwidthGBs,
		Nodes: max(req.Nodes, 1), NodeLink: link}
	if mach.Usable > 0 {
		pr.UsableFor = mach.UsableFor // each engine's own limit on the probed device
	}
	if req.HostMemory > 0 {
		pr.HostMemory = req.HostMemory
	}
	for _, e := range req.Engines {
		eng, err := c.FindEngine(e)
		if err != nil {
			return pr, asUsage(err)
		}
		pr.Engines = append(pr.Engines, eng.ID)
	}
	for _, q := range req.Quants {
		qq, err := c.FindQuant(q)
		if err != nil {
			return pr, asUsage(err)
		}
		pr.Quants = append(pr.Quants, qq.ID)
	}
	if pr.Releases, err = EngineReleases(c, req.EngineVersion, req.ForEngine, req.Engines); err != nil {
		return pr, err
	}
	return pr, nil
}

// EngineID resolves an engine id or alias ("llama-server" is llama.cpp),
// as a usage error when unknown.
func (a *App) EngineID(name string) (planner.EngineID, error) {
	e, err := a.Catalog().FindEngine(name)
	if err != nil {
		return "", asUsage(err)
	}
	return e.ID, nil
}

// CompareRequest evaluates one model and workload on several machines.
type CompareRequest struct {
	Model string
	// ModelValue is a model already read; it overrides Model.
	ModelValue *planner.Model
	Machines   []MachineSpec
	Workload   planner.Workload
	SLO        planner.SLO
	Engines    []string
	Quants     []string
	// EngineVersion is as PlanRequest's (a bare release needs one engine
	// in Engines).
	EngineVersion string
}

// CompareAnswer is one row per machine, in the request's order.
type CompareAnswer struct {
	Request planner.PlanRequest
	Rows    []planner.CompareRow
	// Notes say where probed machines came from.
	Notes []string
}

// Compare plans the model on each machine and gives each one's best
// configuration, speed, and speed per dollar and per watt.
func (a *App) Compare(ctx context.Context, req CompareRequest) (CompareAnswer, error) {
	if len(req.Machines) == 0 {
		return CompareAnswer{}, Usagef("no hardware to compare; want e.g. rtx-4090,2xrtx-3090,this")
	}
	quant := ""
	if len(req.Quants) == 1 {
		quant = req.Quants[0]
	}
	rm, err := a.model(ctx, req.Model, quant, req.ModelValue)
	if err != nil {
		return CompareAnswer{}, err
	}
	m := rm.Model
	var ans CompareAnswer
	machines := make([]planner.Hardware, 0, len(req.Machines))
	devs := make([]int, 0, len(req.Machines))
	var first Machine
	for i, spec := range req.Machines {
		var mach Machine
		if spec.This {
			mach, err = a.ProbedMachine(ctx)
			if err == nil {
				ans.Notes = append(ans.Notes, mach.Note)
			}
		} else {
			mach, err = a.Machine(ctx, MachineRequest{Hardware: spec.Hardware})
		}
		if err != nil {
			return CompareAnswer{}, err
		}
		if i == 0 {
			first = mach
		}
		machines, devs = append(machines, mach.Hardware), append(devs, max(spec.Count, 1))
	}
	pr, err := a.plannerRequest(m, first, PlanRequest{Devices: devs[0], Workload: req.Workload, SLO: req.SLO, Engines: req.Engines, Quants: req.Quants,
		EngineVersion: req.EngineVersion})
	if err != nil {
		return CompareAnswer{}, err
	}
	ans.Request = pr
	ans.Rows = planner.Compare(pr, machines, devs)
	a.aloneSpeeds(ans.Rows, pr, machines, devs)
	return ans, nil
}

// aloneSpeeds sets each row's SingleUserTPS to the device's answer for one
// user alone: its best configuration's output tok/s over the whole request
// at one user (TTFT included). The planner's figure is the one-user speed
// of the configuration best for the users asked, which changed with the
// user count and was not the fastest a device serves one user. Whatever
// the arrival pattern (users, rate, burst, offline), one user is the same
// request on an idle server (Workload.Alone): under a rate, a burst or an
// offline batch this column had shown the whole workload's throughput.
func (a *App) aloneSpeeds(rows []planner.CompareRow, pr planner.PlanRequest, machines []planner.Hardware, devs []int) {
	one := rows
	if alone := pr.Workload.Alone(); alone != pr.Workload {
		pr.Workload = alone
		one = planner.Compare(pr, machines, devs)
	}
	for i := range rows {
		if i < len(one) && one[i].TotalTPS > 0 {
			rows[i].SingleUserTPS = one[i].TotalTPS
		}
	}
}
