package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/headroom-planner/headroom/profiles/hub"

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

// ResolvedModel is a model and where it came from.
type ResolvedModel struct {
	Model planner.Model
	// Remote is the provenance of a model read from the Hugging Face Hub
	// or the Ollama registry (repository, commit, files, exact weight
	// bytes, bytes read); nil for catalog entries and local files.
	Remote *hub.Result
}

// ResolveModel finds a model by reference, in this order (so that a
// remote repository is never mistaken for a catalog entry with a similar
// name: Qwen/Qwen3-32B-AWQ is not the catalog's Qwen/Qwen3-32B):
//
//  1. a file or directory (LooksLikePath): a GGUF, config.json or model dir;
//  2. hf.co/…, huggingface.co/…, a URL, ollama:…, or anything with @REV:
//     the Hub or the Ollama registry, never the catalog;
//  3. an exact catalog id (case-insensitive): the catalog, no network;
//  4. ORG/NAME: the Hugging Face Hub;
//  5. a catalog id or name fragment; failing that, a bare NAME:TAG is an
//     Ollama tag.
//
// quant is the format asked for (-q); it picks the file of a GGUF
// repository. Remote references need Options.Remote; an unknown id, an
// ambiguous fragment and a missing repository are usage errors with the
// closest catalog names.
func (a *App) ResolveModel(ctx context.Context, ref, quant string) (ResolvedModel, error) {
	ref = strings.TrimSpace(ref)
	c := a.Catalog()
	switch {
	case ref == "":
		return ResolvedModel{}, Usagef("no model given (try `headroom list models`)")
	case LooksLikePath(ref):
		m, err := a.OpenModelFile(ref)
		return ResolvedModel{Model: m}, Usage(err)
	case explicitlyRemote(ref):
		return a.remoteModel(ctx, ref, quant)
	}
	for _, m := range c.Models {
		if strings.EqualFold(m.ID, ref) {
			return ResolvedModel{Model: m}, nil
		}
	}
	if hub.IsRemote(ref) {
		rm, err := a.remoteModel(ctx, ref, quant)
		if err != nil {
			// A typo in a catalog id reads as ORG/NAME too: say both.
			if near := a.closestModels(ref); len(near) > 0 && !strings.Contains(err.Error(), "the catalog has") {
				return rm, Usage(fmt.Errorf("unknown model %q: not in the catalog, and %w; did you mean %s?", ref, err, strings.Join(near, ", ")))
			}
		}
		return rm, err
	}
	m, err := c.FindModel(ref)
	if err == nil {
		return ResolvedModel{Model: m}, nil
	}
	var nf *planner.NotFoundError
	if errors.As(err, &nf) && strings.Count(ref, ":") == 1 && a.opt.Remote {
		if rm, rerr := a.remoteModel(ctx, ref, quant); rerr == nil {
			return rm, nil
		}
	}
	return ResolvedModel{}, asUsage(err)
}

// explicitlyRemote reports whether ref can only name a remote model.
func explicitlyRemote(ref string) bool {
	l := strings.ToLower(ref)
	for _, p := range []string{"ollama:", "hf.co/", "huggingface.co/", "http://", "https://"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.Contains(ref, "@") && hub.IsRemote(ref)
}

// remoteModel reads a model's metadata from the Hub or the Ollama
// registry (configs and headers only, never weights).
func (a *App) remoteModel(ctx context.Context, ref, quant string) (ResolvedModel, error) {
	if !a.opt.Remote {
		return ResolvedModel{}, Usagef("model %q is not in the catalog, and reading models from the Hugging Face Hub or the Ollama registry is not enabled here", ref)
	}
	res, err := hub.Resolve(ctx, ref, quant, a.opt.Hub)
	if err != nil {
		return ResolvedModel{}, a.remoteError(ref, err)
	}
	r := res
	return ResolvedModel{Model: res.Model, Remote: &r}, nil
}

// remoteError adds what the user can do to a remote resolution's error:
// the closest catalog names for a missing repository; offline, auth and
// not-found are the user's to fix.
func (a *App) remoteError(ref string, err error) error {
	var nf *hub.NotFoundError
	var auth *hub.AuthError
	switch {
	case errors.As(err, &nf):
		if nf.What == "repository" {
			if near := a.closestModels(ref[strings.LastIndex(ref, "/")+1:]); len(near) > 0 {
				err = fmt.Errorf("%w; the catalog has %s", err, strings.Join(near, ", "))
			}
		}
		return Usage(err)
	case errors.As(err, &auth), errors.Is(err, hub.ErrOffline):
		return Usage(err)
	}
	return err
}

// closestModels are the catalog models a name fragment finds or suggests.
func (a *App) closestModels(name string) []string {
	m, err := a.Catalog().FindModel(name)
	if err == nil {
		return []string{m.ID}
	}
	var nf *planner.NotFoundError
	var amb *planner.AmbiguousError
	switch {
	case errors.As(err, &nf):
		return nf.Suggestions
	case errors.As(err, &amb):
		return amb.Matches
	}
	return nil
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

// ModelCache lists the model-metadata cache (configs and headers read from
// the Hub and the Ollama registry) by repository, and where it is.
func (a *App) ModelCache() ([]hub.RepoSummary, string, error) {
	dir := a.opt.Hub.CacheDir
	if dir == "" {
		return nil, "", nil
	}
	entries, err := hub.Cache{Dir: dir}.List()
	if err != nil {
		return nil, dir, err
	}
	return hub.Summarize(entries), dir, nil
}

// ClearModelCache deletes the model-metadata cache and says where it was.
func (a *App) ClearModelCache() (string, error) {
	dir := a.opt.Hub.CacheDir
	if dir == "" {
		return "", nil
	}
	return dir, hub.Cache{Dir: dir}.Clear()
}
