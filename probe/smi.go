package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// SMI runs NVIDIA's nvidia-smi (or replays its saved output). Query returns
// the CSV that `nvidia-smi --query-gpu=<SMIFields> --format=csv` prints,
// header line included.
type SMI interface {
	Query(ctx context.Context) ([]byte, error)
}

// SMIFields are the columns the probe asks nvidia-smi for (see
// `nvidia-smi --help-query-gpu`). compute_cap needs driver 510 or later;
// older drivers are asked for smiBasicFields instead.
const SMIFields = "index,name,pci.bus_id,pci.device_id,memory.total,memory.used,compute_cap,power.limit,clocks.max.sm,clocks.max.memory,driver_version"

const smiBasicFields = "index,name,pci.bus_id,pci.device_id,memory.total,memory.used,power.limit,clocks.max.sm,clocks.max.memory,driver_version"

// Limits of one nvidia-smi run. A hung driver must not hang the probe: the
// process is killed at the timeout, and its pipes are closed WaitDelay later
// even if a child still holds them, so Query returns within
// MaxSMITimeout + smiWaitDelay = 5 s.
const (
	DefaultSMITimeout = 4 * time.Second
	MaxSMITimeout     = 4500 * time.Millisecond
	smiWaitDelay      = 500 * time.Millisecond
	smiMaxOutput      = 1 << 20
)

// Sentinel errors of SMI implementations.
var (
	// ErrNoSMI says there is no nvidia-smi to run or no saved output.
	ErrNoSMI = errors.New("nvidia-smi not available")
	// ErrSMITimeout says nvidia-smi did not answer in time.
	ErrSMITimeout = errors.New("nvidia-smi timed out")
)

// ExecSMI runs the nvidia-smi binary.
type ExecSMI struct {
	// Path is the binary; empty means "nvidia-smi" on $PATH.
	Path string
	// Timeout bounds one run; zero means DefaultSMITimeout, and values over
	// MaxSMITimeout are cut to it.
	Timeout time.Duration
}

// Query runs nvidia-smi with a timeout and returns its CSV output. Drivers
// too old for compute_cap are asked again without it.
func (e ExecSMI) Query(ctx context.Context) ([]byte, error) {
	bin := e.Path
	if bin == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, fmt.Errorf("%w: not on PATH", ErrNoSMI)
		}
		bin = p
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultSMITimeout
	}
	timeout = min(timeout, MaxSMITimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := runSMI(ctx, bin, SMIFields, timeout)
	if err != nil && bytes.Contains(out, []byte("not a valid field")) {
		out, err = runSMI(ctx, bin, smiBasicFields, timeout)
	}
	return out, err
}

func runSMI(ctx context.Context, bin, fields string, timeout time.Duration) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, "--query-gpu="+fields, "--format=csv")
	cmd.WaitDelay = smiWaitDelay
	var stdout, stderr capped
	stdout.max, stderr.max = smiMaxOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w after %s (%s)", ErrSMITimeout, timeout, bin)
	}
	if err != nil {
		msg := firstLine(stderr.buf.String())
		if msg == "" {
			msg = firstLine(stdout.buf.String())
		}
		return stdout.buf.Bytes(), fmt.Errorf("run %s: %w: %s", bin, err, msg)
	}
	return stdout.buf.Bytes(), nil
}

// capped is a writer that keeps at most max bytes and drops the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Saved nvidia-smi results inside a probed root (written by Snapshot).
const (
	smiSavedOutput = ".headroom/nvidia-smi.csv"
	smiSavedError  = ".headroom/nvidia-smi.err"
)

// FileSMI replays nvidia-smi from a saved machine: Root/.headroom/
// nvidia-smi.csv holds its output, or nvidia-smi.err the error it gave.
type FileSMI struct {
	Root string // the saved machine's root directory
}

// Query returns the saved output, the saved error, or ErrNoSMI.
func (f FileSMI) Query(context.Context) ([]byte, error) {
	out, err := readSmall(filepath.Join(f.Root, smiSavedOutput))
	if err == nil {
		return out, nil
	}
	if msg, err2 := readSmall(filepath.Join(f.Root, smiSavedError)); err2 == nil {
		return nil, errors.New(strings.TrimSpace(string(msg)))
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no saved output at /%s", ErrNoSMI, smiSavedOutput)
	}
	return nil, fmt.Errorf("read /%s: %w", smiSavedOutput, err)
}

func readSmall(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, smiMaxOutput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > smiMaxOutput {
		return nil, errTooLarge
	}
	return b, nil
}

// smiGPU is one row of nvidia-smi output.
type smiGPU struct {
	Index          int
	Name           string
	Bus            string // normalised "dddd:bb:dd.f"
	PCIID          string // "10de:2684"
	MemTotal       planner.Bytes
	MemUsed        planner.Bytes
	HasMemory      bool // memory.total was a number (GB10 reports [N/A])
	Compute        string
	PowerLimitW    float64
	MaxSMClockMHz  int
	MaxMemClockMHz int
	Driver         string
}

// parseSMI parses `nvidia-smi --query-gpu=... --format=csv[,nounits]`
// output. Columns are found by the header, so any order and subset works;
// "[N/A]" and "[Not Supported]" read as absent. Rows that do not parse are
// skipped and reported in problems.
func parseSMI(out []byte) (gpus []smiGPU, problems []string, err error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.LazyQuotes = true
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("csv: %w", err)
	}
	h := -1
	for i, rec := range recs {
		if smiHeader(rec) {
			h = i
			break
		}
	}
	if h < 0 {
		return nil, nil, errors.New("no CSV header with pci.bus_id or memory.total")
	}
	cols, width := smiColumns(recs[h])
	for i, rec := range recs[h+1:] {
		g, err := smiRow(cols, width, rec)
		if err != nil {
			problems = append(problems, fmt.Sprintf("row %d: %v", i+1, err))
			continue
		}
		gpus = append(gpus, g)
	}
	return gpus, problems, nil
}

func smiHeader(rec []string) bool {
	for _, f := range rec {
		k := smiKey(f)
		if k == "pci.bus_id" || k == "memory.total" {
			return true
		}
	}
	return false
}

// smiKey strips the unit from a header field: "memory.total [MiB]" →
// "memory.total".
func smiKey(f string) string {
	f = strings.TrimSpace(f)
	if i := strings.IndexByte(f, '['); i >= 0 {
		f = f[:i]
	}
	return strings.ToLower(strings.TrimSpace(f))
}

// smiColumns maps each header key to its column and returns the header's
// width. A key that appears twice keeps its first column and an empty key
// none: rows are checked against width, not the number of distinct keys, so
// a duplicated or empty header field cannot make a column index run past a
// row (it did, and panicked: issue 15, item 5).
func smiColumns(header []string) (map[string]int, int) {
	cols := map[string]int{}
	for i, f := range header {
		k := smiKey(f)
		if _, dup := cols[k]; dup || k == "" {
			continue
		}
		cols[k] = i
	}
	return cols, len(header)
}

func smiRow(cols map[string]int, width int, rec []string) (smiGPU, error) {
	if len(rec) != width {
		return smiGPU{}, fmt.Errorf("%d fields, header has %d", len(rec), width)
	}
	get := func(k string) string {
		i, ok := cols[k]
		if !ok || smiAbsent(rec[i]) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	g := smiGPU{Index: -1, Name: cleanName(get("name")), Compute: cleanName(get("compute_cap")), Driver: cleanName(get("driver_version"))}
	if v, err := strconv.Atoi(get("index")); err == nil && v >= 0 {
		g.Index = v
	}
	var err error
	if s := get("pci.bus_id"); s != "" {
		if g.Bus, err = normalizeBus(s); err != nil {
			return smiGPU{}, err
		}
	}
	if s := get("pci.device_id"); s != "" {
		if g.PCIID, err = smiDeviceID(s); err != nil {
			return smiGPU{}, err
		}
	}
	if err := g.setMemory(get("memory.total"), get("memory.used")); err != nil {
		return smiGPU{}, err
	}
	g.PowerLimitW = smiNumber(get("power.limit"), "w")
	g.MaxSMClockMHz = int(smiNumber(get("clocks.max.sm"), "mhz"))
	g.MaxMemClockMHz = int(smiNumber(get("clocks.max.memory"), "mhz"))
	if g.Bus == "" && g.Name == "" {
		return smiGPU{}, errors.New("neither a name nor a PCI bus id")
	}
	return g, nil
}

func (g *smiGPU) setMemory(total, used string) error {
	if total == "" {
		return nil
	}
	t, err := smiMiB(total)
	if err != nil {
		return fmt.Errorf("memory.total: %w", err)
	}
	g.MemTotal, g.HasMemory = t, true
	if used != "" {
		u, err := smiMiB(used)
		if err != nil {
			return fmt.Errorf("memory.used: %w", err)
		}
		g.MemUsed = min(u, t)
	}
	return nil
}

func smiAbsent(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "" || strings.HasPrefix(v, "[") || v == "n/a"
}

// smiMiB parses "24564 MiB" or "24564" (nounits) into bytes.
func smiMiB(s string) (planner.Bytes, error) {
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "MiB"))
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a MiB count", clip(s))
	}
	return planner.Bytes(n) * planner.MiB, nil
}

// smiNumber parses "450.00 W" / "3120 MHz" / "450.00"; garbage reads as 0.
func smiNumber(s, unit string) float64 {
	v := strings.TrimSpace(s)
	if strings.HasSuffix(strings.ToLower(v), unit) {
		v = strings.TrimSpace(v[:len(v)-len(unit)])
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f > 1e7 {
		return 0
	}
	return f
}

// smiDeviceID turns pci.device_id "0x268410DE" (device << 16 | vendor)
// into "10de:2684".
func smiDeviceID(s string) (string, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 32)
	if err != nil {
		return "", fmt.Errorf("pci.device_id %q is not a 32-bit hex id", clip(s))
	}
	return fmt.Sprintf("%04x:%04x", v&0xffff, v>>16), nil
}

// normalizeBus turns "00000000:01:00.0" (nvidia-smi) or "0000:01:00.0"
// (sysfs) into "0000:01:00.0".
func normalizeBus(s string) (string, error) {
	bad := fmt.Errorf("PCI bus id %q is not domain:bus:device.function", clip(s))
	dom, rest, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	if !ok {
		return "", bad
	}
	bus, rest, ok1 := strings.Cut(rest, ":")
	dev, fn, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 {
		return "", bad
	}
	d, e1 := strconv.ParseUint(dom, 16, 32)
	b, e2 := strconv.ParseUint(bus, 16, 8)
	v, e3 := strconv.ParseUint(dev, 16, 5)
	f, e4 := strconv.ParseUint(fn, 16, 3)
	if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
		return "", bad
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", d, b, v, f), nil
}
