//go:build unix

package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestExecToolsTimeout: a tool that hangs is killed at its timeout (with a
// generous bound: CI is a busy machine), and its partial output of a tool
// that fails is kept.
func TestExecToolsTimeout(t *testing.T) {
	saved := darwinTools
	t.Cleanup(func() { darwinTools = saved })
	darwinTools = []tool{
		{"hang.txt", []string{"/bin/sh", "-c", "echo started; exec sleep 30"}},
		{"partial.txt", []string{"/bin/sh", "-c", "echo 'hw.memsize: 8589934592'; echo 'sysctl: unknown oid' >&2; exit 1"}},
	}
	e := ExecTools{GOOS: "darwin", Timeout: 300 * time.Millisecond}
	start := time.Now()
	_, err := e.Output(context.Background(), "hang.txt")
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(start) > 10*time.Second {
		t.Errorf("hang: err %v after %s", err, time.Since(start))
	}
	out, err := e.Output(context.Background(), "partial.txt")
	if err == nil || !strings.Contains(err.Error(), "unknown oid") || string(out) != "hw.memsize: 8589934592\n" {
		t.Errorf("partial: %q, %v", out, err)
	}
	if _, err := e.Output(context.Background(), "nope.txt"); err == nil {
		t.Error("an unknown tool ran")
	}
}

// fakeTools replays fixed outputs and errors.
type fakeTools struct {
	outs map[string]string
	errs map[string]error
}

func (f fakeTools) OS() string { return "darwin" }
func (f fakeTools) Output(_ context.Context, name string) ([]byte, error) {
	if o, ok := f.outs[name]; ok {
		return []byte(o), f.errs[name]
	}
	return nil, f.errs[name]
}

// TestDarwinToolsFail: a Mac whose tools all fail or print garbage gives a
// Machine with warnings, not an error.
func TestDarwinToolsFail(t *testing.T) {
	bad := errors.New("system_profiler: signal: killed")
	m, err := Probe(context.Background(), Options{Root: t.TempDir(), Tools: fakeTools{
		outs: map[string]string{"sysctl.txt": "garbage", "SPDisplaysDataType.json": `{"SPDisplaysDataType":[{"_name":"Apple M9 Ultra","sppci_cores":"x"}]}`},
		errs: map[string]error{"SPHardwareDataType.json": bad, "vm_stat.txt": bad},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if m.OS != "darwin" || len(m.Warnings) < 3 || !hasWarning(m, "signal: killed") {
		t.Errorf("os %q warnings %q", m.OS, m.Warnings)
	}
	if len(m.Devices) != 1 || m.Devices[0].WorkingSet != 0 {
		t.Errorf("devices %+v", m.Devices)
	}
	ms := Match(m, desktopCatalog())
	if !ms[0].Generic || ms[0].Hardware.ID != "generic-apple-m9" {
		t.Errorf("matched %s generic %v", ms[0].Hardware.ID, ms[0].Generic)
	}
	_, _, _, _ = ForPlanner(ms[0], m)
}
