package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"runtime"
	"strings"
	"time"
)

// Tools runs the vendor tools a macOS or Windows machine is probed with, or
// replays what they printed. Output returns one tool's standard output by
// its file name in a snapshot ("sysctl.txt", "SPDisplaysDataType.json").
type Tools interface {
	// OS is "darwin" or "windows".
	OS() string
	Output(ctx context.Context, name string) ([]byte, error)
}

// tool is one command a desktop probe runs, and the file its output is
// saved as under .headroom/<os>/ in a snapshot.
type tool struct {
	file string
	argv []string
}

// wiredLimitSysctl is the Apple silicon GPU's wired-memory limit in MiB
// (0 = macOS's default), settable with `sudo sysctl iogpu.wired_limit_mb=N`.
const wiredLimitSysctl = "iogpu.wired_limit_mb"

// darwinTools are the macOS commands, by absolute path so that $PATH
// cannot substitute them. sysctl prints "name: value" lines and exits 1
// after printing the names it knows when one is unknown (iogpu.* on Intel
// Macs); its output is used either way.
var darwinTools = []tool{
	{"sysctl.txt", []string{"/usr/sbin/sysctl", "hw.memsize", "machdep.cpu.brand_string", "hw.physicalcpu", "hw.logicalcpu",
		"hw.perflevel0.physicalcpu", "hw.perflevel1.physicalcpu", "kern.osrelease", "hw.pagesize",
		"hw.optional.arm.FEAT_DotProd", "hw.optional.arm.FEAT_I8MM", "hw.optional.arm.FEAT_BF16", wiredLimitSysctl}},
	{"SPHardwareDataType.json", []string{"/usr/sbin/system_profiler", "SPHardwareDataType", "-json"}},
	{"SPDisplaysDataType.json", []string{"/usr/sbin/system_profiler", "SPDisplaysDataType", "-json"}},
	{"vm_stat.txt", []string{"/usr/bin/vm_stat"}},
}

// videoClassKey is the registry key of display adapters' driver settings
// (the Display device setup class GUID; Microsoft, "System-defined device
// setup classes available to vendors"). Each adapter is a numbered subkey.
const videoClassKey = `HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}`

// windowsTools are the Windows commands. GPU memory comes from the
// registry's 64-bit HardwareInformation.qwMemorySize, never from WMI's
// Win32_VideoController.AdapterRAM, a uint32 that caps at 4 GiB (llmfit
// #840, whichllm #44; sebhildebrandt/systeminformation PR #534). RAM and
// CPU come from CIM through PowerShell's Format-List, which prints
// "Name : Value" records independent of the display language.
var windowsTools = []tool{
	{"reg-qwMemorySize.txt", []string{"reg", "query", videoClassKey, "/s", "/v", "HardwareInformation.qwMemorySize"}},
	{"reg-MemorySize.txt", []string{"reg", "query", videoClassKey, "/s", "/v", "HardwareInformation.MemorySize"}},
	{"reg-DriverDesc.txt", []string{"reg", "query", videoClassKey, "/s", "/v", "DriverDesc"}},
	{"reg-MatchingDeviceId.txt", []string{"reg", "query", videoClassKey, "/s", "/v", "MatchingDeviceId"}},
	{"cim.txt", []string{"powershell", "-NoProfile", "-NonInteractive", "-Command",
		"Get-CimInstance Win32_ComputerSystem | Format-List Manufacturer,Model,TotalPhysicalMemory; " +
			"Get-CimInstance Win32_OperatingSystem | Format-List Version,TotalVisibleMemorySize,FreePhysicalMemory; " +
			"Get-CimInstance Win32_Processor | Format-List Name,Manufacturer,NumberOfCores,NumberOfLogicalProcessors; " +
			"Get-CimInstance Win32_PhysicalMemory | Format-List Capacity,Speed,SMBIOSMemoryType"}},
}

func toolsOf(goos string) []tool {
	switch goos {
	case "darwin":
		return darwinTools
	case "windows":
		return windowsTools
	}
	return nil
}

// Limits of one tool run: system_profiler SPDisplaysDataType takes 1-3 s
// on a quiet Mac, PowerShell's first start several. A tool that hangs is
// killed at the timeout and its pipes closed toolWaitDelay later.
const (
	DefaultToolTimeout = 15 * time.Second
	toolWaitDelay      = 500 * time.Millisecond
)

// ExecTools runs the tools of this machine's OS.
type ExecTools struct {
	// GOOS is "darwin" or "windows"; empty means runtime.GOOS.
	GOOS string
	// Timeout bounds each tool; zero means DefaultToolTimeout.
	Timeout time.Duration
}

// OS returns the OS whose tools are run.
func (e ExecTools) OS() string {
	if e.GOOS == "" {
		return runtime.GOOS
	}
	return e.GOOS
}

// Output runs the tool saved as name, with a timeout, and returns what it
// printed on stdout (at most maxToolOutput bytes). A tool that exits with
// an error but printed something returns both.
func (e ExecTools) Output(ctx context.Context, name string) ([]byte, error) {
	var t tool
	for _, c := range toolsOf(e.OS()) {
		if c.file == name {
			t = c
		}
	}
	if t.file == "" {
		return nil, fmt.Errorf("no %s tool saved as %s", e.OS(), name)
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.argv[0], t.argv[1:]...)
	cmd.WaitDelay = toolWaitDelay
	hideWindow(cmd)
	var stdout, stderr capped
	stdout.max, stderr.max = maxToolOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: timed out after %s", path.Base(t.argv[0]), timeout)
	}
	if err != nil {
		msg := firstLine(stderr.buf.String())
		return stdout.buf.Bytes(), fmt.Errorf("%s: %w: %s", path.Base(t.argv[0]), err, msg)
	}
	return stdout.buf.Bytes(), nil
}

// toolsDir is where a snapshot keeps an OS's tool outputs.
func toolsDir(goos string) string { return ".headroom/" + goos }

// fileTools replays the outputs saved below root/.headroom/<os>/, through
// the confined reader. name.err holds the error a tool gave.
type fileTools struct {
	fs   *rootFS
	goos string
}

func (f fileTools) OS() string { return f.goos }

func (f fileTools) Output(_ context.Context, name string) ([]byte, error) {
	rel := path.Join(toolsDir(f.goos), name)
	out, err := f.fs.readFile(rel)
	if err == nil {
		return out, nil
	}
	if msg, err2 := f.fs.readString(rel + ".err"); err2 == nil {
		return nil, errors.New(clip(msg))
	}
	return nil, err
}

// desktopTools returns the Tools to probe with, or nil for a Linux probe:
// opts.Tools when set; the real tools for the root "/" on macOS and
// Windows; the saved outputs when the root holds .headroom/darwin or
// .headroom/windows.
func desktopTools(opts Options, fs *rootFS) Tools {
	if opts.Tools != nil {
		return opts.Tools
	}
	if isLiveRoot(fs.root) {
		if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
			return ExecTools{}
		}
		return nil
	}
	for _, goos := range []string{"darwin", "windows"} {
		if real, ok := fs.lookup(toolsDir(goos)); ok && fs.isDir(real) {
			return fileTools{fs: fs, goos: goos}
		}
	}
	return nil
}

// isLiveRoot reports whether root is this machine's own root: "/", or on
// Windows the volume root "/" resolves to ("C:\\").
func isLiveRoot(root string) bool {
	if root == "/" {
		return true
	}
	return runtime.GOOS == "windows" && len(root) == 3 && root[1] == ':' && (root[2] == '\\' || root[2] == '/')
}

// sanitizeToolOutput removes identifiers from a tool's output before it is
// saved: serial numbers, UUIDs and UDIDs of system_profiler's JSON (the
// hardware overview's serial_number, platform_UUID, provisioning_UDID and
// the displays' serial numbers). Other outputs hold none.
func sanitizeToolOutput(name string, out []byte) []byte {
	if !strings.HasSuffix(name, ".json") {
		return out
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return []byte("{}\n") // unparsable: keep nothing rather than something unchecked
	}
	doc = dropIdentifiers(doc)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return []byte("{}\n")
	}
	return append(b, '\n')
}

func dropIdentifiers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			lk := strings.ToLower(k)
			if strings.Contains(lk, "serial") || strings.Contains(lk, "uuid") || strings.Contains(lk, "udid") {
				delete(x, k)
				continue
			}
			x[k] = dropIdentifiers(e)
		}
	case []any:
		for i := range x {
			x[i] = dropIdentifiers(x[i])
		}
	}
	return v
}

// toolOutput runs or replays one tool and records what it gave for a
// snapshot (sanitised). A tool that failed without output is a warning.
func (p *prober) toolOutput(ctx context.Context, t Tools, name string) []byte {
	out, err := t.Output(ctx, name)
	rel := path.Join(toolsDir(t.OS()), name)
	if len(out) > 0 {
		p.rec.add(rel, sanitizeToolOutput(name, out))
	}
	if err != nil {
		p.rec.add(rel+".err", []byte(err.Error()+"\n"))
		if len(out) == 0 {
			p.warn("%s: %v", name, err)
			return nil
		}
	}
	return bytes.Clone(out)
}
