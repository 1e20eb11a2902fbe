package modelsrc

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/profiles/hub/hubtest"
)

func TestResolveLocalOrRemote(t *testing.T) {
	s := hubtest.New()
	t.Cleanup(s.Close)
	e, err := s.Standard()
	if err != nil {
		t.Fatal(err)
	}
	opt := hub.Options{Endpoint: s.HubURL(), OllamaRegistry: s.OllamaURL(), CacheDir: t.TempDir()}
	local := filepath.Join("..", "hf", "testdata", "llama-3.1-8b", "config.json")
	cases := []struct {
		name, arg  string
		wantRemote bool
		wantBytes  int64
		wantArch   string
	}{
		{"local config.json", local, false, 0, "llama"},
		{"hub repository", "Qwen/Qwen2.5-72B-Instruct-AWQ", true, e.QwenAWQ, "qwen2"},
		{"bare ollama tag", "qwen3:32b", true, e.Qwen3Q4KM, "qwen3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, res, err := Resolve(context.Background(), c.arg, "", opt)
			if err != nil {
				t.Fatal(err)
			}
			if (res != nil) != c.wantRemote || int64(m.FileBytes) != c.wantBytes || m.Arch != c.wantArch {
				t.Errorf("remote %v bytes %d arch %q; want %v %d %q", res != nil, m.FileBytes, m.Arch, c.wantRemote, c.wantBytes, c.wantArch)
			}
		})
	}
	if _, _, err := Resolve(context.Background(), "no-such-thing", "", opt); !errors.Is(err, ErrNotModel) {
		t.Errorf("a plain unknown name gave %v, want ErrNotModel", err)
	}
}
