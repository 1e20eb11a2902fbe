package probe

import (
	"os"
	"path/filepath"
	"testing"
)

// addFixtureSeeds adds every fixture file called name as a seed.
func addFixtureSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", ".headroom", "*", pattern))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

func FuzzParseSysctl(f *testing.F) {
	addFixtureSeeds(f, "sysctl.txt")
	f.Add([]byte("iogpu.wired_limit_mb: 26000 -> 26000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kv, err := parseSysctl(b)
		if err != nil {
			return
		}
		if v, err := sysctlBytes(kv, "hw.memsize"); err == nil && v < 0 {
			t.Errorf("negative memsize %d", v)
		}
		if n, ok := sysctlInt(kv, wiredLimitSysctl); ok {
			if ws, _ := MetalWorkingSet(0, n); ws < 0 {
				t.Errorf("negative working set from %d", n)
			}
		}
	})
}

func FuzzParseSPHardware(f *testing.F) {
	addFixtureSeeds(f, "SPHardwareDataType.json")
	f.Add([]byte(`{"SPHardwareDataType":[{"number_processors":4,"physical_memory":"16 GB","cpu_type":"Intel Core i7"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseSPHardware(b)
		if err != nil {
			return
		}
		if h.Memory < 0 || h.Cores < 0 || h.Perf < 0 || h.Eff < 0 {
			t.Errorf("negative figures %+v", h)
		}
	})
}

func FuzzParseSPDisplays(f *testing.F) {
	addFixtureSeeds(f, "SPDisplaysDataType.json")
	f.Add([]byte(`{"SPDisplaysDataType":[{"_name":"Intel Iris Pro","sppci_model":"Intel Iris Pro","spdisplays_vram_shared":"1536 MB"},{"sppci_model":"AMD Radeon Pro 5500M","spdisplays_vram":"4 GB","spdisplays_device-id":"0x7340","spdisplays_vendor":"sppci_vendor_amd"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		gpus, err := parseSPDisplays(b)
		if err != nil {
			return
		}
		for _, g := range gpus {
			if g.Name == "" || g.VRAM < 0 || g.Shared < 0 || g.Cores < 0 {
				t.Errorf("implausible GPU %+v", g)
			}
		}
	})
}

func FuzzParseVMStat(f *testing.F) {
	addFixtureSeeds(f, "vm_stat.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseVMStat(b)
		if err != nil {
			return
		}
		if v.PageSize <= 0 || v.available() < 0 {
			t.Errorf("page size %d, available %d", v.PageSize, v.available())
		}
	})
}

func FuzzParseRegQuery(f *testing.F) {
	addFixtureSeeds(f, "reg-*.txt")
	f.Add([]byte("HKEY_LOCAL_MACHINE\\X\\0000\n    HardwareInformation.MemorySize    REG_BINARY    00000080\n    (Default)    REG_SZ\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := parseRegQuery(b)
		if err != nil {
			return
		}
		for _, k := range keys {
			for _, v := range k.Values {
				if n, err := regBytes(v); err == nil && n < 0 {
					t.Errorf("negative size from %+v", v)
				}
			}
			if id, ok := regPCIID(k.Values["MatchingDeviceId"].Data); ok && len(id) != 9 {
				t.Errorf("PCI id %q", id)
			}
		}
	})
}

func FuzzParseFormatList(f *testing.F) {
	addFixtureSeeds(f, "cim.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := parseFormatList(b)
		if err != nil {
			return
		}
		for _, r := range recs {
			if len(r) == 0 {
				t.Error("empty record")
			}
			if v, ok := flBytes(r, "FreePhysicalMemory", 1024); ok && v <= 0 {
				t.Errorf("non-positive size %d", v)
			}
		}
	})
}
