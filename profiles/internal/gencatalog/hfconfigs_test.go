package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles"
)

const (
	configsDir = "../../sources/configs"
	catalogDir = "../../catalog"
)

// TestModelsHFUpToDate regenerates models-hf.toml from the config copies
// and requires the embedded file to be byte-for-byte the same: an edit by
// hand, a changed copy or a changed parser shows up here.
func TestModelsHFUpToDate(t *testing.T) {
	hand, err := handModelIDs(catalogDir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := generateConfigModels(configsDir, hand)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(catalogDir, "models-hf.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("profiles/catalog/models-hf.toml is stale (%d bytes generated, %d on disk); run\n\tgo run ./profiles/internal/gencatalog -configs profiles/sources/configs -out profiles/catalog",
			len(got), len(want))
	}
}

// TestConfigCopiesNamed checks every copy directory: a SOURCE naming its
// id (matching the directory) and where the copy was read, and a
// config.json.
func TestConfigCopiesNamed(t *testing.T) {
	entries, err := os.ReadDir(configsDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(configsDir, e.Name())
		src, err := readSource(filepath.Join(dir, "SOURCE"))
		if err != nil {
			t.Error(err)
			continue
		}
		if strings.ReplaceAll(src.ID, "/", "__") != e.Name() {
			t.Errorf("%s: SOURCE id %q does not match the directory", dir, src.ID)
		}
		if !strings.HasPrefix(src.Copy, "http") && !strings.HasPrefix(src.Copy, "public GitHub file") {
			t.Errorf("%s: copy %q names no place it was read", dir, src.Copy)
		}
		if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
			t.Error(err)
		}
	}
	if n < 60 {
		t.Errorf("%d config copies, want at least 60 (issue 16 item 4)", n)
	}
}

// TestGeneratedEntries checks entries against the fields of their
// config.json (exact) and derived counts against the published totals
// where the model card states them (tolerance given per case).
func TestGeneratedEntries(t *testing.T) {
	ms, err := configModels(configsDir)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]planner.Model{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	cases := []struct {
		id   string
		want func(m planner.Model) string
	}{
		{"Qwen/Qwen3-8B", func(m planner.Model) string {
			return check(m.Layers == 36 && m.Hidden == 4096 && m.FFN == 12288 && m.Heads == 32 && m.KVHeads == 8 &&
				m.HeadDim == 128 && m.Vocab == 151936 && m.MaxContext == 40960 && !m.TiedEmbeddings &&
				m.NativeDType == "bfloat16", "geometry of Qwen3-8B config.json")
		}},
		{"deepseek-ai/DeepSeek-V3", func(m planner.Model) string {
			return check(m.MLA != nil && m.MLA.KVLoraRank == 512 && m.MLA.RopeDim == 64 && m.Experts == 256 && m.TopK == 8 &&
				m.NativeDType == "fp8" && near(float64(m.Params), 671e9, 0.01) && near(float64(m.ActiveParams), 37e9, 0.03),
				"MLA 512+64, 256 experts top-8, fp8, 671B / 37B (model card)")
		}},
		{"google/gemma-3-12b-it", func(m planner.Model) string {
			return check(m.HeadDim == 256 && m.SlidingWindow == 1024 && m.SlidingLayers == 40 && m.Vocab == 262208 && m.TiedEmbeddings,
				"sparse text_config completed by Gemma3TextConfig defaults: head_dim 256, 5 of 6 layers sliding")
		}},
		{"meta-llama/Llama-4-Maverick-17B-128E-Instruct", func(m planner.Model) string {
			return check(near(float64(m.Params), 400e9, 0.01) && near(float64(m.ActiveParams), 17e9, 0.02) &&
				m.SlidingWindow == 8192 && m.SlidingLayers == 36,
				"400B total / 17B active (model name and card) from the interleaved MoE layout")
		}},
		{"microsoft/Phi-3.5-mini-instruct", func(m planner.Model) string {
			return check(m.SlidingWindow == 0 && m.SlidingLayers == 0, "a 262144 window over a 131072 context is no window")
		}},
		{"mistralai/Mixtral-8x7B-v0.1", func(m planner.Model) string {
			return check(near(float64(m.Params), 46.7e9, 0.01) && near(float64(m.ActiveParams), 12.9e9, 0.02),
				"46.7B total / 12.9B active (Mistral's announcement)")
		}},
		{"Qwen/Qwen3-Next-80B-A3B-Thinking", func(m planner.Model) string {
			return check(m.Linear != nil && !strings.Contains(m.Notes, "GAP: hybrid attention"),
				"the hybrid's linear-attention layers read by profiles/hf (no KV cache), and no gap noted")
		}},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			m, ok := byID[c.id]
			if !ok {
				t.Fatalf("%s not generated", c.id)
			}
			if msg := c.want(m); msg != "" {
				t.Errorf("%s: %+v", msg, m)
			}
		})
	}
}

func check(ok bool, what string) string {
	if ok {
		return ""
	}
	return "want " + what
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*want }

// TestCatalogListsEnoughModels loads the embedded catalog as the CLI does.
func TestCatalogListsEnoughModels(t *testing.T) {
	c, _, err := profiles.Load(profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) < 110 {
		t.Errorf("%d models in the catalog, want at least 110 (issue 16)", len(c.Models))
	}
	seen := map[string]bool{}
	for _, m := range c.Models {
		if seen[strings.ToLower(m.ID)] {
			t.Errorf("model id %s twice", m.ID)
		}
		seen[strings.ToLower(m.ID)] = true
	}
}

func TestReadSourceErrors(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"no colon", "id Qwen/Qwen3-8B\n", "SOURCE:1: want \"key: value\""},
		{"unknown key", "id: a/b\ncopy: http://x\nrevison: main\n", "SOURCE:3: unknown key \"revison\""},
		{"no copy", "id: a/b\n", "id and copy are required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "SOURCE")
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readSource(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestGenerateRefusesHandIDs: a copy of a model the hand-maintained files
// hold would be hidden at load time, so generation stops and names it.
func TestGenerateRefusesHandIDs(t *testing.T) {
	_, err := generateConfigModels(configsDir, map[string]bool{"Qwen/Qwen3-8B": true})
	if err == nil || !strings.Contains(err.Error(), "Qwen/Qwen3-8B") {
		t.Errorf("error %v, want one naming Qwen/Qwen3-8B", err)
	}
}
