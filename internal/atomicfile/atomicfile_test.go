package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestWriteFileModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing os.FileMode // 0: no file before
		want     os.FileMode
	}{
		{"new file is 0644", 0, 0o644},
		{"existing 0600 keeps 0600", 0o600, 0o600},
		{"existing 0640 keeps 0640", 0o640, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plan.toml")
			if tc.existing != 0 {
				if err := os.WriteFile(path, []byte("old"), tc.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, []byte("new")); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tc.want {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.want)
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("contents %q, want %q", b, "new")
			}
			assertNoTemps(t, path)
		})
	}
}

func TestWriteFileRefusesMissingDirectory(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "nonexistent", "dir", "x.toml")
	err := WriteFile(path, []byte("x"))
	if err == nil {
		t.Fatal("no error for a missing directory")
	}
	if !strings.Contains(err.Error(), filepath.Join(root, "nonexistent", "dir")) {
		t.Errorf("error %q does not name the missing directory", err)
	}
	if _, err := os.Stat(filepath.Join(root, "nonexistent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing directory was created (stat: %v)", err)
	}
}

func TestWriteFailureKeepsOldFileAndRemovesTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cal.toml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("contents %q after a failed write, want %q", b, "old")
	}
	assertNoTemps(t, path)
}

func TestWriteRefusesNonRegularTarget(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x")); err == nil {
		t.Error("writing over a directory succeeded")
	}
}

func TestStaleTempOfDeadProcessIsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	dead := deadPID(t)
	stale := filepath.Join(dir, ".out.csv"+tempInfix+strconv.Itoa(dead)+"-123")
	live := filepath.Join(dir, ".out.csv"+tempInfix+strconv.Itoa(os.Getpid())+"-456")
	other := filepath.Join(dir, ".other.csv"+tempInfix+strconv.Itoa(dead)+"-789")
	for _, f := range []string{stale, live, other} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		kept bool
	}{{stale, false}, {live, true}, {other, true}} {
		_, err := os.Stat(tc.file)
		if kept := err == nil; kept != tc.kept {
			t.Errorf("%s: kept = %v, want %v", filepath.Base(tc.file), kept, tc.kept)
		}
	}
}

// deadPID returns a pid no process has.
func deadPID(t *testing.T) int {
	for pid := 4194000; pid > 100000; pid-- {
		if !processRunning(pid) {
			return pid
		}
	}
	t.Skip("no free pid found")
	return 0
}

func assertNoTemps(t *testing.T, path string) {
	t.Helper()
	if left, _ := filepath.Glob(TempPattern(path)); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
