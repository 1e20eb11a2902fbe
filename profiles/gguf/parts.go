package gguf

import (
	"fmt"
	"io"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Part is one file of a GGUF model read through an io.ReaderAt, such as a
// remote file read by HTTP ranges: R must answer reads inside the header;
// Size is the whole file's size, against which tensor extents are checked.
type Part struct {
	Name string
	R    io.ReaderAt
	Size int64
}

// ReadParts reads the headers of a model's files (one, or every shard of a
// split model in order: gguf-split writes the metadata into the first
// shard and spreads the tensors over all of them) and describes the whole
// model with its tensors summed exactly. name labels the model (its ID
// without general.name) and errors. Tensor data is never read.
func ReadParts(parts []Part, name string) (planner.Model, error) {
	if len(parts) == 0 {
		return planner.Model{}, fmt.Errorf("read gguf %s: no files", name)
	}
	var merged *header
	seen := map[string]string{}
	for _, p := range parts {
		h, err := readHeader(p.R, p.Size)
		if err != nil {
			return planner.Model{}, fmt.Errorf("read gguf %s: %w", p.Name, err)
		}
		for _, t := range h.Tensors {
			if prev, dup := seen[t.Name]; dup {
				return planner.Model{}, fmt.Errorf("read gguf %s: tensor %q is also in %s", p.Name, t.Name, prev)
			}
			seen[t.Name] = p.Name
		}
		if merged == nil {
			merged = h
			continue
		}
		merged.Tensors = append(merged.Tensors, h.Tensors...)
	}
	if want, ok := toInt(merged.KV["split.tensors.count"]); ok && len(parts) > 1 && want != int64(len(merged.Tensors)) {
		return planner.Model{}, fmt.Errorf("read gguf %s: split.tensors.count is %d, the %d files hold %d tensors",
			name, want, len(parts), len(merged.Tensors))
	}
	m, err := merged.model(name)
	if err != nil {
		return planner.Model{}, fmt.Errorf("read gguf %s: %w", name, err)
	}
	if len(parts) > 1 {
		m.Source = fmt.Sprintf("GGUF headers of %s (%d shards)", strings.TrimSuffix(name, ".gguf"), len(parts))
	}
	return m, nil
}
