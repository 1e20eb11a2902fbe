package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// indexName is the shard index transformers writes next to sharded weights.
const indexName = "model.safetensors.index.json"

// index is model.safetensors.index.json.
type index struct {
	Metadata struct {
		TotalSize int64 `json:"total_size"`
	} `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// ReadDir reads a model directory: config.json for the geometry, and the
// weights' exact sizes from the safetensors headers (only the headers are
// read). With model.safetensors.index.json the shards it lists are read;
// when they are not all present (a metadata-only download) its
// metadata.total_size gives FileBytes. Without an index every *.safetensors
// file is read, except consolidated*.safetensors when others exist
// (Mistral repositories ship both layouts). For unquantized checkpoints
// Params is the exact element count; quantized tensors are packed, so
// Params stays the architecture estimate while FileBytes is exact.
func ReadDir(dir string) (planner.Model, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // so that the model ID is the directory's name, even for "."
	}
	m, err := ReadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return planner.Model{}, err
	}
	// NVIDIA ModelOpt exports state their format and KV cache type in
	// hf_quant_config.json beside a config.json that may name neither
	// (the Hub reader fetches the same file: profiles/hub resolve.go).
	qpath := filepath.Join(dir, modelOptName)
	switch data, err := readSmall(qpath, maxConfigSize); {
	case err == nil:
		if err := applyModelOpt(&m, data, qpath); err != nil {
			return planner.Model{}, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return planner.Model{}, fmt.Errorf("read %s: %w", qpath, err)
	}
	w, err := readWeights(dir)
	if err != nil {
		return planner.Model{}, err
	}
	w.apply(&m)
	return m, nil
}

// weights is what a directory says about its tensors.
type weights struct {
	tensors []planner.Tensor
	bytes   planner.Bytes
	source  string
}

// readWeights finds and reads the directory's safetensors headers.
func readWeights(dir string) (weights, error) {
	idxPath := filepath.Join(dir, indexName)
	idx, err := readIndex(idxPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return readShards(dir, nil)
	case err != nil:
		return weights{}, err
	}
	shards := idx.shards()
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(dir, s)); err != nil {
			if idx.Metadata.TotalSize == 0 {
				return weights{}, nil // nothing known about the weights
			}
			return weights{bytes: planner.Bytes(idx.Metadata.TotalSize), source: indexName + " total_size"}, nil
		}
	}
	return readShards(dir, shards)
}

// readIndex reads and checks model.safetensors.index.json.
func readIndex(path string) (index, error) {
	data, err := readSmall(path, maxHeader)
	if err != nil {
		return index{}, err
	}
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil {
		return index{}, fmt.Errorf("read %s: %w", path, jsonError(data, err))
	}
	if idx.Metadata.TotalSize < 0 || len(idx.WeightMap) == 0 {
		return index{}, fmt.Errorf("read %s: no weight_map, or a negative total_size", path)
	}
	for name, shard := range idx.WeightMap {
		if shard != filepath.Base(shard) || !strings.HasSuffix(shard, ".safetensors") {
			return index{}, fmt.Errorf("read %s: tensor %q maps to %q, not a .safetensors file beside the index", path, name, shard)
		}
	}
	return idx, nil
}

// shards lists the index's shard files, sorted.
func (idx index) shards() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range idx.WeightMap {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// readShards reads the named shards, or without names the directory's
// *.safetensors files.
func readShards(dir string, names []string) (weights, error) {
	if names == nil {
		var err error
		if names, err = safetensorsFiles(dir); err != nil {
			return weights{}, err
		}
	}
	var w weights
	seen := map[string]string{}
	for _, n := range names {
		ts, err := readSafetensors(filepath.Join(dir, n))
		if err != nil {
			return weights{}, err
		}
		for _, t := range ts {
			if prev, dup := seen[t.Name]; dup {
				return weights{}, fmt.Errorf("tensor %q is in both %s and %s", t.Name, prev, n)
			}
			seen[t.Name] = n
			w.bytes += t.Bytes
		}
		w.tensors = append(w.tensors, ts...)
	}
	if len(names) > 0 {
		w.source = "safetensors headers"
	}
	return w, nil
}

// safetensorsFiles lists dir's *.safetensors, leaving out
// consolidated*.safetensors when other files exist.
func safetensorsFiles(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return nil, err
	}
	var names, consolidated []string
	for _, p := range matches {
		n := filepath.Base(p)
		if strings.HasPrefix(n, "consolidated") {
			consolidated = append(consolidated, n)
			continue
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		names = consolidated
	}
	sort.Strings(names)
	return names, nil
}

// apply overlays exact weight figures on a model read from config.json.
func (w weights) apply(m *planner.Model) {
	if w.source == "" {
		return
	}
	m.FileBytes = w.bytes
	m.Source += "; weights from " + w.source
	if len(w.tensors) == 0 {
		return
	}
	m.Tensors = w.tensors
	var elems, expertElems int64
	hasHead, hasEmbed := false, false
	for _, t := range w.tensors {
		elems += t.Elements
		if strings.Contains(t.Name, ".experts.") {
			expertElems += t.Elements
		}
		switch {
		case strings.HasPrefix(t.Name, "lm_head."):
			hasHead = true
		case strings.HasSuffix(t.Name, "embed_tokens.weight"):
			hasEmbed = true
		case strings.Contains(t.Name, "gate_proj") || strings.Contains(t.Name, "gate_up_proj"):
			m.GatedMLP = true
		}
	}
	if hasEmbed && !hasHead {
		m.TiedEmbeddings = true
	}
	if isQuantized(m) {
		return // packed tensors: element counts are not parameter counts
	}
	m.Params = planner.Params(elems)
	m.ActiveParams = m.Params
	if m.IsMoE() && m.TopK <= m.Experts {
		m.ActiveParams = planner.Params(elems - expertElems + expertElems*int64(m.TopK)/int64(m.Experts))
	}
}

// isQuantized reports whether the checkpoint's weights are stored in a
// quantized (packed or 8-bit) format rather than a float dtype.
func isQuantized(m *planner.Model) bool {
	switch m.FileQuant {
	case "bf16", "f16", "f32", "":
		return false
	}
	return true
}
