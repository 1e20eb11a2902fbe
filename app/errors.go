package app

import (
	"errors"
	"fmt"

	"github.com/headroom-planner/headroom/planner"
)

// Sentinel errors front ends map to exit codes and HTTP statuses.
var (
	// ErrUsage marks input the user must correct: an unknown id, a bad
	// value, a missing field (CLI exit 2, HTTP 400; 404 for unknown ids,
	// see IsNotFound).
	ErrUsage = errors.New("bad input")
	// ErrNoFit marks a configuration that cannot run as asked (CLI exit 3,
	// HTTP 422).
	ErrNoFit = errors.New("does not fit")
)

// usageError wraps err so that errors.Is(err, ErrUsage) holds while the
// message stays err's.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() []error {
	return []error{e.err, ErrUsage}
}

// Usage marks err as the user's to fix (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// Usagef is Usage(fmt.Errorf(format, a...)).
func Usagef(format string, a ...any) error { return Usage(fmt.Errorf(format, a...)) }

// asUsage marks the catalog's lookup and validation errors as usage errors
// and leaves others alone.
//
// A configuration an engine cannot run (planner.ErrUnsupported: no kernel
// for the format on this device, a release without the feature) is not a
// typo: it is marked ErrNoFit, as a configuration that does not fit, so
// fit, flags and plan answer it alike (exit 3, HTTP 422).
func asUsage(err error) error {
	if errors.Is(err, planner.ErrUnsupported) {
		return noRun(err)
	}
	var nf *planner.NotFoundError
	var amb *planner.AmbiguousError
	if errors.As(err, &nf) || errors.As(err, &amb) || errors.Is(err, planner.ErrInvalid) {
		return Usage(err)
	}
	return err
}

// IsNotFound reports whether err is an unknown catalog id (with the closest
// matches in its message).
func IsNotFound(err error) bool {
	var nf *planner.NotFoundError
	return errors.As(err, &nf)
}

// noRunError wraps err so that errors.Is(err, ErrNoFit) holds.
type noRunError struct{ err error }

func (e *noRunError) Error() string   { return e.err.Error() }
func (e *noRunError) Unwrap() []error { return []error{e.err, ErrNoFit} }

// noRun marks err as a configuration that cannot run (nil stays nil).
func noRun(err error) error {
	if err == nil {
		return nil
	}
	return &noRunError{err}
}
