package probe

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestParseSysfsValues(t *testing.T) {
	bytesTests := []struct {
		in   string
		want planner.Bytes
		ok   bool
	}{
		{"25753026560\n", 25753026560, true},
		{" 536870912 ", 536870912, true},
		{"0", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"0x1000", 0, false},
		{"99999999999999999999", 0, false},
		{"12 kB", 0, false},
	}
	for _, tc := range bytesTests {
		got, err := parseSysfsBytes([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSysfsBytes(%q) = %d, %v", tc.in, got, err)
		}
	}
	for in, want := range map[string]int64{"-1\n": -1, "117760": 117760, "30146560\n": 30146560} {
		if got, err := parseSysfsInt([]byte(in)); err != nil || got != want {
			t.Errorf("parseSysfsInt(%q) = %d, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{"0x1002\n": "1002", "0x10DE": "10de", "744c": "744c", "0x8": "0008"} {
		if got, err := parsePCIHex([]byte(in)); err != nil || got != want {
			t.Errorf("parsePCIHex(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "0x", "0x10000", "zz"} {
		if _, err := parsePCIHex([]byte(bad)); err == nil {
			t.Errorf("parsePCIHex(%q) gave no error", bad)
		}
	}
	if c, err := parsePCIClass([]byte("0x030200\n")); err != nil || c != 0x030200 {
		t.Errorf("parsePCIClass = %x, %v", c, err)
	}
}

func TestParseMeminfo(t *testing.T) {
	mi, err := parseMeminfo([]byte("MemTotal:       24683656 kB\nMemFree:        23211688 kB\nMemAvailable:   24091000 kB\nHugePages_Total:       0\n"))
	if err != nil || mi.Total != 24683656*planner.KiB || mi.Available != 24091000*planner.KiB {
		t.Errorf("meminfo %+v, %v", mi, err)
	}
	old, err := parseMeminfo([]byte("MemTotal: 1000 kB\nMemFree: 600 kB\n"))
	if err != nil || old.Available != 600*planner.KiB || old.HasAvailable {
		t.Errorf("pre-3.14 meminfo (no MemAvailable) %+v, %v", old, err)
	}
	for _, bad := range []string{"", "MemTotal 5", "MemFree: 5 kB\n", "MemTotal: lots kB\n"} {
		if _, err := parseMeminfo([]byte(bad)); err == nil {
			t.Errorf("parseMeminfo(%q) gave no error", bad)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\n"
	if c := parseCPUInfo([]byte(x86)); c.Processors != 2 || c.Model != "AMD EPYC" || c.Vendor != "AuthenticAMD" || len(c.Flags) != 2 {
		t.Errorf("x86 cpuinfo %+v", c)
	}
	arm := "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\n"
	if c := parseCPUInfo([]byte(arm)); c.Processors != 1 || len(filterFeatures(c.Flags)) != 2 {
		t.Errorf("arm64 cpuinfo %+v", c)
	}
}

func TestSMBIOS17(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "strix-halo-128-gtt", "sys/firmware/dmi/entries/17-0/raw"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseSMBIOS17(raw)
	if err != nil || d.Size != 16*planner.GiB || d.SpeedMTs != 8000 || memoryKind(d) != "LPDDR5X" {
		t.Errorf("Strix Halo module %+v (%s), %v", d, memoryKind(d), err)
	}
	if !bytes.Contains(raw, []byte("801A2B3C")) {
		t.Fatal("fixture lost its made-up serial number")
	}
	clean, ok := sanitizeSMBIOS17(raw)
	if !ok || bytes.Contains(clean, []byte("801A2B3C")) || !bytes.Contains(clean, []byte("MT62F4G32D8DV-023")) {
		t.Errorf("sanitised entry still has the serial, or lost the part number: %q", clean)
	}
	if d2, err := parseSMBIOS17(clean); err != nil || d2 != d {
		t.Errorf("sanitised entry parses as %+v, %v", d2, err)
	}

	// Extended size (≥ 32 GiB modules) and KiB units.
	ext := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint16(ext[0x0C:], 0x7FFF)
	binary.LittleEndian.PutUint32(ext[0x1C:], 65536)
	if d, _ := parseSMBIOS17(ext); d.Size != 64*planner.GiB {
		t.Errorf("extended size %s, want 64 GiB", d.Size)
	}
	binary.LittleEndian.PutUint16(ext[0x0C:], 0x8000|512)
	if d, _ := parseSMBIOS17(ext); d.Size != 512*planner.KiB {
		t.Errorf("KiB size %s, want 512 KiB", d.Size)
	}
	for _, bad := range [][]byte{nil, {17}, {16, 0x28, 0, 0}, {17, 200, 0, 0, 1}} {
		if _, err := parseSMBIOS17(bad); err == nil {
			t.Errorf("parseSMBIOS17(%v) gave no error", bad)
		}
	}
}

func FuzzSysfsValue(f *testing.F) {
	for _, s := range []string{"25753026560\n", "-1\n", "0x1002\n", "0x030000", "", "99999999999999999999", " 7 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := parseSysfsBytes(b); err == nil && v < 0 {
			t.Errorf("negative byte count %d from %q", v, b)
		}
		_, _ = parseSysfsInt(b)
		if id, err := parsePCIHex(b); err == nil && len(id) != 4 {
			t.Errorf("PCI id %q from %q", id, b)
		}
		if c, err := parsePCIClass(b); err == nil && c > 0xFFFFFF {
			t.Errorf("class %x from %q", c, b)
		}
		if bus, err := normalizeBus(string(b)); err == nil {
			if again, err := normalizeBus(bus); err != nil || again != bus {
				t.Errorf("normalizeBus not idempotent on %q", b)
			}
		}
		if id, err := smiDeviceID(string(b)); err == nil && len(id) != 9 {
			t.Errorf("device id %q from %q", id, b)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal:       24683656 kB\nMemFree:        23211688 kB\nMemAvailable:   24091000 kB\n"))
	f.Add([]byte("MemTotal: 5\n"))
	f.Add([]byte("MemTotal:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mi, err := parseMeminfo(b)
		if err == nil && (mi.Total < 0 || mi.Available < 0 || mi.Free < 0) {
			t.Errorf("negative sizes %+v from %q", mi, b)
		}
		_ = parseCPUInfo(b)
	})
}

func FuzzParseSMBIOS17(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "rx-7900-xtx", "sys/firmware/dmi/entries/17-0/raw"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte{17, 0x13, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseSMBIOS17(b)
		if err == nil && (d.Size < 0 || d.SpeedMTs < 0) {
			t.Errorf("negative fields %+v", d)
		}
		if clean, ok := sanitizeSMBIOS17(b); ok {
			if _, err := parseSMBIOS17(clean); err != nil && len(b) >= 0x13 && b[1] >= 0x13 {
				t.Errorf("sanitised entry no longer parses: %v", err)
			}
		}
	})
}
