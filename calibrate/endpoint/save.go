package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/headroom-planner/headroom/internal/atomicfile"
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
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("calibration file: %w", err)
	}
	return nil
}
