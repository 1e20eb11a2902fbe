package planner

import "strings"

// Backend is a compute API an engine runs on.
type Backend string

// Backends named in the catalog.
const (
	CUDA   Backend = "cuda"
	ROCm   Backend = "rocm"
	Vulkan Backend = "vulkan"
	Metal  Backend = "metal"
	SYCL   Backend = "sycl"
	CPU    Backend = "cpu"
)

// DeviceKind says what sort of device a Hardware entry is.
type DeviceKind string

// Device kinds.
const (
	KindGPU DeviceKind = "gpu" // discrete accelerator with its own memory
	KindAPU DeviceKind = "apu" // x86 APU: iGPU sharing system RAM (carve-out + GTT)
	KindSoC DeviceKind = "soc" // SoC with unified memory (Apple, Jetson, DGX Spark)
	KindCPU DeviceKind = "cpu" // CPU-only inference
)

// MemoryModel says how the device's memory relates to system RAM.
type MemoryModel string

// Memory models.
const (
	MemDiscrete MemoryModel = "discrete" // dedicated VRAM/HBM
	MemUnified  MemoryModel = "unified"  // one pool shared by CPU and GPU (Apple, GB10)
	MemAPU      MemoryModel = "apu"      // BIOS carve-out plus GTT pages of system RAM (AMD)
	MemHost     MemoryModel = "host"     // CPU: system RAM only
)

// Precision is a numeric format of tensor-core math.
type Precision string

// Precisions with separate peak rates in the catalog.
const (
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	FP32 Precision = "fp32"
	FP4  Precision = "fp4"
)

// Interconnect describes the device-to-device link used for tensor parallel.
type Interconnect struct {
	Kind string  `toml:"kind" json:"kind"` // nvlink, xgmi, pcie4, pcie5, none
	GBs  float64 `toml:"gb_s" json:"gb_s"` // achievable bus bandwidth per direction, GB/s
}

// Hardware is one device of the catalog. Multi-device machines are a
// Hardware plus a device count.
type Hardware struct {
	ID   string `toml:"id" json:"id"`
	Name string `toml:"name" json:"name"`
	// Aliases are other names people use for the device, such as the
	// machines it ships in ("Mac Studio M3 Ultra"); FindHardware matches
	// them like the name, whole or as a fragment.
	Aliases []string   `toml:"aliases,omitempty" json:"aliases,omitempty"`
	Vendor  string     `toml:"vendor" json:"vendor"`
	Kind    DeviceKind `toml:"kind" json:"kind"`
	// Memory is the device's memory (system memory for APUs and SoCs).
	Memory Bytes `toml:"memory" json:"memory"`
	// GPUMemory is what a GPU engine can allocate by default: VRAM on a
	// discrete card, the GTT/carve-out ceiling on an APU, the wired limit on
	// a SoC. Zero means Memory.
	GPUMemory   Bytes       `toml:"gpu_memory,omitempty" json:"gpu_memory"`
	MemoryType  string      `toml:"memory_type" json:"memory_type"`
	MemoryModel MemoryModel `toml:"memory_model" json:"memory_model"`
	// BandwidthGBs is the theoretical peak memory bandwidth in GB/s.
	BandwidthGBs float64 `toml:"bandwidth_gb_s" json:"bandwidth_gb_s"`
	// TFLOPS holds dense peak tensor rates (TOP/s for int8) per precision.
	TFLOPS       map[Precision]float64 `toml:"tflops" json:"tflops"`
	TDPWatts     float64               `toml:"tdp_w" json:"tdp_w"`
	PriceUSD     float64               `toml:"price_usd,omitempty" json:"price_usd"`
	Backends     []Backend             `toml:"backends" json:"backends"`
	Arch         string                `toml:"arch" json:"arch"`
	Compute      string                `toml:"compute_capability" json:"compute_capability,omitempty"`
	Interconnect Interconnect          `toml:"interconnect" json:"interconnect"`
	// DieLink names the bridge of a package built from several dies that
	// share one memory pool ("ultrafusion": Apple's Ultra chips, two Max
	// dies; Apple newsroom, Mar 2022). Empty for single-die devices.
	DieLink string `toml:"die_link,omitempty" json:"die_link,omitempty"`
	// CloudPrice is a cloud list price of one device-hour, with its date
	// and source (nil = none in the catalog).
	CloudPrice *CloudPrice `toml:"cloud_price,omitempty" json:"cloud_price,omitempty"`
	// PCIIDs are "vvvv:dddd" vendor:device ids used to match probed devices.
	PCIIDs []string `toml:"pci_ids" json:"pci_ids,omitempty"`
	Notes  string   `toml:"notes" json:"notes,omitempty"`
	Source string   `toml:"source" json:"source,omitempty"`
}

// UsableGPUMemory returns the memory a GPU engine may allocate on one device.
func (h Hardware) UsableGPUMemory() Bytes {
	if h.GPUMemory > 0 {
		return h.GPUMemory
	}
	return h.Memory
}

// X86Host reports whether the device's CPU cores are x86-64 (Intel and
// AMD CPUs and APUs) rather than Arm (Apple silicon, Ampere, NVIDIA Grace
// and GB10, Raspberry Pi). The catalog records vendors, not ISAs; every
// CPU or APU vendor in it makes one ISA only.
func (h Hardware) X86Host() bool {
	return h.Vendor == "Intel" || h.Vendor == "AMD"
}

// HasBackend reports whether the device supports backend b.
func (h Hardware) HasBackend(b Backend) bool {
	for _, x := range h.Backends {
		if x == b {
			return true
		}
	}
	return false
}

// Peak returns the dense peak rate for p in FLOP/s (OP/s for int8), falling
// back to FP16 for BF16 and to FP32 when nothing else is known.
func (h Hardware) Peak(p Precision) float64 {
	if v := h.TFLOPS[p]; v > 0 {
		return v * 1e12
	}
	if p == BF16 {
		if v := h.TFLOPS[FP16]; v > 0 {
			return v * 1e12
		}
	}
	return h.TFLOPS[FP32] * 1e12
}

// SupportsNative reports whether the device has native tensor math for p
// (FP8 on Ada/Hopper/Blackwell/MI300/RDNA4, INT8 where the catalog lists a
// rate). Source: catalog columns fp8_tflops/int8_tops of hardware.csv.
func (h Hardware) SupportsNative(p Precision) bool {
	return h.TFLOPS[p] > 0
}

// Bandwidth returns the peak memory bandwidth in bytes/s.
func (h Hardware) Bandwidth() float64 { return h.BandwidthGBs * 1e9 }

// IsVendor reports whether the device is from vendor (case-insensitive).
func (h Hardware) IsVendor(vendor string) bool { return strings.EqualFold(h.Vendor, vendor) }

// CloudPrice is an on-demand list price for one device for one hour.
type CloudPrice struct {
	USDPerHour float64 `toml:"usd_per_hour" json:"usd_per_hour"`
	// Provider and offer ("Lambda, on-demand 8× H100 SXM").
	Offer string `toml:"offer" json:"offer"`
	// Date the price was read (YYYY-MM) and Source its page; Verified is
	// false where the price is recalled, not re-read on the page ([U]).
	Date     string `toml:"date" json:"date"`
	Source   string `toml:"source" json:"source"`
	Verified bool   `toml:"verified" json:"verified"`
}
