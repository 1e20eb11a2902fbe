package probe

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// wantDevice is what a fixture's device must read as.
type wantDevice struct {
	pciID      string
	bus        string
	vram       planner.Bytes
	gttCeiling planner.Bytes
	integrated bool
	catalogID  string
	// usable is the engine-agnostic usable memory ForPlanner returns
	// (tolerance 1 %).
	usable planner.Bytes
}

func TestFixtureMachines(t *testing.T) {
	const mib = planner.MiB
	tests := []struct {
		name     string
		threads  int
		numa     int
		ramKind  string
		ram      planner.Bytes // installed
		devices  []wantDevice
		warnings []string // substrings that must appear
	}{
		{
			name: "strix-halo-128-gtt", threads: 32, numa: 1, ramKind: "LPDDR5X", ram: 128 * planner.GiB,
			devices: []wantDevice{{pciID: "1002:1586", bus: "0000:c5:00.0", vram: 512 * mib, gttCeiling: 115 * planner.GiB,
				integrated: true, catalogID: "amd-ryzen-ai-max-395",
				// carve-out + GTT ceiling − used: 0.5 + 115 − 0.09 − 1.21 GiB
				usable: 512*mib + 115*planner.GiB - 93*mib - 1240*mib}},
		},
		{
			name: "strix-halo-96-carveout", threads: 32, numa: 1, ramKind: "LPDDR5X", ram: 128 * planner.GiB,
			devices: []wantDevice{{pciID: "1002:1586", bus: "0000:c5:00.0", vram: 96 * planner.GiB, gttCeiling: 16829440000,
				integrated: true, catalogID: "amd-ryzen-ai-max-395",
				usable: 96*planner.GiB + 16829440000 - 310*mib - 22*mib}},
		},
		{
			name: "rx-7900-xtx", threads: 32, numa: 1, ramKind: "DDR5", ram: 64 * planner.GiB,
			devices: []wantDevice{
				{pciID: "1002:744c", bus: "0000:03:00.0", vram: 25753026560, gttCeiling: 33350303744, catalogID: "amd-rx-7900-xtx",
					usable: 25753026560 - 1187573760},
				{pciID: "1002:164e", bus: "0000:13:00.0", vram: 512 * mib, gttCeiling: 33350303744, integrated: true,
					catalogID: "generic-amd-1002-164e", usable: 512*mib + 33350303744 - 24*mib - 11*mib},
			},
		},
		{
			name: "rtx-4090-x2", threads: 64, numa: 1, ramKind: "DDR4", ram: 256 * planner.GiB,
			devices: []wantDevice{
				{pciID: "10de:2684", bus: "0000:21:00.0", vram: 24564 * mib, catalogID: "nvidia-rtx-4090", usable: (24564 - 412) * mib},
				{pciID: "10de:2684", bus: "0000:61:00.0", vram: 24564 * mib, catalogID: "nvidia-rtx-4090", usable: (24564 - 4) * mib},
			},
		},
		{
			name: "a100-80gb-server", threads: 128, numa: 2, ramKind: "DDR4", ram: 512 * planner.GiB,
			devices: func() []wantDevice {
				var ds []wantDevice
				for _, b := range []string{"07", "0f", "47", "4e", "87", "90", "b7", "bd"} {
					ds = append(ds, wantDevice{pciID: "10de:20b2", bus: "0000:" + b + ":00.0", vram: 81920 * mib,
						catalogID: "nvidia-a100-sxm4-80gb", usable: 81919 * mib})
				}
				return ds
			}(),
		},
		{name: "no-gpu-server", threads: 64, numa: 2, ramKind: "DDR4", ram: 256 * planner.GiB},
	}
	cat := testCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustProbe(t, fixtureOpts(tc.name))
			if len(m.Warnings) > 0 {
				t.Errorf("warnings on a healthy fixture: %q", m.Warnings)
			}
			if m.CPU.Threads != tc.threads || m.NUMANodes != tc.numa {
				t.Errorf("threads %d, NUMA nodes %d; want %d, %d", m.CPU.Threads, m.NUMANodes, tc.threads, tc.numa)
			}
			if m.Memory.Kind != tc.ramKind || m.Memory.Installed != tc.ram || m.Memory.InstalledSource != "smbios" {
				t.Errorf("RAM %s %s (%s); want %s %s", m.Memory.Kind, m.Memory.Installed, m.Memory.InstalledSource, tc.ramKind, tc.ram)
			}
			if len(m.Devices) != len(tc.devices) {
				t.Fatalf("%d devices, want %d: %+v", len(m.Devices), len(tc.devices), m.Devices)
			}
			matched := Match(m, cat)
			for i, want := range tc.devices {
				checkDevice(t, m, matched[i], want)
			}
		})
	}
}

func checkDevice(t *testing.T, m Machine, md MatchedDevice, want wantDevice) {
	t.Helper()
	d := md.Device
	if d.PCIID != want.pciID || d.Bus != want.bus {
		t.Errorf("device %s at %s, want %s at %s", d.PCIID, d.Bus, want.pciID, want.bus)
	}
	if d.VRAMTotal != want.vram || d.GTTCeiling != want.gttCeiling || d.Integrated != want.integrated {
		t.Errorf("%s: VRAM %s, GTT ceiling %s, integrated %v; want %s, %s, %v",
			d.Bus, d.VRAMTotal, d.GTTCeiling, d.Integrated, want.vram, want.gttCeiling, want.integrated)
	}
	if md.Hardware.ID != want.catalogID {
		t.Errorf("%s matched %s by %q, want %s", d.Bus, md.Hardware.ID, md.By, want.catalogID)
	}
	_, usable, host, _ := ForPlanner(md, m)
	if !near(usable, want.usable, 0.01) {
		t.Errorf("%s: usable %s, want %s ± 1%%", d.Bus, usable, want.usable)
	}
	if host != m.Memory.Available {
		t.Errorf("%s: host RAM %s, want MemAvailable %s", d.Bus, host, m.Memory.Available)
	}
}

// TestStrixHaloReadsAsItsGTT is the headline case of issue 4: a Strix
// Halo with a 512 MiB carve-out is a ~115 GiB GPU, not a 512 MiB one, for
// every engine.
func TestStrixHaloReadsAsItsGTT(t *testing.T) {
	m := mustProbe(t, fixtureOpts("strix-halo-128-gtt"))
	d := m.Devices[0]
	for _, u := range UsableByPolicy(d, m) {
		if u.Bytes < 110*planner.GiB || u.Bytes > 116*planner.GiB {
			t.Errorf("%s on %s: usable %s, want 110-116 GiB (%s)", u.Policy, u.Backend, u.Bytes, u.Rule)
		}
	}
	hw, _, _, _ := ForPlanner(Match(m, testCatalog())[0], m)
	if hw.ID != "amd-ryzen-ai-max-395" || hw.MemoryModel != planner.MemAPU {
		t.Errorf("hardware %s (%s), want amd-ryzen-ai-max-395 (apu)", hw.ID, hw.MemoryModel)
	}
	if !near(hw.GPUMemory, 115*planner.GiB+512*planner.MiB, 0.001) || hw.Memory != 128*planner.GiB {
		t.Errorf("GPUMemory %s, Memory %s; want 115.5 GiB, 128 GiB", hw.GPUMemory, hw.Memory)
	}
}

// TestStrixHaloCarveOut: with 96 GiB given to the GPU in the BIOS, ROCm
// engines see the carve-out and Vulkan adds the (small, default) GTT.
func TestStrixHaloCarveOut(t *testing.T) {
	m := mustProbe(t, fixtureOpts("strix-halo-96-carveout"))
	d := m.Devices[0]
	want := map[string]planner.Bytes{
		"vllm":     96 * planner.GiB,
		"ollama":   96*planner.GiB - 310*planner.MiB,
		"llamacpp": 96*planner.GiB + 16829440000 - 332*planner.MiB,
	}
	for p, w := range want {
		if u := UsableMemory(d, m, p, ""); !near(u.Bytes, w, 0.001) {
			t.Errorf("%s: %s, want %s (%s)", p, u.Bytes, w, u.Rule)
		}
	}
	if u := UsableMemory(d, m, "llamacpp", planner.ROCm); !near(u.Bytes, 96*planner.GiB-310*planner.MiB, 0.001) {
		t.Errorf("llama.cpp on ROCm: %s, want the carve-out (%s)", u.Bytes, u.Rule)
	}
}

// TestThisMachine probes the machine the tests run on. On CI there is no
// GPU; wherever it runs, the result must be sane and quick.
func TestThisMachine(t *testing.T) {
	start := time.Now()
	m, err := Probe(context.Background(), Options{Root: "/"})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probed / in %s: %s, %d threads, %s RAM (%s available), %d devices, warnings %q",
		elapsed, m.CPU.Model, m.CPU.Threads, m.Memory.Total, m.Memory.Available, len(m.Devices), m.Warnings)
	if elapsed > time.Second {
		t.Errorf("probe took %s, want well under a second", elapsed)
	}
	if m.CPU.Threads < 1 || m.Memory.Total <= 0 || m.Memory.Available <= 0 || m.Memory.Available > m.Memory.Total {
		t.Errorf("implausible host: %+v %+v", m.CPU, m.Memory)
	}
	for _, d := range m.Devices {
		if d.PCIID == "" || d.Vendor == "" {
			t.Errorf("device without identity: %+v", d)
		}
		if d.VRAMUsed > d.VRAMTotal && d.VRAMTotal > 0 {
			t.Errorf("%s: used %s > total %s", d.Bus, d.VRAMUsed, d.VRAMTotal)
		}
	}
	md := Match(m, testCatalog())
	if len(md) == 0 {
		t.Fatal("Match returned nothing")
	}
	if len(m.Devices) == 0 && md[0].Device.Kind != planner.KindCPU {
		t.Errorf("a machine without GPU should match as its CPU, got %+v", md[0])
	}
}

func TestProbeRootErrors(t *testing.T) {
	if _, err := Probe(context.Background(), Options{Root: "testdata/does-not-exist"}); err == nil {
		t.Error("a missing root gave no error")
	}
	if _, err := Probe(context.Background(), Options{Root: "testdata/pci.ids"}); err == nil {
		t.Error("a file as root gave no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Probe(ctx, fixtureOpts("rx-7900-xtx")); err == nil {
		t.Error("a cancelled context gave no error")
	}
}

// TestEmptyRoot: nothing to read is a degraded Machine, not an error.
func TestEmptyRoot(t *testing.T) {
	m := mustProbe(t, Options{Root: t.TempDir()})
	if len(m.Devices) != 0 || len(m.Warnings) == 0 {
		t.Errorf("empty root: %d devices, warnings %q", len(m.Devices), m.Warnings)
	}
	md := Match(m, testCatalog())
	if len(md) != 1 || !md[0].Generic || md[0].Device.Kind != planner.KindCPU {
		t.Errorf("empty root should match one generic CPU, got %+v", md)
	}
}

func BenchmarkProbeThisMachine(b *testing.B) {
	for b.Loop() {
		if _, err := Probe(context.Background(), Options{Root: "/"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProbeA100Server(b *testing.B) {
	opts := fixtureOpts("a100-80gb-server")
	for b.Loop() {
		if _, err := Probe(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
