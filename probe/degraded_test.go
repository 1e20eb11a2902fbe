package probe

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// strixDev is the Strix Halo iGPU's sysfs directory in the fixtures.
const strixDev = "sys/devices/pci0000:00/0000:00:08.1/0000:c5:00.0/"

// TestDegraded breaks one thing at a time in a healthy machine: the probe
// must return, say what is wrong, and keep what it could read.
func TestDegraded(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, root string)
		warn   string // substring of a warning
		check  func(t *testing.T, m Machine)
	}{
		{
			name: "missing VRAM and GTT files",
			break_: func(t *testing.T, root string) {
				for _, f := range []string{"mem_info_vram_total", "mem_info_gtt_total"} {
					if err := os.Remove(filepath.Join(root, strixDev, f)); err != nil {
						t.Fatal(err)
					}
				}
			},
			warn: "/sys/bus/pci/devices/0000:c5:00.0/mem_info_vram_total: no such file",
			check: func(t *testing.T, m Machine) {
				// the module parameters still give the GTT ceiling
				if d := m.Devices[0]; d.GTTCeiling != 115*planner.GiB || d.GTTCeilingSource != "amdgpu.gttsize" {
					t.Errorf("GTT ceiling %s from %q", d.GTTCeiling, d.GTTCeilingSource)
				}
			},
		},
		{
			name:   "empty file",
			break_: func(t *testing.T, root string) { writeFile(t, root, strixDev+"mem_info_vram_total", "") },
			warn:   "mem_info_vram_total: empty",
		},
		{
			name:   "garbage number",
			break_: func(t *testing.T, root string) { writeFile(t, root, strixDev+"mem_info_gtt_total", "lots of memory\n") },
			warn:   `mem_info_gtt_total: "lots of memory" is not a byte count`,
		},
		{
			name: "number out of range",
			break_: func(t *testing.T, root string) {
				writeFile(t, root, strixDev+"mem_info_gtt_used", "99999999999999999999999\n")
			},
			warn: "mem_info_gtt_used",
		},
		{
			name: "directory where a file should be",
			break_: func(t *testing.T, root string) {
				p := filepath.Join(root, strixDev, "mem_info_vram_used")
				_ = os.Remove(p)
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			},
			warn: "mem_info_vram_used: not a regular file",
		},
		{
			name: "symlink loop",
			break_: func(t *testing.T, root string) {
				p := filepath.Join(root, "sys/bus/pci/devices/0000:c5:00.0")
				_ = os.Remove(p)
				if err := os.Symlink("0000:c5:00.0", p); err != nil {
					t.Fatal(err)
				}
			},
			warn:  "too many levels of symbolic links",
			check: func(t *testing.T, m Machine) { wantDevices(t, m, 0) },
		},
		{
			name: "symlink out of the root",
			break_: func(t *testing.T, root string) {
				p := filepath.Join(root, "sys/bus/pci/devices/0000:c5:00.0")
				_ = os.Remove(p)
				if err := os.Symlink("../../../../../../../../../../../sys/bus/pci/devices/0000:00:00.0", p); err != nil {
					t.Fatal(err)
				}
			},
			warn:  "symlink leaves the probed root",
			check: func(t *testing.T, m Machine) { wantDevices(t, m, 0) },
		},
		{
			name:   "garbage meminfo",
			break_: func(t *testing.T, root string) { writeFile(t, root, "proc/meminfo", "MemTotal 5\n\x00\xff garbage\n") },
			warn:   "/proc/meminfo: no MemTotal line",
			check: func(t *testing.T, m Machine) {
				if m.Memory.Total != 0 || len(m.Devices) != 1 {
					t.Errorf("memory %+v, %d devices", m.Memory, len(m.Devices))
				}
			},
		},
		{
			name: "no CPU topology, garbage cpuinfo",
			break_: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/cpu")); err != nil {
					t.Fatal(err)
				}
				writeFile(t, root, "proc/cpuinfo", "\xff\xfe\x00 nothing useful\n")
			},
			warn: "threads counted from /proc/cpuinfo",
		},
		{
			name: "hugepages directory ghw cannot parse",
			break_: func(t *testing.T, root string) {
				writeFile(t, root, "sys/kernel/mm/hugepages/bogus/nr_hugepages", "0\n")
			},
			warn: "ghw memory: malformed input",
		},
		{
			name: "bad module parameters",
			break_: func(t *testing.T, root string) {
				writeFile(t, root, amdgpuGTTParam, "abc\n")
				writeFile(t, root, ttmPagesParam, "-3\n")
			},
			warn: "/sys/module/amdgpu/parameters/gttsize: not -1 or a size in MiB",
			check: func(t *testing.T, m Machine) {
				if d := m.Devices[0]; d.GTTCeiling != 123480309760 || d.GTTCeilingSource != "mem_info_gtt_total" {
					t.Errorf("GTT ceiling %s from %q", d.GTTCeiling, d.GTTCeilingSource)
				}
			},
		},
		{
			name:   "amdgpu not bound",
			break_: func(t *testing.T, root string) { _ = os.Remove(filepath.Join(root, strixDev, "driver")) },
			warn:   "AMD GPU 0000:c5:00.0 has no driver bound",
			check: func(t *testing.T, m Machine) {
				md := Match(m, testCatalog())[0]
				hw, usable, _, notes := ForPlanner(md, m)
				if md.Hardware.ID != "amd-ryzen-ai-max-395" || usable != hw.UsableGPUMemory() || !strings.Contains(strings.Join(notes, " "), "not probed") {
					t.Errorf("unbound APU: %s usable %s notes %q", md.Hardware.ID, usable, notes)
				}
			},
		},
		{
			name:   "missing PCI class",
			break_: func(t *testing.T, root string) { _ = os.Remove(filepath.Join(root, strixDev, "class")) },
			warn:   "0000:c5:00.0/class: no such file",
			check:  func(t *testing.T, m Machine) { wantDevices(t, m, 0) },
		},
		{
			name:   "PCI listing gone",
			break_: func(t *testing.T, root string) { _ = os.RemoveAll(filepath.Join(root, "sys/bus/pci")) },
			warn:   "PCI devices not listed",
			check:  func(t *testing.T, m Machine) { wantDevices(t, m, 0) },
		},
		{
			name:   "file over 8 MiB",
			break_: func(t *testing.T, root string) { writeFile(t, root, "proc/meminfo", strings.Repeat("x", 9<<20)) },
			warn:   "/proc/meminfo: file larger than 8 MiB",
		},
		{
			name: "ttm limit below gttsize",
			break_: func(t *testing.T, root string) {
				writeFile(t, root, ttmPagesParam, "16777216\n") // 64 GiB
			},
			warn: "raise ttm.pages_limit to 30146560",
			check: func(t *testing.T, m Machine) {
				if d := m.Devices[0]; d.GTTCeiling != 64*planner.GiB || d.GTTCeilingSource != "ttm.pages_limit" {
					t.Errorf("GTT ceiling %s from %q, want 64 GiB from ttm.pages_limit", d.GTTCeiling, d.GTTCeilingSource)
				}
			},
		},
		{
			name: "kernel default GTT on a 512 MiB carve-out",
			break_: func(t *testing.T, root string) {
				writeFile(t, root, strixDev+"mem_info_gtt_total", "67876175872\n")
				writeFile(t, root, amdgpuGTTParam, "-1\n")
				writeFile(t, root, ttmPagesParam, "16571332\n")
			},
			warn: "the GPU may map only 63.21 GiB of system RAM",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, "testdata/strix-halo-128-gtt")
			tc.break_(t, root)
			m := probeQuickly(t, Options{Root: root})
			if !hasWarning(m, tc.warn) {
				t.Errorf("warnings %q\nwant one containing %q", m.Warnings, tc.warn)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
			_ = Match(m, testCatalog())
		})
	}
}

func wantDevices(t *testing.T, m Machine, n int) {
	t.Helper()
	if len(m.Devices) != n {
		t.Errorf("%d devices, want %d", len(m.Devices), n)
	}
}

// probeQuickly probes and fails if that takes over 2 s.
func probeQuickly(t *testing.T, opts Options) Machine {
	t.Helper()
	start := time.Now()
	m := mustProbe(t, opts)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("probe took %s", elapsed)
	}
	return m
}

// TestUnreadableFile needs a user the permission bits apply to.
func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	root := copyTree(t, "testdata/strix-halo-128-gtt")
	if err := os.Chmod(filepath.Join(root, strixDev, "mem_info_vram_total"), 0); err != nil {
		t.Fatal(err)
	}
	m := probeQuickly(t, Options{Root: root})
	if !hasWarning(m, "permission denied") {
		t.Errorf("warnings %q", m.Warnings)
	}
}

// TestGarbageEverywhere overwrites every file of every fixture with random
// bytes, or empties it: the probe must neither panic nor hang.
func TestGarbageEverywhere(t *testing.T) {
	// The two servers add only more of the same CPU files; copying them
	// is slow on some disks.
	for _, name := range []string{"strix-halo-128-gtt", "strix-halo-96-carveout", "rx-7900-xtx", "rtx-4090-x2"} {
		for _, mode := range []string{"random", "empty"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				root := copyTree(t, filepath.Join("testdata", name))
				rng := rand.New(rand.NewPCG(uint64(len(name)), 7))
				err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() {
						return err
					}
					var b []byte
					if mode == "random" {
						b = make([]byte, rng.IntN(64))
						for i := range b {
							b[i] = byte(rng.IntN(256))
						}
					}
					return os.WriteFile(p, b, 0o644)
				})
				if err != nil {
					t.Fatal(err)
				}
				m := probeQuickly(t, Options{Root: root})
				if len(m.Warnings) == 0 {
					t.Error("garbage gave no warning")
				}
				for _, md := range Match(m, testCatalog()) {
					_, _, _, _ = ForPlanner(md, m)
					_ = UsableByPolicy(md.Device, m)
				}
			})
		}
	}
}

// TestCancelledDuringSMI: a context cancelled while nvidia-smi runs stops
// it.
func TestCancelledDuringSMI(t *testing.T) {
	opts := fixtureOpts("rtx-4090-x2")
	opts.SMI = ExecSMI{Path: fakeSMI(t, "exec sleep 5")}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Probe(ctx, opts)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}
