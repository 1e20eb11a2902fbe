package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/profiles/hub/hubtest"
)

// fitOut is the part of `fit --json` the any-model runs check.
type fitOut struct {
	Scenario struct {
		Quant string `json:"quant"`
		Model string `json:"model"`
	} `json:"scenario"`
	Fit struct {
		Verdict     string `json:"verdict"`
		WeightBytes int64  `json:"weight_bytes"`
		MaxKVTokens int64  `json:"max_kv_tokens"`
	} `json:"fit"`
	Source *struct {
		Repo      string `json:"repo"`
		FromCache bool   `json:"from_cache"`
	} `json:"source"`
}

// The must-show runs: any model by name, through HF_ENDPOINT and
// HEADROOM_OLLAMA_REGISTRY pointing at a local server that behaves like
// the Hub and the registry. The quant and the exact weight bytes come from
// the files' headers, no weight byte is sent, a second run works with the
// servers gone (from the cache), and --offline with an empty cache says so.
func TestFitAnyModel(t *testing.T) {
	srv := hubtest.New()
	e, err := srv.Standard()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", srv.HubURL())
	t.Setenv("HEADROOM_OLLAMA_REGISTRY", srv.OllamaURL())
	t.Setenv("HEADROOM_HUB_CACHE", cache)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	cases := []struct {
		name  string
		args  []string
		quant string
		bytes int64
	}{
		{"Hub repo with AWQ safetensors", []string{"-m", "Qwen/Qwen2.5-72B-Instruct-AWQ", "-H", "nvidia-rtx-4090", "--devices", "2"}, "awq-int4", e.QwenAWQ},
		{"GGUF on the Hub", []string{"-m", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "-H", "nvidia-rtx-5090"}, "q4_k_m", e.Qwen3Q4KM},
		{"Ollama tag", []string{"-m", "ollama:qwen3:32b", "-H", "nvidia-rtx-5090"}, "q4_k_m", e.Qwen3Q4KM},
	}
	run := func(t *testing.T, args []string) fitOut {
		t.Helper()
		t.Setenv("HEADROOM_HUB_CACHE", cache) // cli() resets XDG dirs only
		out, code := cli(t, append(append([]string{"fit"}, args...), "--json")...)
		if code != exitOK && code != exitNoFit && code != exitOffload {
			t.Fatalf("fit %v: exit %d: %s", args, code, out)
		}
		var f fitOut
		if err := json.Unmarshal(out, &f); err != nil {
			t.Fatalf("fit %v: %v\n%s", args, err, out)
		}
		return f
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.ResetCounters()
			f := run(t, c.args)
			if f.Scenario.Quant != c.quant || f.Fit.WeightBytes != c.bytes || f.Fit.Verdict == "" || f.Source == nil {
				t.Fatalf("quant %q, weight bytes %d, verdict %q, source %v; want %q, %d", f.Scenario.Quant, f.Fit.WeightBytes, f.Fit.Verdict, f.Source, c.quant, c.bytes)
			}
			// Header reads are ranged in chunks, so up to one chunk past a
			// header may be sent: never the weights (tens of GB here).
			if n := srv.Counters(); n.Requests == 0 || n.WeightBytes > 1<<20 || n.Sent > 16<<20 {
				t.Errorf("server counters %+v: want headers only (at most 1 MiB past them)", n)
			}
		})
	}
	// The network gone: every reference answers from the cache.
	srv.Close()
	for _, c := range cases {
		f := run(t, c.args)
		if f.Fit.WeightBytes != c.bytes || f.Source == nil || !f.Source.FromCache {
			t.Errorf("%s with the servers gone: weight bytes %d, source %+v", c.name, f.Fit.WeightBytes, f.Source)
		}
	}
	// --offline with an empty cache says what to do.
	t.Setenv("HEADROOM_HUB_CACHE", t.TempDir())
	var stderr strings.Builder
	root := newRootCmd(&strings.Builder{}, &stderr)
	root.SetArgs([]string{"fit", "-m", "Qwen/Qwen2.5-72B-Instruct-AWQ", "-H", "nvidia-rtx-4090", "--offline"})
	err = root.Execute()
	if code := exitCode(err); code != exitUsage || err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("--offline with an empty cache: exit %d, %v", code, err)
	}
}

// A catalog id stays offline, and an ORG/NAME that only looks like one is
// read from the Hub rather than matched to the catalog by fragment.
func TestCatalogIDNeedsNoNetwork(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:9") // nothing listens there
	t.Setenv("HEADROOM_HUB_CACHE", t.TempDir())
	if out, code := cli(t, "fit", "-m", "meta-llama/Llama-3.1-8B-Instruct", "-H", "nvidia-rtx-4090", "--json"); code != exitOK {
		t.Fatalf("a catalog id: exit %d: %s", code, out)
	}
	_, code := cli(t, "fit", "-m", "Qwen/Qwen3-32B-AWQ-not-a-repo", "-H", "nvidia-rtx-4090")
	if code == exitOK {
		t.Error("an unknown ORG/NAME fitted as if it were a catalog model")
	}
}
