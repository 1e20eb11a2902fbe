package probe

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// MatchedDevice is a probed device and the catalog hardware it was taken
// for.
type MatchedDevice struct {
	Device Device `json:"device"` // as probed
	// Hardware is the catalog entry, or a generic profile (Generic).
	Hardware planner.Hardware `json:"hardware"`
	// By says how the match was made: "catalog pci_ids", "pci id",
	// "pci id + memory", "pci id + cpu model", "name", "cpu model" or
	// "generic".
	By string `json:"matched_by"`
	// Generic marks a profile built from probed memory alone: Headroom has
	// no bandwidth or compute figures for the device.
	Generic bool `json:"generic"`
	// Skip, when set, says why the device is better left out of a plan
	// (a display iGPU beside a discrete GPU).
	Skip string `json:"skip,omitempty"`
	// Hint tells the user what to do next (run `headroom calibrate`);
	// Notes explain the match (alternatives, memory that differs).
	Hint  string   `json:"hint,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// CalibrateHint is the hint given with generic profiles.
const CalibrateHint = "Headroom has no bandwidth or compute figures for this device: run `headroom calibrate` to measure them"

// memoryTolerance is how far probed memory may be from the catalog's and
// still confirm a match: drivers report a little less than the marketing
// size (nvidia-smi shows 24564 MiB on a 24 GiB RTX 4090, 81559 MiB on an
// 80 GB H100) while boards that share a PCI id differ by 17 % or more
// (RX 7900 XT 20 GiB vs XTX 24 GiB).
const memoryTolerance = 0.08

// Match maps each probed device to catalog hardware: by the catalog's own
// pci_ids, then Headroom's PCI id table (knownDevices), then the name;
// boards sharing a PCI id are told apart by probed memory and, on APUs, by
// the CPU model. An unknown device gets a generic profile built from its
// probed memory, flagged Generic with a hint to calibrate. A machine with
// no accelerator gives one CPU entry. cat may be nil (all generic).
func Match(m Machine, cat *planner.Catalog) []MatchedDevice {
	if cat == nil {
		cat = &planner.Catalog{}
	}
	if len(m.Devices) == 0 {
		return []MatchedDevice{matchCPU(m, cat)}
	}
	out := make([]MatchedDevice, 0, len(m.Devices))
	discrete := false
	for _, d := range m.Devices {
		md := matchDevice(d, m, cat)
		discrete = discrete || !d.Integrated
		out = append(out, md)
	}
	for i := range out {
		if discrete && out[i].Device.Integrated && out[i].Generic {
			out[i].Skip = "integrated display GPU beside a discrete GPU"
		}
	}
	return out
}

func matchDevice(d Device, m Machine, cat *planner.Catalog) MatchedDevice {
	cands, by := candidates(d, cat)
	if len(cands) == 0 {
		return genericMatch(d, m)
	}
	cands, by2, notes := narrow(cands, d, m)
	md := MatchedDevice{Device: d, Hardware: cands[0], By: by + by2, Notes: notes}
	if len(cands) > 1 {
		ids := make([]string, len(cands))
		for i, h := range cands {
			ids[i] = h.ID
		}
		md.Notes = append(md.Notes, "could also be "+strings.Join(ids[1:], ", ")+"; pass --hardware to choose")
	}
	return md
}

// candidates lists catalog entries the device may be.
func candidates(d Device, cat *planner.Catalog) ([]planner.Hardware, string) {
	if d.Vendor == "Apple" {
		return appleCandidates(d, cat)
	}
	if d.PCIID != "" {
		var hs []planner.Hardware
		for _, h := range cat.Hardware {
			for _, id := range h.PCIIDs {
				if strings.EqualFold(id, d.PCIID) {
					hs = append(hs, h)
				}
			}
		}
		if len(hs) > 0 {
			return hs, "catalog pci_ids"
		}
		if hs := byIDs(cat, knownDevices[d.PCIID].IDs); len(hs) > 0 {
			return hs, "pci id"
		}
	}
	if id, ok := knownNames[d.Name]; ok {
		if hs := byIDs(cat, []string{id}); len(hs) > 0 {
			return hs, "name"
		}
	}
	if d.Name != "" && d.Vendor == "NVIDIA" {
		if h, err := cat.FindHardware(d.Name); err == nil && h.Kind != planner.KindCPU {
			return []planner.Hardware{h}, "name"
		}
	}
	return nil, ""
}

func byIDs(cat *planner.Catalog, ids []string) []planner.Hardware {
	var out []planner.Hardware
	for _, id := range ids {
		for _, h := range cat.Hardware {
			if h.ID == id {
				out = append(out, h)
			}
		}
	}
	return out
}

// narrow picks among candidates: APUs by the CPU model's numbers ("395"),
// cards by memory size.
func narrow(cands []planner.Hardware, d Device, m Machine) ([]planner.Hardware, string, []string) {
	if d.Integrated {
		if hs := byCPUModel(cands, m.CPU.Model); len(hs) > 0 && len(hs) < len(cands) {
			return hs, " + cpu model", nil
		}
		return cands, "", nil
	}
	if d.VRAMTotal == 0 {
		return cands, "", nil
	}
	var near []planner.Hardware
	for _, h := range cands {
		if memoryClose(h.Memory, d.VRAMTotal) {
			near = append(near, h)
		}
	}
	switch {
	case len(near) == 0:
		return cands[:1], "", []string{fmt.Sprintf("the catalog lists %s for %s, the probe found %s: the probed size is used",
			cands[0].Memory, cands[0].ID, d.VRAMTotal)}
	case len(near) < len(cands):
		return near, " + memory", nil
	}
	return cands, "", nil
}

func memoryClose(catalog, probed planner.Bytes) bool {
	if catalog <= 0 || probed <= 0 {
		return false
	}
	return math.Abs(float64(catalog-probed))/float64(catalog) <= memoryTolerance
}

var modelNumber = regexp.MustCompile(`[0-9]{3,4}`)

// byCPUModel keeps candidates whose id or name holds a model number of the
// CPU ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S" → 395, 8060).
func byCPUModel(cands []planner.Hardware, model string) []planner.Hardware {
	var out []planner.Hardware
	nums := modelNumber.FindAllString(model, -1)
	for _, h := range cands {
		for _, n := range nums {
			if strings.Contains(h.ID, n) || strings.Contains(h.Name, n) {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// appleCandidates finds an Apple chip by its name and GPU core count
// ("Apple M3 Pro" with 18 cores → apple-m3-pro-18c); without an entry for
// that core count, the chip's entry with the nearest count stands in.
func appleCandidates(d Device, cat *planner.Catalog) ([]planner.Hardware, string) {
	if id := appleCatalogID(d.Name, d.GPUCores); id != "" {
		if hs := byIDs(cat, []string{id}); len(hs) > 0 {
			return hs, "chip + gpu cores"
		}
	}
	prefix := appleCatalogID(d.Name, 1)
	prefix = strings.TrimSuffix(prefix, "1c")
	if prefix == "" {
		return nil, ""
	}
	var best planner.Hardware
	bestDiff := -1
	for _, h := range cat.Hardware {
		rest, ok := strings.CutPrefix(h.ID, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(rest, "c"))
		if err != nil {
			continue
		}
		diff := n - d.GPUCores
		if diff < 0 {
			diff = -diff
		}
		if bestDiff < 0 || diff < bestDiff {
			best, bestDiff = h, diff
		}
	}
	if bestDiff < 0 {
		return nil, ""
	}
	return []planner.Hardware{best}, "chip (nearest gpu core count)"
}

// genericMatch builds a profile from what was probed.
func genericMatch(d Device, m Machine) MatchedDevice {
	h := planner.Hardware{
		ID:          "generic-" + strings.ToLower(d.Vendor) + "-" + strings.ReplaceAll(d.PCIID, ":", "-"),
		Name:        d.Name + " (generic)",
		Vendor:      d.Vendor,
		Kind:        d.Kind,
		Memory:      d.VRAMTotal,
		GPUMemory:   d.VRAMTotal,
		MemoryModel: planner.MemDiscrete,
		Backends:    guessBackends(d),
		Arch:        d.Arch,
		Compute:     d.ComputeCapability,
		TDPWatts:    d.PowerLimitW,
		Source:      "probe: generic profile from probed memory",
		Notes:       "no bandwidth or compute figures; calibrate to measure them",
	}
	if d.PCIID != "" {
		h.PCIIDs = []string{d.PCIID}
	}
	switch classify(d) {
	case classAMDAPU:
		h.MemoryModel, h.Memory, h.MemoryType = planner.MemAPU, firstNonZero(m.Memory.Installed, m.Memory.Total), m.Memory.Kind
		h.GPUMemory = d.VRAMTotal + apuGTT(d, m)
	case classUnifiedSoC, classIntelIGPU:
		h.MemoryModel, h.Memory, h.MemoryType = planner.MemUnified, firstNonZero(m.Memory.Installed, m.Memory.Total), m.Memory.Kind
		h.GPUMemory = m.Memory.Total
	case classAppleSoC:
		h.MemoryModel, h.Memory, h.GPUMemory = planner.MemUnified, m.Memory.Total, d.WorkingSet
		h.Backends = []planner.Backend{planner.Metal, planner.CPU}
		h.ID = "generic-apple"
		if id := appleCatalogID(d.Name, d.GPUCores); id != "" {
			h.ID = "generic-" + id
		} else if arch := appleArch(d.Name); arch != "" {
			h.ID = "generic-" + arch
		}
	case classWDDMShared:
		h.MemoryModel, h.Memory, h.MemoryType = planner.MemAPU, firstNonZero(m.Memory.Installed, m.Memory.Total), m.Memory.Kind
		h.GPUMemory = d.VRAMTotal + d.SharedTotal
	}
	return MatchedDevice{Device: d, Hardware: h, By: "generic", Generic: true, Hint: CalibrateHint}
}

func guessBackends(d Device) []planner.Backend {
	var bs []planner.Backend
	switch d.Vendor {
	case "NVIDIA":
		bs = []planner.Backend{planner.CUDA, planner.Vulkan}
	case "AMD":
		bs = []planner.Backend{planner.ROCm, planner.Vulkan}
	case "Intel":
		bs = []planner.Backend{planner.SYCL, planner.Vulkan}
	}
	if d.Integrated {
		bs = append(bs, planner.CPU)
	}
	return bs
}

// matchCPU describes a machine without accelerators as its CPU: a catalog
// CPU entry whose name's words all appear in the model name, else a
// generic host-memory profile.
func matchCPU(m Machine, cat *planner.Catalog) MatchedDevice {
	d := Device{Vendor: cpuVendor(m.CPU.Vendor), Name: m.CPU.Model, NUMANode: -1, Kind: planner.KindCPU}
	for _, h := range cat.Hardware {
		if h.Kind == planner.KindCPU && cpuNameMatches(h.Name, m.CPU.Model) {
			return MatchedDevice{Device: d, Hardware: h, By: "cpu model"}
		}
	}
	h := planner.Hardware{
		ID: "generic-cpu", Name: strings.TrimSpace(m.CPU.Model + " (generic)"), Vendor: d.Vendor,
		Kind: planner.KindCPU, Memory: firstNonZero(m.Memory.Installed, m.Memory.Total),
		MemoryType: m.Memory.Kind, MemoryModel: planner.MemHost, Backends: []planner.Backend{planner.CPU},
		Source: "probe: generic profile from probed memory",
		Notes:  "no bandwidth figure; calibrate to measure it",
	}
	return MatchedDevice{Device: d, Hardware: h, By: "generic", Generic: true, Hint: CalibrateHint}
}

func cpuVendor(v string) string {
	switch v {
	case "AuthenticAMD":
		return "AMD"
	case "GenuineIntel":
		return "Intel"
	}
	return v
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// cpuNameMatches reports whether every word of the catalog name (before any
// "(" or "+") is a word of the CPU model: "AMD Ryzen 9 7950X + DDR5" matches
// "AMD Ryzen 9 7950X 16-Core Processor" but not "… 7950X3D …".
func cpuNameMatches(catalogName, model string) bool {
	if i := strings.IndexAny(catalogName, "(+"); i >= 0 {
		catalogName = catalogName[:i]
	}
	want := words(catalogName)
	if len(want) < 2 {
		return false
	}
	have := map[string]bool{}
	for _, w := range words(model) {
		have[w] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

func words(s string) []string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("(r)", " ", "(tm)", " ").Replace(s)
	var out []string
	for _, w := range nonWord.Split(s, -1) {
		if w != "" && w != "r" && w != "tm" {
			out = append(out, w)
		}
	}
	return out
}

// GenericPrefix starts the id of every profile Match builds from probed
// values ("generic-cpu", "generic-amd-1002-15bf", "generic-apple-m5-max").
// Such ids are not in the catalog: they name a device of the machine
// probed, and only a probe of that machine (or its snapshot) resolves them.
const GenericPrefix = "generic-"

// IsGenericID reports whether id names a profile built by the probe rather
// than a catalog entry.
func IsGenericID(id string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(id)), GenericPrefix)
}

// Lookup finds, among the devices Match returned, the one whose hardware id
// is id (case-insensitive). It is how a front end resolves `-H generic-cpu`
// (or any id the probe printed) consistently with what `headroom probe`
// shows: probe the machine (or --root), Match, then Lookup; ok is false when
// this machine has no such device.
func Lookup(matched []MatchedDevice, id string) (MatchedDevice, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, md := range matched {
		if strings.ToLower(md.Hardware.ID) == id {
			return md, true
		}
	}
	return MatchedDevice{}, false
}
