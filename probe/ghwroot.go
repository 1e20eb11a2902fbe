package probe

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ghwRoot returns the directory ghw is chrooted to and a function that
// removes it. ghw opens /proc/cpuinfo, /proc/meminfo and the /sys files it
// wants itself, with no check on what they are: under a saved root a FIFO
// there hangs it, a symlink to /dev/urandom grows its memory without bound
// and an absolute symlink reads the host's own file (issue 15, item 3).
// So for any root but "/" ghw never sees the saved tree: the files it reads
// are copied, through the confined reader (regular files only, at most
// maxFileSize, symlinks followed only inside the root), into a private
// temporary tree, with only the symlinks that stay inside it. For "/" the
// live kernel's own files are read as they are.
//
// Copying is slow on a busy disk (1-4 s for the 1,200 entries of a
// 128-thread, 512 GiB server), so a tree in which everything ghw can reach
// is already safe (ghwSafe) is given to ghw as it is.
func (p *prober) ghwRoot() (string, func()) {
	if p.fs.root == "/" || ghwSafe(p.fs) {
		return p.fs.root, func() {}
	}
	dir, err := os.MkdirTemp("", "headroom-ghw-")
	if err != nil {
		p.warn("cpu and memory topology not read: staging directory: %v", err)
		return emptyGHWRoot, func() {}
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	rec := newRecorder()
	touchGHWFiles(&rootFS{root: p.fs.root, rec: rec, resolved: map[string]string{}})
	if err := stage(dir, rec); err != nil {
		p.warn("cpu and memory topology not read: staging %v", err)
		cleanup()
		return emptyGHWRoot, func() {}
	}
	return dir, cleanup
}

// emptyGHWRoot is a chroot holding nothing ghw reads: ghw then finds no
// processors and the probe falls back to its own /proc/cpuinfo reader.
const emptyGHWRoot = "/nonexistent-headroom-ghw-root"

// stage writes what rec holds below dir: directories, the regular files'
// contents, and symlinks whose targets are relative and stay below dir.
func stage(dir string, rec *recorder) error {
	for _, e := range snapshotEntries(rec) {
		host := filepath.Join(dir, filepath.FromSlash(e.name))
		var err error
		switch e.typ {
		case tar.TypeDir:
			err = os.MkdirAll(host, 0o755)
		case tar.TypeSymlink:
			if linkStaysInside(e.name, e.link) {
				err = os.Symlink(e.link, host)
			}
		default:
			err = os.WriteFile(host, e.data, 0o644)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", display(e.name), bare(err))
		}
	}
	return nil
}

// linkStaysInside reports whether a symlink at name (root-relative) with
// this target resolves, lexically, below the root.
func linkStaysInside(name, target string) bool {
	if path.IsAbs(target) {
		return false
	}
	j := path.Join(path.Dir(name), target)
	return j != ".." && !strings.HasPrefix(j, "../")
}

// ghwScope are the parts of a root ghw v0.26 reads for CPU, topology and
// memory (pkg/cpu, pkg/topology, pkg/memory: cpu_linux.go,
// topology_linux.go, memory_linux.go, memory_cache_linux.go).
var ghwScope = []string{"proc/cpuinfo", "proc/meminfo", "sys/devices/system/cpu", "sys/devices/system/node",
	"sys/devices/system/memory", "sys/kernel/mm/hugepages"}

// maxGHWEntries bounds the walk of ghwSafe; a larger tree is staged.
const maxGHWEntries = 200000

// ghwSafe reports whether every entry ghw can reach below the root is safe
// for it to open: directories, regular files of at most maxFileSize, and
// symlinks that resolve (relative, inside the root) to one of those. It
// only stats, never opens, so a FIFO cannot block it.
func ghwSafe(r *rootFS) bool {
	n := 0
	for _, top := range ghwScope {
		if _, err := os.Lstat(r.host(top)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(r.host(top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if n++; n > maxGHWEntries {
				return errUnsafe
			}
			rel, err := filepath.Rel(r.root, p)
			if err != nil {
				return err
			}
			return safeEntry(r, filepath.ToSlash(rel), d.Type())
		})
		if err != nil {
			return false
		}
	}
	return true
}

var errUnsafe = errors.New("not safe for ghw")

// safeEntry checks one entry of a walk: a symlink is resolved through the
// confined resolver and its target checked.
func safeEntry(r *rootFS, rel string, typ fs.FileMode) error {
	switch {
	case typ.IsDir():
		return nil
	case typ&fs.ModeSymlink != 0:
		real, err := r.resolve(rel)
		if err != nil {
			return errUnsafe
		}
		st, err := os.Lstat(r.host(real))
		switch {
		case err != nil:
			return errUnsafe
		case st.IsDir() && inScope(real):
			return nil // walked in its own place
		case st.Mode().IsRegular() && st.Size() <= maxFileSize:
			return nil
		}
		return errUnsafe // a FIFO, a device, or a directory the walk does not cover
	case typ.IsRegular():
		st, err := os.Lstat(r.host(rel))
		if err != nil || st.Size() > maxFileSize {
			return errUnsafe
		}
		return nil
	}
	return errUnsafe
}

// inScope reports whether a resolved path lies in ghwScope.
func inScope(real string) bool {
	for _, top := range ghwScope {
		if real == top || strings.HasPrefix(real, top+"/") {
			return true
		}
	}
	return false
}
