package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// ErrorJSON is the body of every error response.
type ErrorJSON struct {
	Error       string   `json:"error"`
	Suggestions []string `json:"suggestions,omitempty"`
}

// errBusy is returned when every plan slot is taken and the queue is full.
var errBusy = errors.New("server busy: too many requests being answered; retry shortly")

// httpError is an error with the status it is sent with.
type httpError struct {
	status int
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// withStatus gives err an HTTP status.
func withStatus(status int, err error) error { return &httpError{status: status, err: err} }

// statusOf maps an error to its HTTP status: an explicit one, 404 for an
// unknown catalog id, 400 for other input errors, 422 for a configuration
// that cannot run, 503 when busy or out of time, else 500.
func statusOf(err error) int {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.status
	case app.IsNotFound(err):
		return http.StatusNotFound
	case errors.Is(err, app.ErrUsage):
		return http.StatusBadRequest
	case errors.Is(err, app.ErrNoFit):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errBusy), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errorBody is err as ErrorJSON, with the closest catalog names of an
// unknown or ambiguous id as suggestions.
func errorBody(err error) ErrorJSON {
	b := ErrorJSON{Error: err.Error()}
	var nf *planner.NotFoundError
	var amb *planner.AmbiguousError
	switch {
	case errors.As(err, &nf):
		b.Suggestions = nf.Suggestions
	case errors.As(err, &amb):
		b.Suggestions = amb.Matches
	}
	return b
}
