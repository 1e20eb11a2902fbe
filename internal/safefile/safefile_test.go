//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.gguf")
	if err := mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "urandom.toml")
	if err := os.Symlink("/dev/urandom", link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "ok.toml")
	if err := os.WriteFile(small, []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		want error // nil: reads
	}{
		{"fifo", fifo, ErrNotRegular},
		{"symlink to a device", link, ErrNotRegular},
		{"directory", dir, ErrNotRegular},
		{"over the cap", big, ErrTooLarge},
		{"missing", filepath.Join(dir, "nope"), os.ErrNotExist},
		{"regular", small, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var b []byte
			var err error
			go func() {
				b, err = ReadFile(tc.path, 1024)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang, not a slow machine
				t.Fatal("ReadFile blocked")
			}
			if tc.want == nil {
				if err != nil || string(b) != "a = 1\n" {
					t.Fatalf("ReadFile = %q, %v", b, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReadFileNeedsACap(t *testing.T) {
	if _, err := ReadFile("/dev/null", 0); err == nil {
		t.Error("ReadFile with no cap succeeded")
	}
}

func TestOpenWithoutCapOpensLargeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.Read(make([]byte, 10))
	if err != nil || n != 10 {
		t.Errorf("Read = %d, %v", n, err)
	}
}
