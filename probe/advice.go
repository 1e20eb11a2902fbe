package probe

import (
	"fmt"
	"math"

	"github.com/headroom-planner/headroom/planner"
)

// Setting is one change to a unified-memory machine's configuration.
type Setting struct {
	// Name is the knob: "iogpu.wired_limit_mb", "ttm.pages_limit",
	// "amdgpu.gttsize", "UMA frame buffer (BIOS)" or
	// "--gpu-memory-utilization".
	Name string `json:"name"`
	// Value is exactly what to set it to ("28672", "30146560", "0.93",
	// "512 MiB").
	Value string `json:"value"`
	// How says where and how: the command to run or the file to edit.
	How string `json:"how"`
}

// Advice says whether a model needing Need bytes fits an APU or a Mac as
// it is set up, and which settings would let it.
type Advice struct {
	Policy string        `json:"policy"`
	Need   planner.Bytes `json:"need"`
	// Have is what the engine can allocate as the machine is set up now
	// (UsableMemory on an idle machine).
	Have planner.Bytes `json:"have"`
	// Fits: Need ≤ Have, nothing to change.
	Fits bool `json:"fits"`
	// Possible: the Settings make it fit, leaving the OS its reserve.
	Possible bool `json:"possible"`
	// Max is the most the engine could get on this machine with the OS
	// reserve kept.
	Max      planner.Bytes `json:"max"`
	Settings []Setting     `json:"settings,omitempty"`
	// Note explains the verdict and names the rules' sources.
	Note string `json:"note"`
}

// Advise says which settings would let a model needing need bytes fit on
// device d of machine m with engine policy. It is pure: it reads only the
// probed values (the carve-out, GTT ceiling, amdgpu.gttsize and
// ttm.pages_limit, RAM; a Mac's RAM and wired limit).
//
// On a Mac the knob is the GPU's wired-memory limit, which Metal reports
// as its working set (llmfit PR #754; whichllm PR #153; gpustack PR #1516
// sets it at install): `sudo sysctl iogpu.wired_limit_mb=N`, lost at
// reboot unless also written to /etc/sysctl.conf.
//
// On an AMD APU under Linux the GPU maps system RAM through the GTT, whose
// size is min(amdgpu.gttsize, ttm.pages_limit × 4 KiB) (kernel module
// parameters amdgpu.gttsize in MiB, ttm.pages_limit in 4 KiB pages; recent
// kernels take the TTM limit and ignore gttsize); the BIOS carve-out (UMA
// frame buffer) is RAM the kernel never sees. llama.cpp on Vulkan sees
// carve-out + GTT; ROCm engines the larger of the two (UsableMemory), and
// vLLM takes --gpu-memory-utilization of that. The advice raises the GTT
// first, and shrinks a large carve-out to 512 MiB when the RAM it hides is
// needed.
//
// Other devices get Possible false with a Note. The OS reserve is the
// planner's (4 GiB, at most a quarter of RAM).
func Advise(d Device, m Machine, policy string, need planner.Bytes) Advice {
	idleD, idleM := d, m
	idleD.VRAMUsed, idleD.GTTUsed = 0, 0
	idleM.Memory.Available = m.Memory.Total
	a := Advice{Policy: normalizePolicy(policy), Need: need}
	a.Have = UsableMemory(idleD, idleM, policy, "").Bytes
	a.Fits = need <= a.Have && a.Have > 0
	switch classify(d) {
	case classAppleSoC:
		adviseMac(&a, d, m)
	case classAMDAPU:
		adviseAPU(&a, d, m)
	default:
		a.Max = a.Have
		a.Note = "no setting changes this device's memory: it is not an APU or a Mac"
	}
	if a.Fits {
		a.Possible, a.Settings = true, nil
	}
	return a
}

// reserveOf is the planner's OS reserve for a machine with this much RAM.
func reserveOf(ram planner.Bytes) planner.Bytes { return min(osReserve(), ram/4) }

func ceilDiv(a, b planner.Bytes) int64 {
	return int64((a + b - 1) / b)
}

func adviseMac(a *Advice, d Device, m Machine) {
	ram := m.Memory.Total
	if a.Policy != "llamacpp" && a.Policy != "ollama" && a.Policy != "mlx" && a.Policy != "transformers" {
		a.Note = "this engine has no Metal backend"
		return
	}
	a.Max = max(nonNeg(ram-reserveOf(ram)), d.WorkingSet)
	if a.Fits {
		a.Note = fmt.Sprintf("fits the Metal working set %s (%s)", d.WorkingSet, d.WorkingSetSource)
		return
	}
	if a.Need > a.Max {
		a.Note = fmt.Sprintf("needs %s; even a raised wired limit leaves at most %s of %s (keeping %s for macOS)", a.Need, a.Max, ram, reserveOf(ram))
		return
	}
	// Whole 256 MiB steps, so the value reads well and leaves a margin.
	n := ceilDiv(a.Need, 256*planner.MiB) * 256
	n = min(n, int64(a.Max/planner.MiB))
	a.Possible = true
	a.Settings = []Setting{{Name: wiredLimitSysctl, Value: fmt.Sprint(n),
		How: fmt.Sprintf("sudo sysctl %s=%d (until reboot; add the line %s=%d to /etc/sysctl.conf to keep it)", wiredLimitSysctl, n, wiredLimitSysctl, n)}}
	a.Note = fmt.Sprintf("the GPU may now keep %s resident (%s); raising the wired limit to %d MiB lets it keep %s, leaving macOS %s",
		d.WorkingSet, d.WorkingSetSource, n, planner.Bytes(n)*planner.MiB, ram-planner.Bytes(n)*planner.MiB)
}

// smallCarveOut is the UMA frame buffer Strix Halo guides set when the GPU
// should take its memory from the GTT instead (the BIOS minimum on most
// boards).
const smallCarveOut = 512 * planner.MiB

func adviseAPU(a *Advice, d Device, m Machine) {
	v, t := d.VRAMTotal, m.Memory.Total
	if t == 0 {
		a.Note = "system RAM not probed"
		return
	}
	reserve := reserveOf(t + v)
	vulkan := defaultBackend(d, a.Policy) == planner.Vulkan
	// GTT the engine needs with the carve-out kept, and with it shrunk.
	gttKeep := need(a.Need, v, vulkan)
	maxKeep := nonNeg(t - reserve)
	tSmall := t + nonNeg(v-smallCarveOut)
	gttSmall := need(a.Need, smallCarveOut, vulkan)
	maxSmall := nonNeg(tSmall - reserve)
	a.Max = max(capacity(v, maxKeep, vulkan), capacity(smallCarveOut, maxSmall, vulkan))
	if a.Fits {
		a.Note = "fits as the machine is set up"
		return
	}
	// The GTT is raised to all the RAM but the OS reserve (what Strix Halo
	// guides do, and what the probe's own warning suggests), not just to
	// the model's need: the KV cache grows with the context.
	var gtt, least planner.Bytes
	switch {
	case gttKeep <= maxKeep:
		gtt, least = maxKeep, gttKeep
		a.Settings = gttSettings(gtt)
	case gttSmall <= maxSmall && v > smallCarveOut:
		gtt, least = maxSmall, gttSmall
		a.Settings = append([]Setting{{Name: "UMA frame buffer (BIOS)", Value: smallCarveOut.String(),
			How: fmt.Sprintf("BIOS setup: set the GPU's dedicated memory (UMA frame buffer / VRAM size) from %s to the minimum, %s, so Linux gets that RAM back", v, smallCarveOut)}},
			gttSettings(gtt)...)
	default:
		a.Note = fmt.Sprintf("needs %s; the GPU can map at most %s of this machine's RAM with %s kept for the OS", a.Need, a.Max, reserve)
		return
	}
	a.Possible = true
	a.Note = fmt.Sprintf("raise the GTT (system RAM the GPU maps) from %s to %s, keeping %s for the OS; the model needs at least %s of it",
		gttCeilingOf(d), gtt, reserve, least)
	if a.Policy == "vllm" {
		total := max(smallCarveOut, gttOf(a.Settings))
		util := math.Ceil(float64(a.Need)/float64(total)*100) / 100
		a.Settings = append(a.Settings, Setting{Name: "--gpu-memory-utilization", Value: fmt.Sprintf("%.2f", util),
			How: fmt.Sprintf("vllm serve ... --gpu-memory-utilization %.2f (of the %s HIP reports; the default 0.90 would take %s)", util, total, planner.Bytes(float64(total)*0.9))})
	}
}

// need is the GTT an engine needs for a model of n bytes beside carve-out
// v: Vulkan adds the two; HIP allocates from the GTT alone when it is the
// larger.
func need(n, v planner.Bytes, vulkan bool) planner.Bytes {
	if vulkan {
		return nonNeg(n - v)
	}
	return n
}

// capacity is what the engine sees with carve-out v and GTT g.
func capacity(v, g planner.Bytes, vulkan bool) planner.Bytes {
	if vulkan {
		return v + g
	}
	return max(v, g)
}

func gttSettings(g planner.Bytes) []Setting {
	g = g / planner.MiB * planner.MiB // whole MiB, as gttsize takes it
	pages := int64(g / ttmPageSize)
	mib := int64(g / planner.MiB)
	return []Setting{
		{Name: "ttm.pages_limit", Value: fmt.Sprint(pages),
			How: fmt.Sprintf("kernel command line ttm.pages_limit=%d (GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then update-grub and reboot), or 'options ttm pages_limit=%d' in /etc/modprobe.d/ttm.conf", pages, pages)},
		{Name: "amdgpu.gttsize", Value: fmt.Sprint(mib),
			How: fmt.Sprintf("kernel command line amdgpu.gttsize=%d, for kernels that still read it", mib)},
	}
}

// gttOf reads back the GTT size the settings give.
func gttOf(ss []Setting) planner.Bytes {
	for _, s := range ss {
		if s.Name == "amdgpu.gttsize" {
			var mib int64
			if _, err := fmt.Sscan(s.Value, &mib); err == nil {
				return planner.Bytes(mib) * planner.MiB
			}
		}
	}
	return 0
}
