package planner

import (
	"errors"
	"strings"
	"testing"
)

func TestModelCheck(t *testing.T) {
	good := Model{ID: "org/m", Arch: "llama", Params: 8e9, Layers: 32, Hidden: 4096, FFN: 14336, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256, MaxContext: 131072}
	cases := []struct {
		name string
		edit func(*Model)
		want string // "" = valid
	}{
		{"a real model", func(*Model) {}, ""},
		{"no attention heads", func(m *Model) { m.Heads = 0 }, "attention heads = 0"},
		{"no layers", func(m *Model) { m.Layers = 0 }, "layers = 0"},
		{"2^31 layers", func(m *Model) { m.Layers = 1 << 31 }, "layers"},
		{"more KV heads than heads", func(m *Model) { m.KVHeads = 64 }, "KV heads = 64"},
		{"heads not a multiple of KV heads", func(m *Model) { m.KVHeads = 5 }, "not a multiple"},
		{"top-k above experts", func(m *Model) { m.Experts, m.TopK = 8, 9 }, "experts per token = 9"},
		{"negative vocabulary", func(m *Model) { m.Vocab = -1 }, "vocabulary = -1"},
		{"no parameters", func(m *Model) { m.Params = 0 }, "no parameter count"},
		{"newline in the id", func(m *Model) { m.ID = "org/m\nrm -rf /" }, "control character"},
		{"escape in the id", func(m *Model) { m.ID = "org/\x1b[2Jm" }, "control character"},
		{"huge context", func(m *Model) { m.MaxContext = 1 << 40 }, "maximum context"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := good
			c.edit(&m)
			err := m.Check()
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check = %v, want an ErrInvalid containing %q", err, c.want)
			}
		})
	}
}
