package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/headroom-planner/headroom/app"
)

// Config sets the server's address, token and limits. Zero values take
// the defaults noted on each field.
type Config struct {
	// Addr is host:port to listen on (default 127.0.0.1:8080).
	Addr string
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// /api/ and /mcp. It is required for a non-loopback Addr.
	Token string
	// MaxBody bounds a request body in bytes (default 1 MiB).
	MaxBody int64
	// Timeout bounds the answer to one request (default 60 s).
	Timeout time.Duration
	// MaxPlans is how many answers are computed at once (default
	// GOMAXPROCS); MaxQueued how many more may wait for a slot (default
	// 256) until Timeout. Beyond that, requests get 503 with Retry-After.
	MaxPlans, MaxQueued int
	// AllowModelFiles lets a model reference name a file or directory on
	// the server (a GGUF, a config.json). Off by default: models are
	// catalog ids or name fragments only.
	AllowModelFiles bool
	// AllowRemoteModels lets a model reference name a repository on the
	// Hugging Face Hub or a tag in the Ollama registry (the application
	// layer must have been opened with Options.Remote).
	AllowRemoteModels bool
	// Logger receives one line per request (method, path, status,
	// duration); nil discards them.
	Logger *slog.Logger
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8080"
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 1 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	if c.MaxPlans <= 0 {
		c.MaxPlans = max(runtime.GOMAXPROCS(0), 1)
	}
	if c.MaxQueued < 0 {
		c.MaxQueued = 0
	} else if c.MaxQueued == 0 {
		c.MaxQueued = 256
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// CheckAddr refuses an address that is not host:port, and a non-loopback
// one (an IP other than 127.0.0.0/8 or ::1, a name other than localhost,
// or an empty host, which is every interface) without a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return app.Usagef("address %q: want host:port, e.g. 127.0.0.1:8080", addr)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return app.Usagef("address %q is reachable from other machines: give a --token (or HEADROOM_TOKEN) to serve on it", addr)
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header (host or host:port) names
// this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return isLoopback(strings.Trim(host, "[]"))
}

// Server answers HTTP requests through one application layer.
type Server struct {
	app *app.App
	cfg Config
	lim *limiter
	h   http.Handler
	// table is apiRoutes (held here to break the initialization cycle
	// apiRoutes → openapi → apiRoutes).
	table []route
}

// New builds a server over a (shared, safe for concurrent use) after
// checking cfg's address and token.
func New(a *app.App, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := CheckAddr(cfg.Addr, cfg.Token); err != nil {
		return nil, err
	}
	s := &Server{app: a, cfg: cfg, lim: newLimiter(cfg.MaxPlans, cfg.MaxQueued)}
	s.h = s.routes()
	return s, nil
}

// Handler is the server's whole HTTP handler (API, MCP and page).
func (s *Server) Handler() http.Handler { return s.h }

// Listen opens the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return ln, nil
}

// Serve answers on ln until ctx ends, then shuts down gracefully: no new
// connections, and requests in flight get up to 10 s to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.cfg.Timeout + 15*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- hs.Shutdown(sctx)
	}()
	err := hs.Serve(ln)
	if !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	}
	return <-done
}

// limiter bounds the answers computed at once, and the requests waiting.
type limiter struct {
	slots    chan struct{}
	waiting  atomic.Int64
	maxQueue int64
}

func newLimiter(slots, queue int) *limiter {
	return &limiter{slots: make(chan struct{}, slots), maxQueue: int64(queue)}
}

// acquire takes a slot, waiting while the queue has room and ctx lasts;
// errBusy when the queue is full or ctx ends first.
func (l *limiter) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	if l.waiting.Add(1) > l.maxQueue {
		l.waiting.Add(-1)
		return errBusy
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errBusy
	}
}

// release frees a slot acquire took.
func (l *limiter) release() { <-l.slots }

// result is an answer (or error) computed under the limiter.
type result struct {
	status int
	body   any
	err    error
}

// compute runs fn under the limiter with the request time limit. fn keeps
// its slot until it returns, even after the caller has given up, so that
// at most MaxPlans answers are ever in memory at once. A panic in fn is
// an error, not a crash.
func (s *Server) compute(ctx context.Context, fn func(context.Context) (int, any, error)) result {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.lim.acquire(ctx); err != nil {
		return result{err: err}
	}
	done := make(chan result, 1)
	go func() {
		defer s.lim.release()
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("internal error: %v", p)}
			}
		}()
		st, body, err := fn(ctx)
		done <- result{status: st, body: body, err: err}
	}()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		return result{err: fmt.Errorf("no answer within %s: %w", s.cfg.Timeout, context.DeadlineExceeded)}
	}
}

// authorized checks the bearer token in constant time (always true when
// no token is configured).
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// statusWriter records the status a handler wrote, for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logged logs each request's method, path (no query), status and
// duration: never a header, so never the token.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		s.cfg.Logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "ms", time.Since(start).Milliseconds())
	})
}

// guarded requires the token and bounds the body. Without a token it also
// requires a loopback Host header, so that a web page whose name was made
// to resolve to 127.0.0.1 (DNS rebinding) cannot read the answers.
func (s *Server) guarded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token == "" && !loopbackHost(r.Host) {
			writeError(w, withStatus(http.StatusForbidden, fmt.Errorf("host %q is not this machine's loopback name; serve with --token to answer other hosts", r.Host)))
			return
		}
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="headroom"`)
			writeError(w, withStatus(http.StatusUnauthorized, errors.New("missing or wrong token: send Authorization: Bearer TOKEN")))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		h.ServeHTTP(w, r)
	})
}
