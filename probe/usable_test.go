package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

// pciDir writes a PCI function as a plain directory under
// /sys/bus/pci/devices (no symlinks: the readers must not care).
func pciDir(t *testing.T, root, addr, class, vendor, device, driver string, files map[string]string) {
	t.Helper()
	dir := "sys/bus/pci/devices/" + addr + "/"
	writeFile(t, root, dir+"class", class+"\n")
	writeFile(t, root, dir+"vendor", "0x"+vendor+"\n")
	writeFile(t, root, dir+"device", "0x"+device+"\n")
	for k, v := range files {
		writeFile(t, root, dir+k, v+"\n")
	}
	if driver != "" {
		if err := os.Symlink("../../../../bus/pci/drivers/"+driver, filepath.Join(root, dir, "driver")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIntelGPUs(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 29360128 kB\n")
	pciDir(t, root, "0000:00:02.0", "0x030000", "8086", "46a6", "i915", nil)
	pciDir(t, root, "0000:03:00.0", "0x030000", "8086", "56a0", "xe", map[string]string{"tile0/physical_vram_size_bytes": "17179869184"})
	m := mustProbe(t, Options{Root: root, PCIDBPath: "testdata/pci.ids"})
	if len(m.Devices) != 2 {
		t.Fatalf("devices %+v", m.Devices)
	}
	igpu, arc := m.Devices[0], m.Devices[1]
	if !igpu.Integrated || igpu.Name != "Alder Lake-P Integrated Graphics Controller" {
		t.Errorf("iGPU %+v", igpu)
	}
	if arc.Integrated || arc.VRAMTotal != 16*planner.GiB || arc.Name != "DG2 [Arc A770]" || arc.Driver != "xe" {
		t.Errorf("Arc A770 %+v", arc)
	}
	if u := UsableMemory(igpu, m, "llamacpp", ""); u.Bytes != 24*planner.GiB || u.Backend != planner.Vulkan {
		t.Errorf("iGPU llama.cpp %s on %s (%s), want 3/4 of 32 GiB", u.Bytes, u.Backend, u.Rule)
	}
	if u := UsableMemory(igpu, m, "vllm", ""); u.Bytes != 0 {
		t.Errorf("vLLM on an Intel iGPU: %s", u.Bytes)
	}
	if md := Match(m, testCatalog()); md[0].Skip == "" || md[1].Skip != "" {
		t.Errorf("skip flags %q %q", md[0].Skip, md[1].Skip)
	}
}

// TestUnifiedNVIDIA: a GB10 (DGX Spark) has no PCI GPU in sysfs and
// nvidia-smi reports no memory; the pool is the system's.
func TestUnifiedNVIDIA(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "proc/meminfo", "MemTotal: 125829120 kB\nMemAvailable: 117440512 kB\n")
	writeFile(t, root, smiSavedOutput, "index, name, pci.bus_id, memory.total [MiB], memory.used [MiB], compute_cap\n0, NVIDIA GB10, 0000000F:01:00.0, [N/A], [N/A], 12.1\n")
	m := mustProbe(t, Options{Root: root})
	if len(m.Devices) != 1 || !m.Devices[0].Integrated || m.Devices[0].Kind != planner.KindSoC {
		t.Fatalf("devices %+v, warnings %q", m.Devices, m.Warnings)
	}
	d := m.Devices[0]
	if u := UsableMemory(d, m, "llamacpp", ""); u.Bytes != m.Memory.Available {
		t.Errorf("llama.cpp on GB10: %s, want MemAvailable (%s)", u.Bytes, u.Rule)
	}
	if u := UsableMemory(d, m, "vllm", ""); u.Bytes != m.Memory.Total {
		t.Errorf("vLLM on GB10: %s, want MemTotal (%s)", u.Bytes, u.Rule)
	}
	cat := testCatalog()
	cat.Hardware = append(cat.Hardware, planner.Hardware{ID: "nvidia-dgx-spark", Name: "NVIDIA DGX Spark (GB10 Grace Blackwell)",
		Vendor: "NVIDIA", Kind: planner.KindSoC, Memory: 128 * planner.GiB, MemoryModel: planner.MemUnified})
	md := Match(m, cat)[0]
	hw, usable, _, _ := ForPlanner(md, m)
	if md.Hardware.ID != "nvidia-dgx-spark" || hw.MemoryModel != planner.MemUnified || usable != m.Memory.Available {
		t.Errorf("GB10 matched %s by %q; ForPlanner %s usable %s", md.Hardware.ID, md.By, hw.MemoryModel, usable)
	}
}

func TestUsablePolicies(t *testing.T) {
	m := mustProbe(t, fixtureOpts("rx-7900-xtx"))
	xtx := m.Devices[0]
	if u := UsableMemory(xtx, m, "trtllm", ""); u.Bytes != 0 || !strings.Contains(u.Rule, "NVIDIA") {
		t.Errorf("TensorRT-LLM on AMD: %+v", u)
	}
	for _, alias := range []string{"llama.cpp", "llama-server", "LLAMACPP"} {
		if u := UsableMemory(xtx, m, alias, ""); u.Policy != "llamacpp" || u.Bytes != xtx.VRAMFree() {
			t.Errorf("%s: %+v", alias, u)
		}
	}
	if u := UsableMemory(Device{Vendor: "NVIDIA", PCIID: "10de:2684"}, m, "vllm", ""); u.Bytes != 0 || !strings.Contains(u.Rule, "not probed") {
		t.Errorf("unprobed memory: %+v", u)
	}
}

// TestVLLMWarnsOnBigGTT: on a 16 GiB APU whose GTT may take all RAM,
// vLLM's default 0.90 of it leaves the OS less than its 4 GiB; the rule
// says so. On the 128 GiB Strix Halo it does not.
func TestVLLMWarnsOnBigGTT(t *testing.T) {
	m := mustProbe(t, fixtureOpts("strix-halo-128-gtt"))
	if u := UsableMemory(m.Devices[0], m, "vllm", ""); strings.Contains(u.Rule, "lower --gpu-memory-utilization") {
		t.Errorf("128 GiB box: %q", u.Rule)
	}
	m.Memory.Total = 16 * planner.GiB
	d := m.Devices[0]
	d.GTTCeiling = 16 * planner.GiB
	if u := UsableMemory(d, m, "vllm", ""); !strings.Contains(u.Rule, "lower --gpu-memory-utilization") {
		t.Errorf("16 GiB box: %q", u.Rule)
	}
}
