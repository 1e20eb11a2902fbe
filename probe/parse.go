package probe

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headroom-planner/headroom/planner"
)

// Parsers of the text the kernel writes. They take bytes, never panic, and
// return an error naming what was wrong; the callers add the file path.

var errEmpty = errors.New("empty")

// parseSysfsBytes parses an amdgpu mem_info_* attribute: a decimal byte
// count ("25753026560\n").
func parseSysfsBytes(b []byte) (planner.Bytes, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, errEmpty
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a byte count", clip(s))
	}
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is out of range", clip(s))
	}
	return planner.Bytes(v), nil
}

// parseSysfsInt parses a signed decimal module parameter ("-1", "117760").
func parseSysfsInt(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, errEmpty
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", clip(s))
	}
	return v, nil
}

// parsePCIHex parses a PCI vendor or device id attribute ("0x1002\n") into
// four lowercase hex digits ("1002").
func parsePCIHex(b []byte) (string, error) {
	s := strings.ToLower(strings.TrimSpace(string(b)))
	if s == "" {
		return "", errEmpty
	}
	s = strings.TrimPrefix(s, "0x")
	v, err := strconv.ParseUint(s, 16, 16)
	if err != nil {
		return "", fmt.Errorf("%q is not a 16-bit PCI id", clip(s))
	}
	return fmt.Sprintf("%04x", v), nil
}

// parsePCIClass parses a PCI class attribute ("0x030000") into the 24-bit
// class code.
func parsePCIClass(b []byte) (uint32, error) {
	s := strings.ToLower(strings.TrimSpace(string(b)))
	if s == "" {
		return 0, errEmpty
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 24)
	if err != nil {
		return 0, fmt.Errorf("%q is not a PCI class code", clip(s))
	}
	return uint32(v), nil
}

// meminfo holds the /proc/meminfo fields the probe uses, in bytes.
type meminfo struct {
	Total, Free, Available planner.Bytes
	HasAvailable           bool
}

// parseMeminfo parses /proc/meminfo ("MemTotal:       24683656 kB").
// MemTotal is required; MemAvailable (kernel 3.14+) falls back to MemFree.
func parseMeminfo(b []byte) (meminfo, error) {
	var m meminfo
	var haveTotal bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		key, v, ok := meminfoLine(sc.Text())
		if !ok {
			continue
		}
		switch key {
		case "MemTotal":
			m.Total, haveTotal = v, true
		case "MemFree":
			m.Free = v
		case "MemAvailable":
			m.Available, m.HasAvailable = v, true
		}
	}
	if err := sc.Err(); err != nil {
		return meminfo{}, fmt.Errorf("scan: %w", err)
	}
	if !haveTotal {
		return meminfo{}, errors.New("no MemTotal line")
	}
	if !m.HasAvailable {
		m.Available = m.Free
	}
	return m, nil
}

// meminfoLine parses "Key:   123 kB" (or a unitless count) into bytes.
func meminfoLine(line string) (string, planner.Bytes, bool) {
	key, rest, ok := strings.Cut(line, ":")
	if !ok {
		return "", 0, false
	}
	f := strings.Fields(rest)
	if len(f) == 0 || len(f) > 2 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil || n > math.MaxInt64/2048 {
		return "", 0, false
	}
	mult := uint64(1)
	if len(f) == 2 {
		if !strings.EqualFold(f[1], "kB") {
			return "", 0, false
		}
		mult = 1024
	}
	return strings.TrimSpace(key), planner.Bytes(n * mult), true
}

// cpuinfo is the little the probe takes from /proc/cpuinfo itself when ghw
// cannot tell (no /sys/devices/system/cpu).
type cpuinfo struct {
	Vendor, Model string
	Processors    int
	Flags         []string
}

// parseCPUInfo reads the first processor's vendor, model and flags and
// counts "processor" entries (x86, arm64 and riscv spellings).
func parseCPUInfo(b []byte) cpuinfo {
	var c cpuinfo
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			c.Processors++
		case "vendor_id", "isa":
			c.Vendor = firstSet(c.Vendor, val)
		case "model name", "Model Name", "cpu model", "uarch":
			c.Model = firstSet(c.Model, val)
		case "flags", "Features":
			if c.Flags == nil {
				c.Flags = strings.Fields(val)
			}
		}
	}
	return c
}

func firstSet(old, v string) string {
	if old != "" {
		return old
	}
	return v
}

// smbiosMemoryDevice is what the probe reads from an SMBIOS type 17
// (Memory Device) structure.
type smbiosMemoryDevice struct {
	Size     planner.Bytes // 0 = empty slot
	TypeCode byte
	SpeedMTs int
}

// SMBIOS type 17 offsets (DMTF DSP0134 3.x, "Memory Device (Type 17)").
const (
	smbiosType17        = 17
	smbios17Size        = 0x0C // WORD: MiB (bit 15 set: KiB); 0x7FFF: see extended size
	smbios17Type        = 0x12 // BYTE: memory type
	smbios17Speed       = 0x15 // WORD: MT/s (2.3+)
	smbios17Serial      = 0x18 // BYTE: string number of the serial number
	smbios17AssetTag    = 0x19 // BYTE: string number of the asset tag
	smbios17ExtSize     = 0x1C // DWORD: MiB (2.7+)
	smbios17ExtSpeed    = 0x54 // DWORD: MT/s when Speed is 0xFFFF (3.3+)
	smbios17MinLenSpeed = 0x17
)

// parseSMBIOS17 parses the raw bytes of one SMBIOS type 17 structure as
// /sys/firmware/dmi/entries/17-N/raw holds them.
func parseSMBIOS17(raw []byte) (smbiosMemoryDevice, error) {
	if len(raw) < 4 || raw[0] != smbiosType17 {
		return smbiosMemoryDevice{}, errors.New("not an SMBIOS type 17 structure")
	}
	n := int(raw[1])
	if n < smbios17Type+1 || n > len(raw) {
		return smbiosMemoryDevice{}, fmt.Errorf("type 17 length %d does not fit %d bytes", n, len(raw))
	}
	f := raw[:n]
	d := smbiosMemoryDevice{TypeCode: f[smbios17Type], Size: smbios17SizeOf(f)}
	if n >= smbios17MinLenSpeed {
		d.SpeedMTs = int(binary.LittleEndian.Uint16(f[smbios17Speed:]))
		if d.SpeedMTs == 0xFFFF && n >= smbios17ExtSpeed+4 {
			d.SpeedMTs = int(binary.LittleEndian.Uint32(f[smbios17ExtSpeed:]))
		}
	}
	if d.SpeedMTs < 0 || d.SpeedMTs > 1_000_000 {
		d.SpeedMTs = 0
	}
	return d, nil
}

func smbios17SizeOf(f []byte) planner.Bytes {
	if len(f) < smbios17Size+2 {
		return 0
	}
	sz := binary.LittleEndian.Uint16(f[smbios17Size:])
	switch {
	case sz == 0 || sz == 0xFFFF:
		return 0
	case sz == 0x7FFF && len(f) >= smbios17ExtSize+4:
		return planner.Bytes(binary.LittleEndian.Uint32(f[smbios17ExtSize:])&0x7FFFFFFF) * planner.MiB
	case sz&0x8000 != 0:
		return planner.Bytes(sz&0x7FFF) * planner.KiB
	}
	return planner.Bytes(sz) * planner.MiB
}

// smbiosMemoryTypes names SMBIOS memory type codes (DSP0134 7.18.2).
var smbiosMemoryTypes = map[byte]string{
	0x12: "DDR", 0x13: "DDR2", 0x18: "DDR3", 0x1A: "DDR4", 0x1B: "LPDDR",
	0x1C: "LPDDR2", 0x1D: "LPDDR3", 0x1E: "LPDDR4", 0x20: "HBM", 0x21: "HBM2",
	0x22: "DDR5", 0x23: "LPDDR5", 0x24: "HBM3",
}

// lpddr5MaxMTs is the top LPDDR5 data rate (JEDEC JESD209-5B: 6400 MT/s);
// SMBIOS has no LPDDR5X code, so a faster "LPDDR5" part is LPDDR5X.
const lpddr5MaxMTs = 6400

// memoryKind names the memory technology of a module.
func memoryKind(d smbiosMemoryDevice) string {
	k := smbiosMemoryTypes[d.TypeCode]
	if k == "LPDDR5" && d.SpeedMTs > lpddr5MaxMTs {
		return "LPDDR5X"
	}
	return k
}

// sanitizeSMBIOS17 returns a copy of a type 17 structure with its serial
// number and asset tag strings replaced by "-", for snapshots. Anything it
// cannot parse is dropped rather than copied.
func sanitizeSMBIOS17(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != smbiosType17 {
		return nil, false
	}
	n := int(raw[1])
	if n < 4 || n > len(raw) {
		return nil, false
	}
	strs := smbiosStrings(raw[n:])
	for _, off := range []int{smbios17Serial, smbios17AssetTag} {
		if off < n {
			if i := int(raw[off]); i >= 1 && i <= len(strs) {
				strs[i-1] = "-"
			}
		}
	}
	out := append([]byte(nil), raw[:n]...)
	for _, s := range strs {
		out = append(append(out, s...), 0)
	}
	if len(strs) == 0 {
		out = append(out, 0)
	}
	return append(out, 0), true
}

// smbiosStrings splits an SMBIOS string-set (NUL-terminated strings ended
// by an extra NUL).
func smbiosStrings(b []byte) []string {
	var out []string
	for len(b) > 0 && b[0] != 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out
}

// clip shortens garbage for error messages.
// cleanName makes a name read from outside printable: control characters
// (a terminal escape in a driver description) are dropped and the result
// is capped at 120 bytes, on a rune boundary.
func cleanName(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		if b.Len() >= 120 {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
