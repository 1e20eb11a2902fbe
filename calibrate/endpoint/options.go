package endpoint

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// Options configure a calibration run. The zero value of every field but
// URL means its default.
type Options struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:11434 (no /v1).
	URL string
	// Engine is the serving engine; empty means detect it from the server.
	Engine planner.EngineID
	// Model is the model to request; empty means the first one the server
	// lists (/v1/models, or /api/tags for Ollama).
	Model string
	// APIKey is sent as "Authorization: Bearer <key>". It is never printed
	// nor saved.
	APIKey string `json:"-"`
	// API picks the endpoint; APIAuto uses the engine's own streaming API
	// where it reports server timings (Ollama, llama-server, TGI) and
	// /v1/completions otherwise, falling back to /v1/chat/completions.
	API API
	// Budget bounds the whole run, detection and warm-up included
	// (default 60 s). Steps that would overrun it are dropped, and the
	// samples say so.
	Budget time.Duration
	// MaxConcurrency caps the decode concurrency sweep 1, 2, 4, 8, 16
	// (default 16). The server's own limit, when it states one, caps it too.
	MaxConcurrency int
	// PromptLengths are the prefill prompt lengths to measure (default 64,
	// 256, 1024 tokens); lengths past the server's context are capped.
	PromptLengths []planner.Tokens
	// GenTokens is the number of tokens each decode request generates
	// (default 64).
	GenTokens planner.Tokens
	// Repeats is the number of measured requests (prefill) or rounds
	// (decode) per step (default 2), after one warm-up request.
	Repeats int
	// RequestTimeout bounds one request (default: the budget).
	RequestTimeout time.Duration
	// StallTimeout is the longest silence allowed in a response once the
	// server has started answering, and before the first byte of any
	// request but the warm-up, which may wait for the model to load
	// (default 15 s).
	StallTimeout time.Duration
	// HTTPClient sends the requests; nil means a client with a 5 s dial
	// timeout.
	HTTPClient *http.Client
}

// Defaults of Options.
const (
	DefaultBudget         = 60 * time.Second
	DefaultMaxConcurrency = 16
	DefaultGenTokens      = 64
	DefaultRepeats        = 2
	DefaultStallTimeout   = 15 * time.Second
)

// DefaultPromptLengths are the prefill prompt lengths of a default run.
var DefaultPromptLengths = []planner.Tokens{64, 256, 1024}

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.URL == "" {
		return o, fmt.Errorf("no server url")
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.MaxConcurrency == 0 {
		o.MaxConcurrency = DefaultMaxConcurrency
	}
	if len(o.PromptLengths) == 0 {
		o.PromptLengths = DefaultPromptLengths
	}
	o.PromptLengths = slices.Clone(o.PromptLengths)
	slices.Sort(o.PromptLengths)
	o.PromptLengths = slices.Compact(o.PromptLengths)
	if o.GenTokens == 0 {
		o.GenTokens = DefaultGenTokens
	}
	if o.Repeats == 0 {
		o.Repeats = DefaultRepeats
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = o.Budget
	}
	switch {
	case o.Budget < 0 || o.RequestTimeout < 0 || o.StallTimeout < 0:
		return o, fmt.Errorf("budget and timeouts must be positive")
	case o.MaxConcurrency < 1:
		return o, fmt.Errorf("max concurrency %d: must be at least 1", o.MaxConcurrency)
	case o.GenTokens < 2:
		return o, fmt.Errorf("gen tokens %d: need at least 2 to time decoding", o.GenTokens)
	case o.Repeats < 1:
		return o, fmt.Errorf("repeats %d: must be at least 1", o.Repeats)
	case o.PromptLengths[0] < 1:
		return o, fmt.Errorf("prompt length %d: must be at least 1", o.PromptLengths[0])
	}
	if _, err := o.API.valid(); err != nil {
		return o, err
	}
	return o, nil
}

// concurrencyLevels are 1, 2, 4, 8, 16 up to limit, ending at limit.
func concurrencyLevels(limit int) []int {
	var out []int
	for c := 1; c <= min(limit, DefaultMaxConcurrency); c *= 2 {
		out = append(out, c)
	}
	if out[len(out)-1] != limit {
		out = append(out, limit)
	}
	return out
}
