package modelsrc

import (
	"context"
	"fmt"
	"os"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// Resolve reads a model argument that did not match a catalog id: an
// existing local path through Open; else a remote reference through
// hub.Resolve (ORG/NAME[@REV], a Hub URL, hf.co/ORG/NAME:QUANT, ORG/NAME-GGUF
// with quant, ollama:NAME:TAG, and a bare NAME:TAG as an Ollama tag, which
// is why the catalog must be asked first). quant is the -q value or "". The
// hub.Result (nil for local paths) carries the provenance: repository,
// commit, files, quant id, exact weight bytes, bytes read, notes.
func Resolve(ctx context.Context, arg, quant string, opt hub.Options) (planner.Model, *hub.Result, error) {
	if _, err := os.Stat(arg); err == nil {
		m, err := Open(arg)
		return m, nil, err
	}
	if !hub.IsRemote(arg) && !isOllamaTag(arg) {
		return planner.Model{}, nil, fmt.Errorf("model %q: %w; give a catalog id, a path, ORG/NAME from Hugging Face, hf.co/ORG/NAME:QUANT or ollama:NAME:TAG", arg, ErrNotModel)
	}
	res, err := hub.Resolve(ctx, arg, quant, opt)
	if err != nil {
		return planner.Model{}, nil, err
	}
	return res.Model, &res, nil
}

// isOllamaTag reports whether s reads as NAME:TAG.
func isOllamaTag(s string) bool {
	_, err := hub.ParseRef(s, "", true)
	return err == nil
}
