// Package modelsrc opens a model description from a path, whichever form
// it takes: a GGUF file (read by package gguf, header only), a Hugging Face
// config.json, or a model directory (package hf), so that commands and the
// UI take one argument for "the model on my disk".
package modelsrc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/gguf"
	"github.com/headroom-planner/headroom/profiles/hf"
)

// ErrNotModel says a path is none of the accepted model sources.
var ErrNotModel = errors.New("not a model source")

// accepted is what Open takes, for error messages.
const accepted = "give a .gguf file (shards of a split model are read together), a config.json, " +
	"or a model directory holding config.json (with *.safetensors or model.safetensors.index.json for exact weight bytes) or a single GGUF model"

// Open reads the model at path:
//
//   - a directory with config.json: hf.ReadDir (config plus safetensors
//     headers or the shard index);
//   - a directory without one: the GGUF model inside, which must be the
//     only one (a split model's shards count as one);
//   - a *.gguf file, or any file starting with the GGUF magic (Ollama
//     keeps models as extension-less blobs): gguf.ReadFile;
//   - a *.json file: hf.ReadConfig.
//
// Anything else gives an error wrapping ErrNotModel that says what is
// accepted.
func Open(path string) (planner.Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return planner.Model{}, fmt.Errorf("open model: %w", err)
	}
	if st.IsDir() {
		return openDir(path)
	}
	switch {
	case strings.EqualFold(filepath.Ext(path), ".gguf"):
		return gguf.ReadFile(path)
	case strings.EqualFold(filepath.Ext(path), ".json"):
		return hf.ReadConfig(path)
	}
	isGGUF, err := hasGGUFMagic(path)
	if err != nil {
		return planner.Model{}, fmt.Errorf("open model: %w", err)
	}
	if isGGUF {
		return gguf.ReadFile(path)
	}
	return planner.Model{}, fmt.Errorf("open model %s: %w; %s", path, ErrNotModel, accepted)
}

// openDir reads a model directory.
func openDir(dir string) (planner.Model, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return hf.ReadDir(dir)
	}
	models, err := ggufModels(dir)
	if err != nil {
		return planner.Model{}, fmt.Errorf("open model %s: %w", dir, err)
	}
	switch len(models) {
	case 1:
		return gguf.ReadFile(filepath.Join(dir, models[0]))
	case 0:
		return planner.Model{}, fmt.Errorf("open model %s: %w: the directory has no config.json and no .gguf file; %s", dir, ErrNotModel, accepted)
	}
	return planner.Model{}, fmt.Errorf("open model %s: the directory holds %d GGUF models (%s); give one file",
		dir, len(models), strings.Join(models, ", "))
}

// ggufModels lists the GGUF models in dir, one name per model: plain .gguf
// files, and the first shard of each split model. Multimodal projector
// files (mmproj*.gguf) are not models on their own and are left out.
func ggufModels(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.EqualFold(filepath.Ext(n), ".gguf") || strings.HasPrefix(strings.ToLower(n), "mmproj") {
			continue
		}
		key := splitBase(n)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// splitBase strips a "-0000k-of-0000n.gguf" shard suffix, so that every
// shard of a split model maps to one key.
func splitBase(name string) string {
	const suffix = len("-00001-of-00003.gguf")
	if len(name) > suffix && strings.Contains(name[len(name)-suffix:], "-of-") {
		return name[:len(name)-suffix]
	}
	return name
}

// hasGGUFMagic reports whether the file at path starts with "GGUF".
func hasGGUFMagic(path string) (bool, error) {
	f, err := safefile.Open(path, 1<<50) // a FIFO or device is refused, not waited on
	if err != nil {
		return false, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false, nil // shorter than a magic: not GGUF
	}
	return string(b[:]) == "GGUF", nil
}
