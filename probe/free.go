package probe

import "github.com/headroom-planner/headroom/planner"

// Occupancy says, for one device and one engine, what the engine could
// allocate on an idle machine, what it can allocate now, and what other
// processes hold: the figures `fit --free` and `plan --free` plan against.
type Occupancy struct {
	Policy string `json:"policy"`
	// Idle is UsableMemory with nothing else running (no memory in use,
	// all RAM available).
	Idle planner.Bytes `json:"idle"`
	// Free is what the engine can allocate now; Held = Idle − Free is what
	// other processes hold of it.
	Free planner.Bytes `json:"free"`
	Held planner.Bytes `json:"held"`
	// Known is false when the probe cannot see what other processes use on
	// this device (AMD and Intel GPUs on Windows): Free is then Idle.
	Known bool `json:"known"`
	// Source names where the usage came from (nvidia-smi memory.used,
	// amdgpu mem_info_*_used, MemAvailable, vm_stat).
	Source string `json:"source"`
}

// FreeNow reports what engine policy can allocate now on device d of
// machine m, and what other processes hold. For every policy, what other
// processes hold is subtracted, including vLLM, which sizes against total
// memory but fails at start when gpu_memory_utilization × total is not
// free (vllm/v1/worker/gpu_worker.py): Free is what a plan may use now.
//
//   - NVIDIA: nvidia-smi memory.used; AMD on Linux: mem_info_vram_used
//     (and mem_info_gtt_used on an APU).
//   - Apple: RAM available now (vm_stat free + inactive + speculative),
//     capped at the Metal working set. llama.cpp itself sizes against the
//     whole working set and macOS pages the rest out, slowly.
//   - Unified-memory SoCs and Intel iGPUs on Linux: MemAvailable.
//   - Windows AMD/Intel GPUs: not visible (Known false).
func FreeNow(d Device, m Machine, policy string) Occupancy {
	idleD, idleM := d, m
	idleD.VRAMUsed, idleD.GTTUsed, idleD.VisibleVRAMUsed = 0, 0, 0
	idleM.Memory.Available = m.Memory.Total
	o := Occupancy{Policy: normalizePolicy(policy)}
	o.Idle = UsableMemory(idleD, idleM, policy, "").Bytes
	o.Free, o.Known, o.Source = o.Idle, true, ""
	switch classify(d) {
	case classDiscrete:
		o.Free = nonNeg(o.Idle - d.VRAMUsed)
		o.Source, o.Known = usedSource(d, m)
	case classAMDAPU:
		o.Free = nonNeg(o.Idle - d.VRAMUsed - d.GTTUsed)
		o.Source = "amdgpu mem_info_vram_used + mem_info_gtt_used"
	case classAppleSoC:
		o.Source, o.Known = "vm_stat: free + inactive + speculative pages", m.Memory.Available > 0
		if o.Known {
			o.Free = min(o.Idle, m.Memory.Available)
		}
	case classUnifiedSoC, classIntelIGPU:
		o.Free = min(o.Idle, UsableMemory(d, m, policy, "").Bytes)
		o.Source = "MemAvailable"
	case classWDDMShared:
		o.Known, o.Source = false, "not visible on Windows without performance counters"
	default:
		o.Known = false
	}
	o.Held = nonNeg(o.Idle - o.Free)
	return o
}

// usedSource says where a discrete GPU's used memory came from.
func usedSource(d Device, m Machine) (string, bool) {
	switch {
	case contains(d.Sources, "nvidia-smi"):
		return "nvidia-smi memory.used", true
	case d.Vendor == "AMD" && m.OS == "linux":
		return "amdgpu mem_info_vram_used", true
	}
	return "not visible for this device", false
}

// FreeNowHost is FreeNow for a machine without accelerators: the RAM
// available now (MemAvailable, vm_stat or Win32_OperatingSystem
// FreePhysicalMemory) against the RAM the OS manages.
func FreeNowHost(m Machine) Occupancy {
	o := Occupancy{Policy: "cpu", Idle: m.Memory.Total, Free: m.Memory.Available, Known: m.Memory.Available > 0}
	if !o.Known {
		o.Free = o.Idle
	}
	o.Source = map[string]string{"darwin": "vm_stat", "windows": "Win32_OperatingSystem.FreePhysicalMemory"}[m.OS]
	if o.Source == "" {
		o.Source = "MemAvailable"
	}
	o.Held = nonNeg(o.Idle - o.Free)
	return o
}

// FreeNowMatched is FreeNow for a matched device, FreeNowHost for the CPU
// entry Match gives a machine without accelerators.
func FreeNowMatched(md MatchedDevice, m Machine, policy string) Occupancy {
	if md.Device.Kind == planner.KindCPU {
		return FreeNowHost(m)
	}
	return FreeNow(md.Device, m, policy)
}
