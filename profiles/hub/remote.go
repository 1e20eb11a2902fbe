package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// maxStep bounds how far one growth reads ahead of what was asked, so
// that the bytes read past a header stay below it.
const maxStep = 1 << 20

// remoteFile is an io.ReaderAt over the start of a remote file: it keeps
// the prefix received so far and, when a parser reads past it, asks for
// more by a Range request, doubling the prefix (by at most maxStep) within
// the file's byte cap. It never reads more than maxStep past what the parser
// asks for, so the weights after a header are not fetched.
type remoteFile struct {
	s    *session
	ctx  context.Context
	url  string
	t    target
	b    *budget
	buf  []byte
	size int64 // -1 until known
	hi   int64 // the furthest byte a reader asked for
	// first is the size of the first request.
	first int64
	// err is the first failure, returned by every later read.
	err error
}

// newRemoteFile prepares to read url; size is the file's size if known
// (from the Hub's file list or a manifest), else -1.
func (s *session) newRemoteFile(ctx context.Context, u string, t target, size, first int64) *remoteFile {
	b := s.newBudget(t.name)
	b.size = size
	return &remoteFile{s: s, ctx: ctx, url: u, t: t, b: b, size: size, first: first}
}

// cachedFile is a remoteFile that holds a cached prefix and cannot grow.
func cachedFile(prefix []byte, size int64, name string) *remoteFile {
	return &remoteFile{buf: prefix, size: size, t: target{name: name}}
}

// ReadAt implements io.ReaderAt.
func (f *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	end := off + int64(len(p))
	if f.size >= 0 && end > f.size {
		end = f.size
	}
	f.hi = max(f.hi, end)
	if end > int64(len(f.buf)) {
		if err := f.grow(end); err != nil {
			return 0, err
		}
	}
	if off >= int64(len(f.buf)) {
		return 0, io.EOF
	}
	n := copy(p, f.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// grow extends the prefix to at least end bytes.
func (f *remoteFile) grow(end int64) error {
	if f.err != nil {
		return f.err
	}
	if f.s == nil {
		f.err = fmt.Errorf("%s: %w: the cached header is shorter than the reader needs", f.t.name, ErrOffline)
		return f.err
	}
	have := int64(len(f.buf))
	want := max(end, min(2*have, have+maxStep), f.first)
	if f.size >= 0 {
		want = min(want, f.size)
	}
	r, err := f.s.get(f.ctx, f.url, f.t, have, want-have, want-have, f.b)
	if err != nil {
		f.err = err
		return err
	}
	if r.total >= 0 {
		f.size = r.total
	}
	f.buf = append(f.buf, r.body...)
	if int64(len(f.buf)) < end && f.size < 0 {
		f.size = int64(len(f.buf)) // the server ended the file
	}
	return nil
}

// prefix is what a reader used, for the cache.
func (f *remoteFile) prefix() []byte { return f.buf[:min(f.hi, int64(len(f.buf)))] }
