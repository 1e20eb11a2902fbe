//go:build !unix

package calibrate

import "errors"

// mkfifo fails where there are no named pipes; the tests that need one
// skip on its error.
func mkfifo(string, uint32) error { return errors.New("no named pipes on this OS") }
