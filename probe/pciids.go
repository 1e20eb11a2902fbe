package probe

import "github.com/headroom-planner/headroom/planner"

// knownDevice is what Headroom knows of a PCI id without the catalog.
type knownDevice struct {
	// Name is the device's pci.ids name.
	Name string
	Arch string
	Kind planner.DeviceKind
	// IDs are the catalog hardware ids this PCI id can be, most common
	// first. Several ids share a PCI id when boards differ only in memory
	// (Navi 31: 7900 XT 20 GiB, 7900 XTX 24 GiB) or in the CPU around the
	// GPU (Strix Halo: Ryzen AI Max 385/390/395); Match tells them apart by
	// probed memory and CPU model.
	IDs []string
}

// knownDevices maps "vendor:device" to the catalog. Names are pci.ids
// (https://pci-ids.ucw.cz): entries marked [2023] are in pci.ids 2023.04.10
// (Debian's pci.ids 0.0~2023.04.11); [lspci] were read from lspci output
// quoted in public issues; [U] are newer entries written from memory and
// not checked against a copy of pci.ids.
var knownDevices = map[string]knownDevice{
	// AMD APUs.
	"1002:1586": {"Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]", "rdna3.5", planner.KindAPU,
		[]string{"amd-ryzen-ai-max-395", "amd-ryzen-ai-max-385"}}, // [lspci]; one id for 385/390/395
	"1002:150e": {"Strix [Radeon 880M / 890M]", "rdna3.5", planner.KindAPU, nil},                                       // [lspci]
	"1002:1114": {"Krackan [Radeon 840M / 860M Graphics]", "rdna3.5", planner.KindAPU, []string{"amd-ryzen-ai-5-340"}}, // [lspci]
	"1002:15bf": {"Phoenix1", "rdna3", planner.KindAPU, nil},                                                           // [2023] Radeon 780M
	"1002:15c8": {"Phoenix2", "rdna3", planner.KindAPU, nil},                                                           // [2023]
	"1002:164e": {"Raphael", "rdna2", planner.KindAPU, nil},                                                            // [2023] Ryzen 7000 desktop iGPU

	// AMD discrete and Instinct.
	"1002:744c": {"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900M]", "rdna3", planner.KindGPU,
		[]string{"amd-rx-7900-xtx", "amd-rx-7900-xt"}}, // [lspci]; [2023] lacks "/7900M"
	"1002:7550": {"Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]", "rdna4", planner.KindGPU,
		[]string{"amd-rx-9070-xt", "amd-rx-9070"}}, // [lspci]
	"1002:7551": {"Navi 48 [Radeon AI PRO R9700]", "rdna4", planner.KindGPU, []string{"amd-radeon-ai-pro-r9700"}}, // [U]
	"1002:740c": {"Aldebaran/MI200 [Instinct MI250X/MI250]", "cdna2", planner.KindGPU, []string{"amd-mi250"}},     // [2023]
	"1002:74a1": {"Aqua Vanjaram [Instinct MI300X]", "cdna3", planner.KindGPU, []string{"amd-mi300x"}},            // [lspci]
	"1002:74a5": {"Aqua Vanjaram [Instinct MI325X]", "cdna3", planner.KindGPU, []string{"amd-mi325x"}},            // [U]

	// NVIDIA GeForce.
	"10de:2b85": {"GB202 [GeForce RTX 5090]", "blackwell", planner.KindGPU, []string{"nvidia-rtx-5090"}},                  // [lspci]
	"10de:2c02": {"GB203 [GeForce RTX 5080]", "blackwell", planner.KindGPU, []string{"nvidia-rtx-5080"}},                  // [lspci]
	"10de:2c05": {"GB203 [GeForce RTX 5070 Ti]", "blackwell", planner.KindGPU, []string{"nvidia-rtx-5070-ti"}},            // [U]
	"10de:2d04": {"GB206 [GeForce RTX 5060 Ti]", "blackwell", planner.KindGPU, []string{"nvidia-rtx-5060-ti-16gb"}},       // [U]; 8 GB boards share it
	"10de:2684": {"AD102 [GeForce RTX 4090]", "ada", planner.KindGPU, []string{"nvidia-rtx-4090"}},                        // [2023]
	"10de:2704": {"AD103 [GeForce RTX 4080]", "ada", planner.KindGPU, []string{"nvidia-rtx-4080"}},                        // [2023]
	"10de:2702": {"AD103 [GeForce RTX 4080 SUPER]", "ada", planner.KindGPU, []string{"nvidia-rtx-4080-super"}},            // [U]
	"10de:2782": {"AD104 [GeForce RTX 4070 Ti]", "ada", planner.KindGPU, []string{"nvidia-rtx-4070-ti"}},                  // [2023]
	"10de:2204": {"GA102 [GeForce RTX 3090]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3090"}},                     // [2023]
	"10de:2208": {"GA102 [GeForce RTX 3080 Ti]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3080-ti"}},               // [2023]
	"10de:2206": {"GA102 [GeForce RTX 3080]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3080-10gb"}},                // [2023]
	"10de:2216": {"GA102 [GeForce RTX 3080 Lite Hash Rate]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3080-10gb"}}, // [2023]
	"10de:2484": {"GA104 [GeForce RTX 3070]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3070"}},                     // [2023]
	"10de:2503": {"GA106 [GeForce RTX 3060]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3060-12gb"}},                // [2023]
	"10de:2504": {"GA106 [GeForce RTX 3060 Lite Hash Rate]", "ampere", planner.KindGPU, []string{"nvidia-rtx-3060-12gb"}}, // [2023]

	// NVIDIA workstation and data centre.
	"10de:2bb1": {"GB202GL [RTX PRO 6000 Blackwell Workstation Edition]", "blackwell", planner.KindGPU, []string{"nvidia-rtx-pro-6000-blackwell"}}, // [U]
	"10de:26b1": {"AD102GL [L6000 / RTX 6000 Ada Generation]", "ada", planner.KindGPU, []string{"nvidia-rtx-6000-ada"}},                            // [2023]
	"10de:26b2": {"AD102GL [RTX 5000 Ada Generation]", "ada", planner.KindGPU, []string{"nvidia-rtx-5000-ada"}},                                    // [U]
	"10de:27b2": {"AD104GL [RTX 4000 Ada Generation]", "ada", planner.KindGPU, []string{"nvidia-rtx-4000-ada"}},                                    // [U]
	"10de:2230": {"GA102GL [RTX A6000]", "ampere", planner.KindGPU, []string{"nvidia-rtx-a6000"}},                                                  // [2023]
	"10de:2235": {"GA102GL [A40]", "ampere", planner.KindGPU, []string{"nvidia-a40"}},                                                              // [2023]
	"10de:2237": {"GA102GL [A10G]", "ampere", planner.KindGPU, []string{"nvidia-a10g"}},                                                            // [2023]
	"10de:26b9": {"AD102GL [L40S]", "ada", planner.KindGPU, []string{"nvidia-l40s"}},                                                               // [lspci]
	"10de:27b8": {"AD104GL [L4]", "ada", planner.KindGPU, []string{"nvidia-l4"}},                                                                   // [2023]
	"10de:1eb8": {"TU104GL [Tesla T4]", "turing", planner.KindGPU, []string{"nvidia-t4"}},                                                          // [2023]
	"10de:1db5": {"GV100GL [Tesla V100 SXM2 32GB]", "volta", planner.KindGPU, []string{"nvidia-v100-sxm2-32gb"}},                                   // [2023]
	"10de:20b0": {"GA100 [A100 SXM4 40GB]", "ampere", planner.KindGPU, []string{"nvidia-a100-sxm4-40gb"}},                                          // [2023]
	"10de:20b2": {"GA100 [A100 SXM4 80GB]", "ampere", planner.KindGPU, []string{"nvidia-a100-sxm4-80gb"}},                                          // [2023]
	"10de:20b5": {"GA100 [A100 PCIe 80GB]", "ampere", planner.KindGPU, []string{"nvidia-a100-pcie-80gb"}},                                          // [2023]
	"10de:20f1": {"GA100 [A100 PCIe 40GB]", "ampere", planner.KindGPU, []string{"nvidia-a100-pcie-40gb"}},                                          // [2023]
	"10de:2330": {"GH100 [H100 SXM5 80GB]", "hopper", planner.KindGPU, []string{"nvidia-h100-sxm5-80gb"}},                                          // [2023]
	"10de:2331": {"GH100 [H100 PCIe]", "hopper", planner.KindGPU, []string{"nvidia-h100-pcie-80gb"}},                                               // [2023]
	"10de:2321": {"GH100 [H100 NVL]", "hopper", planner.KindGPU, []string{"nvidia-h100-nvl-94gb"}},                                                 // [2023] lists 2321 unnamed; [U] name
	"10de:2335": {"GH100 [H200 SXM 141GB]", "hopper", planner.KindGPU, []string{"nvidia-h200-sxm-141gb"}},                                          // [lspci]
	"10de:2901": {"GB100 [B200]", "blackwell", planner.KindGPU, []string{"nvidia-b200-sxm-180gb"}},                                                 // [U]

	// Intel.
	"8086:56a0": {"DG2 [Arc A770]", "xe-hpg", planner.KindGPU, []string{"intel-arc-a770"}},         // [2023]; 8 and 16 GB boards
	"8086:e20b": {"Battlemage G21 [Arc B580]", "xe2", planner.KindGPU, []string{"intel-arc-b580"}}, // [U]
}

// knownNames maps nvidia-smi names of devices without a PCI function on a
// bus sysfs lists (NVIDIA SoCs) to catalog ids.
var knownNames = map[string]string{
	"NVIDIA GB10":       "nvidia-dgx-spark",
	"Orin (nvgpu)":      "nvidia-jetson-agx-orin-64gb", // [U] JetPack 6 nvidia-smi name
	"NVIDIA Jetson AGX": "nvidia-jetson-agx-orin-64gb",
}
