package probe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// maxFileSize caps what one read may return: /proc/cpuinfo of a 512-thread
// machine is about 1 MiB; sysfs attributes are a page.
const maxFileSize = 8 << 20

// maxLinkHops bounds symlink resolution, as the kernel's MAXSYMLINKS does.
const maxLinkHops = 40

// Errors the root reader returns besides those of package os.
var (
	errEscapes    = errors.New("symlink leaves the probed root")
	errLinkLoop   = errors.New("too many levels of symbolic links")
	errNotRegular = errors.New("not a regular file")
	errNotDir     = errors.New("not a directory")
	errTooLarge   = errors.New("file larger than 8 MiB")
	errDenied     = errors.New("holds an identifier (serial number); not read")
)

// deniedNames are files that hold serial numbers or unique ids. The reader
// refuses them, so they can never reach a snapshot.
var deniedNames = map[string]bool{
	"serial": true, "serial_number": true, "unique_id": true, "uuid": true,
	"product_serial": true, "board_serial": true, "chassis_serial": true,
	"product_uuid": true, "board_asset_tag": true, "chassis_asset_tag": true,
	"fru_id": true, "address": true, "phys_port_id": true,
}

// rootFS reads files below a root directory the way the kernel would from
// "/": symlinks are followed, but only within the root (a saved machine
// cannot point the probe at the host's files). Every file, directory and
// link it touches is recorded when rec is set, which is what a snapshot
// saves.
type rootFS struct {
	root string // absolute, cleaned host path
	rec  *recorder

	mu       sync.Mutex
	resolved map[string]string // directory path → real path, both root-relative
}

func newRootFS(root string, rec *recorder) (*rootFS, error) {
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("probe root %q: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("probe root %s: %w", abs, bare(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("probe root %s: not a directory", abs)
	}
	return &rootFS{root: abs, rec: rec, resolved: map[string]string{}}, nil
}

// host maps a clean root-relative path to the host path.
func (r *rootFS) host(rel string) string {
	if rel == "" || rel == "." {
		return r.root
	}
	return filepath.Join(r.root, filepath.FromSlash(rel))
}

// bare drops the host path an *fs.PathError carries, so messages name
// the probed machine's path only (and read the same for a snapshot).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// clean turns "/sys/class/drm" or "sys/class/drm" into "sys/class/drm".
func clean(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}

// display is the path as the probed machine would name it, for messages.
func display(rel string) string { return "/" + clean(rel) }

// resolve follows symlinks in every component of rel and returns the real
// root-relative path. The last component is followed too.
func (r *rootFS) resolve(rel string) (string, error) {
	return r.resolveHops(clean(rel), 0)
}

func (r *rootFS) resolveHops(rel string, hops int) (string, error) {
	if rel == "" || rel == "." {
		return "", nil
	}
	dir, base := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	realDir, err := r.resolveDir(dir, hops)
	if err != nil {
		return "", err
	}
	next := path.Join(realDir, base)
	st, err := os.Lstat(r.host(next))
	if err != nil {
		return "", err
	}
	if st.Mode()&fs.ModeSymlink == 0 {
		return next, nil
	}
	return r.follow(next, hops)
}

// resolveDir resolves a directory path, memoised: sysfs paths share long
// prefixes (one PCI device directory holds a dozen attributes).
func (r *rootFS) resolveDir(dir string, hops int) (string, error) {
	if dir == "" {
		return "", nil
	}
	r.mu.Lock()
	got, ok := r.resolved[dir]
	r.mu.Unlock()
	if ok {
		return got, nil
	}
	got, err := r.resolveHops(dir, hops)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.resolved[dir] = got
	r.mu.Unlock()
	return got, nil
}

// follow reads the link at rel (whose parent is already real) and resolves
// its target, refusing targets outside the root. ".." in a target is taken
// lexically from the link's real directory, which is exact for the
// "../../devices/..." links sysfs writes.
func (r *rootFS) follow(rel string, hops int) (string, error) {
	if hops >= maxLinkHops {
		return "", fmt.Errorf("%s: %w", display(rel), errLinkLoop)
	}
	target, err := os.Readlink(r.host(rel))
	if err != nil {
		return "", err
	}
	r.rec.link(rel, target)
	if path.IsAbs(target) {
		return "", fmt.Errorf("%s -> %s: %w", display(rel), target, errEscapes)
	}
	joined := path.Join(path.Dir(rel), target)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", fmt.Errorf("%s -> %s: %w", display(rel), target, errEscapes)
	}
	return r.resolveHops(clean(joined), hops+1)
}

// readFile returns the content of a regular file below the root.
func (r *rootFS) readFile(rel string) ([]byte, error) {
	rel = clean(rel)
	if deniedNames[path.Base(rel)] {
		return nil, fmt.Errorf("read %s: %w", display(rel), errDenied)
	}
	real, err := r.resolve(rel)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", display(rel), bare(err))
	}
	data, err := r.readRegular(real)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", display(rel), bare(err))
	}
	r.rec.file(real, data)
	return data, nil
}

// readRegular opens a resolved path only if it is a regular file, so a FIFO
// or device node in a saved tree cannot block the probe.
func (r *rootFS) readRegular(real string) ([]byte, error) {
	st, err := os.Lstat(r.host(real))
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.Open(r.host(real))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, errTooLarge
	}
	return data, nil
}

// readString is readFile with surrounding white space trimmed.
func (r *rootFS) readString(rel string) (string, error) {
	b, err := r.readFile(rel)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// dirEntry is one name in a directory listing.
type dirEntry struct {
	Name string
	Mode fs.FileMode // type bits only
}

// readDir lists a directory below the root, sorted by name.
func (r *rootFS) readDir(rel string) ([]dirEntry, error) {
	rel = clean(rel)
	real, err := r.resolve(rel)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", display(rel), bare(err))
	}
	// os.ReadDir opens its argument: a FIFO where a directory should be
	// would block it, so anything but a directory is refused first.
	if st, err := os.Lstat(r.host(real)); err != nil {
		return nil, fmt.Errorf("list %s: %w", display(rel), bare(err))
	} else if !st.IsDir() {
		return nil, fmt.Errorf("list %s: %w", display(rel), errNotDir)
	}
	ents, err := os.ReadDir(r.host(real))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", display(rel), bare(err))
	}
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirEntry{Name: e.Name(), Mode: e.Type()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	r.rec.dir(real)
	for _, e := range out {
		r.recordEntry(real, e)
	}
	return out, nil
}

// recordEntry keeps listed symlinks and subdirectories in a snapshot so the
// listing replays; listed files are kept only once read.
func (r *rootFS) recordEntry(dir string, e dirEntry) {
	if r.rec == nil {
		return
	}
	p := path.Join(dir, e.Name)
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		if t, err := os.Readlink(r.host(p)); err == nil {
			r.rec.link(p, t)
		}
	case e.Mode.IsDir():
		r.rec.dir(p)
	}
}

// readLink returns the target of the symlink rel (its parent directories
// resolved), as written in the link.
func (r *rootFS) readLink(rel string) (string, error) {
	rel = clean(rel)
	dir, base := path.Split(rel)
	realDir, err := r.resolveDir(strings.TrimSuffix(dir, "/"), 0)
	if err != nil {
		return "", fmt.Errorf("readlink %s: %w", display(rel), bare(err))
	}
	p := path.Join(realDir, base)
	t, err := os.Readlink(r.host(p))
	if err != nil {
		return "", fmt.Errorf("readlink %s: %w", display(rel), bare(err))
	}
	r.rec.link(p, t)
	return t, nil
}

// exists reports whether rel resolves to something below the root. A file
// found is recorded (a snapshot must replay the test), read like readFile.
func (r *rootFS) exists(rel string) bool {
	real, ok := r.lookup(rel)
	if ok && r.rec != nil {
		if data, err := r.readRegular(real); err == nil {
			r.rec.file(real, data)
		}
	}
	return ok
}

// lookup resolves rel and reports whether it exists, recording nothing but
// the symlinks on the way.
func (r *rootFS) lookup(rel string) (string, bool) {
	real, err := r.resolve(rel)
	if err != nil {
		return "", false
	}
	_, err = os.Lstat(r.host(real))
	return real, err == nil
}

// recorder collects what a probe read, for Snapshot. A nil recorder
// records nothing.
type recorder struct {
	mu    sync.Mutex
	files map[string][]byte
	links map[string]string
	dirs  map[string]bool
	extra map[string][]byte // synthesised files: tool outputs
	// pci.ids names looked up, for a subset file in the snapshot.
	vendors map[string]string
	pciids  map[string]map[string]string
}

func newRecorder() *recorder {
	return &recorder{
		files: map[string][]byte{}, links: map[string]string{},
		dirs: map[string]bool{}, extra: map[string][]byte{},
	}
}

func (c *recorder) file(p string, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.files[p]; !seen { // the first read is what the probe used
		c.files[p] = append([]byte(nil), data...)
	}
}

func (c *recorder) link(p, target string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.links[p] = target
}

func (c *recorder) dir(p string) {
	if c == nil || p == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirs[p] = true
}

func (c *recorder) add(p string, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.extra[p] = append([]byte(nil), data...)
}

// pciName keeps one pci.ids lookup for the snapshot's pci.ids subset.
func (c *recorder) pciName(vendor, vendorName, device, deviceName string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pciids == nil {
		c.pciids = map[string]map[string]string{}
		c.vendors = map[string]string{}
	}
	c.vendors[vendor] = vendorName
	if c.pciids[vendor] == nil {
		c.pciids[vendor] = map[string]string{}
	}
	c.pciids[vendor][device] = deviceName
}

// isDir reports whether the resolved path real is a directory.
func (r *rootFS) isDir(real string) bool {
	st, err := os.Lstat(r.host(real))
	return err == nil && st.IsDir()
}
