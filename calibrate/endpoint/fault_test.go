package endpoint

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const previous = `{"previous":"calibration"}`

// saveDir makes a directory holding a previous calibration file.
func saveDir(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "calibration.json")
	if err := os.WriteFile(path, []byte(previous), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkUntouched checks the previous file is intact and nothing else was
// left in its directory (no temporary file).
func checkUntouched(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != previous {
		t.Errorf("previous calibration file changed: %q, %v", b, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only the previous file", names)
	}
}

// faultAt answers generation request n and later with h; earlier ones are
// served normally, so faults hit mid-run (request 1 is the warm-up).
func faultAt(n int, h func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, int) bool {
	return func(w http.ResponseWriter, r *http.Request, i int) bool {
		if i < n {
			return false
		}
		_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		h(w, r)
		return true
	}
}

// partial starts a normal stream of the engine's format and writes a few
// token chunks.
func partial(engine string, w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	line := "data: {\"choices\":[{\"index\":0,\"text\":\" ab\"}]}\n\n"
	ct := "text/event-stream"
	if engine == "ollama" {
		line, ct = `{"response":" ab","done":false}`+"\n", "application/x-ndjson"
	}
	w.Header().Set("Content-Type", ct)
	for range 3 {
		_, _ = w.Write([]byte(line))
		_ = rc.Flush()
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name    string
		engine  string
		fault   func(f *fakeServer) func(http.ResponseWriter, *http.Request, int) bool
		wantIs  error  // errors.Is target, if any
		wantMsg string // substring of the message
		opts    func(*Options)
	}{
		{
			name: "steady but past the request timeout", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(3, func(w http.ResponseWriter, r *http.Request) {
					for {
						partial("ollama", w)
						select {
						case <-r.Context().Done():
							return
						case <-time.After(50 * time.Millisecond):
						}
					}
				})
			},
			opts:   func(o *Options) { o.RequestTimeout = 700 * time.Millisecond },
			wantIs: ErrRequestTimeout, wantMsg: "no complete answer within 700ms",
		},
		{
			name: "500 mid-run", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(4, func(w http.ResponseWriter, _ *http.Request) {
					http.Error(w, `{"error":{"message":"CUDA out of memory"}}`, http.StatusInternalServerError)
				})
			},
			wantMsg: "server answered 500 Internal Server Error: {\"error\":{\"message\":\"CUDA out of memory\"}}",
		},
		{
			name: "500 on warm-up", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(1, func(w http.ResponseWriter, _ *http.Request) {
					http.Error(w, `{"error":"model failed to load"}`, http.StatusInternalServerError)
				})
			},
			wantMsg: "warm-up: POST",
		},
		{
			name: "connection cut mid-stream", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(3, func(w http.ResponseWriter, _ *http.Request) {
					partial("vllm", w)
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
				})
			},
			wantIs: ErrTruncatedStream,
		},
		{
			name: "server killed mid-stream", engine: "ollama",
			fault: func(f *fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(5, func(w http.ResponseWriter, _ *http.Request) {
					partial("ollama", w)
					f.srv.Listener.Close() // nothing listens any more
					f.srv.CloseClientConnections()
				})
			},
			wantIs: ErrTruncatedStream,
		},
		{
			name: "stall mid-stream", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(3, func(w http.ResponseWriter, r *http.Request) {
					partial("ollama", w)
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
				})
			},
			wantIs: ErrStalled, wantMsg: "no data for 300ms",
		},
		{
			name: "stall before answering", engine: "llama.cpp",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(2, func(_ http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-time.After(5 * time.Second):
					}
				})
			},
			wantIs: ErrStalled,
		},
		{
			name: "malformed SSE", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(3, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = w.Write([]byte("data: {\"choices\":[{\"text\":\" ab\"}]}\n\ndata: {\"choices\": [{\"text\": 7\n\n"))
				})
			},
			wantIs: ErrMalformedStream,
		},
		{
			name: "malformed NDJSON", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(2, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/x-ndjson")
					_, _ = w.Write([]byte(`{"response":" ab","done":false}` + "\n" + `{"response":" ab","done":fals` + "\n"))
				})
			},
			wantIs: ErrMalformedStream,
		},
		{
			name: "stream ends without [DONE]", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(2, func(w http.ResponseWriter, _ *http.Request) { partial("vllm", w) })
			},
			wantIs: ErrTruncatedStream,
		},
		{
			name: "NDJSON ends without done", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(6, func(w http.ResponseWriter, _ *http.Request) { partial("ollama", w) })
			},
			wantIs: ErrTruncatedStream,
		},
		{
			name: "error inside the stream", engine: "ollama",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(4, func(w http.ResponseWriter, _ *http.Request) {
					partial("ollama", w)
					_, _ = w.Write([]byte(`{"error":"llama runner process has terminated"}` + "\n"))
				})
			},
			wantMsg: "server reported an error in the stream: llama runner process has terminated",
		},
		{
			name: "HTML instead of a stream", engine: "llama.cpp",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(3, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
				})
			},
			wantIs: ErrWrongContent, wantMsg: `"text/html"`,
		},
		{
			name: "JSON body instead of a stream", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(1, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"choices":[{"text":"hello"}]}`))
				})
			},
			wantIs: ErrWrongContent,
		},
		{
			name: "untyped HTML instead of a stream", engine: "vllm",
			fault: func(*fakeServer) func(http.ResponseWriter, *http.Request, int) bool {
				return faultAt(2, func(w http.ResponseWriter, _ *http.Request) {
					w.Header()["Content-Type"] = nil // no sniffing
					_, _ = w.Write([]byte("<html>\n<body>oops</body>\n</html>\n"))
				})
			},
			wantIs: ErrMalformedStream,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.engine)
			f.fault = tc.fault(f)
			url := f.start()
			opt := quick(url)
			if strings.HasPrefix(tc.name, "stall") {
				opt.StallTimeout = 300 * time.Millisecond
			}
			if tc.opts != nil {
				tc.opts(&opt)
			}
			path := saveDir(t)
			start := time.Now()
			err := RunAndSave(context.Background(), opt, path, nil, nil)
			if err == nil {
				t.Fatal("run succeeded, want an error")
			}
			t.Logf("error: %v", err)
			if time.Since(start) > 4*time.Second {
				t.Errorf("took %v to fail", time.Since(start))
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
			var se *StepError
			if !errors.As(err, &se) || !strings.HasPrefix(se.URL, url) || se.Step == "" {
				t.Errorf("error %v does not name the step and the URL %s", err, url)
			}
			checkUntouched(t, path)
		})
	}
}

func TestRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	url := "http://" + addr
	path := saveDir(t)
	err = RunAndSave(context.Background(), quick(url), path, nil, nil)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "connection refused, is the server running") {
		t.Errorf("err = %v, want a refused connection", err)
	}
	if !strings.Contains(err.Error(), "detect: GET "+url) {
		t.Errorf("err = %v, want it to name the step and URL", err)
	}
	checkUntouched(t, path)
}

func TestNotAServer(t *testing.T) {
	f := newFake(t, "none") // answers 404 everywhere
	url := f.start()
	path := saveDir(t)
	err := RunAndSave(context.Background(), quick(url), path, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no OpenAI-compatible server found") {
		t.Errorf("err = %v", err)
	}
	checkUntouched(t, path)
}

func TestCancelSavesNothing(t *testing.T) {
	f := newFake(t, "ollama")
	f.tokenDelay = 5 * time.Millisecond
	url := f.start()
	path := saveDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := RunAndSave(ctx, quick(url), path, nil, func(done, _ int, _ string) {
		if done == 6 {
			cancel() // Ctrl-C mid-run
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	checkUntouched(t, path)
}

func TestRunAndSaveWrites(t *testing.T) {
	f := newFake(t, "ollama")
	url := f.start()
	path := saveDir(t)
	err := RunAndSave(context.Background(), quick(url), path, func(s Samples) ([]byte, error) {
		return []byte(s.Model + " " + string(s.Engine)), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "tiny:latest ollama" {
		t.Errorf("file holds %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %d entries", len(ents))
	}
	// An encoder error writes nothing.
	err = RunAndSave(context.Background(), quick(url), path, func(Samples) ([]byte, error) {
		return nil, errors.New("boom")
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "encode: boom") {
		t.Errorf("err = %v", err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("encoder error changed the file to %q", b2)
	}
	// A missing directory fails before running.
	err = RunAndSave(context.Background(), quick("http://127.0.0.1:1"), filepath.Join(t.TempDir(), "no", "x.json"), nil, nil)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a missing directory", err)
	}
}

func TestAPIKey(t *testing.T) {
	const key = "sk-very-secret-key"
	f := newFake(t, "vllm")
	f.apiKey = key
	url := f.start()
	opt := quick(url)
	opt.APIKey = key
	path := filepath.Join(t.TempDir(), "cal.json")
	if err := RunAndSave(context.Background(), opt, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), key) || !strings.Contains(string(b), `"engine": "vllm"`) {
		t.Errorf("saved samples hold the key, or are not the samples:\n%s", b)
	}
	opt.APIKey = "sk-wrong-key"
	err := RunAndSave(context.Background(), opt, path, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sk-wrong-key") {
		t.Errorf("err = %v, want a 401 that does not print the key", err)
	}
}

// TestAPIKeyNeverPrinted: a server that echoes the key it refused in its
// 401 body, and a credential in the URL's query string, reach neither the
// error nor the saved file (issue 15 item 2).
func TestAPIKeyNeverPrinted(t *testing.T) {
	const key, query = "sk-echoed-secret-key", "qs-secret-token"
	for _, tc := range []struct {
		name   string
		key    string // key the client sends
		wantOK bool
	}{
		{"wrong key echoed in the 401", key, false},
		{"right key, token in the query", "sk-right-key", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "vllm")
			f.apiKey, f.echoKey = "sk-right-key", true
			opt := quick(f.start() + "/v1?api_key=" + query)
			opt.APIKey = tc.key
			path := filepath.Join(t.TempDir(), "cal.json")
			err := RunAndSave(context.Background(), opt, path, nil, nil)
			if ok := err == nil; ok != tc.wantOK {
				t.Fatalf("err = %v, want success %v", err, tc.wantOK)
			}
			if err != nil && (strings.Contains(err.Error(), tc.key) || strings.Contains(err.Error(), query) || !strings.Contains(err.Error(), "401")) {
				t.Errorf("err = %v, want a 401 without the key or the query token", err)
			}
			b, _ := os.ReadFile(path)
			if strings.Contains(string(b), tc.key) || strings.Contains(string(b), query) {
				t.Errorf("saved file holds a credential:\n%s", b)
			}
			if tc.wantOK && !strings.Contains(string(b), "api_key=REDACTED") {
				t.Errorf("saved URL lost its redacted query:\n%s", b)
			}
		})
	}
}
