package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
)

// Machine is the device a question is answered for: a catalog entry, or
// the probed device of this machine (or of a saved machine tree) with the
// limits the probe read.
type Machine struct {
	Hardware planner.Hardware
	// Usable is what llama.cpp can allocate on the probed device (0 for a
	// catalog machine: the catalog's rule applies). Other engines differ:
	// see UsableFor.
	Usable planner.Bytes
	// Host is the system RAM available for offload (0 = unknown).
	Host planner.Bytes
	// Probed is true when the machine was probed rather than named.
	Probed bool
	// Note says where a probed machine came from and what was matched.
	Note string
	// Count is how many devices of the matched kind the probe found.
	Count int

	device *probe.MatchedDevice
	probed *probe.Machine
}

// UsableFor is what engine e can allocate on the probed device with
// backend b (the probe's per-engine rule: vLLM's share of total memory,
// llama.cpp's free memory, ...); 0 for a catalog machine.
func (m Machine) UsableFor(e planner.Engine, b planner.Backend) planner.Bytes {
	if m.device == nil || m.probed == nil || m.Usable == 0 {
		return m.Usable
	}
	u := probe.UsableMemory(m.device.Device, *m.probed, string(e.Policy), b)
	if u.Bytes <= 0 {
		return m.Usable
	}
	return u.Bytes
}

// MachineRequest names the machine: a catalog id or name fragment, or ""
// for the probed machine (Options.Root).
type MachineRequest struct {
	Hardware string
}

// Machine resolves a machine: a catalog entry, or the probed device.
func (a *App) Machine(ctx context.Context, req MachineRequest) (Machine, error) {
	if req.Hardware != "" {
		h, err := a.Catalog().FindHardware(req.Hardware)
		if err != nil && probe.IsGenericID(req.Hardware) {
			// A generic id is one the probe printed for this machine's
			// device (`headroom probe` → generic-cpu): find it there.
			return a.probedDevice(ctx, req.Hardware)
		}
		if err != nil {
			return Machine{}, asUsage(err)
		}
		return Machine{Hardware: h, Count: 1}, nil
	}
	return a.ProbedMachine(ctx)
}

// probedDevice is the probed machine's device with hardware id (a generic
// profile the catalog does not have), or a usage error.
func (a *App) probedDevice(ctx context.Context, id string) (Machine, error) {
	pm := a.lastProbe(ctx)
	if pm.err != nil {
		return Machine{}, Usage(fmt.Errorf("hardware %q is a generic profile of a probed device, and probing failed: %w", id, pm.err))
	}
	md, ok := probe.Lookup(pm.matches, id)
	if !ok {
		return Machine{}, Usagef("hardware %q: this machine has no such device (see `headroom probe`)", id)
	}
	return a.machineFor(md, pm, 1), nil
}

// Probe probes the machine again (Options.Root) and returns what was read
// and matched.
func (a *App) Probe(ctx context.Context) (probe.Machine, []probe.MatchedDevice, error) {
	ctx, cancel := context.WithTimeout(ctx, a.opt.ProbeTimeout)
	defer cancel()
	m, err := probe.Probe(ctx, a.probeOptions())
	pm := &probedMachine{m: m, err: err}
	if err == nil {
		pm.matches = probe.Match(m, a.Catalog())
	}
	a.mu.Lock()
	a.probed = pm
	a.mu.Unlock()
	return pm.m, pm.matches, err
}

// lastProbe returns the last probe, probing once if there is none.
func (a *App) lastProbe(ctx context.Context) *probedMachine {
	a.mu.Lock()
	pm := a.probed
	a.mu.Unlock()
	if pm == nil {
		_, _, _ = a.Probe(ctx)
		a.mu.Lock()
		pm = a.probed
		a.mu.Unlock()
	}
	return pm
}

// ErrNoDevice is returned when the probe found nothing to plan for.
var ErrNoDevice = errors.New("the probe found no usable device; pass --hardware")

// ProbedMachine is the first usable device of the probed machine, with its
// limits and a note saying where it came from.
func (a *App) ProbedMachine(ctx context.Context) (Machine, error) {
	pm := a.lastProbe(ctx)
	if pm.err != nil {
		return Machine{}, Usage(fmt.Errorf("probing the machine (pass --hardware to skip): %w", pm.err))
	}
	var pick *probe.MatchedDevice
	same := 0
	for i := range pm.matches {
		md := &pm.matches[i]
		if md.Skip != "" {
			continue
		}
		if pick == nil {
			pick = md
		}
		if md.Hardware.ID == pick.Hardware.ID {
			same++
		}
	}
	if pick == nil {
		return Machine{}, Usage(ErrNoDevice)
	}
	return a.machineFor(*pick, pm, same), nil
}

// machineFor is the Machine of a probed device: its limits and a note on
// where it came from.
func (a *App) machineFor(md probe.MatchedDevice, pm *probedMachine, same int) Machine {
	pick := &md
	hw, usable, host, _ := probe.ForPlanner(*pick, pm.m)
	where := "this machine"
	if a.opt.Root != "" && a.opt.Root != "/" {
		where = "saved machine " + a.opt.Root
	}
	note := fmt.Sprintf("probed %s: %s → %s, %s usable", where, pick.Device.Name, hw.ID, usable)
	if pick.Generic {
		note += " (" + a.calibrationHint(hw) + ")"
	}
	if same > 1 {
		note += fmt.Sprintf("; %d such devices (use --devices %d for tensor parallel)", same, same)
	}
	m := pm.m
	return Machine{Hardware: hw, Usable: usable, Host: host, Probed: true, Note: note, Count: max(same, 1), device: pick, probed: &m}
}

// FreeFor is what engine e can allocate on the probed device now, with
// other processes' memory taken out, and what they hold; ok is false for a
// catalog machine (nothing was probed).
func (m Machine) FreeFor(e planner.Engine) (probe.Occupancy, bool) {
	if m.device == nil || m.probed == nil {
		return probe.Occupancy{}, false
	}
	return probe.FreeNowMatched(*m.device, *m.probed, string(e.Policy)), true
}

// Setup is the setup advice for a probed APU or Mac that would let an
// engine allocate need bytes (carve-out, amdgpu.gttsize, ttm.pages_limit,
// --gpu-memory-utilization; iogpu.wired_limit_mb); ok is false where no
// setting changes the device's memory (a discrete GPU, a catalog machine).
func (m Machine) Setup(e planner.Engine, need planner.Bytes) (probe.Advice, bool) {
	if m.device == nil || m.probed == nil {
		return probe.Advice{}, false
	}
	adv := probe.Advise(m.device.Device, *m.probed, string(e.Policy), need)
	return adv, len(adv.Settings) > 0 || adv.Fits || adv.Max > adv.Have
}

// probeOptions are the probe's options for Options.Root and PCIIDs.
func (a *App) probeOptions() probe.Options {
	return probe.Options{Root: a.opt.Root, PCIDBPath: a.opt.PCIIDs}
}

// ProbedDevice is one device the probe found, its catalog match, and what
// each engine could allocate on it (none for a CPU).
type ProbedDevice struct {
	probe.MatchedDevice
	Usable []probe.Usable
}

// ProbeReport probes the machine again and gives every device with its
// match and per-engine usable memory.
func (a *App) ProbeReport(ctx context.Context) (probe.Machine, []ProbedDevice, error) {
	m, matches, err := a.Probe(ctx)
	if err != nil {
		return m, nil, err
	}
	out := make([]ProbedDevice, 0, len(matches))
	for _, md := range matches {
		pd := ProbedDevice{MatchedDevice: md}
		if md.Generic {
			pd.Hint = a.calibrationHint(md.Hardware)
		}
		if md.Device.Kind != planner.KindCPU {
			pd.Usable = probe.UsableByPolicy(md.Device, m)
		}
		out = append(out, pd)
	}
	return m, out, nil
}

// Snapshot writes a tar.gz of the files and tool outputs the probe reads
// (no serial numbers) to w, for a bug report that becomes a fixture.
func (a *App) Snapshot(ctx context.Context, w io.Writer) error {
	return probe.SnapshotWith(ctx, a.probeOptions(), w)
}

// calibrationHint says what a generic profile's speed figures rest on: the
// saved calibration when there is one, else the command that measures it
// (`headroom calibrate` alone only prints help).
func (a *App) calibrationHint(h planner.Hardware) string {
	if st := a.CalibrationFor(h.ID); st.Profile != nil && !st.Other {
		return "generic profile, calibrated " + st.Profile.Created.Format("2006-01-02") + " by " + st.Profile.Source
	}
	if h.Kind == planner.KindCPU {
		return "generic profile: run `headroom calibrate host` for speed figures"
	}
	return "generic profile: run `headroom calibrate endpoint --url URL` against a running server for speed figures"
}
