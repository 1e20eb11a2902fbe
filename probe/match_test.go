package probe

import (
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestMatch(t *testing.T) {
	cat := testCatalog()
	strix := mustProbe(t, fixtureOpts("strix-halo-128-gtt"))
	xtx := mustProbe(t, fixtureOpts("rx-7900-xtx"))
	a100 := mustProbe(t, fixtureOpts("a100-80gb-server"))

	max385 := strix
	max385.CPU.Model = "AMD RYZEN AI MAX 385 w/ Radeon 8050S"
	xt := xtx
	xt.Devices = []Device{xtx.Devices[0]}
	xt.Devices[0].VRAMTotal = 20464 * planner.MiB
	pcie := a100
	pcie.Devices = []Device{a100.Devices[0]}
	pcie.Devices[0].PCIID = "10de:20b5"

	tests := []struct {
		name    string
		m       Machine
		wantID  string
		wantBy  string
		generic bool
	}{
		{"strix halo 395 by cpu model", strix, "amd-ryzen-ai-max-395", "pci id + cpu model", false},
		{"strix halo 385 by cpu model", max385, "amd-ryzen-ai-max-385", "pci id + cpu model", false},
		{"7900 xtx by memory", xtx, "amd-rx-7900-xtx", "pci id + memory", false},
		{"7900 xt by memory", xt, "amd-rx-7900-xt", "pci id + memory", false},
		{"a100 sxm4", a100, "nvidia-a100-sxm4-80gb", "pci id", false},
		{"a100 pcie", pcie, "nvidia-a100-pcie-80gb", "pci id", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := Match(tc.m, cat)[0]
			if md.Hardware.ID != tc.wantID || md.By != tc.wantBy || md.Generic != tc.generic {
				t.Errorf("matched %s by %q (generic %v), want %s by %q", md.Hardware.ID, md.By, md.Generic, tc.wantID, tc.wantBy)
			}
		})
	}
}

// TestMatchCatalogPCIIDs: ids the catalog itself lists win over the table.
func TestMatchCatalogPCIIDs(t *testing.T) {
	cat := testCatalog()
	cat.Hardware = append(cat.Hardware, planner.Hardware{ID: "my-4090-oc", Name: "Overclocked 4090", Vendor: "NVIDIA",
		Kind: planner.KindGPU, Memory: 24 * planner.GiB, PCIIDs: []string{"10DE:2684"}})
	m := mustProbe(t, fixtureOpts("rtx-4090-x2"))
	for _, md := range Match(m, cat) {
		if md.Hardware.ID != "my-4090-oc" || md.By != "catalog pci_ids" {
			t.Errorf("matched %s by %q, want my-4090-oc by catalog pci_ids", md.Hardware.ID, md.By)
		}
	}
}

// TestMatchUnknownDevice: a GPU Headroom does not know gets a generic
// profile from its probed memory, named from pci.ids, with a hint.
func TestMatchUnknownDevice(t *testing.T) {
	root := copyTree(t, "testdata/rx-7900-xtx")
	dev := "sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0/"
	writeFile(t, root, dev+"device", "0x73bf\n") // Navi 21, RX 6800 XT: not in the test catalog
	writeFile(t, root, dev+"mem_info_vram_total", "17163091968\n")
	m := mustProbe(t, Options{Root: root, PCIDBPath: "testdata/pci.ids"})
	md := Match(m, testCatalog())[0]
	d := md.Device
	if d.Name != "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]" {
		t.Errorf("name %q, want the pci.ids name", d.Name)
	}
	if !md.Generic || md.By != "generic" || !strings.Contains(md.Hint, "headroom calibrate") {
		t.Errorf("want a generic match with a calibrate hint, got %+v", md)
	}
	h := md.Hardware
	if h.Memory != 17163091968 || h.GPUMemory != 17163091968 || h.Kind != planner.KindGPU || !h.HasBackend(planner.ROCm) {
		t.Errorf("generic profile %+v", h)
	}
	if h.TDPWatts != 339 {
		t.Errorf("generic profile TDP %v, want the probed 339 W", h.TDPWatts)
	}
}

// TestMatchSkipsDisplayIGPU: the Ryzen 7950X's 2-CU iGPU beside a 7900 XTX
// is listed but flagged, so a plan does not land on it.
func TestMatchSkipsDisplayIGPU(t *testing.T) {
	md := Match(mustProbe(t, fixtureOpts("rx-7900-xtx")), testCatalog())
	if md[0].Skip != "" || md[1].Skip == "" {
		t.Errorf("skip flags %q, %q; want the iGPU flagged only", md[0].Skip, md[1].Skip)
	}
}

func TestMatchCPUOnly(t *testing.T) {
	cat := testCatalog()
	server := Match(mustProbe(t, fixtureOpts("no-gpu-server")), cat)
	if len(server) != 1 || server[0].Hardware.ID != "generic-cpu" || server[0].Device.Kind != planner.KindCPU ||
		server[0].Hardware.Memory != 256*planner.GiB || server[0].Hardware.MemoryType != "DDR4" {
		t.Errorf("Xeon server: %+v", server)
	}
	tr := mustProbe(t, fixtureOpts("rtx-4090-x2"))
	tr.Devices = nil
	got := Match(tr, cat)[0]
	if got.Hardware.ID != "cpu-threadripper-pro-5975wx-ddr4" || got.By != "cpu model" || got.Generic {
		t.Errorf("Threadripper without GPUs matched %s by %q", got.Hardware.ID, got.By)
	}
	hw, usable, host, _ := ForPlanner(got, tr)
	if usable != 0 || host != tr.Memory.Available || hw.MemoryModel != planner.MemHost {
		t.Errorf("CPU ForPlanner: usable %s host %s model %s", usable, host, hw.MemoryModel)
	}
}

func TestMatchNilCatalog(t *testing.T) {
	for _, md := range Match(mustProbe(t, fixtureOpts("a100-80gb-server")), nil) {
		if !md.Generic || md.Hardware.Memory != 81920*planner.MiB || md.Hardware.Compute != "8.0" {
			t.Errorf("nil catalog: %+v", md.Hardware)
		}
	}
}

func TestCPUNameMatches(t *testing.T) {
	tests := []struct {
		catalog, model string
		want           bool
	}{
		{"AMD Ryzen 9 7950X + dual-channel DDR5-5200", "AMD Ryzen 9 7950X 16-Core Processor", true},
		{"AMD Ryzen 9 7950X + dual-channel DDR5-5200", "AMD Ryzen 9 7950X3D 16-Core Processor", false},
		{"Intel Core i5-9500 (Dell OptiPlex 5070, DDR4)", "Intel(R) Core(TM) i5-9500 CPU @ 3.00GHz", true},
		{"Intel Core i9-13900K + dual-channel DDR5-5600", "Intel(R) Core(TM) i5-9500 CPU @ 3.00GHz", false},
		{"AMD", "AMD EPYC", false},
	}
	for _, tc := range tests {
		if got := cpuNameMatches(tc.catalog, tc.model); got != tc.want {
			t.Errorf("cpuNameMatches(%q, %q) = %v", tc.catalog, tc.model, got)
		}
	}
}

// TestLookupGenericCPU is issue 15 item 17: the id probe prints for a
// machine without accelerators must resolve.
func TestLookupGenericCPU(t *testing.T) {
	m := Machine{CPU: CPU{Vendor: "GenuineIntel", Model: "Unknown CPU 9000"}, Memory: Memory{Total: 16 * planner.GiB}}
	ms := Match(m, testCatalog())
	if len(ms) != 1 || ms[0].Hardware.ID != "generic-cpu" || !IsGenericID(ms[0].Hardware.ID) {
		t.Fatalf("match %+v", ms)
	}
	md, ok := Lookup(ms, " Generic-CPU ")
	if !ok || md.Hardware.Memory != 16*planner.GiB {
		t.Errorf("Lookup(generic-cpu) = %+v, %v", md.Hardware, ok)
	}
	if _, ok := Lookup(ms, "generic-nvidia-10de-2684"); ok {
		t.Error("Lookup found a device this machine does not have")
	}
	if IsGenericID("nvidia-rtx-4090") {
		t.Error("a catalog id read as generic")
	}
}
