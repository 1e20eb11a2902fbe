package probe

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

// snapshotPCIIDs is where a snapshot keeps the pci.ids lines it used; a
// probe of the unpacked snapshot finds it there (Options.PCIDBPath "").
const snapshotPCIIDs = "usr/share/misc/pci.ids"

// Snapshot writes to w a tar.gz of exactly what probing root reads: the
// sysfs and procfs files (symlinks kept as symlinks), the files ghw reads
// for CPU, topology and memory, nvidia-smi's output (or its error) under
// .headroom/, and the pci.ids lines used. Serial numbers are never read;
// SMBIOS memory records have their serial and asset-tag strings blanked and
// /proc/cpuinfo loses its "Serial" line. Unpacked, the archive is a root
// that Probe reads as the same Machine.
func Snapshot(root string, w io.Writer) error {
	return SnapshotWith(context.Background(), Options{Root: root}, w)
}

// SnapshotWith is Snapshot with full probe options (a fake nvidia-smi, a
// pci.ids file).
func SnapshotWith(ctx context.Context, opts Options, w io.Writer) error {
	_, err := snapshot(ctx, opts, w)
	return err
}

// snapshot writes the archive and returns the Machine it probed.
func snapshot(ctx context.Context, opts Options, w io.Writer) (Machine, error) {
	rec := newRecorder()
	p, err := newProber(opts, rec)
	if err != nil {
		return Machine{}, fmt.Errorf("snapshot: %w", err)
	}
	m, err := p.run(ctx)
	if err != nil {
		return Machine{}, fmt.Errorf("snapshot: %w", err)
	}
	if p.tools == nil {
		p.ghwFiles()
	}
	if err := writeSnapshot(rec, w); err != nil {
		return Machine{}, fmt.Errorf("snapshot: write archive: %w", err)
	}
	return m, nil
}

// entry is one member of the archive.
type entry struct {
	name string
	typ  byte
	link string
	data []byte
}

func writeSnapshot(rec *recorder, w io.Writer) error {
	ents := snapshotEntries(rec)
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, e := range ents {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// snapshotEntries lists what the recorder saw, sanitised, parents first.
func snapshotEntries(rec *recorder) []entry {
	byName := map[string]entry{}
	for p, data := range rec.files {
		if data, ok := sanitize(p, data); ok {
			byName[p] = entry{name: p, typ: tar.TypeReg, data: data}
		}
	}
	for p, data := range rec.extra {
		byName[p] = entry{name: p, typ: tar.TypeReg, data: data}
	}
	if rec.pciids != nil {
		byName[snapshotPCIIDs] = entry{name: snapshotPCIIDs, typ: tar.TypeReg, data: pciidsSubset(rec)}
	}
	for p, t := range rec.links {
		byName[p] = entry{name: p, typ: tar.TypeSymlink, link: t}
	}
	for p := range rec.dirs {
		if _, ok := byName[p]; !ok {
			byName[p] = entry{name: p, typ: tar.TypeDir}
		}
	}
	for p := range byName {
		for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if _, ok := byName[d]; !ok {
				byName[d] = entry{name: d, typ: tar.TypeDir}
			}
		}
	}
	out := make([]entry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func writeEntry(tw *tar.Writer, e entry) error {
	h := &tar.Header{Name: e.name, Typeflag: e.typ, ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
	switch e.typ {
	case tar.TypeDir:
		h.Name, h.Mode = e.name+"/", 0o755
	case tar.TypeSymlink:
		h.Linkname, h.Mode = e.link, 0o777
	default:
		h.Mode, h.Size = 0o644, int64(len(e.data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if e.typ == tar.TypeReg {
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return nil
}

var smbiosRaw = regexp.MustCompile(`^sys/firmware/dmi/entries/[0-9]+-[0-9]+/raw$`)

// sanitize removes identifiers from a file before it is archived. ok is
// false when the file must be left out.
func sanitize(p string, data []byte) ([]byte, bool) {
	switch {
	case deniedNames[path.Base(p)]:
		return nil, false
	case p == cpuinfoFile:
		return dropSerialLines(data), true
	case smbiosRaw.MatchString(p):
		return sanitizeSMBIOS17(data)
	}
	return data, true
}

// dropSerialLines removes "Serial : ..." lines (Raspberry Pi /proc/cpuinfo).
func dropSerialLines(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "serial") {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// pciidsSubset writes the pci.ids lines the probe used, in pci.ids format.
func pciidsSubset(rec *recorder) []byte {
	var b strings.Builder
	b.WriteString("# Subset of pci.ids (https://pci-ids.ucw.cz) used by `headroom probe snapshot`.\n")
	vendors := make([]string, 0, len(rec.pciids))
	for v := range rec.pciids {
		vendors = append(vendors, v)
	}
	sort.Strings(vendors)
	for _, v := range vendors {
		fmt.Fprintf(&b, "%s  %s\n", v, rec.vendors[v])
		devs := make([]string, 0, len(rec.pciids[v]))
		for d := range rec.pciids[v] {
			devs = append(devs, d)
		}
		sort.Strings(devs)
		for _, d := range devs {
			fmt.Fprintf(&b, "\t%s  %s\n", d, rec.pciids[v][d])
		}
	}
	return []byte(b.String())
}
