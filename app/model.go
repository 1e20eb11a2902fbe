package app

import (
	"os"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// LooksLikePath reports whether a model reference names a file or directory
// rather than a catalog entry: a .gguf or .json name, a path starting with
// ".", "/" or "~", or an existing directory.
func LooksLikePath(ref string) bool {
	lower := strings.ToLower(ref)
	if strings.HasSuffix(lower, ".gguf") || strings.HasSuffix(lower, ".json") {
		return true
	}
	if strings.HasPrefix(ref, ".") || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "~") {
		return true
	}
	st, err := os.Stat(ref)
	return err == nil && st.IsDir()
}

// ResolveModel finds a model: a file or directory (LooksLikePath), else a
// catalog id or name fragment. An empty reference, an unknown id and an
// ambiguous fragment are usage errors; unknown ids carry the closest
// catalog names.
func (a *App) ResolveModel(ref string) (planner.Model, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return planner.Model{}, Usagef("no model given (try `headroom list models`)")
	}
	if LooksLikePath(ref) {
		m, err := a.OpenModelFile(ref)
		if err != nil {
			return m, Usage(err)
		}
		return m, nil
	}
	m, err := a.Catalog().FindModel(ref)
	return m, asUsage(err)
}

// DefaultQuant is the weight format a model runs in when none is asked:
// a GGUF file's own type, else its native dtype (fp32 checkpoints are
// served in half precision).
func DefaultQuant(m planner.Model) string {
	if m.FileQuant != "" {
		return m.FileQuant
	}
	switch m.NativeDType {
	case "float16", "fp16", "float32":
		return "f16"
	case "fp8":
		return "fp8"
	case "mxfp4":
		return "mxfp4"
	}
	return "bf16"
}

// quantFor finds format id q, or the model's own when q is "".
func (a *App) quantFor(m planner.Model, q string) (planner.Quant, error) {
	if q == "" {
		q = DefaultQuant(m)
	}
	qq, err := a.Catalog().FindQuant(q)
	return qq, asUsage(err)
}

// DefaultEngine picks an engine when none is given: llama.cpp for GGUF
// formats and for float or MXFP4 weights on APUs, SoCs and CPUs; vLLM on
// CUDA and ROCm devices; llama.cpp elsewhere.
func DefaultEngine(h planner.Hardware, q planner.Quant) planner.EngineID {
	if q.Family == planner.FamilyGGUF {
		return planner.LlamaCpp
	}
	switch h.Kind {
	case planner.KindAPU, planner.KindSoC, planner.KindCPU:
		if q.Family == planner.FamilyFloat || q.Family == planner.FamilyMXFP4 {
			return planner.LlamaCpp
		}
	}
	if h.HasBackend(planner.CUDA) || h.HasBackend(planner.ROCm) {
		return planner.VLLM
	}
	return planner.LlamaCpp
}
