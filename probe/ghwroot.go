package probe

import (
	"archive/tar"
	"fmt"
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
func (p *prober) ghwRoot() (string, func()) {
	if p.fs.root == "/" {
		return "/", func() {}
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
