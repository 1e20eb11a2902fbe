package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// RunAndSave runs a calibration and, only when it completed without error
// and ctx was not cancelled, writes encode(samples) to path atomically: to
// a temporary file in the same directory, synced, then renamed over path.
// On any error nothing is written and an existing file at path is left as
// it was. A nil encode writes the samples as indented JSON. The directory
// is checked before the run, so a bad path fails at once.
func RunAndSave(ctx context.Context, opt Options, path string, encode func(Samples) ([]byte, error), progress func(done, total int, step string)) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("calibration file %s: %w", path, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("calibration file %s: %s is not a directory", path, dir)
	}
	s, err := Run(ctx, opt, progress)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("calibrate endpoint: cancelled before saving: %w", context.Cause(ctx))
	}
	if encode == nil {
		encode = func(s Samples) ([]byte, error) { return json.MarshalIndent(s, "", "  ") }
	}
	b, err := encode(s)
	if err != nil {
		return fmt.Errorf("calibration file %s: encode: %w", path, err)
	}
	return writeFileAtomic(path, b)
}

// writeFileAtomic replaces path with data so that a reader sees either the
// old file or the whole new one, even if the process dies midway.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("calibration file %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("calibration file %s: write: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("calibration file %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("calibration file %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("calibration file %s: close: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("calibration file %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable; best effort
		_ = d.Sync()
		d.Close()
	}
	return nil
}
