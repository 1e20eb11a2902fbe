//go:build unix

package probe

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHostileTree is issue 15 item 3: a saved tree whose every file is a
// FIFO, a symlink to /dev/urandom, or an absolute symlink to the host's own
// file must give a Machine with warnings, quickly, and read nothing of the
// host. The issue asks for under 5 s on a quiet machine; the bound here is
// generous because CI is a busy 2-core box (a hang is what it catches).
func TestHostileTree(t *testing.T) {
	for _, tc := range []struct{ fixture, mode string }{
		{"strix-halo-128-gtt", "fifo"}, {"strix-halo-128-gtt", "urandom"}, {"strix-halo-128-gtt", "absolute"},
		{"mac-m2-max-32gb", "fifo"}, {"win-rtx2070s", "urandom"}, {"win-780m-uma8g", "absolute"},
	} {
		mode := tc.mode
		t.Run(tc.fixture+"/"+mode, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", tc.fixture))
			n := 0
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				n++
				if err := os.Remove(p); err != nil {
					return err
				}
				switch mode {
				case "fifo":
					return syscall.Mkfifo(p, 0o644)
				case "urandom":
					return os.Symlink("/dev/urandom", p)
				}
				rel, _ := filepath.Rel(root, p)
				return os.Symlink(filepath.Join("/", rel), p)
			})
			if err != nil || n == 0 {
				t.Fatalf("preparing the tree: %v (%d files)", err, n)
			}
			type result struct {
				m   Machine
				err error
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				m, err := Probe(context.Background(), Options{Root: root})
				done <- result{m, err}
			}()
			select {
			case r := <-done:
				if r.err != nil {
					t.Fatalf("Probe: %v", r.err)
				}
				t.Logf("%s tree: %d files, probed in %s with %d warnings", mode, n, time.Since(start), len(r.m.Warnings))
				if len(r.m.Warnings) == 0 {
					t.Error("no warnings")
				}
				if r.m.Memory.Total != 0 || r.m.CPU.Model != "" || r.m.Kernel != "" {
					t.Errorf("read something through a hostile file: memory %s, cpu %q, kernel %q", r.m.Memory.Total, r.m.CPU.Model, r.m.Kernel)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("Probe did not finish in 60 s")
			}
		})
	}
}

// TestPCIIDsFIFO is issue 15 item 9 for --pci-ids: a FIFO (or any
// non-regular file) given as pci.ids is refused with a warning instead of
// blocking the probe forever.
func TestPCIIDsFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pci.ids")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prober{fs: &rootFS{root: t.TempDir(), resolved: map[string]string{}}, dbPath: fifo, warned: map[string]bool{}}
	done := make(chan string, 1)
	go func() { done <- p.pciName("1002", "ffff") }()
	select {
	case name := <-done:
		if name != "AMD device 1002:ffff" || !hasWarning(p.m, "not a regular file") {
			t.Errorf("name %q, warnings %q", name, p.m.Warnings)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a FIFO pci.ids blocked the probe")
	}
}

// TestGHWLinkOutOfScope: a topology link into a directory ghwSafe does not
// walk, holding a FIFO, is not handed to ghw as it is.
func TestGHWLinkOutOfScope(t *testing.T) {
	root := copyTree(t, "testdata/strix-halo-128-gtt")
	trap := filepath.Join(root, "trap")
	if err := os.MkdirAll(trap, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"online", "distance", "meminfo"} {
		if err := syscall.Mkfifo(filepath.Join(trap, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodes := filepath.Join(root, "sys/devices/system/node")
	if err := os.RemoveAll(filepath.Join(nodes, "node0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../trap", filepath.Join(nodes, "node0")); err != nil {
		t.Fatal(err)
	}
	fsys, err := newRootFS(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ghwSafe(fsys) {
		t.Fatal("a link to an unwalked directory of FIFOs passed as safe")
	}
	done := make(chan error, 1)
	go func() { _, err := Probe(context.Background(), Options{Root: root}); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Probe did not finish in 60 s")
	}
	if !ghwSafe(mustRootFS(t, "testdata/a100-80gb-server")) {
		t.Error("a clean fixture is not safe for ghw: it would be staged, slowly")
	}
}

func mustRootFS(t *testing.T, root string) *rootFS {
	t.Helper()
	r, err := newRootFS(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
