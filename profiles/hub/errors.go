package hub

import (
	"errors"
	"fmt"
	"time"
)

// ErrOffline says a reference was needed from the network while offline
// (Options.Offline) and the cache does not hold it.
var ErrOffline = errors.New("offline, and the metadata cache does not hold it")

// ErrNoWeights says a repository has neither safetensors weights nor a
// GGUF file that could be read.
var ErrNoWeights = errors.New("no weights found")

// ErrCapExceeded says a read would pass Options.MaxFileBytes or
// Options.MaxRefBytes.
var ErrCapExceeded = errors.New("byte cap reached")

// ErrStalled says a server stopped sending for Options.StallTimeout.
var ErrStalled = errors.New("server stopped sending")

// NotFoundError says the Hub or the registry has no such repository,
// revision, file or tag. Front ends add the closest catalog names.
type NotFoundError struct {
	// What is "repository", "revision", "file", "tag" or "quant".
	What string
	// Name is what was looked for (ORG/NAME, a revision, a file path,
	// NAME:TAG, a quant).
	Name string
	// Repo is the repository (or Ollama model) it was looked for in.
	Repo string
	// Hint says what to try instead; may be empty.
	Hint string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no such %s %s", e.What, e.Name)
	if e.Repo != "" && e.Repo != e.Name {
		msg += " in " + e.Repo
	}
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// AuthError says the Hub refused a repository: 401 or 403, gated (its
// licence must be accepted on its page) or private.
type AuthError struct {
	Repo   string
	Status int
	// Page is the repository's page on the Hub, where a gated licence is
	// accepted.
	Page string
	// TokenSent is whether a token went with the request.
	TokenSent bool
	// Gated is true when the Hub said the repository is gated.
	Gated bool
}

// Error implements error; it says what to do and never holds the token.
func (e *AuthError) Error() string {
	what := "gated or private"
	if e.Gated {
		what = "gated"
	}
	if e.TokenSent {
		return fmt.Sprintf("%s is %s and the token was refused (HTTP %d): accept the licence on %s with the account the token belongs to, or use a token with read access",
			e.Repo, what, e.Status, e.Page)
	}
	return fmt.Sprintf("%s is %s (HTTP %d): accept the licence on %s, then set HF_TOKEN to a read token (or run `hf auth login`)",
		e.Repo, what, e.Status, e.Page)
}

// HTTPError is any other refusal by a server.
type HTTPError struct {
	URL    string
	Status int
	// Message is the server's X-Error-Message or the start of its body.
	Message string
	// RetryAfter is the server's Retry-After in seconds; -1 when it gave
	// none (or gave a date).
	RetryAfter time.Duration
}

// busy reports whether the server asked to be called again later.
func (e *HTTPError) busy() bool {
	switch e.Status {
	case 429, 502, 503, 504:
		return true
	}
	return false
}

// Error implements error.
func (e *HTTPError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("GET %s: HTTP %d: %s", e.URL, e.Status, e.Message)
	}
	return fmt.Sprintf("GET %s: HTTP %d", e.URL, e.Status)
}
