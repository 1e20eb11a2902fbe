package gguf

import (
	"bufio"
	"io"
)

// TensorInfo names a tensor's type and shape (ggml order) without its data.
type TensorInfo struct {
	Name  string
	Type  string
	Shape []int64
}

// WriteHeader writes only the head of a GGUF v3 file: the metadata in kv,
// the tensor infos laid out as Write lays them out, and the padding up to
// the data section. It returns the size the complete file has, so that a
// test server can serve a file of that size whose tensor data it never
// holds (readers of the header check tensor extents against the size).
func WriteHeader(out io.Writer, kv []KV, tensors []TensorInfo) (fileSize int64, err error) {
	w := &writer{w: bufio.NewWriterSize(out, 1<<20)}
	_, _, data, err := w.header(kv, tensors)
	if err != nil {
		return 0, err
	}
	return w.n + data, w.w.Flush()
}
