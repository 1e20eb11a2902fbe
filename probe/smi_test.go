package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// fakeSMI writes an executable shell script standing in for nvidia-smi.
func fakeSMI(t *testing.T, script string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts as fake nvidia-smi need a Unix shell")
	}
	p := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSMITimeoutBound(t *testing.T) {
	if DefaultSMITimeout > MaxSMITimeout || MaxSMITimeout+smiWaitDelay > 5*time.Second {
		t.Errorf("nvidia-smi may take %s + %s, more than 5 s", MaxSMITimeout, smiWaitDelay)
	}
}

// TestSMIHang: a hung nvidia-smi is killed at the timeout, and a child
// still holding its output pipe does not keep Query waiting.
func TestSMIHang(t *testing.T) {
	for name, script := range map[string]string{
		"exec sleep":       "exec sleep 5",
		"child holds pipe": "sleep 5\necho never",
	} {
		t.Run(name, func(t *testing.T) {
			smi := ExecSMI{Path: fakeSMI(t, script), Timeout: 300 * time.Millisecond}
			start := time.Now()
			_, err := smi.Query(context.Background())
			if elapsed := time.Since(start); elapsed > 300*time.Millisecond+smiWaitDelay+time.Second {
				t.Errorf("Query returned after %s", elapsed)
			}
			if !errors.Is(err, ErrSMITimeout) {
				t.Errorf("err = %v, want ErrSMITimeout", err)
			}
		})
	}
}

// TestProbeWithHungSMI: the 4090 machine still probes, with its GPUs
// matched from the PCI ids and a warning, when nvidia-smi hangs.
func TestProbeWithHungSMI(t *testing.T) {
	opts := fixtureOpts("rtx-4090-x2")
	opts.SMI = ExecSMI{Path: fakeSMI(t, "exec sleep 5"), Timeout: 200 * time.Millisecond}
	start := time.Now()
	m := mustProbe(t, opts)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("probe took %s with a hung nvidia-smi", elapsed)
	}
	if !hasWarning(m, "timed out") || len(m.Devices) != 2 {
		t.Fatalf("want 2 devices and a timeout warning, got %d, %q", len(m.Devices), m.Warnings)
	}
	md := Match(m, testCatalog())[0]
	hw, usable, _, notes := ForPlanner(md, m)
	if md.Hardware.ID != "nvidia-rtx-4090" || usable != 24*planner.GiB || hw.Memory != 24*planner.GiB {
		t.Errorf("without nvidia-smi: %s usable %s memory %s; want the catalog's 24 GiB", md.Hardware.ID, usable, hw.Memory)
	}
	if !strings.Contains(strings.Join(notes, " "), "not probed") {
		t.Errorf("notes %q should say memory was not probed", notes)
	}
}

func TestSMIFailures(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"driver gone", `echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; exit 9`, "couldn't communicate"},
		{"no devices", `echo "No devices were found"; exit 6`, "No devices were found"},
		{"garbage", `echo "%%%% ,,, not csv"; exit 0`, "no CSV header"},
		{"killed", `kill -9 $$`, "signal: killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := fixtureOpts("rtx-4090-x2")
			opts.SMI = ExecSMI{Path: fakeSMI(t, tc.script)}
			m := mustProbe(t, opts)
			if !hasWarning(m, tc.want) {
				t.Errorf("warnings %q, want one containing %q", m.Warnings, tc.want)
			}
			if len(m.Devices) != 2 || m.Devices[0].VRAMTotal != 0 {
				t.Errorf("devices %+v", m.Devices)
			}
		})
	}
}

// TestSMIOldDriver: drivers before compute_cap are asked again without it.
func TestSMIOldDriver(t *testing.T) {
	script := `case "$1" in
*compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;;
esac
echo "index, name, pci.bus_id, pci.device_id, memory.total [MiB], memory.used [MiB]"
echo "0, NVIDIA GeForce RTX 3090, 00000000:21:00.0, 0x220410DE, 24576 MiB, 10 MiB"`
	out, err := ExecSMI{Path: fakeSMI(t, script)}.Query(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gpus, problems, err := parseSMI(out)
	if err != nil || len(problems) > 0 || len(gpus) != 1 || gpus[0].PCIID != "10de:2204" {
		t.Errorf("gpus %+v problems %q err %v", gpus, problems, err)
	}
}

func TestSMIMissing(t *testing.T) {
	_, err := ExecSMI{Path: filepath.Join(t.TempDir(), "nope")}.Query(context.Background())
	if err == nil {
		t.Error("running a missing binary gave no error")
	}
	_, err = FileSMI{Root: t.TempDir()}.Query(context.Background())
	if !errors.Is(err, ErrNoSMI) {
		t.Errorf("FileSMI without saved output: %v, want ErrNoSMI", err)
	}
}

// TestNoSMIWithoutNVIDIA: machines without an NVIDIA GPU never run it.
func TestNoSMIWithoutNVIDIA(t *testing.T) {
	opts := fixtureOpts("strix-halo-128-gtt")
	opts.SMI = ExecSMI{Path: fakeSMI(t, "exit 1")}
	if m := mustProbe(t, opts); len(m.Warnings) != 0 {
		t.Errorf("nvidia-smi ran on an AMD machine: %q", m.Warnings)
	}
}

func TestParseSMI(t *testing.T) {
	tests := []struct {
		name     string
		out      string
		want     []smiGPU
		problems int
	}{
		{
			name: "units",
			out: "index, name, pci.bus_id, pci.device_id, memory.total [MiB], memory.used [MiB], compute_cap, power.limit [W], clocks.max.sm [MHz], clocks.max.memory [MHz], driver_version\n" +
				"0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 0x20B210DE, 81920 MiB, 1 MiB, 8.0, 400.00 W, 1410 MHz, 1593 MHz, 535.183.01\n",
			want: []smiGPU{{Index: 0, Name: "NVIDIA A100-SXM4-80GB", Bus: "0000:07:00.0", PCIID: "10de:20b2", MemTotal: 81920 * planner.MiB,
				MemUsed: planner.MiB, HasMemory: true, Compute: "8.0", PowerLimitW: 400, MaxSMClockMHz: 1410, MaxMemClockMHz: 1593, Driver: "535.183.01"}},
		},
		{
			name: "nounits, other order",
			out:  "memory.total [MiB], name, pci.bus_id\n24564, NVIDIA GeForce RTX 4090, 00000000:01:00.0\n",
			want: []smiGPU{{Index: -1, Name: "NVIDIA GeForce RTX 4090", Bus: "0000:01:00.0", MemTotal: 24564 * planner.MiB, HasMemory: true}},
		},
		{
			name: "GB10 unified memory",
			out:  "index, name, pci.bus_id, memory.total [MiB], memory.used [MiB], power.limit [W]\n0, NVIDIA GB10, 0000000F:01:00.0, [N/A], [N/A], [Not Supported]\n",
			want: []smiGPU{{Index: 0, Name: "NVIDIA GB10", Bus: "000f:01:00.0"}},
		},
		{
			name: "warning before header, bad row",
			out:  "WARNING: infoROM is corrupted at gpu 0000:01:00.0\nindex, name, memory.total [MiB]\n0, X, lots MiB\n1, Y, 100 MiB, extra\n2, Z, 100 MiB\n",
			want: []smiGPU{{Index: 2, Name: "Z", MemTotal: 100 * planner.MiB, HasMemory: true}}, problems: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, problems, err := parseSMI([]byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != tc.problems || len(got) != len(tc.want) {
				t.Fatalf("got %+v problems %q", got, problems)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
	for _, bad := range []string{"", "No devices were found\n", "name\nX\n"} {
		if _, _, err := parseSMI([]byte(bad)); err == nil {
			t.Errorf("parseSMI(%q) gave no error", bad)
		}
	}
}

func TestNormalizeBus(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:01:00.0": "0000:01:00.0", "0000:C5:00.0": "0000:c5:00.0", "10000:e1:00.0": "10000:e1:00.0",
	} {
		if got, err := normalizeBus(in); err != nil || got != want {
			t.Errorf("normalizeBus(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "01:00.0", "0000:01:00", "0000:01:20.0", "0000:01:00.8", "x:y:z.w"} {
		if _, err := normalizeBus(bad); err == nil {
			t.Errorf("normalizeBus(%q) gave no error", bad)
		}
	}
}

func FuzzParseSMI(f *testing.F) {
	for _, s := range []string{
		"index, name, pci.bus_id, pci.device_id, memory.total [MiB], memory.used [MiB], compute_cap, power.limit [W]\n0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 0x268410DE, 24564 MiB, 1 MiB, 8.9, 450.00 W\n",
		"memory.total [MiB], pci.bus_id\n[N/A], 0000000F:01:00.0\n",
		"pci.bus_id\n\"0000:01:00.0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		gpus, _, err := parseSMI(b)
		if err != nil {
			return
		}
		for _, g := range gpus {
			if g.MemUsed > g.MemTotal || g.MemTotal < 0 || g.PowerLimitW < 0 {
				t.Errorf("implausible row %+v", g)
			}
			if g.Bus != "" {
				if again, err := normalizeBus(g.Bus); err != nil || again != g.Bus {
					t.Errorf("bus %q does not normalise to itself", g.Bus)
				}
			}
		}
	})
}

// TestParseSMIBadHeader is issue 15 item 5: a duplicated or empty header
// column made smiRow index past the row and panic.
func TestParseSMIBadHeader(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantGPUs int
		wantMiB  int64
	}{
		{"duplicated column", "pci.bus_id, memory.total [MiB], memory.total [MiB]\n00000000:01:00.0, 24564 MiB, 1 MiB\n", 1, 24564},
		{"empty column", "pci.bus_id, , memory.total [MiB]\n00000000:01:00.0, x, 24564 MiB\n", 1, 24564},
		{"duplicate, short row", "memory.total, memory.total, pci.bus_id\n24564, 00000000:01:00.0\n", 0, 0},
		{"all empty", ",,memory.total\n,,\n", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus, _, err := parseSMI([]byte(tt.in))
			if err != nil {
				t.Fatalf("parseSMI: %v", err)
			}
			if len(gpus) != tt.wantGPUs {
				t.Fatalf("got %d GPUs, want %d", len(gpus), tt.wantGPUs)
			}
			if tt.wantGPUs > 0 && gpus[0].MemTotal != planner.Bytes(tt.wantMiB)*planner.MiB {
				t.Errorf("memory.total = %s, want %d MiB (the first of the duplicated columns)", gpus[0].MemTotal, tt.wantMiB)
			}
		})
	}
}

// TestSMINameSanitized is the probe's part of issue 15 item 4: a terminal
// escape in a device name never reaches the screen.
func TestSMINameSanitized(t *testing.T) {
	gpus, _, err := parseSMI([]byte("name, pci.bus_id\n\"NVIDIA \x1b[2JGeForce\x07 RTX 4090\", 00000000:01:00.0\n"))
	if err != nil || len(gpus) != 1 {
		t.Fatalf("%+v, %v", gpus, err)
	}
	if gpus[0].Name != "NVIDIA [2JGeForce RTX 4090" {
		t.Errorf("name %q", gpus[0].Name)
	}
}
