package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// session is one resolution: its options, HTTP client, cache and the
// bytes received so far.
type session struct {
	opt     Options
	client  *http.Client
	hubHost string
	cache   Cache
	// mu guards refRead and serialises OnProgress calls: shard headers
	// are read by several goroutines.
	mu      sync.Mutex
	refRead int64
}

// newSession prepares a resolution.
func newSession(opt Options) (*session, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	hub, _ := url.Parse(opt.Endpoint)
	s := &session{opt: opt, hubHost: hub.Host, cache: Cache{Dir: opt.CacheDir}}
	base := opt.Client
	if base == nil {
		dialer := &net.Dialer{Timeout: opt.ConnectTimeout}
		base = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   opt.ConnectTimeout,
			ResponseHeaderTimeout: opt.StallTimeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
		}}
	}
	c := *base
	c.CheckRedirect = s.checkRedirect
	s.client = &c
	return s, nil
}

// checkRedirect follows up to 10 redirects and drops the token whenever
// the next hop is not the Hub's own host (LFS files redirect to a CDN).
func (s *session) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Host != s.hubHost {
		req.Header.Del("Authorization")
	}
	return nil
}

// target says what a request is for, so that refusals name it.
type target struct {
	repo string // ORG/NAME or NS/NAME
	what string // "repository", "revision", "file", "tag"
	name string
	hub  bool // a Hub request (token, X-Error-Code)
	// accept is the Accept header, when one is needed.
	accept string
}

// budget counts the bytes received for one file against its cap.
type budget struct {
	name string
	read int64
	max  int64
	size int64 // the file's size when known, for progress; -1 unknown
}

// newBudget starts a file's count.
func (s *session) newBudget(name string) *budget {
	return &budget{name: name, max: int64(s.opt.MaxFileBytes), size: -1}
}

// reply is a response body read within the caps.
type reply struct {
	status int
	body   []byte
	// total is the whole file's size (Content-Range, or Content-Length of
	// a 200), -1 when unknown.
	total int64
	// start is the file offset of body[0].
	start int64
}

// get requests u, optionally with Range bytes=off-(off+n-1) (n > 0). A
// whole-file request reads at most limit bytes of the body, a ranged one
// the n bytes asked; a 200 answer to a ranged request (a server that
// ignores Range) is read from the start up to off+n. The rest of a body is
// never received (the connection is closed), and the file's and the
// reference's caps hold throughout.
//
// A busy server (429, 502, 503, 504) is asked again up to twice, after its
// Retry-After (at most maxRetryWait) or 1 then 2 seconds.
func (s *session) get(ctx context.Context, u string, t target, off, n, limit int64, b *budget) (reply, error) {
	if s.opt.Offline {
		return reply{}, fmt.Errorf("%s: %w", t.repo, ErrOffline)
	}
	for attempt := 0; ; attempt++ {
		r, err := s.getOnce(ctx, u, t, off, n, limit, b)
		var he *HTTPError
		if attempt == 2 || !errors.As(err, &he) || !he.busy() {
			return r, err
		}
		wait := he.RetryAfter
		if wait < 0 {
			wait = time.Second << attempt
		}
		select {
		case <-ctx.Done():
			return reply{}, fmt.Errorf("GET %s: %w", u, ctx.Err())
		case <-time.After(min(wait, maxRetryWait)):
		}
	}
}

// maxRetryWait bounds one wait for a busy server.
const maxRetryWait = 10 * time.Second

// getOnce is one request of get.
func (s *session) getOnce(ctx context.Context, u string, t target, off, n, limit int64, b *budget) (reply, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return reply{}, fmt.Errorf("request %s: %w", u, err)
	}
	req.Header.Set("User-Agent", "headroom (metadata only)")
	if t.accept != "" {
		req.Header.Set("Accept", t.accept)
	}
	if n > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	}
	tokenSent := false
	if t.hub && s.opt.Token != "" && req.URL.Host == s.hubHost {
		req.Header.Set("Authorization", "Bearer "+s.opt.Token)
		tokenSent = true
	}
	stall := time.AfterFunc(s.opt.StallTimeout, func() { cancel(ErrStalled) })
	defer stall.Stop()
	resp, err := s.client.Do(req)
	if err != nil {
		return reply{}, s.netError(ctx, u, err)
	}
	defer resp.Body.Close()
	if err := s.statusError(resp, u, t, tokenSent); err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode, total: -1}
	want := limit
	switch {
	case resp.StatusCode == http.StatusPartialContent:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			return reply{}, fmt.Errorf("GET %s: Content-Range %q does not answer bytes=%d-", u, resp.Header.Get("Content-Range"), off)
		}
		r.start, r.total = start, total
		want = min(want, n)
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		_, total, _ := contentRange(resp.Header.Get("Content-Range"))
		r.start, r.total = off, total
		return r, nil
	default:
		r.total = resp.ContentLength
		if n > 0 {
			want = off + n // Range ignored: the prefix comes first
		}
	}
	if b.size < 0 {
		b.size = r.total
	}
	body, err := s.readBody(ctx, resp.Body, want, b, stall)
	if err != nil {
		return reply{}, fmt.Errorf("GET %s: %w", u, s.cause(ctx, err))
	}
	if resp.StatusCode == http.StatusOK && n > 0 {
		body = body[min(off, int64(len(body))):] // skip what a range-ignoring server sent first
		r.start = off
	}
	r.body = body
	return r, nil
}

// readBody reads up to want bytes, counting them against the file's and
// the reference's caps, restarting the stall timer on every read.
func (s *session) readBody(ctx context.Context, body io.Reader, want int64, b *budget, stall *time.Timer) ([]byte, error) {
	var out []byte
	buf := make([]byte, 64<<10)
	for int64(len(out)) < want {
		chunk := buf[:min(int64(len(buf)), want-int64(len(out)))]
		n, err := body.Read(chunk)
		if n > 0 {
			stall.Reset(s.opt.StallTimeout)
			b.read += int64(n)
			out = append(out, chunk[:n]...)
			if b.read > b.max {
				return nil, fmt.Errorf("%s: %w: more than %d bytes received for one file (a server ignoring Range?)", b.name, ErrCapExceeded, b.max)
			}
			if err := s.received(b, int64(n)); err != nil {
				return nil, err
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// received counts n bytes against the reference's cap and reports
// progress.
func (s *session) received(b *budget, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refRead += n
	if s.refRead > int64(s.opt.MaxRefBytes) {
		return fmt.Errorf("%s: %w: more than %d bytes received for one model", b.name, ErrCapExceeded, s.opt.MaxRefBytes)
	}
	if s.opt.OnProgress != nil {
		s.opt.OnProgress(Progress{File: b.name, Read: b.read, Total: b.size, RefRead: s.refRead})
	}
	return nil
}

// bytesRead is what the resolution has received so far.
func (s *session) bytesRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refRead
}

// cause prefers the reason the request's context was cancelled (a stall,
// the caller's cancellation) over the transport's report of it.
func (s *session) cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		if errors.Is(c, ErrStalled) {
			return fmt.Errorf("%w for %s", ErrStalled, s.opt.StallTimeout)
		}
		return c
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the connection closed before the body ended (truncated): %w", err)
	}
	return err
}

// netError describes a request that got no response.
func (s *session) netError(ctx context.Context, u string, err error) error {
	return fmt.Errorf("GET %s: %w", u, s.cause(ctx, err))
}

// statusError maps a refusal to a typed error. The Hub says what is
// missing or gated in X-Error-Code (huggingface_hub utils/_http.py
// hf_raise_for_status); without it, 401 on the Hub means gated, private or
// absent (the Hub does not tell anonymous callers which).
func (s *session) statusError(resp *http.Response, u string, t target, tokenSent bool) error {
	if resp.StatusCode < 300 || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil
	}
	code := resp.Header.Get("X-Error-Code")
	page := s.opt.Endpoint + "/" + t.repo
	switch {
	case code == "RepoNotFound" && tokenSent:
		return &NotFoundError{What: "repository", Name: t.repo, Hint: "check the spelling; the token has no access to a private repository of that name"}
	case code == "RepoNotFound":
		return &NotFoundError{What: "repository", Name: t.repo, Hint: "check the spelling, or set HF_TOKEN if it is private"}
	case code == "RevisionNotFound":
		return &NotFoundError{What: "revision", Name: t.name, Repo: t.repo}
	case code == "EntryNotFound":
		return &NotFoundError{What: "file", Name: t.name, Repo: t.repo}
	case code == "GatedRepo":
		return &AuthError{Repo: t.repo, Status: resp.StatusCode, Page: page, TokenSent: tokenSent, Gated: true}
	case t.hub && req(resp).Host == s.hubHost && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return &AuthError{Repo: t.repo, Status: resp.StatusCode, Page: page, TokenSent: tokenSent}
	case resp.StatusCode == http.StatusNotFound:
		return &NotFoundError{What: t.what, Name: t.name, Repo: t.repo}
	}
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		msg = strings.TrimSpace(string(b))
	}
	he := &HTTPError{URL: u, Status: resp.StatusCode, Message: msg, RetryAfter: -1}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
		he.RetryAfter = time.Duration(secs) * time.Second
	}
	return he
}

// req is the request that produced resp (the last hop of redirects).
func req(resp *http.Response) *url.URL {
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL
	}
	return &url.URL{}
}

// contentRange parses "bytes START-END/TOTAL" (TOTAL may be "*": -1), or
// "bytes */TOTAL" of a 416.
func contentRange(v string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, -1, false
	}
	span, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, -1, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t < 0 {
			return 0, -1, false
		}
		total = t
	}
	if span == "*" {
		return 0, total, true
	}
	a, _, found := strings.Cut(span, "-")
	if !found {
		return 0, -1, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return 0, -1, false
	}
	return start, total, true
}
