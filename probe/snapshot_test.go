package probe

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"
)

// snapshotAndReplay snapshots opts' root, unpacks the archive and probes it
// with default options: the two Machines must be equal.
func snapshotAndReplay(t *testing.T, opts Options) (orig, replay Machine, archive []byte) {
	t.Helper()
	var buf bytes.Buffer
	orig, err := snapshot(context.Background(), opts, &buf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	untar(t, bytes.NewReader(buf.Bytes()), dir)
	replay = mustProbe(t, Options{Root: dir})
	if !reflect.DeepEqual(orig, replay) {
		t.Errorf("replayed snapshot differs:\n orig %+v\nreplay %+v", orig, replay)
	}
	return orig, replay, buf.Bytes()
}

// members lists an archive's names with their contents (files) or targets
// (symlinks).
func members(t *testing.T, archive []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[strings.TrimSuffix(h.Name, "/")] = string(b) + h.Linkname
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, name := range []string{"strix-halo-128-gtt", "strix-halo-96-carveout", "rx-7900-xtx", "rtx-4090-x2", "a100-80gb-server", "no-gpu-server"} {
		t.Run(name, func(t *testing.T) {
			orig, _, archive := snapshotAndReplay(t, fixtureOpts(name))
			if direct := mustProbe(t, fixtureOpts(name)); !reflect.DeepEqual(direct, orig) {
				t.Errorf("snapshotting changed the probe's result")
			}
			ms := members(t, archive)
			for p, content := range ms {
				if deniedNames[path.Base(p)] {
					t.Errorf("archive holds %s", p)
				}
				if strings.Contains(content, "801A2B3C") || strings.Contains(content, "801A4AF3") {
					t.Errorf("archive member %s holds an SMBIOS serial number", p)
				}
			}
			if _, ok := ms[smiSavedOutput]; ok != (len(orig.Devices) > 0 && orig.Devices[0].Vendor == "NVIDIA") {
				t.Errorf("nvidia-smi output saved: %v, devices %d", ok, len(orig.Devices))
			}
		})
	}
}

// TestSnapshotKeepsToolErrors: a failing nvidia-smi is saved as its error,
// and the replay warns the same.
func TestSnapshotKeepsToolErrors(t *testing.T) {
	opts := fixtureOpts("rtx-4090-x2")
	opts.SMI = ExecSMI{Path: fakeSMI(t, "exec sleep 5"), Timeout: 200 * time.Millisecond}
	orig, _, archive := snapshotAndReplay(t, opts)
	if !hasWarning(orig, "timed out") {
		t.Errorf("warnings %q", orig.Warnings)
	}
	if _, ok := members(t, archive)[smiSavedError]; !ok {
		t.Error("no saved nvidia-smi error")
	}
}

// TestSnapshotPCIIDsSubset: a device named from pci.ids replays with the
// same name from the pci.ids lines the snapshot keeps.
func TestSnapshotPCIIDsSubset(t *testing.T) {
	root := copyTree(t, "testdata/rx-7900-xtx")
	writeFile(t, root, "sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/device", "0x73bf\n")
	orig, _, archive := snapshotAndReplay(t, Options{Root: root, PCIDBPath: "testdata/pci.ids"})
	if orig.Devices[0].Name != "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]" {
		t.Errorf("name %q", orig.Devices[0].Name)
	}
	ids := members(t, archive)[snapshotPCIIDs]
	if !strings.Contains(ids, "1002  Advanced Micro Devices") || !strings.Contains(ids, "\t73bf  Navi 21") || strings.Contains(ids, "2684") {
		t.Errorf("pci.ids subset:\n%s", ids)
	}
}

// TestSnapshotScrubsCPUSerial: a Raspberry Pi's /proc/cpuinfo ends with a
// board serial; the snapshot drops that line.
func TestSnapshotScrubsCPUSerial(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n\nRevision\t: d04170\nSerial\t\t: 10000000abcdef01\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n")
	writeFile(t, root, "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 15000000 kB\n")
	var buf bytes.Buffer
	if err := SnapshotWith(context.Background(), Options{Root: root}, &buf); err != nil {
		t.Fatal(err)
	}
	cpuinfo := members(t, buf.Bytes())[cpuinfoFile]
	if strings.Contains(cpuinfo, "abcdef01") || !strings.Contains(cpuinfo, "Raspberry Pi 5") {
		t.Errorf("snapshot cpuinfo:\n%s", cpuinfo)
	}
}

// TestSnapshotThisMachine snapshots the machine the tests run on and
// replays it.
func TestSnapshotThisMachine(t *testing.T) {
	_, _, archive := snapshotAndReplay(t, Options{Root: "/"})
	if len(archive) > 4<<20 {
		t.Errorf("snapshot of / is %d bytes", len(archive))
	}
	for p := range members(t, archive) {
		top := strings.SplitN(p, "/", 2)[0]
		if top != "sys" && top != "proc" && top != ".headroom" && top != "usr" {
			t.Errorf("snapshot holds %s, outside /sys and /proc", p)
		}
	}
}

func TestSnapshotErrors(t *testing.T) {
	if err := Snapshot("testdata/does-not-exist", io.Discard); err == nil {
		t.Error("snapshot of a missing root gave no error")
	}
}
