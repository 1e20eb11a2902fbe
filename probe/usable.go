package probe

import (
	"fmt"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Usable is the memory one engine can allocate on one device, and the rule
// that says so.
type Usable struct {
	Policy  string          `json:"policy"`            // engine policy: llamacpp, vllm, ...
	Backend planner.Backend `json:"backend,omitempty"` // the backend the rule is for
	Bytes   planner.Bytes   `json:"bytes"`             // what the engine can allocate
	// Rule explains Bytes and names the engine source it mirrors.
	Rule string `json:"rule"`
}

// Policies are the engine memory policies the CLI shows, in display order
// (planner.Engine.Policy values).
var Policies = []string{"llamacpp", "ollama", "vllm", "sglang", "tgi"}

// osReserve is the memory Headroom leaves to the OS on a machine whose GPU
// maps system RAM: planner.DefaultMemoryParams.OSReserve (4 GiB), the
// planner's own margin, so probe and planner agree. Strix Halo guides that
// raise the GTT limit on 128 GiB boxes leave 4-13 GiB (amdgpu.gttsize
// 115-124 GiB).
func osReserve() planner.Bytes { return planner.DefaultMemoryParams.OSReserve }

// normalizePolicy maps engine ids and policy names to a policy through
// the planner's one alias table (planner.ParseEngine); names it does not
// know pass through lower-cased.
func normalizePolicy(p string) string {
	if id, err := planner.ParseEngine(p); err == nil {
		if pol, ok := planner.PolicyOf(id); ok {
			return string(pol)
		}
	}
	return strings.ToLower(strings.TrimSpace(p))
}

// memClass sorts devices by how their memory works.
type memClass int

const (
	classUnknownMemory memClass = iota // discrete, memory not probed
	classDiscrete                      // own VRAM
	classAMDAPU                        // carve-out + GTT of system RAM
	classUnifiedSoC                    // NVIDIA GB10/Jetson: one pool
	classIntelIGPU                     // shared system RAM, no carve-out figure
	classAppleSoC                      // Apple silicon: Metal's working set of unified memory
	classWDDMShared                    // Windows iGPU: dedicated + WDDM shared system memory
)

func classify(d Device) memClass {
	switch {
	case d.Vendor == "Apple" && d.Integrated:
		return classAppleSoC
	case d.Integrated && d.SharedTotal > 0:
		return classWDDMShared
	case d.Integrated && d.Vendor == "AMD" && d.VRAMTotal == 0 && gttCeilingOf(d) == 0:
		return classUnknownMemory
	case d.Integrated && d.Vendor == "AMD":
		return classAMDAPU
	case d.Integrated && d.Vendor == "NVIDIA":
		return classUnifiedSoC
	case d.Integrated:
		return classIntelIGPU
	case d.VRAMTotal > 0:
		return classDiscrete
	}
	return classUnknownMemory
}

// defaultBackend is the backend an engine uses on the device unless told
// otherwise: CUDA on NVIDIA, Vulkan for llama.cpp on AMD APUs and Intel
// (RADV/ANV ship with every distribution; ROCm builds for gfx1151 do not),
// ROCm for the PyTorch engines and Ollama on AMD, SYCL for vLLM on Intel.
func defaultBackend(d Device, policy string) planner.Backend {
	switch d.Vendor {
	case "NVIDIA":
		return planner.CUDA
	case "AMD":
		if policy == "llamacpp" && d.Integrated {
			return planner.Vulkan
		}
		return planner.ROCm
	case "Intel":
		if policy == "llamacpp" || policy == "ollama" {
			return planner.Vulkan
		}
		return planner.SYCL
	}
	return planner.CPU
}

// UsableMemory returns what engine policy ("llamacpp", "ollama", "vllm",
// "sglang", "tgi", "transformers", "trtllm"; engine ids are accepted) can
// allocate on device d of machine m with backend b ("" = the engine's
// default on this device). Zero means the engine cannot use the device, or
// its memory was not probed; Rule says which.
//
// Discrete GPUs: vLLM sizes against total memory; the others against free.
// AMD APUs: llama.cpp on Vulkan sees carve-out + GTT ceiling; ROCm (HIP)
// sees the larger of carve-out and GTT ceiling; the GTT part is capped at
// MemTotal − 4 GiB so the OS keeps room. See the rule functions for the
// engine sources.
func UsableMemory(d Device, m Machine, policy string, b planner.Backend) Usable {
	policy = normalizePolicy(policy)
	if b == "" {
		b = defaultBackend(d, policy)
	}
	u := Usable{Policy: policy, Backend: b}
	if policy == "trtllm" && d.Vendor != "NVIDIA" {
		u.Rule = "TensorRT-LLM runs on NVIDIA GPUs only"
		return u
	}
	switch classify(d) {
	case classDiscrete:
		u.Bytes, u.Rule = discreteUsable(d, policy)
	case classAMDAPU:
		u.Bytes, u.Rule = apuUsable(d, m, policy, b)
	case classUnifiedSoC:
		u.Bytes, u.Rule = socUsable(m, policy)
	case classIntelIGPU:
		u.Bytes, u.Rule = intelIGPUUsable(m, policy)
	case classAppleSoC:
		u.Backend = planner.Metal
		u.Bytes, u.Rule = appleUsable(d, m, policy)
	case classWDDMShared:
		u.Bytes, u.Rule = wddmUsable(d, policy)
	default:
		u.Rule = "device memory was not probed (see warnings); the catalog size stands in"
	}
	return u
}

// UsableByPolicy lists UsableMemory for every policy in Policies with its
// default backend.
func UsableByPolicy(d Device, m Machine) []Usable {
	out := make([]Usable, 0, len(Policies))
	for _, p := range Policies {
		out = append(out, UsableMemory(d, m, p, ""))
	}
	return out
}

// freeBased reports whether a policy sizes against free memory at start:
// llama.cpp's -fit (ggml_backend_dev_memory free), Ollama's scheduler
// (llm/server.go at f63eea3d: assignLayers fits against FreeMemory), TGI's
// warmup (torch.cuda.mem_get_info free × TGI_WIGGLE_ROOM), SGLang
// (mem_fraction_static of the memory free before loading) and
// TensorRT-LLM (kv_cache_free_gpu_mem_fraction). vLLM instead takes
// gpu_memory_utilization × total and requires that much free
// (vllm/v1/worker/gpu_worker.py, determine_available_memory).
func freeBased(policy string) bool { return policy != "vllm" }

func discreteUsable(d Device, policy string) (planner.Bytes, string) {
	if !freeBased(policy) {
		rule := "total device memory: vLLM allocates gpu_memory_utilization × total (torch.cuda.mem_get_info)"
		if d.VRAMUsed > planner.GiB {
			rule += fmt.Sprintf("; %s is already in use and must be freed first", d.VRAMUsed)
		}
		return d.VRAMTotal, rule
	}
	return d.VRAMFree(), "free device memory (total − used): the engine sizes its buffers from free memory at start"
}

// apuUsable applies the rules of an AMD APU. V is the BIOS carve-out, C the
// GTT ceiling (min of mem_info_gtt_total and ttm.pages_limit × 4 KiB).
//
//   - Vulkan: ggml-vulkan sums every memory heap of an integrated GPU
//     (ggml_backend_vk_get_device_memory: is_integrated_gpu || device-local),
//     and RADV's heaps of an APU together hold the carve-out and the GTT
//     (radv_physical_device.c splits GTT + visible VRAM 2/3 : 1/3 between
//     them), so llama.cpp sees V + C.
//   - ROCm: hipMemGetInfo's total on an APU is the TTM/GTT limit with a
//     small carve-out (llama.cpp PR #20472: 122880 MiB = ttm.pages_limit on
//     a 128 GiB Strix Halo) and the carve-out when that is larger (PR
//     #27083, merged 2026-08: HIP builds stop overriding it with
//     MemAvailable); vLLM, SGLang and TGI read it through torch.
//
// The GTT part is capped at MemTotal − OS reserve for free-based policies:
// what the GPU maps from system RAM, the OS cannot use.
func apuUsable(d Device, m Machine, policy string, b planner.Backend) (planner.Bytes, string) {
	v, c, gtt := d.VRAMTotal, gttCeilingOf(d), apuGTT(d, m)
	switch {
	case b == planner.Vulkan:
		return nonNeg(v + gtt - d.VRAMUsed - d.GTTUsed),
			fmt.Sprintf("Vulkan sums the iGPU's heaps: carve-out %s + GTT %s (ceiling %s, capped at MemTotal − %s for the OS) − used", v, gtt, c, osReserve())
	case !freeBased(policy):
		hip := max(v, c)
		rule := fmt.Sprintf("torch on ROCm reports hipMemGetInfo's total: the larger of carve-out %s and GTT ceiling %s", v, c)
		if hip > v && float64(hip)*0.9 > float64(nonNeg(m.Memory.Total-osReserve())) {
			rule += fmt.Sprintf("; vLLM's default 0.90 of it leaves the OS less than %s: lower --gpu-memory-utilization", osReserve())
		}
		return hip, rule
	case v >= c:
		return d.VRAMFree(), fmt.Sprintf("ROCm on an APU with a large carve-out: HIP allocates from the carve-out %s (free = total − used)", v)
	}
	rule := fmt.Sprintf("ROCm on an APU with a small carve-out: HIP allocates GTT up to its ceiling %s, capped at MemTotal − %s for the OS, − used", c, osReserve())
	if policy == "ollama" && ollamaIntegrated(d) {
		rule += "; Ollama classes it as an iGPU (VRAM ≤ 4 GiB, GTT ≥ 8 GiB and ≥ 4 × VRAM)"
	}
	return nonNeg(gtt - d.GTTUsed), rule
}

// gttCeilingOf is the GTT ceiling, or the GTT size when no ceiling was
// computed.
func gttCeilingOf(d Device) planner.Bytes {
	if d.GTTCeiling > 0 {
		return d.GTTCeiling
	}
	return d.GTTTotal
}

// apuGTT is the GTT an APU may use with the OS reserve kept: the ceiling,
// capped at MemTotal − osReserve (uncapped when MemTotal is unknown).
func apuGTT(d Device, m Machine) planner.Bytes {
	c := gttCeilingOf(d)
	if m.Memory.Total == 0 {
		return c
	}
	return min(c, nonNeg(m.Memory.Total-osReserve()))
}

// socUsable is for NVIDIA unified-memory SoCs (GB10, Jetson): llama.cpp's
// CUDA backend takes free memory from /proc/meminfo MemAvailable on an
// integrated device (llama.cpp PR #17368, "DGX Spark: UMA support");
// torch reports the whole pool as total.
func socUsable(m Machine, policy string) (planner.Bytes, string) {
	if !freeBased(policy) {
		return m.Memory.Total, "unified memory: torch reports system memory (MemTotal) as the device's total"
	}
	return m.Memory.Available, "unified memory: free memory is MemAvailable (llama.cpp PR #17368 reads /proc/meminfo)"
}

// intelIGPUUsable covers Intel integrated GPUs. Mesa's ANV driver exposes
// 3/4 of system RAM as its heap above 4 GiB of RAM (anv_physical_device.c,
// compute_sys_heap_size) [U: from memory, not checked against a copy].
func intelIGPUUsable(m Machine, policy string) (planner.Bytes, string) {
	if policy != "llamacpp" && policy != "ollama" {
		return 0, "no " + policy + " backend for Intel integrated GPUs"
	}
	heap := m.Memory.Total * 3 / 4
	return min(heap, nonNeg(m.Memory.Available-osReserve())),
		"shared system RAM: ANV's heap is 3/4 of RAM, capped at MemAvailable − OS reserve"
}

// appleUsable is for Apple silicon. llama.cpp's Metal backend reports the
// device's memory as recommendedMaxWorkingSetSize and its free memory as
// that less what its own process has allocated (ggml-metal-device.m,
// ggml_metal_device_get_memory), so it sizes against the working set
// whatever other processes hold (macOS compresses or pages them out);
// Ollama sizes against the same figure (discover/gpu_darwin.go). MLX
// allocates up to 1.5 × the working set but pages everything past it on
// each step (osaurus PR #1958 citing mlx/backend/metal/allocator.cpp), so
// the working set is its useful limit too. What other processes hold now
// is FreeNow's business. PyTorch engines (vLLM, SGLang, TGI) have no Metal
// backend.
func appleUsable(d Device, m Machine, policy string) (planner.Bytes, string) {
	switch policy {
	case "llamacpp", "ollama", "mlx", "transformers":
	default:
		return 0, "no " + policy + " backend for Apple GPUs (Metal); it would run on the CPU"
	}
	rule := "Metal's working set (recommendedMaxWorkingSetSize): " + d.WorkingSetSource
	if m.Memory.Available > 0 && m.Memory.Available < d.WorkingSet {
		rule += fmt.Sprintf("; only %s of RAM is available now (vm_stat): macOS will compress or page out the rest", m.Memory.Available)
	}
	return d.WorkingSet, rule
}

// wddmUsable is for a Windows integrated GPU: Vulkan and DirectML see the
// dedicated (BIOS carve-out) memory plus WDDM's shared system memory
// (half of RAM; Microsoft, "Calculating graphics memory"). ROCm and CUDA
// engines do not run on Windows iGPUs natively.
func wddmUsable(d Device, policy string) (planner.Bytes, string) {
	if policy != "llamacpp" && policy != "ollama" {
		return 0, "no " + policy + " backend for integrated GPUs on Windows"
	}
	return nonNeg(d.VRAMTotal + d.SharedTotal - d.VRAMUsed),
		fmt.Sprintf("dedicated %s + shared GPU memory %s (WDDM: half of RAM)", d.VRAMTotal, d.SharedTotal)
}

// ForPlanner turns a matched device into what `headroom fit` needs: the
// catalog Hardware with its memory set from the probe, what a GPU engine
// can allocate on it now (usable; engine-agnostic: the llama.cpp rule,
// free memory), and the host RAM for offload (MemAvailable; on an APU or
// SoC the planner itself takes the GPU's share out of it, so nothing is
// counted twice).
func ForPlanner(md MatchedDevice, m Machine) (hw planner.Hardware, usable planner.Bytes, hostRAM planner.Bytes, notes []string) {
	hw, d := md.Hardware, md.Device
	notes = append(notes, md.Notes...)
	hostRAM = m.Memory.Available
	switch classify(d) {
	case classDiscrete:
		hw.Memory, hw.GPUMemory = d.VRAMTotal, d.VRAMTotal
		hw.MemoryModel = planner.MemDiscrete
	case classAMDAPU:
		hw.MemoryModel = planner.MemAPU
		hw.GPUMemory = d.VRAMTotal + apuGTT(d, m)
		hw.Memory = firstNonZero(m.Memory.Installed, m.Memory.Total, hw.Memory)
	case classUnifiedSoC, classIntelIGPU:
		hw.MemoryModel = planner.MemUnified
		hw.Memory = firstNonZero(m.Memory.Installed, m.Memory.Total, hw.Memory)
		hw.GPUMemory = m.Memory.Total
	case classAppleSoC:
		hw.MemoryModel = planner.MemUnified
		hw.Memory = firstNonZero(m.Memory.Total, hw.Memory)
		hw.GPUMemory = firstNonZero(d.WorkingSet, hw.GPUMemory)
		// macOS pages out what other apps hold when Metal wires memory, so
		// the planner gets the whole RAM (it takes the GPU's share and the
		// OS reserve out itself); what is free now is FreeNow's (--free).
		hostRAM = hw.Memory
	case classWDDMShared:
		hw.MemoryModel = planner.MemAPU
		hw.Memory = firstNonZero(m.Memory.Installed, m.Memory.Total, hw.Memory)
		hw.GPUMemory = d.VRAMTotal + d.SharedTotal
	case classUnknownMemory:
		if d.Kind == planner.KindCPU {
			hw.MemoryModel = planner.MemHost
			hw.Memory = firstNonZero(m.Memory.Installed, m.Memory.Total, hw.Memory)
			notes = append(notes, "no accelerator: CPU inference from system RAM")
			return hw, 0, hostRAM, notes
		}
		notes = append(notes, "device memory not probed: using the catalog's "+hw.UsableGPUMemory().String())
		return hw, hw.UsableGPUMemory(), hostRAM, notes
	}
	u := UsableMemory(d, m, "llamacpp", "")
	notes = append(notes, "usable "+u.Bytes.String()+": "+u.Rule)
	return hw, u.Bytes, hostRAM, notes
}

func firstNonZero(xs ...planner.Bytes) planner.Bytes {
	for _, x := range xs {
		if x > 0 {
			return x
		}
	}
	return 0
}
