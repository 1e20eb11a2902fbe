package endpoint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer imitates the streaming APIs of the engines closely enough to
// exercise a whole run: it counts tokenPerWord tokens per prompt word (plus
// one for BOS), takes prefillPerToken per prompt token and tokenDelay per
// generated token, and reports server timings that are exactly those times,
// so tests can check the rates Run derives.
type fakeServer struct {
	engine          string // ollama, llama.cpp, tgi, vllm, chat-only
	tokensPerWord   int
	prefillPerToken time.Duration
	tokenDelay      time.Duration
	numCtx          int
	parallel        int    // requests decoded at once; 0: unlimited
	apiKey          string // when set, requests must carry "Bearer apiKey"
	echoKey         bool   // a refused request's 401 body quotes the header it got
	// fault, when set, may answer generation request n (1-based) itself
	// and return true.
	fault func(w http.ResponseWriter, r *http.Request, n int) bool

	gens    atomic.Int64
	sem     chan struct{}
	mu      sync.Mutex
	prompts []int // prompt token counts reported, in order
	srv     *httptest.Server
}

func newFake(t *testing.T, engine string) *fakeServer {
	t.Helper()
	f := &fakeServer{engine: engine, tokensPerWord: 3, prefillPerToken: 20 * time.Microsecond, tokenDelay: time.Millisecond, numCtx: 4096}
	t.Cleanup(func() {
		if f.srv != nil {
			f.srv.Close()
		}
	})
	return f
}

// start serves on 127.0.0.1 (httptest's default) and returns the base URL.
func (f *fakeServer) start() string {
	if f.parallel > 0 {
		f.sem = make(chan struct{}, f.parallel)
	}
	mux := http.NewServeMux()
	switch f.engine {
	case "ollama":
		mux.HandleFunc("GET /api/version", jsonHandler(map[string]string{"version": "0.6.5"}))
		mux.HandleFunc("GET /api/tags", jsonHandler(map[string]any{"models": []map[string]string{{"name": "tiny:latest"}}}))
		mux.HandleFunc("POST /api/show", jsonHandler(map[string]any{
			"parameters": fmt.Sprintf("num_ctx                        %d", f.numCtx),
			"model_info": map[string]any{"llama.context_length": 8192},
			"details":    map[string]string{"quantization_level": "Q8_0"},
		}))
		mux.HandleFunc("POST /api/generate", f.generate(f.ollama))
	case "llama.cpp":
		mux.HandleFunc("GET /props", jsonHandler(map[string]any{
			"default_generation_settings": map[string]int{"n_ctx": f.numCtx},
			"total_slots":                 4, "build_info": "b5000-abc",
			"model_path": "/models/tiny-q8_0.gguf",
		}))
		mux.HandleFunc("POST /completion", f.generate(f.llama))
	case "tgi":
		mux.HandleFunc("GET /info", jsonHandler(map[string]any{"model_id": "tiny/llama", "version": "3.0.0", "max_total_tokens": f.numCtx, "max_concurrent_requests": 128}))
		mux.HandleFunc("POST /generate_stream", f.generate(f.tgi))
	case "vllm", "chat-only":
		owner := "vllm"
		if f.engine == "chat-only" {
			owner = "someone"
		} else {
			mux.HandleFunc("POST /v1/completions", f.generate(f.openai(false)))
		}
		mux.HandleFunc("GET /version", jsonHandler(map[string]string{"version": "0.9.0"}))
		mux.HandleFunc("GET /v1/models", jsonHandler(map[string]any{"data": []map[string]any{{"id": "tiny/llama", "owned_by": owner, "max_model_len": f.numCtx}}}))
		mux.HandleFunc("POST /v1/chat/completions", f.generate(f.openai(true)))
	}
	var h http.Handler = mux
	if f.apiKey != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+f.apiKey {
				msg := `{"error":"invalid api key"}`
				if f.echoKey {
					msg = fmt.Sprintf(`{"error":"invalid api key %s (header %q)"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("Authorization"))
				}
				http.Error(w, msg, http.StatusUnauthorized)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	f.srv = httptest.NewServer(h)
	return f.srv.URL
}

func jsonHandler(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// genReq is what a generation request asked for, whatever the API.
type genReq struct {
	prompt string
	maxGen int
}

func parseGen(r *http.Request) (genReq, error) {
	var b struct {
		Prompt    string `json:"prompt"`
		Inputs    string `json:"inputs"`
		MaxTokens int    `json:"max_tokens"`
		NPredict  int    `json:"n_predict"`
		Options   struct {
			NumPredict int `json:"num_predict"`
		} `json:"options"`
		Parameters struct {
			MaxNewTokens int `json:"max_new_tokens"`
		} `json:"parameters"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		return genReq{}, err
	}
	g := genReq{prompt: b.Prompt + b.Inputs, maxGen: max(b.MaxTokens, b.NPredict, b.Options.NumPredict, b.Parameters.MaxNewTokens)}
	for _, m := range b.Messages {
		g.prompt += m.Content
	}
	return g, nil
}

// genRun is one generation in progress: the handler's writer and the counts.
type genRun struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	prompt  int
	gen     int
	prefill time.Duration
	decode  time.Duration
}

func (g *genRun) write(s string) {
	_, _ = g.w.Write([]byte(s))
	_ = g.rc.Flush()
}

// generate wraps an API's stream writer: fault injection, prompt counting,
// the parallel limit, and the prefill and per-token delays.
func (f *fakeServer) generate(stream func(g *genRun, token func() bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := int(f.gens.Add(1))
		if f.fault != nil && f.fault(w, r, n) {
			return
		}
		req, err := parseGen(r)
		if err != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		if f.sem != nil {
			f.sem <- struct{}{}
			defer func() { <-f.sem }()
		}
		g := &genRun{w: w, rc: http.NewResponseController(w), prompt: 1 + f.tokensPerWord*len(strings.Fields(req.prompt)), gen: req.maxGen}
		if g.prompt > f.numCtx {
			http.Error(w, `{"error":"prompt too long"}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.prompts = append(f.prompts, g.prompt)
		f.mu.Unlock()
		g.prefill = time.Duration(g.prompt) * f.prefillPerToken
		g.decode = time.Duration(g.gen) * f.tokenDelay
		time.Sleep(g.prefill)
		i := 0
		stream(g, func() bool {
			if i > 0 {
				time.Sleep(f.tokenDelay)
			}
			i++
			return i <= g.gen
		})
	}
}

func (f *fakeServer) ollama(g *genRun, token func() bool) {
	g.w.Header().Set("Content-Type", "application/x-ndjson")
	for token() {
		g.write(`{"model":"tiny","response":" ab","done":false}` + "\n")
	}
	g.write(fmt.Sprintf(`{"model":"tiny","response":"","done":true,"done_reason":"length","prompt_eval_count":%d,"prompt_eval_duration":%d,"eval_count":%d,"eval_duration":%d}`+"\n",
		g.prompt, g.prefill.Nanoseconds(), g.gen, g.decode.Nanoseconds()))
}

func (f *fakeServer) llama(g *genRun, token func() bool) {
	g.w.Header().Set("Content-Type", "text/event-stream")
	for token() {
		g.write(`data: {"content":" ab","stop":false}` + "\n\n")
	}
	g.write(fmt.Sprintf(`data: {"content":"","stop":true,"tokens_evaluated":%d,"tokens_predicted":%d,"timings":{"prompt_n":%d,"prompt_ms":%g,"predicted_n":%d,"predicted_ms":%g}}`+"\n\n",
		g.prompt, g.gen, g.prompt, ms(g.prefill), g.gen, ms(g.decode)))
}

func (f *fakeServer) tgi(g *genRun, token func() bool) {
	g.w.Header().Set("Content-Type", "text/event-stream")
	for i := 1; token(); i++ {
		if i == g.gen {
			g.write(fmt.Sprintf(`data:{"index":%d,"token":{"id":5,"text":" ab","special":false},"generated_text":"x","details":{"finish_reason":"length","generated_tokens":%d,"input_length":%d}}`+"\n\n", i, g.gen, g.prompt))
			return
		}
		g.write(fmt.Sprintf(`data:{"index":%d,"token":{"id":5,"text":" ab","special":false},"generated_text":null,"details":null}`+"\n\n", i))
	}
}

func (f *fakeServer) openai(chat bool) func(g *genRun, token func() bool) {
	return func(g *genRun, token func() bool) {
		g.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for token() {
			if chat {
				g.write(`data: {"choices":[{"index":0,"delta":{"content":" ab"},"finish_reason":null}],"usage":null}` + "\n\n")
			} else {
				g.write(`data: {"choices":[{"index":0,"text":" ab","finish_reason":null}],"usage":null}` + "\n\n")
			}
		}
		g.write(`data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":null}` + "\n\n")
		g.write(fmt.Sprintf(`data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", g.prompt, g.gen, g.prompt+g.gen))
		g.write("data: [DONE]\n\n")
	}
}

// reported returns the prompt token counts the server reported.
func (f *fakeServer) reported() map[int]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[int]bool{}
	for _, p := range f.prompts {
		m[p] = true
	}
	return m
}
