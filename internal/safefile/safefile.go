// Package safefile opens files named by the user or found in a directory
// without trusting what they are: a FIFO, a device (/dev/urandom, /dev/zero)
// or a directory is refused before anything is read, so a read never blocks
// forever or grows without bound, and a regular file larger than the
// caller's cap is refused with its size.
//
// Open opens with O_NONBLOCK where the platform has it, so opening a FIFO
// with no writer returns at once; it then checks the open file (fstat, not
// the path, so a swap between check and open is caught).
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular means the path is a FIFO, socket, device or directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge means the file is larger than the caller allows.
var ErrTooLarge = errors.New("file is too large")

// Open opens path for reading if it is a regular file of at most maxBytes
// bytes (maxBytes ≤ 0: any size). Symbolic links are followed; what they
// point to must be a regular file. The caller closes the file.
func Open(path string, maxBytes int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	if maxBytes > 0 && fi.Size() > maxBytes {
		f.Close()
		return nil, fmt.Errorf("open %s: %w: %d bytes, the limit is %d", path, ErrTooLarge, fi.Size(), maxBytes)
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return f, nil
}

// ReadFile reads a regular file of at most maxBytes bytes (maxBytes must be
// positive). A file that grows past the cap while being read is refused too.
func ReadFile(path string, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("read %s: safefile.ReadFile needs a positive size cap, got %d", path, maxBytes)
	}
	f, err := Open(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("read %s: %w: more than %d bytes", path, ErrTooLarge, maxBytes)
	}
	return b, nil
}

// kind names a non-regular file type for messages.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "type " + m.Type().String()
}
