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
// ghw v0.26's own PCI and GPU readers are not used: its pci package ignores
// the database passed with WithPCIDB and loads pci.ids from the process
// environment (PCIDB_PATH) and the host, never the probed root, and fails
// outright when none is installed. Device names come from Headroom's PCI id
// table (knownDevices), then pci.ids through ghw's pcidb, loaded only when
// a device is not in the table.
//
// # Matching and usable memory
//
// Match maps each device to catalog hardware (PCI id, then name, with
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
