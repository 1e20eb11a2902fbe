package hub_test

import (
	"context"
	"fmt"
	"os"

	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/profiles/hub/hubtest"
)

// ExampleResolve resolves the three kinds of reference against the fake
// Hub and registry of package hubtest; a front end passes
// hub.FromEnv(os.Getenv) instead.
func ExampleResolve() {
	srv := hubtest.New()
	defer srv.Close()
	if _, err := srv.Standard(); err != nil {
		fmt.Println(err)
		return
	}
	cache, err := os.MkdirTemp("", "hub-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(cache)
	opt := hub.Options{Endpoint: srv.HubURL(), OllamaRegistry: srv.OllamaURL(), CacheDir: cache}
	for _, ref := range []string{"Qwen/Qwen2.5-72B-Instruct-AWQ", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "ollama:qwen3:32b"} {
		res, err := hub.Resolve(context.Background(), ref, "", opt)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s, %d weight bytes in %d file(s)\n", ref, res.Quant, res.WeightBytes, len(res.Files)-boolInt(res.Ref.Kind == hub.KindHub))
	}
	// Output:
	// Qwen/Qwen2.5-72B-Instruct-AWQ: awq-int4, 41595518976 weight bytes in 11 file(s)
	// hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M: q4_k_m, 19756174336 weight bytes in 1 file(s)
	// ollama:qwen3:32b: q4_k_m, 19756174336 weight bytes in 1 file(s)
}

// boolInt is 1 for true: config.json is among a checkpoint's files.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
