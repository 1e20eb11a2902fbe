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
	align, err := alignmentOf(kv)
	if err != nil {
		return 0, err
	}
	infos := make([]tensorInfo, len(tensors))
	for i, t := range tensors {
		infos[i] = tensorInfo(t)
	}
	sizes, ids, err := layout(infos)
	if err != nil {
		return 0, err
	}
	w := &writer{w: bufio.NewWriterSize(out, 1<<20)}
	w.u32(magic)
	w.u32(version)
	w.u64(uint64(len(infos)))
	w.u64(uint64(len(kv)))
	for _, p := range kv {
		if err := w.kv(p); err != nil {
			return 0, err
		}
	}
	var off int64
	for i, t := range infos {
		w.str(t.Name)
		w.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			w.u64(uint64(d))
		}
		w.u32(ids[i])
		w.u64(uint64(off))
		off += pad(sizes[i], align)
	}
	w.pad(align)
	if w.err != nil {
		return 0, w.err
	}
	return w.n + off, w.w.Flush()
}
