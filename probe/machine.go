package probe

import "github.com/headroom-planner/headroom/planner"

// Machine is what one probe saw: the host's CPU and memory, its
// accelerators, and warnings about everything that could not be read.
//
// A Machine holds no timestamps, host names or paths of the probed root, so
// that probing a saved snapshot gives the same Machine as probing the
// machine it was saved from.
type Machine struct {
	// OS is the probed system: "linux", "darwin" or "windows" (a snapshot
	// replays as the OS it was saved on).
	OS string `json:"os"`
	// System names the box as DMI tells (vendor, product, board); empty
	// fields were not readable. No serial numbers are ever read.
	System System `json:"system"`
	// Kernel is /proc/sys/kernel/osrelease ("6.14.0-29-generic").
	Kernel string `json:"kernel,omitempty"`
	CPU    CPU    `json:"cpu"`
	Memory Memory `json:"memory"`
	// NUMANodes is the number of NUMA nodes ghw found (0 = unknown).
	NUMANodes int `json:"numa_nodes"`
	// Devices are the accelerators (AMD, NVIDIA and Intel GPUs), ordered by
	// PCI address. BMC display adapters (ASPEED, Matrox) are left out.
	Devices []Device `json:"devices"`
	// Warnings say what could not be read or looks wrong, in the order they
	// were found. A degraded probe still returns a Machine.
	Warnings []string `json:"warnings,omitempty"`
}

// System identifies the machine from /sys/class/dmi/id (world-readable
// fields only: vendor, product and board names).
type System struct {
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
	Board   string `json:"board,omitempty"`
}

// CPU summarises the host processors.
type CPU struct {
	Vendor string `json:"vendor,omitempty"` // vendor_id: AuthenticAMD, GenuineIntel
	Model  string `json:"model,omitempty"`  // model name of the first package
	// Packages, Cores and Threads count physical packages, physical cores
	// and hardware threads (0 = unknown).
	Packages int `json:"packages"`
	Cores    int `json:"cores"`
	Threads  int `json:"threads"`
	// Features lists the instruction-set extensions that matter to CPU
	// inference (avx2, avx512f, avx512_bf16, amx_tile, asimd, sve, ...).
	Features []string `json:"features,omitempty"`
}

// Memory is the host's RAM.
type Memory struct {
	// Total is MemTotal: the RAM the kernel manages. On an APU it excludes
	// the BIOS carve-out given to the GPU.
	Total planner.Bytes `json:"total"`
	// Available is MemAvailable: what can be allocated without swapping.
	Available planner.Bytes `json:"available"`
	// Physical is the online memory the kernel's memory blocks cover (ghw);
	// zero when /sys/devices/system/memory was not readable.
	Physical planner.Bytes `json:"physical,omitempty"`
	// Installed is the RAM fitted to the board: the SMBIOS memory devices
	// when readable, else Physical plus the APU carve-outs (an estimate).
	Installed planner.Bytes `json:"installed,omitempty"`
	// InstalledSource says where Installed comes from: "smbios" or
	// "estimate".
	InstalledSource string `json:"installed_source,omitempty"`
	// Kind is the memory technology (DDR4, DDR5, LPDDR5, LPDDR5X, HBM3);
	// empty when SMBIOS was not readable (it needs root).
	Kind string `json:"kind,omitempty"`
	// SpeedMTs is the rated speed of the first populated module in MT/s.
	SpeedMTs int `json:"speed_mts,omitempty"`
	// Modules counts the populated SMBIOS memory devices.
	Modules int `json:"modules,omitempty"`
}

// Device is one accelerator as the probe saw it. Sizes are bytes; zero
// means not read (see Machine.Warnings for why).
type Device struct {
	// Vendor is "AMD", "NVIDIA", "Intel" or "Apple".
	Vendor string `json:"vendor"`
	// PCIID is "vvvv:dddd", lowercase hex, as in pci.ids.
	PCIID string `json:"pci_id"`
	// Name comes from nvidia-smi, Headroom's PCI id table, or pci.ids.
	Name string `json:"name"`
	// Bus is the PCI address "dddd:bb:dd.f" (empty for devices nvidia-smi
	// lists that sysfs does not show).
	Bus string `json:"bus,omitempty"`
	// Class is the PCI class code ("0x030000" VGA, "0x030200" 3D, "0x038000"
	// display, "0x120000" processing accelerator).
	Class  string `json:"class,omitempty"`
	Driver string `json:"driver,omitempty"` // kernel driver: amdgpu, nvidia, i915, xe
	Card   string `json:"card,omitempty"`   // DRM card node: card0
	// NUMANode is the device's NUMA node (-1 = none or unknown).
	NUMANode int `json:"numa_node"`
	// Kind is the probe's guess: gpu (own memory) or apu (shares system RAM).
	Kind planner.DeviceKind `json:"kind"`
	// Integrated reports a GPU that shares system RAM; IntegratedReason
	// says which evidence decided it.
	Integrated       bool   `json:"integrated"`
	IntegratedReason string `json:"integrated_reason,omitempty"`

	// VRAMTotal/VRAMUsed are dedicated memory: VRAM on a card, the BIOS
	// carve-out on an APU (amdgpu mem_info_vram_*, nvidia-smi memory.*,
	// Intel xe physical_vram_size_bytes).
	VRAMTotal planner.Bytes `json:"vram_total"`
	VRAMUsed  planner.Bytes `json:"vram_used"`
	// VisibleVRAMTotal/VisibleVRAMUsed are the CPU-visible part (BAR).
	VisibleVRAMTotal planner.Bytes `json:"visible_vram_total,omitempty"`
	VisibleVRAMUsed  planner.Bytes `json:"visible_vram_used,omitempty"`
	// GTTTotal/GTTUsed are the amdgpu GTT domain: system RAM the GPU maps.
	GTTTotal planner.Bytes `json:"gtt_total,omitempty"`
	GTTUsed  planner.Bytes `json:"gtt_used,omitempty"`
	// GTTCeiling is what the GPU can really map from system RAM: the GTT
	// size capped by TTM's global page limit (ttm.pages_limit × 4 KiB).
	GTTCeiling planner.Bytes `json:"gtt_ceiling,omitempty"`
	// GTTCeilingSource names the file that set GTTCeiling.
	GTTCeilingSource string `json:"gtt_ceiling_source,omitempty"`
	// GTTSizeParamMiB is amdgpu.gttsize in MiB (-1 = kernel default, 0 =
	// not read); TTMPagesLimit is ttm.pages_limit in 4 KiB pages (0 = not
	// read).
	GTTSizeParamMiB int64 `json:"gttsize_param_mib,omitempty"`
	TTMPagesLimit   int64 `json:"ttm_pages_limit,omitempty"`

	// SharedTotal is the system RAM Windows lets the GPU share (WDDM's
	// "shared GPU memory": half of RAM less any dedicated system memory;
	// Microsoft, "Calculating graphics memory"). Zero off Windows.
	SharedTotal planner.Bytes `json:"shared_total,omitempty"`
	// GPUCores is an Apple GPU's core count (system_profiler sppci_cores),
	// which tells apart chips of one name (M3 Max 30 or 40 cores).
	GPUCores int `json:"gpu_cores,omitempty"`
	// WorkingSet is, on a Mac, what Metal lets one process keep resident
	// on the GPU (MTLDevice.recommendedMaxWorkingSetSize): the raised
	// iogpu.wired_limit_mb when set, else macOS's default for this much
	// memory (DefaultMetalWorkingSet). WorkingSetSource says which.
	WorkingSet       planner.Bytes `json:"working_set,omitempty"`
	WorkingSetSource string        `json:"working_set_source,omitempty"`
	// WiredLimitMiB is sysctl iogpu.wired_limit_mb (0 = macOS's default).
	WiredLimitMiB int64 `json:"wired_limit_mib,omitempty"`

	// ComputeCapability is NVIDIA's "8.9"; Arch is the catalog's arch name
	// when the PCI id table knows it ("ada", "rdna3", "rdna3.5").
	ComputeCapability string `json:"compute_capability,omitempty"`
	Arch              string `json:"arch,omitempty"`
	// PowerLimitW is the enforced board power limit in watts (nvidia-smi
	// power.limit, amdgpu hwmon power1_cap).
	PowerLimitW float64 `json:"power_limit_w,omitempty"`
	// MaxSMClockMHz and MaxMemClockMHz are nvidia-smi clocks.max.*.
	MaxSMClockMHz  int    `json:"max_sm_clock_mhz,omitempty"`
	MaxMemClockMHz int    `json:"max_mem_clock_mhz,omitempty"`
	DriverVersion  string `json:"driver_version,omitempty"`
	// Sources lists the readers that filled this device: "sysfs",
	// "nvidia-smi", "system_profiler", "sysctl", "registry".
	Sources []string `json:"sources,omitempty"`
}

// VendorID returns the vendor half of PCIID ("1002"), or "".
func (d Device) VendorID() string {
	if len(d.PCIID) == 9 {
		return d.PCIID[:4]
	}
	return ""
}

// DeviceID returns the device half of PCIID ("1586"), or "".
func (d Device) DeviceID() string {
	if len(d.PCIID) == 9 {
		return d.PCIID[5:]
	}
	return ""
}

// VRAMFree is VRAMTotal minus VRAMUsed, never negative.
func (d Device) VRAMFree() planner.Bytes { return nonNeg(d.VRAMTotal - d.VRAMUsed) }

func nonNeg(b planner.Bytes) planner.Bytes {
	if b < 0 {
		return 0
	}
	return b
}

// PCI vendor ids of the accelerators the probe reports (pci.ids).
const (
	vendorAMD    = "1002" // Advanced Micro Devices, Inc. [AMD/ATI]
	vendorNVIDIA = "10de" // NVIDIA Corporation
	vendorIntel  = "8086" // Intel Corporation
)

var vendorNames = map[string]string{vendorAMD: "AMD", vendorNVIDIA: "NVIDIA", vendorIntel: "Intel"}
