// Package probe finds out what this machine can serve LLMs with: its
// accelerators, how much memory each engine can really allocate on them,
// and which catalog hardware they are.
//
// # Probing
//
// Probe reads a root directory, "/" for this machine or any saved tree:
//
//	m, err := probe.Probe(ctx, probe.Options{Root: "/"})
//
// CPU, NUMA topology and memory blocks come from ghw (github.com/jaypipes/
// ghw, chrooted to the root). GPUs come from sysfs, because ghw reports no
// GPU memory: every PCI display controller or accelerator of AMD, NVIDIA or
// Intel under /sys/bus/pci/devices, with
//
//   - amdgpu's memory managers: mem_info_vram_total/used (VRAM, or the BIOS
//     carve-out of an APU), mem_info_vis_vram_* (CPU-visible VRAM) and
//     mem_info_gtt_* (system RAM the GPU maps);
//   - the GTT ceiling: the GTT size capped by TTM's global page limit
//     (/sys/module/ttm/parameters/pages_limit, 4 KiB pages) with
//     amdgpu.gttsize shown beside it, so that a Strix Halo with a 512 MiB
//     carve-out and a 115 GiB GTT reads as the 115 GiB GPU it is;
//   - nvidia-smi (--query-gpu ... --format=csv) for NVIDIA memory, compute
//     capability, power limit and clocks, run with a timeout behind the SMI
//     interface;
//   - Intel xe's tileN/physical_vram_size_bytes where the driver has it.
//
// Every reader takes the root, follows symlinks only inside it, and reads
// only regular files: a saved machine replays exactly, and a broken one
// gives warnings (Machine.Warnings), never a crash or a hang.
//
// ghw opens the files it wants itself, so it reads a saved root only when
// a stat-only walk finds nothing there it could hang on or escape through
// (ghwSafe); otherwise the files are copied, through the same confined
// reader, into a private staging tree first (ghwRoot). A FIFO, a
// /dev/urandom link or an absolute link in a snapshot gives a warning,
// not a hang or the host's own file.
//
// ghw v0.26's own PCI and GPU readers are not used: its pci package ignores
// the database passed with WithPCIDB and loads pci.ids from the process
// environment (PCIDB_PATH) and the host, never the probed root, and fails
// outright when none is installed. Device names come from Headroom's PCI id
// table (knownDevices), then pci.ids through ghw's pcidb, loaded only when
// a device is not in the table.
//
// # macOS and Windows
//
// On a Mac or a Windows PC (root "/"), or for a root holding
// .headroom/darwin or .headroom/windows (a snapshot saved there, replayed
// on any OS), Probe runs or replays the OS's own tools instead (Tools,
// ExecTools), each a subprocess with a timeout:
//
//   - macOS: sysctl (hw.memsize, machdep.cpu.brand_string, core counts,
//     iogpu.wired_limit_mb), system_profiler SPHardwareDataType and
//     SPDisplaysDataType -json (chip, GPU core count) and vm_stat (RAM
//     available now). An Apple GPU's memory is Metal's working set:
//     iogpu.wired_limit_mb when raised, else macOS's default for the RAM
//     (MetalWorkingSet, DefaultMetalWorkingSet).
//   - Windows: the display adapters' registry keys (reg query: the 64-bit
//     HardwareInformation.qwMemorySize, never WMI's 32-bit AdapterRAM,
//     DriverDesc, MatchingDeviceId), CIM through PowerShell Format-List
//     (RAM, free RAM, CPU, memory modules) and nvidia-smi. WDDM's shared
//     GPU memory is half of RAM.
//
// # Free memory and setup advice
//
// FreeNow says what an engine can allocate now and what other processes
// hold (for `fit --free`). Advise says which settings would let a model
// fit a unified-memory machine: iogpu.wired_limit_mb on a Mac; the BIOS
// carve-out, ttm.pages_limit / amdgpu.gttsize and vLLM's
// --gpu-memory-utilization on an AMD APU, with exact values.
//
// # Matching and usable memory
//
// Match maps each device to catalog hardware (Apple chips by name and GPU
// core count; others by PCI id, then name, with
// probed memory and the CPU model telling apart boards that share an id)
// or to a generic profile built from the probed memory, with a hint to run
// `headroom calibrate`. UsableMemory says what each engine can allocate:
// on an AMD APU llama.cpp's Vulkan backend sees carve-out + GTT, ROCm the
// larger of the two, and the GTT part keeps 4 GiB for the OS. ForPlanner
// hands `headroom fit` the Hardware with its memory set from the probe.
//
// # Snapshots
//
// Snapshot writes a tar.gz of exactly the files and tool output a probe
// read, without serial numbers: attach it to a bug report, unpack it under
// testdata, and it is a test fixture.
package probe
