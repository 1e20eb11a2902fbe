package hub

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// Cache is the metadata cache: Hub API answers, small repository files
// (config.json, quantization configs, shard indexes), Ollama manifests and
// the header prefixes of weight files, each a file under Dir named by
// source, repository, commit and file. Writes are atomic (a temporary file
// renamed into place), so a reader never sees half an entry. Tokens are
// never written. A Cache with an empty Dir holds nothing.
type Cache struct {
	Dir string
}

// maxCacheEntry bounds one cached entry when it is read back.
const maxCacheEntry = 64 << 20

// Entry is one cached item, for `headroom cache list`.
type Entry struct {
	// Key is the entry's path under the cache directory, with '/'.
	Key string
	// Source is "hf" or "ollama"; Repo is ORG/NAME or NS/NAME.
	Source string
	Repo   string
	Bytes  planner.Bytes
	// Modified is when it was written.
	Modified time.Time
}

// path maps a key of '/'-separated segments to a file, refusing segments
// that could leave the directory.
func (c Cache) path(key string) (string, error) {
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return "", fmt.Errorf("cache key %q has an unsafe segment %q", key, seg)
		}
	}
	return filepath.Join(c.Dir, filepath.FromSlash(key)), nil
}

// Get returns the entry under key; ok is false when there is none (or the
// cache is disabled).
func (c Cache) Get(key string) (data []byte, ok bool, err error) {
	if c.Dir == "" {
		return nil, false, nil
	}
	p, err := c.path(key)
	if err != nil {
		return nil, false, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read cache entry %s: %w", key, err)
	}
	if st.IsDir() || st.Size() > maxCacheEntry {
		return nil, false, fmt.Errorf("read cache entry %s: not a file of at most %d bytes", key, maxCacheEntry)
	}
	data, err = os.ReadFile(p)
	if err != nil {
		return nil, false, fmt.Errorf("read cache entry %s: %w", key, err)
	}
	return data, true, nil
}

// Put stores data under key atomically; with the cache disabled it does
// nothing.
func (c Cache) Put(key string, data []byte) error {
	if c.Dir == "" {
		return nil
	}
	p, err := c.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write cache entry %s: %w", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write cache entry %s: %w", key, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write cache entry %s: %w", key, werr)
	}
	return nil
}

// List returns every entry, sorted by key. A missing directory is an
// empty cache.
func (c Cache) List() ([]Entry, error) {
	if c.Dir == "" {
		return nil, nil
	}
	var out []Entry
	err := filepath.WalkDir(c.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == c.Dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(c.Dir, p)
		if err != nil {
			return err
		}
		out = append(out, entryFor(filepath.ToSlash(rel), info))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list cache %s: %w", c.Dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// entryFor describes one cached file.
func entryFor(key string, info fs.FileInfo) Entry {
	e := Entry{Key: key, Bytes: planner.Bytes(info.Size()), Modified: info.ModTime()}
	segs := strings.Split(key, "/")
	if len(segs) >= 3 {
		e.Source = segs[0]
		e.Repo = segs[1] + "/" + segs[2]
		if e.Source == "ollama" && len(segs) >= 4 {
			e.Repo = segs[2] + "/" + segs[3] // ollama/HOST/NS/NAME/...
		}
	}
	return e
}

// Clear removes the cache directory and everything in it.
func (c Cache) Clear() error {
	if c.Dir == "" {
		return nil
	}
	clean := filepath.Clean(c.Dir)
	if clean == string(filepath.Separator) || clean == "." || filepath.Dir(clean) == clean {
		return fmt.Errorf("clear cache: refusing to remove %q", c.Dir)
	}
	if err := os.RemoveAll(clean); err != nil {
		return fmt.Errorf("clear cache %s: %w", c.Dir, err)
	}
	return nil
}

// headerMagic opens a cached header prefix, followed by the remote file's
// full size (8 bytes, little-endian) and the prefix itself.
const headerMagic = "HRHDR1\x00\x00"

// encodeHeader packs a header prefix with its file's size.
func encodeHeader(prefix []byte, size int64) []byte {
	out := make([]byte, 0, 16+len(prefix))
	out = append(out, headerMagic...)
	out = binary.LittleEndian.AppendUint64(out, uint64(size))
	return append(out, prefix...)
}

// decodeHeader unpacks encodeHeader's output.
func decodeHeader(data []byte) (prefix []byte, size int64, err error) {
	if len(data) < 16 || string(data[:8]) != headerMagic {
		return nil, 0, errors.New("cached header entry is damaged (run `headroom cache clear`)")
	}
	size = int64(binary.LittleEndian.Uint64(data[8:16]))
	if size < int64(len(data)-16) || size < 0 {
		return nil, 0, errors.New("cached header entry is damaged (run `headroom cache clear`)")
	}
	return data[16:], size, nil
}

// RepoSummary is one repository's share of the cache, for
// `headroom cache list`.
type RepoSummary struct {
	Source   string
	Repo     string
	Entries  int
	Bytes    planner.Bytes
	Modified time.Time // the newest entry
}

// Summarize groups entries by source and repository, sorted.
func Summarize(entries []Entry) []RepoSummary {
	idx := map[[2]string]int{}
	var out []RepoSummary
	for _, e := range entries {
		k := [2]string{e.Source, e.Repo}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, RepoSummary{Source: e.Source, Repo: e.Repo})
		}
		out[i].Entries++
		out[i].Bytes += e.Bytes
		if e.Modified.After(out[i].Modified) {
			out[i].Modified = e.Modified
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Repo < out[j].Repo
	})
	return out
}
