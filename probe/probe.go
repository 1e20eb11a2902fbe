package probe

import (
	"context"
	"fmt"
	"os"
	"path"
	"sync"

	"github.com/jaypipes/pcidb"
)

// Options say what to probe.
type Options struct {
	// Root is the directory to read /sys and /proc below: "/" (or "") for
	// this machine, or a saved machine such as an unpacked snapshot.
	Root string
	// SMI runs nvidia-smi. Nil means ExecSMI for the root "/" and FileSMI
	// (the output saved in the tree) for any other root.
	SMI SMI
	// Tools runs (or replays) the tools a macOS or Windows machine is
	// probed with. Nil means ExecTools for the root "/" on macOS and
	// Windows, the outputs saved under Root/.headroom/darwin or
	// Root/.headroom/windows when the root holds them (a snapshot saved
	// there, replayed anywhere), and a Linux probe otherwise.
	Tools Tools
	// PCIDBPath is a pci.ids file used to name devices Headroom's own table
	// does not know. Empty means Root/usr/share/hwdata/pci.ids or
	// Root/usr/share/misc/pci.ids, the first that exists.
	PCIDBPath string
}

// Probe reads the machine below opts.Root: CPU, memory and NUMA topology
// through ghw, accelerators from sysfs (amdgpu, xe/i915) and nvidia-smi.
// Files that are missing, unreadable or malformed, and an nvidia-smi that
// fails or hangs (it is killed after at most 5 s), give a Machine with
// Warnings rather than an error. The error is for a root that is not a
// directory, or a cancelled ctx.
func Probe(ctx context.Context, opts Options) (Machine, error) {
	p, err := newProber(opts, nil)
	if err != nil {
		return Machine{}, err
	}
	return p.run(ctx)
}

// prober holds one probe's state.
type prober struct {
	fs     *rootFS
	smi    SMI
	tools  Tools // nil for a Linux probe
	rec    *recorder
	dbPath string
	params moduleParams
	m      Machine
	warned map[string]bool

	dbOnce sync.Once
	db     *pcidb.PCIDB
}

func newProber(opts Options, rec *recorder) (*prober, error) {
	fsys, err := newRootFS(opts.Root, rec)
	if err != nil {
		return nil, err
	}
	p := &prober{fs: fsys, smi: opts.SMI, rec: rec, dbPath: opts.PCIDBPath, warned: map[string]bool{}}
	p.tools = desktopTools(opts, fsys)
	if p.smi == nil {
		p.smi = defaultSMI(fsys.root)
		if isLiveRoot(fsys.root) {
			p.smi = ExecSMI{}
		}
	}
	return p, nil
}

func defaultSMI(root string) SMI {
	if root == "/" {
		return ExecSMI{}
	}
	return FileSMI{Root: root}
}

func (p *prober) run(ctx context.Context) (Machine, error) {
	if err := ctx.Err(); err != nil {
		return Machine{}, fmt.Errorf("probe: %w", err)
	}
	if p.tools != nil {
		return p.runDesktop(ctx)
	}
	p.m.OS = "linux"
	p.host()
	p.params = p.readModuleParams()
	devs, pciOK := p.sysfsGPUs()
	devs = p.nvidia(ctx, devs, pciOK)
	sortDevices(devs)
	if devs == nil {
		devs = []Device{}
	}
	p.m.Devices = devs
	p.estimateInstalled()
	p.adviseGTT()
	if err := ctx.Err(); err != nil {
		return p.m, fmt.Errorf("probe: %w", err)
	}
	return p.m, nil
}

// warn records a warning once.
func (p *prober) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.warned[msg] {
		return
	}
	p.warned[msg] = true
	p.m.Warnings = append(p.m.Warnings, msg)
}

// adviseGTT warns about APU memory settings that waste or endanger RAM,
// unless a discrete GPU makes the APU's GPU a display adapter.
func (p *prober) adviseGTT() {
	total := p.m.Memory.Total
	for _, d := range p.m.Devices {
		if !d.Integrated {
			return
		}
	}
	for _, d := range p.m.Devices {
		if !d.Integrated || d.Vendor != "AMD" || d.GTTCeiling == 0 || total == 0 {
			continue
		}
		reserve := osReserve()
		switch {
		case d.GTTCeiling+reserve > total && d.GTTCeiling < total:
			p.warn("%s: the GPU may map %s of %s RAM, leaving less than %s for the OS", d.Bus, d.GTTCeiling, total, reserve)
		case d.GTTCeiling*10 <= total*11/2 && d.VRAMTotal < total:
			want := (total - reserve) / ttmPageSize
			p.warn("%s: the GPU may map only %s of system RAM (the kernel default, about half); to give it more set ttm.pages_limit=%d (and amdgpu.gttsize=%d on kernels that still read it)",
				d.Bus, d.GTTCeiling, int64(want), int64((total-reserve)/(1<<20)))
		}
	}
}

// pciName names a device from pci.ids, loaded on first use (it is a 1.3 MB
// file; devices in knownDevices never need it). The names used are kept
// for a snapshot's pci.ids subset.
func (p *prober) pciName(vendor, device string) string {
	p.dbOnce.Do(p.loadPCIDB)
	fallback := fmt.Sprintf("%s device %s:%s", vendorNames[vendor], vendor, device)
	if p.db == nil {
		return fallback
	}
	v := p.db.Vendors[vendor]
	prod := p.db.Products[vendor+device]
	if v == nil || prod == nil || prod.Name == "" {
		return fallback
	}
	p.rec.pciName(vendor, v.Name, device, prod.Name)
	return cleanName(prod.Name)
}

// maxPCIIDsSize bounds the pci.ids file: the full database is about 1.3 MB.
const maxPCIIDsSize = 16 << 20

func (p *prober) loadPCIDB() {
	file := p.dbPath
	if file == "" {
		for _, c := range []string{"usr/share/hwdata/pci.ids", "usr/share/misc/pci.ids"} {
			if real, ok := p.fs.lookup(c); ok {
				file = p.fs.host(real)
				break
			}
		}
	}
	if file == "" {
		return
	}
	// pcidb opens the file itself: only a regular file of bounded size is
	// handed to it (a FIFO would block it, /dev/zero would never end).
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() > maxPCIIDsSize {
		p.warn("pci.ids %s: not a regular file of at most %d MiB; devices not in Headroom's table stay unnamed", path.Base(file), maxPCIIDsSize>>20)
		return
	}
	if err := guard("pcidb", func() error {
		db, err := pcidb.New(pcidb.WithPath(file), &pcidb.WithOption{EnableNetworkFetch: new(bool)})
		if err != nil {
			p.warn("pci.ids %s: %v", path.Base(file), err)
			return nil
		}
		p.db = db
		return nil
	}); err != nil {
		p.warn("pci.ids %s: %v", path.Base(file), err)
	}
}
