package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-planner/headroom/internal/redact"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// StepError is the error of one step of a calibration run: which step, which
// request, and what went wrong.
type StepError struct {
	Step   string // "detect", "warm-up", "prefill 256 tokens", "decode at concurrency 4"
	Method string // GET or POST
	URL    string // the request URL, without user information
	Err    error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("%s: %s %s: %v", e.Step, e.Method, e.URL, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Status int
	Body   string // the start of the body, for the message
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("server answered %d %s", e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Errors the client reports as causes (wrapped in a StepError).
var (
	// ErrRequestTimeout means a request did not complete within
	// Options.RequestTimeout.
	ErrRequestTimeout = errors.New("request timed out")
	// ErrWrongContent means the server answered 2xx with a body that is not
	// the stream the API defines (an HTML page, a plain JSON body).
	ErrWrongContent = errors.New("unexpected content type")
	// errBudget cancels requests in flight when the run's budget is spent.
	errBudget = errors.New("calibration budget spent")
)

// client sends the requests of a run to one server.
type client struct {
	base    *url.URL
	http    *http.Client
	apiKey  string
	secrets []string      // the API key and the URL's password: never printed
	stall   time.Duration // longest silence once a response has started
	reqTO   time.Duration // longest request
}

// newClient parses the base URL: scheme and host, an optional path prefix
// (a proxy's), and a trailing /v1, which it drops.
func newClient(opt Options) (*client, error) {
	u, err := url.Parse(strings.TrimRight(opt.URL, "/"))
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redactURL(opt.URL), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http://host:port or https://host:port", redactURL(opt.URL))
	}
	// "http://host:8000/v1" is the base URL OpenAI clients want; the API
	// paths here include /v1 themselves.
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	hc := opt.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	return &client{base: u, http: hc, apiKey: opt.APIKey, secrets: secrets(opt), stall: opt.StallTimeout, reqTO: opt.RequestTimeout}, nil
}

// defaultHTTPClient dials with a short timeout and leaves the request's
// timing to contexts; enough idle connections for 16 concurrent streams.
func defaultHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// secrets are the credentials of opt that must never be printed or saved:
// the API key and the password of the URL's user information.
func secrets(opt Options) []string {
	out := []string{opt.APIKey}
	if u, err := url.Parse(opt.URL); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		out = append(out, pw, u.User.Username())
	}
	return out
}

// requestURL joins the base URL (with its query, which may carry a
// credential the server wants) and an API path, without user information
// (sent as basic auth instead).
func (c *client) requestURL(path string) string {
	u := *c.base
	u.User = nil
	u.Path = strings.TrimRight(u.Path, "/") + path
	return u.String()
}

// endpointURL is requestURL for messages: no user information and every
// query value redacted.
func (c *client) endpointURL(path string) string {
	return redact.URL(c.requestURL(path))
}

// redactURL removes user information and query values from a URL for
// messages and saved files.
func redactURL(raw string) string { return redact.URL(raw) }

func (c *client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.requestURL(path), r)
	if err != nil {
		return nil, err
	}
	if c.base.User != nil {
		pw, _ := c.base.User.Password()
		req.SetBasicAuth(c.base.User.Username(), pw)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// getJSON fetches a small JSON document (engine detection). A non-2xx answer
// is an *HTTPError; timeout bounds the whole exchange.
func (c *client) getJSON(ctx context.Context, step, path string, body any, timeout time.Duration, out any) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrRequestTimeout)
	defer cancel()
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	fail := func(err error) error {
		return &StepError{Step: step, Method: method, URL: c.endpointURL(path), Err: err}
	}
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return fail(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fail(transportError(ctx, err, timeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fail(c.httpError(resp))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fail(transportError(ctx, err, timeout))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fail(fmt.Errorf("%w: not JSON (%v): %q", ErrWrongContent, err, clip(b)))
	}
	return nil
}

// httpError reads the start of a non-2xx body into an *HTTPError. A server
// may echo the credentials it refused (a 401 quoting the key): they are
// redacted, and control characters escaped, before the body is kept.
func (c *client) httpError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	body := strings.TrimSpace(string(b))
	body = strings.Join(strings.Fields(body), " ")
	body = textsafe.Printable(redact.String(body, c.secrets...), 512)
	return &HTTPError{Status: resp.StatusCode, Body: body}
}

// transportError turns what net/http returns into a cause that says what
// happened: the stall or request timeout that cancelled the request, a
// refused connection, or the caller's cancellation.
func transportError(ctx context.Context, err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrStalled):
		return cause
	case errors.Is(cause, ErrRequestTimeout):
		return fmt.Errorf("%w: no complete answer within %v", ErrRequestTimeout, timeout)
	case errors.Is(cause, errBudget):
		return cause
	case cause != nil:
		return cause // the caller cancelled (Ctrl-C): context.Canceled
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("connection refused, is the server running at this address? (%w)", err)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%w: connection closed mid-response (%v)", ErrTruncatedStream, err)
	}
	return err
}

// genRequest is one generation request of a run.
type genRequest struct {
	Step   string
	Prompt string
	MaxGen int           // tokens to generate
	Stall  time.Duration // silence allowed before the first byte; 0 means the client's stall timeout
}

// stream sends one streaming generation request over api and measures it
// on the client, and from the server's own counts and timings where the
// API gives them.
func (c *client) stream(ctx context.Context, api API, eng planner.EngineID, model string, g genRequest) (Request, error) {
	path := api.path()
	fail := func(err error) (Request, error) {
		return Request{}, &StepError{Step: g.Step, Method: http.MethodPost, URL: c.endpointURL(path), Err: err}
	}
	ctx, cancelTO := context.WithTimeoutCause(ctx, c.reqTO, ErrRequestTimeout)
	defer cancelTO()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := g.Stall
	if first <= 0 {
		first = c.stall
	}
	dog := newWatchdog(first, c.stall, func(d time.Duration) {
		cancel(fmt.Errorf("%w: no data for %v", ErrStalled, d))
	})
	defer dog.stop()

	req, err := c.newRequest(ctx, http.MethodPost, path, api.body(eng, model, g.Prompt, g.MaxGen))
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return fail(transportError(ctx, err, c.reqTO))
	}
	defer resp.Body.Close()
	dog.kick()
	if resp.StatusCode/100 != 2 {
		return fail(c.httpError(resp))
	}
	if err := checkContentType(resp, api); err != nil {
		return fail(err)
	}
	m := meter{start: start}
	body := &kickReader{r: resp.Body, dog: dog}
	if api.ndjson() {
		err = readNDJSON(body, m.add)
	} else {
		err = readSSE(body, func(data []byte) (bool, error) {
			ch, err := decodeSSEData(data)
			if err != nil {
				return false, err
			}
			return ch.Done, m.add(ch)
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			err = transportError(ctx, err, c.reqTO)
		} else if !errors.Is(err, ErrMalformedStream) && !errors.Is(err, ErrTruncatedStream) {
			err = transportError(ctx, err, c.reqTO)
		}
		return fail(err)
	}
	return m.result(time.Now()), nil
}

// checkContentType refuses a 2xx answer that is not a stream: an HTML page
// from a proxy, or a plain JSON body from a server that ignored stream:true.
func checkContentType(resp *http.Response, api API) error {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return nil // let the parser judge
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("%w %q", ErrWrongContent, ct)
	}
	want := []string{"text/event-stream"}
	if api.ndjson() {
		want = []string{"application/x-ndjson", "application/ndjson", "application/jsonl"}
	}
	for _, w := range want {
		if mt == w {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return fmt.Errorf("%w %q, want %s: %q", ErrWrongContent, mt, strings.Join(want, " or "), clip(b))
}

// meter collects the client-side timing of one stream and the server's
// counts and timings.
type meter struct {
	start       time.Time
	first, last time.Time // first and last chunk carrying a generated token
	gaps        []time.Duration
	chunks      int
	final       chunk // counts and timings, last stated value wins
	sawAny      time.Time
}

func (m *meter) add(c chunk) error {
	now := time.Now()
	if m.sawAny.IsZero() {
		m.sawAny = now
	}
	if c.Tokens > 0 {
		if m.first.IsZero() {
			m.first = now
		} else {
			m.gaps = append(m.gaps, now.Sub(m.last))
		}
		m.last = now
		m.chunks += c.Tokens
	}
	if c.PromptTokens >= 0 {
		m.final.PromptTokens = c.PromptTokens
	}
	if c.GenTokens >= 0 {
		m.final.GenTokens = c.GenTokens
	}
	if c.Prefill > 0 || c.Decode > 0 {
		m.final.PrefillTokens, m.final.Prefill = c.PrefillTokens, c.Prefill
		m.final.DecodeTokens, m.final.Decode = c.DecodeTokens, c.Decode
	}
	return nil
}

// result turns the collected times into a Request. Generated tokens are the
// server's count when it gave one (a chunk may carry several tokens, or
// none for a partial UTF-8 sequence), else the chunks with text.
func (m *meter) result(end time.Time) Request {
	r := Request{Elapsed: end.Sub(m.start)}
	gen := m.chunks
	if m.final.GenTokens > 0 {
		gen = m.final.GenTokens
	}
	if m.final.PromptTokens > 0 {
		r.PromptTokens = planner.Tokens(m.final.PromptTokens)
	}
	r.GenTokens = planner.Tokens(gen)
	firstAt := m.first
	if firstAt.IsZero() {
		firstAt = m.sawAny // no text at all (e.g. an immediate end of sequence)
	}
	if !firstAt.IsZero() {
		r.TTFT = firstAt.Sub(m.start)
	}
	if gen > 1 && m.last.After(m.first) {
		r.TPOT = m.last.Sub(m.first) / time.Duration(gen-1)
	}
	r.ITL = median(m.gaps)
	r.ServerPrefillTokens, r.ServerPrefill = planner.Tokens(m.final.PrefillTokens), m.final.Prefill
	r.ServerDecodeTokens, r.ServerDecode = planner.Tokens(m.final.DecodeTokens), m.final.Decode
	r.decodeFrom, r.decodeTo = m.first, m.last
	return r
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// watchdog calls fire when no kick came for the allowed silence: first
// before the response starts, then stall between reads.
type watchdog struct {
	mu      sync.Mutex
	t       *time.Timer
	stall   time.Duration
	armed   time.Duration // the silence the timer now allows
	stopped bool
}

func newWatchdog(first, stall time.Duration, fire func(silence time.Duration)) *watchdog {
	w := &watchdog{stall: stall, armed: first}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = time.AfterFunc(first, func() {
		w.mu.Lock()
		stopped, d := w.stopped, w.armed
		w.mu.Unlock()
		if !stopped {
			fire(d)
		}
	})
	return w
}

// kick restarts the timer with the stall timeout.
func (w *watchdog) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.armed = w.stall
		w.t.Reset(w.stall)
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}

// kickReader kicks the watchdog whenever bytes arrive.
type kickReader struct {
	r   io.Reader
	dog *watchdog
}

func (k *kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.dog.kick()
	}
	return n, err
}
