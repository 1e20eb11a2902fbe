package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"regexp"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/cpu"
	"github.com/jaypipes/ghw/pkg/memory"
	"github.com/jaypipes/ghw/pkg/topology"

	"github.com/headroom-planner/headroom/planner"
)

// Host files the probe reads itself (ghw reads CPU, topology and memory
// blocks; see ghwContext).
const (
	meminfoFile   = "proc/meminfo"
	cpuinfoFile   = "proc/cpuinfo"
	osreleaseFile = "proc/sys/kernel/osrelease"
	dmiIDDir      = "sys/class/dmi/id"
	dmiEntriesDir = "sys/firmware/dmi/entries"
)

// cpuFeatures are the instruction-set flags that matter to CPU inference
// (llama.cpp's ggml-cpu picks kernels by them).
var cpuFeatures = map[string]bool{
	"avx": true, "avx2": true, "fma": true, "f16c": true, "avx512f": true,
	"avx512bw": true, "avx512_vnni": true, "avx512_bf16": true, "avx_vnni": true,
	"amx_tile": true, "amx_bf16": true, "amx_int8": true,
	"asimd": true, "asimddp": true, "sve": true, "sve2": true, "i8mm": true, "bf16": true,
}

// host fills the CPU, memory, topology and system fields of p.m.
func (p *prober) host() {
	p.meminfo()
	p.m.Kernel, _ = p.fs.readString(osreleaseFile)
	p.dmi()
	root, cleanup := p.ghwRoot()
	defer cleanup()
	gctx := p.ghwContext(root)
	p.cpu(gctx)
	p.topology(gctx)
	p.physicalMemory(gctx)
	p.smbios()
}

func (p *prober) meminfo() {
	b, err := p.fs.readFile(meminfoFile)
	if err != nil {
		p.warn("%v", err)
		return
	}
	mi, err := parseMeminfo(b)
	if err != nil {
		p.warn("%s: %v", display(meminfoFile), err)
		return
	}
	p.m.Memory.Total, p.m.Memory.Available = mi.Total, mi.Available
}

// dmi reads the world-readable DMI names. Serial numbers and UUIDs sit
// beside them (root-only) and are never read.
func (p *prober) dmi() {
	get := func(name string) string {
		s, _ := p.fs.readString(path.Join(dmiIDDir, name))
		return cleanName(clip(s))
	}
	p.m.System = System{Vendor: get("sys_vendor"), Product: get("product_name"), Board: get("board_name")}
}

// ghwContext configures ghw for the probed root: its chroot, no external
// tools, no log output, and /var mapped away so that ghw never scans
// syslog for the physical memory size.
func (p *prober) ghwContext(root string) context.Context {
	ctx := context.Background()
	for _, mod := range []ghw.Modifier{
		ghw.WithChroot(root),
		ghw.WithDisableTools(),
		ghw.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		ghw.WithPathOverrides(map[string]string{"/var": "/.headroom-no-var"}),
	} {
		ctx = mod(ctx)
	}
	return ctx
}

// panicError is a panic of a library on malformed input, as an error.
type panicError struct {
	what string
	val  any
}

func (e *panicError) Error() string { return fmt.Sprintf("%s: malformed input: %v", e.what, e.val) }

// guard runs a library call, turning a panic on malformed files into a
// *panicError: ghw v0.26 indexes split file names and lines it has not
// checked (memorySupportedPageSizes, getMemInfoField).
func guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{what: what, val: r}
		}
	}()
	return f()
}

func (p *prober) cpu(gctx context.Context) {
	var info *cpu.Info
	err := guard("ghw cpu", func() (err error) { info, err = cpu.New(gctx); return err })
	if err == nil && info != nil && info.TotalHardwareThreads > 0 && len(info.Processors) > 0 {
		first := info.Processors[0]
		p.m.CPU = CPU{
			Vendor: first.Vendor, Model: first.Model, Packages: len(info.Processors),
			Cores: int(info.TotalCores), Threads: int(info.TotalHardwareThreads),
			Features: filterFeatures(first.Capabilities),
		}
		return
	}
	p.cpuFallback(err)
}

// cpuFallback reads /proc/cpuinfo itself when ghw found no processors
// (no /sys/devices/system/cpu, as in some containers).
func (p *prober) cpuFallback(ghwErr error) {
	b, err := p.fs.readFile(cpuinfoFile)
	if err != nil {
		p.warn("%v", err)
		return
	}
	c := parseCPUInfo(b)
	p.m.CPU = CPU{Vendor: c.Vendor, Model: c.Model, Threads: c.Processors, Features: filterFeatures(c.Flags)}
	if ghwErr != nil {
		p.warn("%v; CPU threads counted from %s", ghwErr, display(cpuinfoFile))
	} else {
		p.warn("CPU topology not readable from /sys/devices/system/cpu; threads counted from %s", display(cpuinfoFile))
	}
}

func filterFeatures(flags []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range flags {
		if cpuFeatures[f] && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func (p *prober) topology(gctx context.Context) {
	var info *topology.Info
	err := guard("ghw topology", func() (err error) { info, err = topology.New(gctx); return err })
	if err != nil {
		p.warn("%v", err)
		return
	}
	if info != nil {
		p.m.NUMANodes = len(info.Nodes)
	}
}

// physicalMemory takes the online memory-block total from ghw. ghw falls
// back to MemTotal when blocks are unreadable; that is not reported.
func (p *prober) physicalMemory(gctx context.Context) {
	var info *memory.Info
	err := guard("ghw memory", func() (err error) { info, err = memory.New(gctx); return err })
	var pe *panicError
	if errors.As(err, &pe) {
		p.warn("%v", err)
	}
	if err != nil || info == nil {
		return
	}
	if info.TotalPhysicalBytes > 0 && info.TotalPhysicalBytes != info.TotalUsableBytes {
		p.m.Memory.Physical = planner.Bytes(info.TotalPhysicalBytes)
	}
}

var dmiMemoryEntry = regexp.MustCompile(`^17-[0-9]+$`)

// smbios reads SMBIOS memory devices for the RAM's size, kind and speed.
// The raw entries are root-only; as a user this finds nothing, quietly.
func (p *prober) smbios() {
	ents, err := p.fs.readDir(dmiEntriesDir)
	if err != nil {
		return
	}
	mem := &p.m.Memory
	for _, e := range ents {
		if !dmiMemoryEntry.MatchString(e.Name) {
			continue
		}
		rel := path.Join(dmiEntriesDir, e.Name, "raw")
		b, err := p.fs.readFile(rel)
		if err != nil {
			continue
		}
		d, err := parseSMBIOS17(b)
		if err != nil {
			p.warn("%s: %v", display(rel), err)
			continue
		}
		if d.Size == 0 {
			continue
		}
		mem.Modules++
		mem.Installed += d.Size
		mem.InstalledSource = "smbios"
		if mem.Kind == "" {
			mem.Kind, mem.SpeedMTs = memoryKind(d), d.SpeedMTs
		}
	}
}

// estimateInstalled fills Memory.Installed when SMBIOS was not readable:
// the kernel's memory (blocks, else MemTotal) plus the APUs' carve-outs,
// rounded up to a whole GiB.
func (p *prober) estimateInstalled() {
	mem := &p.m.Memory
	if mem.Installed > 0 {
		return
	}
	base := mem.Physical
	if base == 0 {
		base = mem.Total
	}
	if base == 0 {
		return
	}
	for _, d := range p.m.Devices {
		if d.Integrated && d.Vendor == "AMD" {
			base += d.VRAMTotal
		}
	}
	mem.Installed = (base + planner.GiB - 1) / planner.GiB * planner.GiB
	mem.InstalledSource = "estimate"
}

// ghwFiles touches, through the recording reader, the files ghw v0.26 reads
// for CPU, topology and memory (pkg/cpu/cpu_linux.go, pkg/topology/
// topology_linux.go, pkg/memory/memory_linux.go, memory_cache_linux.go), so
// a snapshot replays them and ghwRoot can stage them.
func (p *prober) ghwFiles() { touchGHWFiles(p.fs) }

func touchGHWFiles(fs *rootFS) {
	p := &prober{fs: fs}
	for _, f := range []string{cpuinfoFile, meminfoFile, "sys/devices/system/memory/block_size_bytes"} {
		_, _ = p.fs.readFile(f)
	}
	p.touchEach("sys/devices/system/cpu", "cpu", "online", "topology/physical_package_id", "topology/core_id")
	p.touchEach("sys/devices/system/memory", "memory", "state")
	p.touchHugepages("sys/kernel/mm/hugepages")
	nodes, _ := p.fs.readDir("sys/devices/system/node")
	for _, n := range nodes {
		if !strings.HasPrefix(n.Name, "node") {
			continue
		}
		dir := path.Join("sys/devices/system/node", n.Name)
		for _, f := range []string{"distance", "meminfo"} {
			_, _ = p.fs.readFile(path.Join(dir, f))
		}
		p.touchEach(dir, "cpu", "online", "topology/core_id")
		p.touchEach(dir, "memory", "state")
		p.touchHugepages(path.Join(dir, "hugepages"))
		p.touchCaches(dir)
	}
}

var numbered = regexp.MustCompile(`^[a-z]+[0-9]+$`)

// touchEach reads files below every dir/prefixN entry.
func (p *prober) touchEach(dir, prefix string, files ...string) {
	ents, _ := p.fs.readDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, prefix) || !numbered.MatchString(e.Name) {
			continue
		}
		for _, f := range files {
			_, _ = p.fs.readFile(path.Join(dir, e.Name, f))
		}
	}
}

func (p *prober) touchHugepages(dir string) {
	ents, _ := p.fs.readDir(dir)
	for _, e := range ents {
		for _, f := range []string{"nr_hugepages", "free_hugepages", "surplus_hugepages", "resv_hugepages"} {
			_, _ = p.fs.readFile(path.Join(dir, e.Name, f))
		}
	}
}

func (p *prober) touchCaches(nodeDir string) {
	cpus, _ := p.fs.readDir(nodeDir)
	for _, c := range cpus {
		if !strings.HasPrefix(c.Name, "cpu") || !numbered.MatchString(c.Name) {
			continue
		}
		cache := path.Join(nodeDir, c.Name, "cache")
		idx, _ := p.fs.readDir(cache)
		for _, i := range idx {
			if !strings.HasPrefix(i.Name, "index") {
				continue
			}
			for _, f := range []string{"level", "type", "size", "id", "shared_cpu_map"} {
				_, _ = p.fs.readFile(path.Join(cache, i.Name, f))
			}
		}
	}
}
