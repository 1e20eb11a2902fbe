package probe

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Parsers of what Windows's tools print: `reg query` and PowerShell's
// Format-List. They take bytes, never panic, and name what was wrong.

// regValue is one value `reg query` printed.
type regValue struct {
	Type string // REG_SZ, REG_QWORD, REG_DWORD, REG_BINARY, ...
	Data string // as printed: "0x600000000", "NVIDIA GeForce RTX 4090"
}

// regKey is one key and the values printed under it.
type regKey struct {
	Path   string // HKEY_LOCAL_MACHINE\SYSTEM\...\{4d36e968-...}\0000
	Values map[string]regValue
}

var regValueLine = regexp.MustCompile(`^ {4}(\S.*?) {4}(REG_[A-Z_]+)(?: {4}(.*))?$`)

// parseRegQuery parses `reg query KEY /s [/v NAME]` output: a key's full
// path at the start of a line, its values indented by four spaces as
// "name    REG_TYPE    data", blank lines between keys, and "End of
// search: N match(es) found." at the end. Keys are returned in the order
// printed; a key printed twice (two queries concatenated) is merged.
func parseRegQuery(b []byte) ([]regKey, error) {
	if len(b) > maxToolOutput {
		return nil, errors.New("reg query: output too large")
	}
	var keys []regKey
	index := map[string]int{}
	cur := -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "HKEY_"):
			p := strings.TrimSpace(line)
			i, ok := index[strings.ToLower(p)]
			if !ok {
				i = len(keys)
				index[strings.ToLower(p)] = i
				keys = append(keys, regKey{Path: p, Values: map[string]regValue{}})
			}
			cur = i
		case cur >= 0:
			if m := regValueLine.FindStringSubmatch(line); m != nil {
				name := strings.TrimSpace(m[1])
				if _, seen := keys[cur].Values[name]; !seen {
					keys[cur].Values[name] = regValue{Type: m[2], Data: strings.TrimSpace(m[3])}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reg query: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("reg query: no HKEY_ key in the output")
	}
	return keys, nil
}

// regBytes reads a memory size value: REG_QWORD or REG_DWORD as "0x..."
// hex, or REG_BINARY as little-endian bytes ("00000080" is 0x80000000), the
// forms display drivers write HardwareInformation.qwMemorySize and
// HardwareInformation.MemorySize in.
func regBytes(v regValue) (planner.Bytes, error) {
	var n uint64
	var err error
	switch v.Type {
	case "REG_QWORD", "REG_DWORD", "REG_QWORD_LITTLE_ENDIAN", "REG_DWORD_LITTLE_ENDIAN":
		s := strings.ToLower(v.Data)
		if !strings.HasPrefix(s, "0x") {
			return 0, fmt.Errorf("%s %q is not hex", v.Type, clip(v.Data))
		}
		n, err = strconv.ParseUint(s[2:], 16, 64)
	case "REG_BINARY":
		n, err = leBytes(v.Data)
	default:
		return 0, fmt.Errorf("%s is not a size", v.Type)
	}
	if err != nil || n > math.MaxInt64/2 {
		return 0, fmt.Errorf("%s %q is not a byte count", v.Type, clip(v.Data))
	}
	return planner.Bytes(n), nil
}

// leBytes decodes a REG_BINARY of at most 8 bytes, little-endian.
func leBytes(s string) (uint64, error) {
	raw, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(raw) == 0 || len(raw) > 8 {
		return 0, errors.New("not 1-8 hex bytes")
	}
	var buf [8]byte
	copy(buf[:], raw)
	return binary.LittleEndian.Uint64(buf[:]), nil
}

// regPCIID reads MatchingDeviceId "pci\ven_10de&dev_2684&subsys_..." into
// "10de:2684"; ok is false for adapters that are not PCI devices (the
// Basic Display Adapter, virtual displays).
func regPCIID(s string) (string, bool) {
	s = strings.ToLower(s)
	if !strings.HasPrefix(s, `pci\`) {
		return "", false
	}
	var ven, dev string
	for _, part := range strings.Split(s[4:], "&") {
		switch {
		case strings.HasPrefix(part, "ven_"):
			ven = part[4:]
		case strings.HasPrefix(part, "dev_"):
			dev = part[4:]
		}
	}
	v, err1 := parsePCIHex([]byte(ven))
	d, err2 := parsePCIHex([]byte(dev))
	if err1 != nil || err2 != nil {
		return "", false
	}
	return v + ":" + d, true
}

// parseFormatList parses PowerShell's `Format-List` output: records of
// "Name : Value" lines separated by blank lines. A value wrapped onto an
// indented continuation line is joined to it.
func parseFormatList(b []byte) ([]map[string]string, error) {
	if len(b) > maxToolOutput {
		return nil, errors.New("Format-List: output too large")
	}
	var recs []map[string]string
	var cur map[string]string
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r ")
		if strings.TrimSpace(line) == "" {
			cur, last = nil, ""
			continue
		}
		k, v, ok := strings.Cut(line, " : ")
		if !ok && strings.HasSuffix(line, " :") {
			k, v, ok = strings.TrimSuffix(line, " :"), "", true
		}
		if !ok || strings.HasPrefix(line, " ") {
			if cur != nil && last != "" {
				cur[last] += strings.TrimSpace(line)
			}
			continue
		}
		if cur == nil {
			cur = map[string]string{}
			recs = append(recs, cur)
		}
		last = strings.TrimSpace(k)
		if _, seen := cur[last]; !seen {
			cur[last] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("Format-List: %w", err)
	}
	if len(recs) == 0 {
		return nil, errors.New("Format-List: no \"Name : Value\" record")
	}
	return recs, nil
}

// flBytes reads a Format-List number with a unit multiplier (1 for bytes,
// 1024 for the KiB counts of Win32_OperatingSystem).
func flBytes(rec map[string]string, key string, unit planner.Bytes) (planner.Bytes, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(rec[key]), 10, 64)
	if err != nil || n == 0 || n > math.MaxInt64/2/uint64(unit) {
		return 0, false
	}
	return planner.Bytes(n) * unit, true
}

func flInt(rec map[string]string, key string) int {
	n, err := strconv.Atoi(strings.TrimSpace(rec[key]))
	if err != nil || n < 0 || n > 1<<20 {
		return 0
	}
	return n
}
