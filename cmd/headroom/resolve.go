package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// openModelFile reads a model from a local path (GGUF, config.json or a
// model directory). It is set by modelfile.go.
var openModelFile func(path string) (planner.Model, error)

// looksLikePath reports whether s names a local file rather than a catalog id.
func looksLikePath(s string) bool {
	if strings.HasSuffix(strings.ToLower(s), ".gguf") || strings.HasSuffix(s, ".json") {
		return true
	}
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
		return true
	}
	st, err := os.Stat(s)
	return err == nil && st.IsDir()
}

// resolveModel finds --model in the catalog or reads it from a file.
func resolveModel(c *planner.Catalog, q string) (planner.Model, error) {
	if looksLikePath(q) {
		if openModelFile == nil {
			return planner.Model{}, fmt.Errorf("model %s: reading model files is not built into this binary", q)
		}
		m, err := openModelFile(q)
		if err != nil {
			return planner.Model{}, fmt.Errorf("model %s: %w", q, err)
		}
		return m, nil
	}
	return c.FindModel(q)
}

// quantFor returns the --quant choice, or the model's own format: the file's
// quantization, else its native dtype.
func quantFor(c *planner.Catalog, m planner.Model, q string) (planner.Quant, error) {
	if q == "" {
		q = m.FileQuant
	}
	if q == "" {
		switch m.NativeDType {
		case "float16", "fp16":
			q = "f16"
		case "float32":
			q = "f16" // served in half precision
		case "fp8":
			q = "fp8"
		case "mxfp4":
			q = "mxfp4"
		default:
			q = "bf16"
		}
	}
	return c.FindQuant(q)
}

// usageErr marks an error caused by flags or arguments (exit 2).
func usageErr(err error) error {
	var nf *planner.NotFoundError
	var amb *planner.AmbiguousError
	if errors.As(err, &nf) || errors.As(err, &amb) || errors.Is(err, planner.ErrInvalid) {
		return withCode(exitUsage, err)
	}
	return err
}
