package planner

import "unicode"

// Upper bounds of a model's geometry. Each is far above any published
// model (the largest have 61-126 layers, hidden sizes up to 25,600, 256
// experts and 262k-token vocabularies); values past them come from a broken
// or hostile file, and would make the memory terms overflow or loop.
const (
	maxModelLayers  = 10_000
	maxModelWidth   = 1 << 20
	maxModelHeads   = 1 << 14
	maxModelVocab   = 1 << 24
	maxModelExperts = 1 << 14
	maxModelContext = 1 << 27
	maxModelIDLen   = 512
)

// Check reports what makes m unusable for fitting: a missing or absurd
// count (no layers, no attention heads, more KV heads than heads, more
// experts per token than experts), or an id with control characters (it
// reaches shell commands and terminals). Catalog entries, config.json and
// GGUF readers all produce Models; the application layer checks every one
// before fitting.
func (m Model) Check() error {
	if len(m.ID) > maxModelIDLen {
		return invalid("model id of %d bytes: at most %d", len(m.ID), maxModelIDLen)
	}
	for _, r := range m.ID {
		if unicode.IsControl(r) {
			return invalid("model id %q contains a control character", m.ID)
		}
	}
	checks := []struct {
		what      string
		v, lo, hi int
	}{
		{"layers", m.Layers, 1, maxModelLayers},
		{"hidden size", m.Hidden, 1, maxModelWidth},
		{"attention heads", m.Heads, 1, maxModelHeads},
		{"KV heads", m.KVHeads, 0, max(m.Heads, 0)},
		{"head dimension", m.HeadDim, 0, maxModelWidth},
		{"MLP width", m.FFN, 0, maxModelWidth},
		{"vocabulary", m.Vocab, 0, maxModelVocab},
		{"experts", m.Experts, 0, maxModelExperts},
		{"experts per token", m.TopK, 0, max(m.Experts, 1)},
		{"sliding window", m.SlidingWindow, 0, maxModelContext},
		{"sliding layers", m.SlidingLayers, 0, m.Layers},
	}
	for _, c := range checks {
		if c.v < c.lo || c.v > c.hi {
			return invalid("model %s: %s = %d, want %d to %d", m.ID, c.what, c.v, c.lo, c.hi)
		}
	}
	if m.Params <= 0 {
		return invalid("model %s has no parameter count", m.ID)
	}
	if m.MaxContext < 0 || m.MaxContext > maxModelContext {
		return invalid("model %s: maximum context %d tokens, want 0 to %d", m.ID, m.MaxContext, maxModelContext)
	}
	if m.KVHeads > 0 && m.Heads%m.KVHeads != 0 {
		return invalid("model %s: %d attention heads are not a multiple of its %d KV heads", m.ID, m.Heads, m.KVHeads)
	}
	return nil
}
