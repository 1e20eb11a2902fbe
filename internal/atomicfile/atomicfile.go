// Package atomicfile replaces a file so that a reader sees either the old
// contents or the whole new ones, even if the process is killed midway.
//
// WriteFile writes to a temporary file in the target's directory, syncs
// it, and renames it over the target. The target's directory must exist:
// it is never created, so a mistyped path fails with an error naming it
// instead of making directories (as root, anywhere). An existing file
// keeps its permission bits; a new one gets 0644. On error the temporary
// file is removed. A temporary file left by a process killed with SIGKILL
// is named ".<target>.tmp-<pid>-<random>"; the next write to the same
// target removes those whose process is gone. A symbolic link at the
// target is replaced by the new file, not written through (its target's
// mode is kept); a target that is a directory, FIFO or device is refused.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NewFileMode is the permission of a file that did not exist before.
const NewFileMode fs.FileMode = 0o644

// tempInfix separates the target's name from the writer's pid in a
// temporary file's name: ".plan.toml.tmp-1234-567890".
const tempInfix = ".tmp-"

// TempPattern returns the glob that matches the temporary files of target,
// for tools and tests that look for leftovers.
func TempPattern(target string) string {
	dir, base := filepath.Split(target)
	return filepath.Join(dir, "."+base+tempInfix+"*")
}

// WriteFile replaces path with data atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces path atomically with what fn writes. If fn fails, path is
// left as it was and fn's error is returned, wrapped with the path.
func Write(path string, fn func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("write %s: no file name", path)
	}
	if dir == "" {
		dir = "."
	}
	mode, err := targetMode(path)
	if err != nil {
		return err
	}
	if err := checkDir(dir, path); err != nil {
		return err
	}
	removeStale(path)
	f, err := os.CreateTemp(dir, "."+base+tempInfix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fn(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// targetMode is the permission the new file gets: the existing file's, or
// NewFileMode. A target that exists and is not a regular file is refused.
func targetMode(path string) (fs.FileMode, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NewFileMode, nil
	case err != nil:
		return 0, fmt.Errorf("write %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("write %s: exists and is not a regular file (%s)", path, fi.Mode().Type())
	}
	return fi.Mode().Perm(), nil
}

// checkDir fails, naming dir, when the directory to write into is missing.
func checkDir(dir, path string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: directory %s does not exist (it is not created)", path, dir)
	case err != nil:
		return fmt.Errorf("write %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("write %s: %s is not a directory", path, dir)
	}
	return nil
}

// removeStale deletes temporary files of path left by processes that no
// longer run (killed before they could rename or remove them). Files of
// this process and of running ones are left alone: they may be writes in
// flight. Best effort: errors are ignored.
func removeStale(path string) {
	leftovers, _ := filepath.Glob(TempPattern(path))
	prefix := "." + filepath.Base(path) + tempInfix
	for _, f := range leftovers {
		rest := strings.TrimPrefix(filepath.Base(f), prefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processRunning(pid) {
			continue
		}
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			os.Remove(f)
		}
	}
}

// syncDir makes a rename durable; best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
