//go:build linux

package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/profiles/gguf"
)

// EnvVar enables the engine tests: "1" or the path of an ollama binary.
const EnvVar = "HEADROOM_OLLAMA"

// ServeLimit is how long a served engine may live; past it the process
// group is killed even if the test is still running (or gone).
const ServeLimit = 20 * time.Minute

// NumParallel is the OLLAMA_NUM_PARALLEL the server runs with.
const NumParallel = 4

// NumCtx is the num_ctx of every model created (Modelfile PARAMETER).
const NumCtx = 2048

// NumThread is the num_thread of every model created. One thread: ggml's
// worker threads spin at each barrier, so with two or more on a small,
// shared CI machine one descheduled thread stalls the others and timings
// swing tenfold; a single thread keeps speed proportional to the work.
const NumThread = 1

// Sizes are three llama models of about 5M, 25M and 100M parameters, F16,
// with the same vocabulary, for comparing speed against size. Their names
// are the Ollama model names ServeModels gives them.
var Sizes = []gguf.LlamaSpec{
	{Name: "hr-5m", Layers: 4, Hidden: 256, FFN: 704, Heads: 4, KVHeads: 4, Vocab: 4096, Context: NumCtx, Type: "F16", Seed: 1},
	{Name: "hr-25m", Layers: 7, Hidden: 512, FFN: 1408, Heads: 8, KVHeads: 4, Vocab: 4096, Context: NumCtx, Type: "F16", Seed: 2},
	{Name: "hr-100m", Layers: 14, Hidden: 768, FFN: 2048, Heads: 12, KVHeads: 4, Vocab: 4096, Context: NumCtx, Type: "F16", Seed: 3},
}

// Params is the parameter count of a LlamaSpec: untied input and output
// embeddings, and per layer the attention (q, k, v, o) and gated MLP
// matrices plus two norms.
func Params(s gguf.LlamaSpec) int64 {
	d, f, v, l := int64(s.Hidden), int64(s.FFN), int64(s.Vocab), int64(s.Layers)
	kvHeads := int64(s.KVHeads)
	if kvHeads == 0 {
		kvHeads = int64(s.Heads)
	}
	kv := kvHeads * d / int64(s.Heads)
	perLayer := 2*d*d + 2*d*kv + 3*d*f + 2*d
	return 2*v*d + l*perLayer + d
}

// Binary returns the ollama binary the tests should use, skipping the test
// when EnvVar is unset and failing it when EnvVar is set but names no
// usable binary.
func Binary(t testing.TB) string {
	t.Helper()
	v := os.Getenv(EnvVar)
	if v == "" {
		t.Skipf("engine test skipped: set %s=1 (ollama on PATH) or %s=/path/to/ollama to run it against a real Ollama server; .ci/run does", EnvVar, EnvVar)
	}
	name := v
	if v == "1" {
		name = "ollama"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s=%s but no ollama binary: %v (install with: go install github.com/ollama/ollama@v0.6.5)", EnvVar, v, err)
	}
	return path
}

// ServeModels writes each spec as a GGUF file in a temporary directory,
// starts `ollama serve` on a free 127.0.0.1 port with its models and home
// in that directory (OLLAMA_NUM_PARALLEL=NumParallel), creates one model
// per spec (Modelfile: FROM the file, PARAMETER num_ctx NumCtx and
// num_thread NumThread), and
// returns the server's base URL and the model names, in order. A spec's
// Name is its model name (lower-case letters, digits, '-', '_', '.');
// specs without one are named hr-0, hr-1 .... The server is killed when the
// test ends. It skips the test unless EnvVar is set (see Binary).
func ServeModels(t testing.TB, specs ...gguf.LlamaSpec) (baseURL string, names []string) {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	env := append(os.Environ(),
		"OLLAMA_HOST="+addr,
		"OLLAMA_MODELS="+filepath.Join(dir, "models"),
		fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", NumParallel),
		"OLLAMA_KEEP_ALIVE=30m",
		"OLLAMA_MAX_LOADED_MODELS=1", // one model in memory at a time: runs do not compete
		"OLLAMA_NOPRUNE=1",
		"HOME="+dir,
	)
	baseURL = "http://" + addr
	startServer(t, bin, dir, env)
	waitReady(t, baseURL)
	for i, spec := range specs {
		name := spec.Name
		if name == "" {
			name = fmt.Sprintf("hr-%d", i)
		}
		createModel(t, bin, filepath.Join(dir, name), env, name, spec)
		names = append(names, name)
	}
	return baseURL, names
}

// freeAddr picks a free 127.0.0.1 port.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer runs `timeout -k 10 LIMIT ollama serve` in a new process
// group; timeout(1) signals the whole group (the server and its model
// runners) at the limit and when it is itself terminated, and Pdeathsig
// terminates it when the test process dies. Cleanup terminates the group,
// then kills it after a grace period.
func startServer(t testing.TB, bin, dir string, env []string) {
	t.Helper()
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	limit := fmt.Sprintf("%ds", int(ServeLimit.Seconds()))
	cmd := exec.Command("timeout", "-k", "10", limit, bin, "serve")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start ollama serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // runners that outlived the server
		logf.Close()
		if t.Failed() {
			t.Logf("ollama serve log (tail):\n%s", tail(logPath, 40))
		}
	})
}

// waitReady polls /api/version until the server answers.
func waitReady(t testing.TB, baseURL string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(baseURL + "/api/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama serve at %s not ready after 30s: %v", baseURL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createModel writes the GGUF and the Modelfile into dir and runs
// `ollama create name -f Modelfile`.
func createModel(t testing.TB, bin, dir string, env []string, name string, spec gguf.LlamaSpec) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeGGUF(filepath.Join(dir, "model.gguf"), spec); err != nil {
		t.Fatalf("write GGUF for %s: %v", name, err)
	}
	modelfile := fmt.Sprintf("FROM ./model.gguf\nPARAMETER num_ctx %d\nPARAMETER num_thread %d\n", NumCtx, NumThread)
	if err := os.WriteFile(filepath.Join(dir, "Modelfile"), []byte(modelfile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "create", name, "-f", filepath.Join(dir, "Modelfile"))
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ollama create %s: %v\n%s", name, err, lastLines(out, 20))
	}
}

func writeGGUF(path string, spec gguf.LlamaSpec) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := gguf.WriteLlama(w, spec); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastLines(b, n)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
