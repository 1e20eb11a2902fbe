package probe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// sysfs locations the GPU readers use (Documentation/ABI/testing/
// sysfs-bus-pci, drivers/gpu/drm/amd/amdgpu/amdgpu_vram_mgr.c and
// amdgpu_gtt_mgr.c for mem_info_*).
const (
	pciDevicesDir  = "sys/bus/pci/devices"
	amdgpuGTTParam = "sys/module/amdgpu/parameters/gttsize"
	ttmPagesParam  = "sys/module/ttm/parameters/pages_limit"
	// ttmPageSize is the unit of ttm.pages_limit: PAGE_SIZE, 4 KiB on
	// x86-64 (drivers/gpu/drm/ttm/ttm_tt.c, "pages_limit").
	ttmPageSize = 4 * planner.KiB
)

// PCI class codes of accelerators (PCI Code and ID Assignment spec):
// 0x03 display controllers, 0x12 processing accelerators (Instinct MI300X).
const (
	classDisplay     = 0x03
	classAccelerator = 0x12
)

var cardName = regexp.MustCompile(`^card[0-9]+$`)

// sysfsGPUs lists the accelerators below /sys/bus/pci/devices. ok is false
// when the directory could not be listed at all.
func (p *prober) sysfsGPUs() (devs []Device, ok bool) {
	ents, err := p.fs.readDir(pciDevicesDir)
	if err != nil {
		p.warn("PCI devices not listed: %v", err)
		return nil, false
	}
	for _, e := range ents {
		bus, err := normalizeBus(e.Name)
		if err != nil {
			continue
		}
		if d, keep := p.pciDevice(path.Join(pciDevicesDir, e.Name), bus); keep {
			devs = append(devs, d)
		}
	}
	return devs, true
}

// pciDevice reads one PCI function; keep is false for anything that is not
// an AMD, NVIDIA or Intel display controller or accelerator.
func (p *prober) pciDevice(dir, bus string) (Device, bool) {
	cls, err := p.fs.readFile(path.Join(dir, "class"))
	if err != nil {
		p.warn("%v", err)
		return Device{}, false
	}
	code, err := parsePCIClass(cls)
	if err != nil {
		p.warn("%s: %v", display(path.Join(dir, "class")), err)
		return Device{}, false
	}
	if base := code >> 16; base != classDisplay && base != classAccelerator {
		return Device{}, false
	}
	vendor, ok := p.hexAttr(dir, "vendor")
	if !ok || vendorNames[vendor] == "" {
		return Device{}, false
	}
	device, ok := p.hexAttr(dir, "device")
	if !ok {
		return Device{}, false
	}
	d := Device{
		Vendor: vendorNames[vendor], PCIID: vendor + ":" + device, Bus: bus,
		Class: fmt.Sprintf("0x%06x", code), NUMANode: -1, Kind: planner.KindGPU,
		Sources: []string{"sysfs"},
	}
	d.NUMANode = p.numaNode(dir)
	d.Driver = p.driver(dir)
	d.Card = p.drmCard(dir)
	p.vendorDetails(dir, &d)
	return d, true
}

func (p *prober) hexAttr(dir, name string) (string, bool) {
	b, err := p.fs.readFile(path.Join(dir, name))
	if err != nil {
		p.warn("%v", err)
		return "", false
	}
	v, err := parsePCIHex(b)
	if err != nil {
		p.warn("%s: %v", display(path.Join(dir, name)), err)
		return "", false
	}
	return v, true
}

func (p *prober) numaNode(dir string) int {
	b, err := p.fs.readFile(path.Join(dir, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := parseSysfsInt(b)
	if err != nil || n < 0 || n > 1<<16 {
		return -1
	}
	return int(n)
}

func (p *prober) driver(dir string) string {
	t, err := p.fs.readLink(path.Join(dir, "driver"))
	if err != nil {
		return ""
	}
	return path.Base(t)
}

// drmCard finds the device's DRM card node (device/drm/cardN).
func (p *prober) drmCard(dir string) string {
	ents, err := p.fs.readDir(path.Join(dir, "drm"))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if cardName.MatchString(e.Name) {
			return e.Name
		}
	}
	return ""
}

// vendorDetails fills what only the vendor's driver tells: names and
// memory. NVIDIA's memory comes later from nvidia-smi.
func (p *prober) vendorDetails(dir string, d *Device) {
	if k, ok := knownDevices[d.PCIID]; ok {
		d.Name, d.Arch = k.Name, k.Arch
	}
	switch d.Vendor {
	case "AMD":
		p.amdgpu(dir, d)
	case "Intel":
		p.intelGPU(dir, d)
	}
	if d.Name == "" {
		d.Name = p.pciName(d.VendorID(), d.DeviceID())
	}
}

// amdgpu reads the amdgpu memory managers' sysfs files and decides whether
// the device is an APU.
func (p *prober) amdgpu(dir string, d *Device) {
	switch d.Driver {
	case "amdgpu":
	case "":
		p.warn("AMD GPU %s has no driver bound (amdgpu not loaded?): its memory is not visible", d.Bus)
		return
	default:
		p.warn("AMD GPU %s is bound to %s, not amdgpu: its memory is not visible", d.Bus, d.Driver)
		return
	}
	if d.Name == "" {
		if s, err := p.fs.readString(path.Join(dir, "product_name")); err == nil {
			d.Name = s
		}
	}
	d.VRAMTotal = p.bytesAttr(dir, "mem_info_vram_total", true)
	d.VRAMUsed = p.bytesAttr(dir, "mem_info_vram_used", false)
	d.VisibleVRAMTotal = p.bytesAttr(dir, "mem_info_vis_vram_total", false)
	d.VisibleVRAMUsed = p.bytesAttr(dir, "mem_info_vis_vram_used", false)
	d.GTTTotal = p.bytesAttr(dir, "mem_info_gtt_total", true)
	d.GTTUsed = p.bytesAttr(dir, "mem_info_gtt_used", false)
	d.PowerLimitW = p.hwmonPowerCap(dir)
	p.amdIntegrated(dir, d)
	p.gttCeiling(d)
}

// bytesAttr reads a byte-count attribute; a missing optional one is quiet.
func (p *prober) bytesAttr(dir, name string, required bool) planner.Bytes {
	rel := path.Join(dir, name)
	b, err := p.fs.readFile(rel)
	if err != nil {
		if required || !errors.Is(err, fs.ErrNotExist) {
			p.warn("%v", err)
		}
		return 0
	}
	v, err := parseSysfsBytes(b)
	if err != nil {
		p.warn("%s: %v", display(rel), err)
		return 0
	}
	return v
}

// amdIntegrated classifies an AMD GPU. Evidence, strongest first: the PCI
// id table; mem_info_vram_vendor or board_info, which only discrete boards
// have; then Ollama's rule (ollama discover/amd.go at 0ff4ca68,
// readROCmDRMDevice): VRAM ≤ 4 GiB, GTT ≥ 8 GiB and GTT ≥ 4 × VRAM.
func (p *prober) amdIntegrated(dir string, d *Device) {
	if k, ok := knownDevices[d.PCIID]; ok && k.Kind == planner.KindAPU {
		d.Integrated, d.IntegratedReason = true, "PCI id "+d.PCIID+" is an APU ("+k.Name+")"
	} else if p.fs.exists(path.Join(dir, "mem_info_vram_vendor")) || p.fs.exists(path.Join(dir, "board_info")) {
		d.IntegratedReason = "has mem_info_vram_vendor or board_info (discrete board)"
	} else if ollamaIntegrated(*d) {
		d.Integrated, d.IntegratedReason = true, "VRAM ≤ 4 GiB with GTT ≥ 8 GiB and ≥ 4 × VRAM (Ollama's iGPU rule)"
	}
	if d.Integrated {
		d.Kind = planner.KindAPU
	}
}

// ollamaIntegrated is Ollama's test for an AMD iGPU from DRM sysfs
// (ollama discover/amd.go at 0ff4ca68: maxIntegratedVRAM = 4 GiB,
// minSharedGTT = 8 GiB, gttTotal ≥ 4 × vramTotal).
func ollamaIntegrated(d Device) bool {
	return d.VRAMTotal > 0 && d.VRAMTotal <= 4*planner.GiB && d.GTTTotal >= 8*planner.GiB && d.GTTTotal >= 4*d.VRAMTotal
}

// gttCeiling computes how much system RAM the GPU can map: the GTT size
// (mem_info_gtt_total, set by amdgpu.gttsize or the kernel default) capped
// by TTM's global limit ttm.pages_limit, and never above MemTotal.
func (p *prober) gttCeiling(d *Device) {
	d.GTTSizeParamMiB, d.TTMPagesLimit = p.params.gttsizeMiB, p.params.pagesLimit
	ceil, src := d.GTTTotal, "mem_info_gtt_total"
	if ceil == 0 && d.GTTSizeParamMiB > 0 {
		ceil, src = planner.Bytes(d.GTTSizeParamMiB)*planner.MiB, "amdgpu.gttsize"
	}
	if d.TTMPagesLimit > 0 {
		if lim := planner.Bytes(d.TTMPagesLimit) * ttmPageSize; ceil == 0 || lim < ceil {
			ceil, src = lim, "ttm.pages_limit"
		}
	}
	if total := p.m.Memory.Total; total > 0 && ceil > total {
		ceil, src = total, src+", capped at MemTotal"
	}
	d.GTTCeiling, d.GTTCeilingSource = ceil, src
	if d.GTTSizeParamMiB > 0 && d.TTMPagesLimit > 0 {
		gs, lim := planner.Bytes(d.GTTSizeParamMiB)*planner.MiB, planner.Bytes(d.TTMPagesLimit)*ttmPageSize
		if lim < gs {
			p.warn("amdgpu.gttsize=%d MiB but ttm.pages_limit=%d caps GPU allocations at %s; raise ttm.pages_limit to %d",
				d.GTTSizeParamMiB, d.TTMPagesLimit, lim, int64(gs/ttmPageSize))
		}
	}
}

// moduleParams are the kernel module parameters that bound GTT.
type moduleParams struct {
	gttsizeMiB int64 // amdgpu.gttsize, -1 = default; 0 = not read
	pagesLimit int64 // ttm.pages_limit in pages; 0 = not read
}

func (p *prober) readModuleParams() moduleParams {
	var mp moduleParams
	if b, err := p.fs.readFile(amdgpuGTTParam); err == nil {
		if v, err := parseSysfsInt(b); err == nil && (v == -1 || v > 0) {
			mp.gttsizeMiB = v
		} else {
			p.warn("%s: not -1 or a size in MiB", display(amdgpuGTTParam))
		}
	}
	if b, err := p.fs.readFile(ttmPagesParam); err == nil {
		if v, err := parseSysfsInt(b); err == nil && v > 0 {
			mp.pagesLimit = v
		} else {
			p.warn("%s: not a page count", display(ttmPagesParam))
		}
	}
	return mp
}

// hwmonPowerCap reads the board power limit from hwmon power1_cap (µW).
func (p *prober) hwmonPowerCap(dir string) float64 {
	ents, err := p.fs.readDir(path.Join(dir, "hwmon"))
	if err != nil {
		return 0
	}
	for _, e := range ents {
		b, err := p.fs.readFile(path.Join(dir, "hwmon", e.Name, "power1_cap"))
		if err != nil {
			continue
		}
		if v, err := parseSysfsBytes(b); err == nil && v > 0 && v < 100_000_000_000 {
			return float64(v) / 1e6
		}
	}
	return 0
}

// intelGPU reads local memory where the driver publishes it: xe's
// tileN/physical_vram_size_bytes (igt tests/intel/xe_sysfs_tile.c), or
// lmem_total_bytes on the DRM card of Intel's out-of-tree i915. Mainline
// i915 publishes none.
func (p *prober) intelGPU(dir string, d *Device) {
	d.VRAMTotal = p.xeVRAM(dir)
	if d.VRAMTotal == 0 && d.Card != "" {
		d.VRAMTotal = p.bytesAttrQuiet(path.Join(dir, "drm", d.Card, "lmem_total_bytes"))
	}
	if d.VRAMTotal == 0 && strings.HasSuffix(d.Bus, ":00:02.0") {
		d.Integrated, d.Kind = true, planner.KindAPU
		d.IntegratedReason = "Intel GPU at 00:02.0 without local memory (integrated)"
		return
	}
	if d.VRAMTotal == 0 {
		p.warn("Intel GPU %s (%s): driver %q publishes no local memory size", d.Bus, d.PCIID, d.Driver)
	}
}

func (p *prober) xeVRAM(dir string) planner.Bytes {
	ents, err := p.fs.readDir(dir)
	if err != nil {
		return 0
	}
	var sum planner.Bytes
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "tile") {
			continue
		}
		v := p.bytesAttrQuiet(path.Join(dir, e.Name, "physical_vram_size_bytes"))
		if v == 0 {
			v = p.bytesAttrQuiet(path.Join(dir, e.Name, "memory", "physical_vram_size_bytes"))
		}
		sum += v
	}
	return sum
}

func (p *prober) bytesAttrQuiet(rel string) planner.Bytes {
	b, err := p.fs.readFile(rel)
	if err != nil {
		return 0
	}
	v, err := parseSysfsBytes(b)
	if err != nil {
		p.warn("%s: %v", display(rel), err)
		return 0
	}
	return v
}

// nvidia merges nvidia-smi's view into the sysfs devices. It runs
// nvidia-smi only when sysfs shows an NVIDIA GPU, or could not be read.
func (p *prober) nvidia(ctx context.Context, devs []Device, pciOK bool) []Device {
	need := !pciOK
	for _, d := range devs {
		need = need || d.Vendor == "NVIDIA"
	}
	if !need {
		return devs
	}
	gpus, ok, err := p.querySMI(ctx)
	if err != nil && (pciOK || !errors.Is(err, ErrNoSMI)) {
		p.warn("nvidia-smi: %v; NVIDIA memory not probed, catalog sizes will be used", err)
	}
	if !ok {
		return devs
	}
	return p.mergeSMI(devs, gpus)
}

// querySMI runs nvidia-smi, records its output for snapshots and parses
// it, warning about what in the output it could not read. ok is false
// when there is nothing to use: a failed query (err, for the caller to
// word for its OS) or unreadable output (already warned about).
func (p *prober) querySMI(ctx context.Context) (gpus []smiGPU, ok bool, err error) {
	out, err := p.smi.Query(ctx)
	p.recordSMI(out, err)
	if err != nil {
		return nil, false, err
	}
	gpus, problems, perr := parseSMI(out)
	if perr != nil {
		p.warn("nvidia-smi output: %v", perr)
		return nil, false, nil
	}
	for _, pr := range problems {
		p.warn("nvidia-smi output: %s", pr)
	}
	return gpus, true, nil
}

func (p *prober) recordSMI(out []byte, err error) {
	if err != nil {
		p.rec.add(smiSavedError, []byte(err.Error()+"\n"))
		return
	}
	p.rec.add(smiSavedOutput, out)
}

func (p *prober) mergeSMI(devs []Device, gpus []smiGPU) []Device {
	byBus := map[string]int{}
	for i, d := range devs {
		byBus[d.Bus] = i
	}
	seen := map[int]bool{}
	for _, g := range gpus {
		i, ok := byBus[g.Bus]
		if !ok || g.Bus == "" {
			devs = append(devs, smiOnlyDevice(g))
			continue
		}
		seen[i] = true
		applySMI(&devs[i], g)
	}
	for i, d := range devs {
		if d.Vendor == "NVIDIA" && !seen[i] && !contains(d.Sources, "nvidia-smi") {
			p.warn("NVIDIA GPU %s (%s) is not listed by nvidia-smi (driver %q)", d.Bus, d.PCIID, d.Driver)
		}
	}
	return devs
}

func smiOnlyDevice(g smiGPU) Device {
	d := Device{Vendor: "NVIDIA", Bus: g.Bus, PCIID: g.PCIID, NUMANode: -1, Kind: planner.KindGPU}
	if k, ok := knownDevices[d.PCIID]; ok {
		d.Arch = k.Arch
	}
	applySMI(&d, g)
	return d
}

func applySMI(d *Device, g smiGPU) {
	if g.Name != "" {
		d.Name = g.Name
	}
	if d.PCIID == "" {
		d.PCIID = g.PCIID
	}
	if g.HasMemory {
		d.VRAMTotal, d.VRAMUsed = g.MemTotal, g.MemUsed
	} else {
		d.Integrated, d.Kind = true, planner.KindSoC
		d.IntegratedReason = "nvidia-smi reports no dedicated memory (unified memory, e.g. GB10)"
	}
	d.ComputeCapability, d.PowerLimitW = g.Compute, g.PowerLimitW
	d.MaxSMClockMHz, d.MaxMemClockMHz, d.DriverVersion = g.MaxSMClockMHz, g.MaxMemClockMHz, g.Driver
	d.Sources = append(d.Sources, "nvidia-smi")
}

// sortDevices orders devices by PCI address; devices without one go last.
func sortDevices(devs []Device) {
	sort.SliceStable(devs, func(i, j int) bool {
		a, b := devs[i].Bus, devs[j].Bus
		if (a == "") != (b == "") {
			return a != ""
		}
		return a < b
	})
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
