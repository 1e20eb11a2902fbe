//go:build unix

package modelsrc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO named as a model (a GGUF, a config.json, a directory whose
// config.json or weights are FIFOs) is refused at once: reading one
// blocked forever (issue 15 item 9).
func TestModelFIFOsAreRefused(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		return p
	}
	gguf := mk(filepath.Join(dir, "model.gguf"))
	cfgDir := filepath.Join(dir, "cfg")
	os.Mkdir(cfgDir, 0o755)
	mk(filepath.Join(cfgDir, "config.json"))
	for _, path := range []string{gguf, filepath.Join(cfgDir, "config.json"), cfgDir} {
		done := make(chan error, 1)
		go func() { _, err := Open(path); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: a FIFO opened as a model", path)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still blocked after 20 s", path)
		}
	}
}
