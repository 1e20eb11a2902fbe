package hub_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/profiles/hub/hubtest"
)

// readAhead bounds the weight bytes a resolution may receive past the
// headers, per file: one growth step of a GGUF read (1 MiB) and the
// header parser's 64 KiB buffer, or the first 64 KiB asked of a
// safetensors shard. The fixtures' weights are 20 to 42 GB, so this proves
// they were not downloaded.
const readAhead = 1<<20 + 64<<10

// fakeHub starts the fake Hub with the standard models.
func fakeHub(t *testing.T) (*hubtest.Server, hubtest.Expected) {
	t.Helper()
	s := hubtest.New()
	t.Cleanup(s.Close)
	e, err := s.Standard()
	if err != nil {
		t.Fatal(err)
	}
	return s, e
}

// options points at the fake servers with a cache in a temporary
// directory and a token that must never reach the CDN.
func options(t *testing.T, s *hubtest.Server) hub.Options {
	return hub.Options{
		Endpoint: s.HubURL(), OllamaRegistry: s.OllamaURL(), CacheDir: t.TempDir(),
		Token: "hf_someoneElsesToken", StallTimeout: 20 * time.Second,
	}
}

func TestResolveReadsHeadersOnly(t *testing.T) {
	s, e := fakeHub(t)
	cases := []struct {
		name, ref, quant string
		wantQuant        string
		wantBytes        int64
		wantFiles        int
		wantLayers       int
		wantKind         hub.Kind
	}{
		{"awq repository", "Qwen/Qwen2.5-72B-Instruct-AWQ", "", "awq-int4", e.QwenAWQ, 12, 80, hub.KindHub},
		{"hub page URL", "https://huggingface.co/Qwen/Qwen2.5-72B-Instruct-AWQ", "", "awq-int4", e.QwenAWQ, 12, 80, hub.KindHub},
		{"pinned commit", "Qwen/Qwen2.5-72B-Instruct-AWQ@698703eac6a7a9ba5a6ec7d5f9ed1b9bf1e1a4f1", "", "awq-int4", e.QwenAWQ, 12, 80, hub.KindHub},
		{"gguf by hf.co quant", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "", "q4_k_m", e.Qwen3Q4KM, 1, 64, hub.KindHubGGUF},
		{"gguf quant is case-insensitive", "hf.co/unsloth/Qwen3-32B-GGUF:q4_k_m", "", "q4_k_m", e.Qwen3Q4KM, 1, 64, hub.KindHubGGUF},
		{"unsloth dynamic quant", "hf.co/unsloth/Qwen3-32B-GGUF:UD-Q4_K_XL", "", "q4_k_xl", e.Qwen3Q4KM, 1, 64, hub.KindHubGGUF},
		{"split gguf with -q", "unsloth/Qwen3-32B-GGUF", "q8_0", "q8_0", e.Qwen3Q8Split, 2, 64, hub.KindHubGGUF},
		{"modelopt fp8 export", hubtest.ModelOptFP8ID, "", "fp8", e.ModelOptFP8, 4, 32, hub.KindHub},
		{"ollama tag", "ollama:qwen3:32b", "", "q4_k_m", e.Qwen3Q4KM, 1, 64, hub.KindOllama},
		{"bare ollama tag", "qwen3:32b", "", "q4_k_m", e.Qwen3Q4KM, 1, 64, hub.KindOllama},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.ResetCounters()
			res, err := hub.Resolve(context.Background(), c.ref, c.quant, options(t, s))
			if err != nil {
				t.Fatal(err)
			}
			if res.Ref.Kind != c.wantKind || res.Quant != c.wantQuant || res.Model.Layers != c.wantLayers {
				t.Errorf("kind %v quant %q layers %d, want %v %q %d", res.Ref.Kind, res.Quant, res.Model.Layers, c.wantKind, c.wantQuant, c.wantLayers)
			}
			if res.WeightBytes != planner.Bytes(c.wantBytes) || res.Model.FileBytes != res.WeightBytes {
				t.Errorf("weight bytes %d (model %d), want the tensors' sum %d", res.WeightBytes, res.Model.FileBytes, c.wantBytes)
			}
			if len(res.Files) != c.wantFiles || res.Commit == "" {
				t.Errorf("files %v commit %q, want %d files and a commit", res.Files, res.Commit, c.wantFiles)
			}
			got := s.Counters()
			if got.WeightBytes > int64(c.wantFiles)*readAhead {
				t.Errorf("the servers sent %d bytes past the headers, more than %d read-ahead", got.WeightBytes, int64(c.wantFiles)*readAhead)
			}
			if got.CDNSawAuth {
				t.Error("the token reached the CDN")
			}
			if res.BytesRead <= 0 || res.BytesRead > got.Sent || res.FromCache {
				t.Errorf("BytesRead %d, FromCache %v; the servers sent %d", res.BytesRead, res.FromCache, got.Sent)
			}
		})
	}
}

// NVIDIA's ModelOpt export states its format and KV cache type in
// hf_quant_config.json only: the resolution reads both, which TensorRT-LLM
// plans then follow (planner's TestCheckpointKVTypeBindsTensorRTLLM).
func TestModelOptCheckpointKV(t *testing.T) {
	s, _ := fakeHub(t)
	opt := options(t, s)
	res, err := hub.Resolve(context.Background(), hubtest.ModelOptFP8ID, "", opt)
	if err != nil {
		t.Fatal(err)
	}
	// Offline, the cache alone says the same.
	offline := opt
	offline.Offline = true
	again, err := hub.Resolve(context.Background(), hubtest.ModelOptFP8ID, "", offline)
	if err != nil || !again.FromCache || again.Model.CheckpointKV != "fp8" || again.Quant != "fp8" {
		t.Errorf("from the cache: %v, quant %q KV %q (cache %v)", err, again.Quant, again.Model.CheckpointKV, again.FromCache)
	}
	if res.Quant != "fp8" || res.Model.NativeDType != "fp8" || res.Model.CheckpointKV != "fp8" {
		t.Errorf("quant %q native %q KV %q, want fp8 fp8 fp8", res.Quant, res.Model.NativeDType, res.Model.CheckpointKV)
	}
	if !slices.Contains(res.Files, "hf_quant_config.json") {
		t.Errorf("files %v do not list hf_quant_config.json", res.Files)
	}
	// Llama-3.1-8B in FP8 with BF16 embeddings and head: about 9.1 GB.
	if b := float64(res.WeightBytes) / 1e9; b < 8.9 || b > 9.3 {
		t.Errorf("weights %.2f GB, want about 9.1", b)
	}
}

func TestAWQModelGeometry(t *testing.T) {
	s, e := fakeHub(t)
	opt := options(t, s)
	var last hub.Progress
	calls := 0
	opt.OnProgress = func(p hub.Progress) { last, calls = p, calls+1 }
	res, err := hub.Resolve(context.Background(), "Qwen/Qwen2.5-72B-Instruct-AWQ", "", opt)
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last.RefRead != res.BytesRead || last.Read > last.RefRead {
		t.Errorf("progress: %d calls, last %+v; resolution read %d bytes", calls, last, res.BytesRead)
	}
	m := res.Model
	if m.ID != "Qwen/Qwen2.5-72B-Instruct-AWQ" || m.Hidden != 8192 || m.FFN != 29696 || m.KVHeads != 8 || m.Vocab != 152064 || !m.GatedMLP || m.TiedEmbeddings {
		t.Errorf("model %+v does not match the config.json", m)
	}
	// The real checkpoint's 11 shards hold 41.6 GB (Hub file list); the
	// fixture's layout must land there.
	if e.QwenAWQ < 41.0e9 || e.QwenAWQ > 42.5e9 {
		t.Errorf("fixture weights %d bytes, the real checkpoint's are about 41.6e9", e.QwenAWQ)
	}
	if len(m.Tensors) != 3+80*26 {
		t.Errorf("%d tensors, want %d", len(m.Tensors), 3+80*26)
	}
	if res.Generic {
		t.Error("qwen2 labelled a generic estimate")
	}
}

func TestSecondRunUsesCache(t *testing.T) {
	s, e := fakeHub(t)
	opt := options(t, s)
	refs := map[string]int64{
		"Qwen/Qwen2.5-72B-Instruct-AWQ":       e.QwenAWQ,
		"hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M": e.Qwen3Q4KM,
		"ollama:qwen3:32b":                    e.Qwen3Q4KM,
	}
	for ref := range refs {
		if _, err := hub.Resolve(context.Background(), ref, "", opt); err != nil {
			t.Fatalf("first run %s: %v", ref, err)
		}
	}
	s.Close() // the network is gone
	offline := opt
	offline.Offline = true
	for _, mode := range []struct {
		name string
		opt  hub.Options
	}{{"server gone", opt}, {"offline", offline}} {
		for ref, want := range refs {
			t.Run(mode.name+" "+ref, func(t *testing.T) {
				res, err := hub.Resolve(context.Background(), ref, "", mode.opt)
				if err != nil {
					t.Fatal(err)
				}
				if res.WeightBytes != planner.Bytes(want) || !res.FromCache || res.BytesRead != 0 {
					t.Errorf("weight bytes %d from cache %v read %d, want %d from the cache", res.WeightBytes, res.FromCache, res.BytesRead, want)
				}
				if mode.name == "server gone" && len(res.Notes) == 0 {
					t.Error("no note says the cache stood in for the network")
				}
			})
		}
	}
}

func TestOfflineWithEmptyCache(t *testing.T) {
	for _, ref := range []string{"Qwen/Qwen2.5-72B-Instruct-AWQ", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "ollama:qwen3:32b"} {
		t.Run(ref, func(t *testing.T) {
			opt := hub.Options{Endpoint: "http://127.0.0.1:1", OllamaRegistry: "http://127.0.0.1:1", CacheDir: t.TempDir(), Offline: true}
			_, err := hub.Resolve(context.Background(), ref, "", opt)
			if !errors.Is(err, hub.ErrOffline) || !strings.Contains(err.Error(), "offline") {
				t.Errorf("error %v, want ErrOffline saying so", err)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	s, _ := fakeHub(t)
	cases := []struct {
		name, ref, token string
		check            func(t *testing.T, err error)
	}{
		{"no such repository", "nobody/no-such-model", "", func(t *testing.T, err error) {
			var nf *hub.NotFoundError
			if !errors.As(err, &nf) || nf.What != "repository" || nf.Name != "nobody/no-such-model" {
				t.Errorf("error %v, want NotFoundError for the repository", err)
			}
		}},
		{"no such revision", "Qwen/Qwen2.5-72B-Instruct-AWQ@v9", "", func(t *testing.T, err error) {
			var nf *hub.NotFoundError
			if !errors.As(err, &nf) || nf.What != "revision" {
				t.Errorf("error %v, want NotFoundError for the revision", err)
			}
		}},
		{"no such quant", "hf.co/unsloth/Qwen3-32B-GGUF:Q2_K", "", func(t *testing.T, err error) {
			var nf *hub.NotFoundError
			if !errors.As(err, &nf) || nf.What != "quant" || !strings.Contains(err.Error(), "Qwen3-32B-Q4_K_M.gguf") {
				t.Errorf("error %v, want NotFoundError naming the files there are", err)
			}
		}},
		{"no such ollama tag", "ollama:qwen3:999b", "", func(t *testing.T, err error) {
			var nf *hub.NotFoundError
			if !errors.As(err, &nf) || nf.What != "tag" {
				t.Errorf("error %v, want NotFoundError for the tag", err)
			}
		}},
		{"gated without a token", "meta-llama/Llama-3.1-8B", "", func(t *testing.T, err error) {
			var ae *hub.AuthError
			if !errors.As(err, &ae) || !ae.Gated || ae.Status != 401 || ae.TokenSent ||
				!strings.Contains(err.Error(), s.HubURL()+"/meta-llama/Llama-3.1-8B") || !strings.Contains(err.Error(), "HF_TOKEN") {
				t.Errorf("error %v, want a gated AuthError naming the page and HF_TOKEN", err)
			}
		}},
		{"gated with a token that has not accepted", "meta-llama/Llama-3.1-8B", "hf_otherToken", func(t *testing.T, err error) {
			var ae *hub.AuthError
			if !errors.As(err, &ae) || ae.Status != 403 || !ae.TokenSent || strings.Contains(err.Error(), "hf_otherToken") {
				t.Errorf("error %v, want a 403 AuthError that does not show the token", err)
			}
		}},
		{"gated with the accepted token", "meta-llama/Llama-3.1-8B", hubtest.GatedToken, func(t *testing.T, err error) {
			if err != nil {
				t.Errorf("error %v, want the config read", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := options(t, s)
			opt.Token = c.token
			_, err := hub.Resolve(context.Background(), c.ref, "", opt)
			c.check(t, err)
		})
	}
}

func TestServerFaults(t *testing.T) {
	s, e := fakeHub(t)
	const gguf = "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M"
	cases := []struct {
		name   string
		faults hubtest.Faults
		adjust func(*hub.Options)
		check  func(t *testing.T, res hub.Result, err error)
	}{
		{"range ignored, within the cap", hubtest.Faults{IgnoreRange: true}, nil, func(t *testing.T, res hub.Result, err error) {
			if err != nil || res.WeightBytes != planner.Bytes(e.Qwen3Q4KM) {
				t.Errorf("weight bytes %d, error %v; want %d read from the whole-file answers", res.WeightBytes, err, e.Qwen3Q4KM)
			}
		}},
		{"range ignored, cap reached", hubtest.Faults{IgnoreRange: true}, func(o *hub.Options) { o.MaxFileBytes = 3 << 20 },
			func(t *testing.T, _ hub.Result, err error) {
				if !errors.Is(err, hub.ErrCapExceeded) {
					t.Errorf("error %v, want ErrCapExceeded", err)
				}
			}},
		{"reference cap reached", hubtest.Faults{}, func(o *hub.Options) { o.MaxRefBytes = 1 << 20 },
			func(t *testing.T, _ hub.Result, err error) {
				if !errors.Is(err, hub.ErrCapExceeded) {
					t.Errorf("error %v, want ErrCapExceeded", err)
				}
			}},
		{"busy twice, then served", hubtest.Faults{Busy: 2}, nil, func(t *testing.T, res hub.Result, err error) {
			if err != nil || res.WeightBytes != planner.Bytes(e.Qwen3Q4KM) {
				t.Errorf("weight bytes %d, error %v; want %d after two retries", res.WeightBytes, err, e.Qwen3Q4KM)
			}
		}},
		{"busy three times", hubtest.Faults{Busy: 3}, nil, func(t *testing.T, _ hub.Result, err error) {
			var he *hub.HTTPError
			if !errors.As(err, &he) || he.Status != 503 {
				t.Errorf("error %v, want the 503 after two retries", err)
			}
		}},
		{"stall", hubtest.Faults{Stall: true}, func(o *hub.Options) { o.StallTimeout = 200 * time.Millisecond },
			func(t *testing.T, _ hub.Result, err error) {
				if !errors.Is(err, hub.ErrStalled) {
					t.Errorf("error %v, want ErrStalled", err)
				}
			}},
		{"truncated body", hubtest.Faults{Truncate: true}, nil, func(t *testing.T, _ hub.Result, err error) {
			if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "truncated") {
				t.Errorf("error %v, want a truncated-body error", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.SetFaults(c.faults)
			defer s.SetFaults(hubtest.Faults{})
			s.ResetCounters()
			opt := options(t, s)
			if c.adjust != nil {
				c.adjust(&opt)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := hub.Resolve(ctx, gguf, "", opt)
			c.check(t, res, err)
			limit := int64(opt.MaxFileBytes)
			if limit == 0 {
				limit = int64(hub.DefaultMaxFileBytes)
			}
			// Socket buffers take some megabytes the client never reads;
			// the 20 GB file was not sent.
			if got := s.Counters().Sent; got > limit+64<<20 {
				t.Errorf("the servers sent %d bytes, far past the %d-byte cap", got, limit)
			}
		})
	}
}

func TestCancelStops(t *testing.T) {
	s, _ := fakeHub(t)
	s.SetFaults(hubtest.Faults{Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := hub.Resolve(ctx, "ollama:qwen3:32b", "", options(t, s))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("cancelling did not stop the resolution")
	}
}

func TestCacheListAndClear(t *testing.T) {
	s, _ := fakeHub(t)
	opt := options(t, s)
	for _, ref := range []string{"Qwen/Qwen2.5-72B-Instruct-AWQ", "ollama:qwen3:32b"} {
		if _, err := hub.Resolve(context.Background(), ref, "", opt); err != nil {
			t.Fatal(err)
		}
	}
	c := hub.Cache{Dir: opt.CacheDir}
	entries, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]planner.Bytes{}
	var total planner.Bytes
	for _, e := range entries {
		repos[e.Repo] += e.Bytes
		total += e.Bytes
	}
	if repos["Qwen/Qwen2.5-72B-Instruct-AWQ"] == 0 || repos["library/qwen3"] == 0 {
		t.Errorf("cache lists %v, want both models", repos)
	}
	sum := hub.Summarize(entries)
	if len(sum) != 2 || sum[0].Source != "hf" || sum[0].Repo != "Qwen/Qwen2.5-72B-Instruct-AWQ" || sum[0].Bytes != repos[sum[0].Repo] ||
		sum[1].Source != "ollama" || sum[1].Repo != "library/qwen3" || sum[0].Entries < 13 {
		t.Errorf("summary %+v", sum)
	}
	if total > 64<<20 {
		t.Errorf("cache holds %d bytes: more than metadata", total)
	}
	for _, e := range entries {
		data, ok, err := c.Get(e.Key)
		if err != nil || !ok || strings.Contains(string(data), opt.Token) {
			t.Errorf("entry %s: ok %v err %v, or it holds the token", e.Key, ok, err)
		}
	}
	if err := c.Clear(); err != nil {
		t.Fatal(err)
	}
	if entries, err := c.List(); err != nil || len(entries) != 0 {
		t.Errorf("after Clear: %d entries, error %v", len(entries), err)
	}
}

// TestCorruptShardNamed checks that a bad header in one of eleven shards,
// read in parallel, fails the resolution with that shard's name.
func TestCorruptShardNamed(t *testing.T) {
	s, _ := fakeHub(t)
	repo, _, err := hubtest.QwenAWQ()
	if err != nil {
		t.Fatal(err)
	}
	repo.ID = "someone/corrupt-AWQ"
	const bad = "model-00007-of-00011.safetensors"
	f := repo.Files[bad]
	head := append([]byte(nil), f.Head...)
	copy(head[8:], `{"x": oops`)
	f.Head = head
	repo.Files[bad] = f
	s.AddRepo(repo)
	_, err = hub.Resolve(context.Background(), repo.ID, "", options(t, s))
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v, want one naming %s", err, bad)
	}
}

// TestGGUFOnlyRepository checks that a repository holding only GGUF files,
// named without a quant, is read as GGUF at Q4_K_M, as llama-server -hf
// does, and says so.
func TestGGUFOnlyRepository(t *testing.T) {
	s, e := fakeHub(t)
	files, _, err := hubtest.Qwen3GGUF("Q4_K_M", 1)
	if err != nil {
		t.Fatal(err)
	}
	s.AddRepo(&hubtest.Repo{ID: "someone/qwen3-32b-quants", SHA: strings.Repeat("3", 40),
		Files: map[string]hubtest.File{"qwen3-32b.Q4_K_M.gguf": files[0], "qwen3-32b.Q8_0.gguf": files[0]}})
	res, err := hub.Resolve(context.Background(), "someone/qwen3-32b-quants", "", options(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if res.Ref.Kind != hub.KindHubGGUF || res.Ref.Quant != "Q4_K_M" || res.WeightBytes != planner.Bytes(e.Qwen3Q4KM) || len(res.Notes) == 0 {
		t.Errorf("ref %+v bytes %d notes %v", res.Ref, res.WeightBytes, res.Notes)
	}
}
