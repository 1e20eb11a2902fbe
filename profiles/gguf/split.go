package gguf

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// splitName matches llama.cpp's split file names, "%s-%05d-of-%05d.gguf"
// (src/llama.cpp llama_split_path).
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// splitPaths returns every shard path of a split GGUF model given any of
// its shards, or false for a file that is not named as a shard.
func splitPaths(path string) ([]string, bool) {
	sm := splitName.FindStringSubmatch(filepath.Base(path))
	if sm == nil {
		return nil, false
	}
	n, err := strconv.Atoi(sm[3])
	if err != nil || n < 2 {
		return nil, false
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(filepath.Dir(path), fmt.Sprintf("%s-%05d-of-%05d.gguf", sm[1], i+1, n))
	}
	return paths, true
}

// readSplit reads the headers of every shard of a split model (gguf-split
// writes the metadata into the first shard and spreads the tensors over
// all of them) and describes the whole model.
func readSplit(paths []string) (planner.Model, error) {
	first := paths[0]
	var merged *header
	seen := map[string]string{}
	for _, p := range paths {
		h, err := readHeaderFile(p)
		if err != nil {
			return planner.Model{}, fmt.Errorf("read gguf %s (shard of a %d-file split): %w", p, len(paths), err)
		}
		for _, t := range h.Tensors {
			if prev, dup := seen[t.Name]; dup {
				return planner.Model{}, fmt.Errorf("read gguf %s: tensor %q is also in %s", p, t.Name, prev)
			}
			seen[t.Name] = filepath.Base(p)
		}
		if merged == nil {
			merged = h
			continue
		}
		merged.Tensors = append(merged.Tensors, h.Tensors...)
	}
	if want, ok := toInt(merged.KV["split.tensors.count"]); ok && want != int64(len(merged.Tensors)) {
		return planner.Model{}, fmt.Errorf("read gguf %s: split.tensors.count is %d, the %d shards hold %d tensors",
			first, want, len(paths), len(merged.Tensors))
	}
	base := splitName.FindStringSubmatch(filepath.Base(first))[1]
	m, err := merged.model(filepath.Join(filepath.Dir(first), base+".gguf"))
	if err != nil {
		return planner.Model{}, fmt.Errorf("read gguf %s: %w", first, err)
	}
	m.Source = fmt.Sprintf("GGUF headers of %s (%d shards)", strings.TrimSuffix(filepath.Base(first), ".gguf"), len(paths))
	return m, nil
}

// readHeaderFile opens path and reads its header.
func readHeaderFile(path string) (*header, error) {
	f, size, err := openModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHeader(f, size)
}
