package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Parsers of what macOS's tools print. Like the sysfs parsers they take
// bytes, never panic, and name what was wrong; the callers add the tool.

// maxToolOutput caps one tool's saved or captured output. system_profiler
// SPDisplaysDataType -json of a Mac with three displays is about 6 KB.
const maxToolOutput = 4 << 20

// sysctlName is a sysctl OID name: dotted words ("hw.memsize").
var sysctlName = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$`)

// parseSysctl reads `sysctl name...` output, one "name: value" per line
// (the form sysctl prints without -n). Lines without ": " are skipped; a
// name given twice keeps its first value.
func parseSysctl(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		k = strings.TrimSpace(k)
		if !ok || !sysctlName.MatchString(k) {
			continue // "sysctl: unknown oid ..." and other messages
		}
		if _, seen := out[k]; !seen {
			out[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sysctl output: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("sysctl output: no \"name: value\" line")
	}
	return out, nil
}

// sysctlBytes reads a byte count (hw.memsize).
func sysctlBytes(kv map[string]string, name string) (planner.Bytes, error) {
	v, ok := kv[name]
	if !ok {
		return 0, fmt.Errorf("%s: not printed", name)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > math.MaxInt64/2 {
		return 0, fmt.Errorf("%s: %q is not a byte count", name, clip(v))
	}
	return planner.Bytes(n), nil
}

// sysctlInt reads a small non-negative integer (hw.physicalcpu,
// iogpu.wired_limit_mb); ok is false when absent or malformed.
func sysctlInt(kv map[string]string, name string) (int64, bool) {
	v, found := kv[name]
	if !found {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, false
	}
	return n, true
}

// spHardware is the part of `system_profiler SPHardwareDataType -json` the
// probe uses. Serial numbers and UUIDs sit beside these fields; they are
// never read (and Snapshot removes them).
type spHardware struct {
	MachineName  string // "MacBook Pro"
	MachineModel string // "Mac14,10"
	Chip         string // "Apple M2 Pro"; the CPU type on Intel Macs
	Memory       planner.Bytes
	// Cores is the CPU core count, Perf/Eff the performance and efficiency
	// cores ("proc 12:8:4"); zero when not printed.
	Cores, Perf, Eff int
}

// parseSPHardware parses `system_profiler SPHardwareDataType -json`.
func parseSPHardware(b []byte) (spHardware, error) {
	items, err := spItems(b, "SPHardwareDataType")
	if err != nil {
		return spHardware{}, err
	}
	it := items[0]
	h := spHardware{
		MachineName:  spString(it["machine_name"]),
		MachineModel: spString(it["machine_model"]),
		Chip:         firstString(spString(it["chip_type"]), spString(it["cpu_type"])),
	}
	if s := spString(it["physical_memory"]); s != "" {
		h.Memory, _ = parseSPSize(s)
	}
	h.Cores, h.Perf, h.Eff = parseSPProcessors(spString(it["number_processors"]))
	if h.Chip == "" && h.Memory == 0 {
		return spHardware{}, errors.New("SPHardwareDataType: neither chip_type nor physical_memory")
	}
	return h, nil
}

// spItems decodes a system_profiler JSON document and returns the items of
// its one data type.
func spItems(b []byte, typ string) ([]map[string]any, error) {
	if len(b) > maxToolOutput {
		return nil, fmt.Errorf("%s: output larger than %d MiB", typ, maxToolOutput>>20)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	items := doc[typ]
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items", typ)
	}
	return items, nil
}

// spString renders a JSON value system_profiler printed as a string
// (numbers are printed as strings by some macOS versions, as numbers by
// others); anything else is "".
func spString(v any) string {
	switch x := v.(type) {
	case string:
		return cleanName(x)
	case float64:
		if x >= 0 && x < 1e15 && x == math.Trunc(x) {
			return strconv.FormatInt(int64(x), 10)
		}
	}
	return ""
}

func firstString(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

var spSize = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(KB|MB|GB|TB)$`)

// parseSPSize reads system_profiler's sizes: "16 GB", "1536 MB". Apple's
// "GB" here is GiB (a "16 GB" Mac has hw.memsize 17179869184).
func parseSPSize(s string) (planner.Bytes, error) {
	m := spSize.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size", clip(s))
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v > 1<<30 {
		return 0, fmt.Errorf("%q is not a size", clip(s))
	}
	unit := map[string]planner.Bytes{"KB": planner.KiB, "MB": planner.MiB, "GB": planner.GiB, "TB": planner.GiB * 1024}[m[2]]
	return planner.Bytes(v * float64(unit)), nil
}

// parseSPProcessors reads "proc 12:8:4" (total:performance:efficiency, on
// Apple silicon) or a bare core count.
func parseSPProcessors(s string) (total, perf, eff int) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "proc"))
	parts := strings.Split(s, ":")
	nums := make([]int, 0, 3)
	for _, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > 1<<16 {
			return 0, 0, 0
		}
		nums = append(nums, n)
	}
	switch len(nums) {
	case 1:
		return nums[0], 0, 0
	case 3:
		return nums[0], nums[1], nums[2]
	}
	return 0, 0, 0
}

// spGPU is one GPU of `system_profiler SPDisplaysDataType -json`.
type spGPU struct {
	Name     string // "Apple M2 Pro", "AMD Radeon Pro 5500M"
	Vendor   string // "Apple", "AMD", "Intel", "NVIDIA"
	Cores    int    // sppci_cores: GPU cores of Apple silicon
	DeviceID string // "67ef" (spdisplays_device-id), Intel Macs only
	VRAM     planner.Bytes
	Shared   planner.Bytes // spdisplays_vram_shared: an Intel iGPU's share
	Builtin  bool          // sppci_bus spdisplays_builtin
}

// parseSPDisplays parses `system_profiler SPDisplaysDataType -json`.
func parseSPDisplays(b []byte) ([]spGPU, error) {
	items, err := spItems(b, "SPDisplaysDataType")
	if err != nil {
		return nil, err
	}
	var out []spGPU
	for _, it := range items {
		g := spGPU{
			Name:    firstString(spString(it["sppci_model"]), spString(it["_name"])),
			Vendor:  spVendor(spString(it["spdisplays_vendor"]), spString(it["sppci_model"])+" "+spString(it["_name"])),
			Builtin: spString(it["sppci_bus"]) == "spdisplays_builtin",
		}
		if n, err := strconv.Atoi(spString(it["sppci_cores"])); err == nil && n > 0 && n < 1<<12 {
			g.Cores = n
		}
		if id, err := parsePCIHex([]byte(spString(it["spdisplays_device-id"]))); err == nil {
			g.DeviceID = id
		}
		for key, dst := range map[string]*planner.Bytes{"spdisplays_vram": &g.VRAM, "spdisplays_vram_shared": &g.Shared} {
			if s := spString(it[key]); s != "" {
				*dst, _ = parseSPSize(s)
			}
		}
		if g.Name == "" {
			continue
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, errors.New("SPDisplaysDataType: no GPU with a name")
	}
	return out, nil
}

// spVendor reads "sppci_vendor_Apple", "sppci_vendor_amd", "ATI (0x1002)",
// "Intel", falling back to the model name.
func spVendor(v, name string) string {
	s := strings.ToLower(v + " " + name)
	switch {
	case strings.Contains(s, "apple"):
		return "Apple"
	case strings.Contains(s, "amd"), strings.Contains(s, "ati"), strings.Contains(s, "radeon"), strings.Contains(s, "0x1002"):
		return "AMD"
	case strings.Contains(s, "intel"), strings.Contains(s, "0x8086"):
		return "Intel"
	case strings.Contains(s, "nvidia"), strings.Contains(s, "0x10de"):
		return "NVIDIA"
	}
	return ""
}

// vmStat is `vm_stat`: the page size and the page counts by kind.
type vmStat struct {
	PageSize planner.Bytes
	Pages    map[string]int64 // "Pages free" → 12345
}

var vmStatHeader = regexp.MustCompile(`page size of ([0-9]+) bytes`)

// parseVMStat parses vm_stat's output: "Mach Virtual Memory Statistics:
// (page size of 16384 bytes)" then "Pages free:   12345." lines.
func parseVMStat(b []byte) (vmStat, error) {
	if len(b) > maxToolOutput {
		return vmStat{}, errors.New("vm_stat: output too large")
	}
	m := vmStatHeader.FindSubmatch(b)
	if m == nil {
		return vmStat{}, errors.New("vm_stat: no page size header")
	}
	ps, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil || ps <= 0 || ps > 1<<24 {
		return vmStat{}, fmt.Errorf("vm_stat: page size %q", clip(string(m[1])))
	}
	st := vmStat{PageSize: planner.Bytes(ps), Pages: map[string]int64{}}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), "."), 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			continue
		}
		st.Pages[strings.TrimSpace(strings.Trim(k, `"`))] = n
	}
	if _, ok := st.Pages["Pages free"]; !ok {
		return vmStat{}, errors.New("vm_stat: no \"Pages free\" line")
	}
	return st, nil
}

// available is what can be allocated without paging: free, inactive and
// speculative pages (the pages macOS hands out before compressing or
// swapping; Activity Monitor's "Memory Used" is the rest) [U: the sum
// commonly used by monitoring tools, not an Apple-documented figure].
func (v vmStat) available() planner.Bytes {
	var n int64
	for _, k := range []string{"Pages free", "Pages inactive", "Pages speculative"} {
		n += v.Pages[k]
	}
	if n > math.MaxInt64/int64(v.PageSize) {
		return 0
	}
	return planner.Bytes(n) * v.PageSize
}
