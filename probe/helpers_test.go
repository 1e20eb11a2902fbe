package probe

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// testCatalog is a small catalog with the hardware the fixtures are (the
// real one lives in package profiles, which probe must not import). Values
// are those of /work/shared/catalog/hardware.csv.
func testCatalog() *planner.Catalog {
	gpu := func(id, name, vendor string, gib int64, bw float64, backends ...planner.Backend) planner.Hardware {
		return planner.Hardware{ID: id, Name: name, Vendor: vendor, Kind: planner.KindGPU, Memory: planner.Bytes(gib) * planner.GiB,
			MemoryModel: planner.MemDiscrete, BandwidthGBs: bw, Backends: backends}
	}
	apu := func(id, name string, gib int64) planner.Hardware {
		return planner.Hardware{ID: id, Name: name, Vendor: "AMD", Kind: planner.KindAPU, Memory: planner.Bytes(gib) * planner.GiB,
			MemoryType: "LPDDR5X-8000 (256-bit, unified)", MemoryModel: planner.MemAPU, BandwidthGBs: 256,
			Backends: []planner.Backend{planner.ROCm, planner.Vulkan, planner.CPU}}
	}
	cpu := func(id, name, vendor string, gib int64) planner.Hardware {
		return planner.Hardware{ID: id, Name: name, Vendor: vendor, Kind: planner.KindCPU, Memory: planner.Bytes(gib) * planner.GiB,
			MemoryModel: planner.MemHost, Backends: []planner.Backend{planner.CPU}}
	}
	return &planner.Catalog{Hardware: []planner.Hardware{
		apu("amd-ryzen-ai-max-395", "AMD Ryzen AI Max+ 395 (Radeon 8060S, Strix Halo)", 128),
		apu("amd-ryzen-ai-max-385", "AMD Ryzen AI Max 385 (Radeon 8050S, Strix Halo 32 CU)", 64),
		gpu("amd-rx-7900-xtx", "AMD Radeon RX 7900 XTX", "AMD", 24, 960, planner.ROCm, planner.Vulkan),
		gpu("amd-rx-7900-xt", "AMD Radeon RX 7900 XT", "AMD", 20, 800, planner.ROCm, planner.Vulkan),
		gpu("nvidia-rtx-4090", "NVIDIA GeForce RTX 4090", "NVIDIA", 24, 1008, planner.CUDA, planner.Vulkan),
		gpu("nvidia-a100-sxm4-80gb", "NVIDIA A100 80GB SXM4", "NVIDIA", 80, 2039, planner.CUDA),
		gpu("nvidia-a100-pcie-80gb", "NVIDIA A100 80GB PCIe", "NVIDIA", 80, 1935, planner.CUDA),
		cpu("cpu-threadripper-pro-5975wx-ddr4", "AMD Ryzen Threadripper PRO 5975WX (8-ch DDR4-3200)", "AMD", 256),
		cpu("cpu-ryzen-9-7950x-ddr5", "AMD Ryzen 9 7950X + dual-channel DDR5-5200", "AMD", 128),
	}}
}

// fixtureOpts probes a tree under testdata with the bundled pci.ids.
func fixtureOpts(name string) Options {
	return Options{Root: filepath.Join("testdata", name), PCIDBPath: filepath.Join("testdata", "pci.ids")}
}

func mustProbe(t *testing.T, opts Options) Machine {
	t.Helper()
	m, err := Probe(context.Background(), opts)
	if err != nil {
		t.Fatalf("Probe(%s): %v", opts.Root, err)
	}
	return m
}

// copyTree copies a fixture into a temporary directory, symlinks as
// symlinks, so a test can break it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(p)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// untar unpacks a snapshot into dir, refusing names that leave it.
func untar(t *testing.T, r io.Reader, dir string) {
	t.Helper()
	gz, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			t.Fatalf("archive member %q leaves the archive", h.Name)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
		default:
			t.Fatalf("unexpected archive member type %c for %s", h.Typeflag, h.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// near reports |got − want| ≤ tol × want.
func near(got, want planner.Bytes, tol float64) bool {
	return math.Abs(float64(got-want)) <= tol*float64(want)
}

func hasWarning(m Machine, sub string) bool {
	for _, w := range m.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}
