package probe

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// windows fills p.m from CIM (PowerShell), the display adapters' registry
// keys and nvidia-smi.
func (p *prober) windows(ctx context.Context) {
	if out := p.toolOutput(ctx, p.tools, "cim.txt"); out != nil {
		recs, err := parseFormatList(out)
		if err != nil {
			p.warn("%v", err)
		}
		p.windowsHost(recs)
	}
	devs := p.windowsAdapters(ctx)
	if len(devs) > 0 {
		devs = p.windowsNVIDIA(ctx, devs)
	}
	p.m.Devices = devs
	if p.m.Memory.Installed == 0 {
		p.estimateInstalled()
	}
}

// SMBIOS memory type codes as Win32_PhysicalMemory.SMBIOSMemoryType
// prints them (SMBIOS 3.x table 76), the same codes parseSMBIOS17 reads.
func (p *prober) windowsHost(recs []map[string]string) {
	mem := &p.m.Memory
	for _, r := range recs {
		switch {
		case r["TotalPhysicalMemory"] != "":
			p.m.System = System{Vendor: cleanName(r["Manufacturer"]), Product: cleanName(r["Model"])}
			mem.Total, _ = flBytes(r, "TotalPhysicalMemory", 1)
		case r["FreePhysicalMemory"] != "":
			p.m.Kernel = cleanName(r["Version"])
			mem.Available, _ = flBytes(r, "FreePhysicalMemory", planner.KiB)
		case r["NumberOfLogicalProcessors"] != "":
			p.windowsCPU(r)
		case r["Capacity"] != "":
			if c, ok := flBytes(r, "Capacity", 1); ok {
				mem.Installed += c
				mem.Modules++
				mem.InstalledSource = "smbios"
				if mem.Kind == "" {
					d := smbiosMemoryDevice{TypeCode: byte(min(flInt(r, "SMBIOSMemoryType"), 255)), SpeedMTs: flInt(r, "Speed")}
					mem.Kind, mem.SpeedMTs = memoryKind(d), d.SpeedMTs
				}
			}
		}
	}
	if mem.Total == 0 {
		p.warn("system memory not read (Win32_ComputerSystem.TotalPhysicalMemory)")
	}
	mem.Available = min(mem.Available, mem.Total)
}

func (p *prober) windowsCPU(r map[string]string) {
	if p.m.CPU.Model != "" { // a second socket
		p.m.CPU.Packages++
		p.m.CPU.Cores += flInt(r, "NumberOfCores")
		p.m.CPU.Threads += flInt(r, "NumberOfLogicalProcessors")
		return
	}
	p.m.CPU = CPU{Model: cleanName(r["Name"]), Vendor: cleanName(r["Manufacturer"]), Packages: 1,
		Cores: flInt(r, "NumberOfCores"), Threads: flInt(r, "NumberOfLogicalProcessors")}
}

// regFiles are the registry queries whose outputs are merged by key.
var regFiles = []string{"reg-MatchingDeviceId.txt", "reg-DriverDesc.txt", "reg-qwMemorySize.txt", "reg-MemorySize.txt"}

// windowsAdapters lists the PCI display adapters of AMD, NVIDIA and Intel
// from their registry keys, with dedicated memory from
// HardwareInformation.qwMemorySize (64-bit), or HardwareInformation.
// MemorySize (32-bit, older drivers) when that is all there is.
func (p *prober) windowsAdapters(ctx context.Context) []Device {
	keys := map[string]map[string]regValue{}
	var order []string
	for _, f := range regFiles {
		out := p.toolOutput(ctx, p.tools, f)
		if out == nil {
			continue
		}
		parsed, err := parseRegQuery(out)
		if err != nil && f != "reg-MemorySize.txt" {
			p.warn("%s: %v", f, err)
		}
		for _, k := range parsed {
			id := strings.ToLower(k.Path)
			if keys[id] == nil {
				keys[id] = map[string]regValue{}
				order = append(order, id)
			}
			for n, v := range k.Values {
				keys[id][n] = v
			}
		}
	}
	var devs []Device
	for _, id := range order {
		if d, ok := p.windowsAdapter(keys[id]); ok {
			devs = append(devs, d)
		}
	}
	return devs
}

func (p *prober) windowsAdapter(vals map[string]regValue) (Device, bool) {
	pciID, ok := regPCIID(vals["MatchingDeviceId"].Data)
	if !ok {
		return Device{}, false
	}
	vendor := vendorNames[pciID[:4]]
	if vendor == "" {
		return Device{}, false
	}
	d := Device{Vendor: vendor, PCIID: pciID, Name: cleanName(vals["DriverDesc"].Data), NUMANode: -1,
		Kind: planner.KindGPU, Sources: []string{"registry"}}
	if k, ok := knownDevices[pciID]; ok {
		d.Arch = k.Arch
		if d.Name == "" {
			d.Name = k.Name
		}
	}
	var err error
	if v, ok := vals["HardwareInformation.qwMemorySize"]; ok {
		d.VRAMTotal, err = regBytes(v)
	} else if v, ok := vals["HardwareInformation.MemorySize"]; ok {
		d.VRAMTotal, err = regBytes(v)
	} else {
		err = errors.New("no HardwareInformation.qwMemorySize")
	}
	if err != nil {
		p.warn("%s (%s): dedicated memory not read: %v", d.Name, pciID, err)
	}
	windowsIntegrated(&d)
	// WDDM lets a GPU share up to half of the RAM Windows sees, less the
	// system memory dedicated to it: TotalSystemMemoryAvailableForGraphics
	// = max(TotalSystemMemory / 2, 64 MB) (Microsoft, "Calculating
	// graphics memory"). A BIOS carve-out is not in TotalSystemMemory.
	d.SharedTotal = max(p.m.Memory.Total/2, 64*planner.MiB)
	if p.m.Memory.Total == 0 {
		d.SharedTotal = 0
	}
	return d, true
}

var intelDiscrete = regexp.MustCompile(`(?i)\bArc\(TM\)\s+(Pro\s+)?[AB][0-9]{2,3}|\bArc\s+(Pro\s+)?[AB][0-9]{2,3}|Data Center GPU`)

// windowsIntegrated decides whether an adapter shares system RAM. Linux
// reads sysfs for this; Windows gives only the name and the PCI id: the
// PCI id table first, then Intel graphics other than Arc A/B-series and
// Data Center cards, then AMD "Radeon(TM) Graphics" / "780M"-style names
// without "RX" (the Radeon iGPUs of Ryzen APUs) or a dedicated size of at
// most 4 GiB with an iGPU-style name.
func windowsIntegrated(d *Device) {
	name := d.Name
	if k, ok := knownDevices[d.PCIID]; ok && k.Kind == planner.KindAPU {
		d.Integrated, d.IntegratedReason = true, "PCI id "+d.PCIID+" is an APU ("+k.Name+")"
	} else if ok {
		return
	}
	switch d.Vendor {
	case "Intel":
		if !intelDiscrete.MatchString(name) {
			d.Integrated, d.IntegratedReason = true, "Intel graphics that is not an Arc A/B-series card (integrated)"
		}
	case "AMD":
		n := strings.ToLower(name)
		if strings.Contains(n, "graphics") && !strings.Contains(n, " rx ") && !strings.Contains(n, "radeon pro") {
			d.Integrated, d.IntegratedReason = true, "AMD Radeon Graphics without an RX model (a Ryzen APU's iGPU)"
		}
	}
	if d.Integrated {
		d.Kind = planner.KindAPU
	}
}

// windowsNVIDIA adds nvidia-smi's view (used memory, compute capability,
// bus id) to the NVIDIA adapters, matched by PCI id in order.
func (p *prober) windowsNVIDIA(ctx context.Context, devs []Device) []Device {
	need := false
	for _, d := range devs {
		need = need || d.Vendor == "NVIDIA"
	}
	if !need {
		return devs
	}
	gpus, ok, err := p.querySMI(ctx)
	if err != nil {
		p.warn("nvidia-smi: %v; NVIDIA memory in use not probed", err)
	}
	if !ok {
		return devs
	}
	used := map[int]bool{}
	for _, g := range gpus {
		for i := range devs {
			if !used[i] && devs[i].Vendor == "NVIDIA" && (g.PCIID == "" || devs[i].PCIID == g.PCIID) {
				used[i] = true
				devs[i].Bus = g.Bus
				applySMI(&devs[i], g)
				break
			}
		}
	}
	return devs
}
