package gguf

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// prefixReader holds only the first bytes of a file, as a reader of HTTP
// ranges that has not fetched the tensor data: reads past the prefix end
// there (the header parser's buffer asks for more than it consumes).
type prefixReader struct{ data []byte }

func (p prefixReader) ReadAt(b []byte, off int64) (int, error) {
	if off >= int64(len(p.data)) {
		return 0, io.EOF
	}
	n := copy(b, p.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// TestWriteHeaderMatchesWrite checks that WriteHeader writes exactly the
// head of the file Write writes, and gives its full size.
func TestWriteHeaderMatchesWrite(t *testing.T) {
	data, _ := mixedFile(t)
	full, err := Read(bytes.NewReader(data), int64(len(data)), "mixed.gguf")
	if err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	infos := make([]TensorInfo, len(h.Tensors))
	for i, tn := range h.Tensors {
		shape := make([]int64, len(tn.Shape))
		for j, d := range tn.Shape {
			shape[j] = int64(d)
		}
		infos[i] = TensorInfo{Name: tn.Name, Type: tn.Type.Name, Shape: shape}
	}
	kv := make([]KV, 0, len(h.Keys))
	for _, k := range h.Keys {
		kv = append(kv, KV{Key: k, Value: h.KV[k]})
	}
	var head bytes.Buffer
	size, err := WriteHeader(&head, kv, infos)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(data)) || int64(head.Len()) != h.DataStart || !bytes.Equal(head.Bytes(), data[:h.DataStart]) {
		t.Fatalf("WriteHeader: %d-byte head, size %d; Write: data at %d, %d bytes", head.Len(), size, h.DataStart, len(data))
	}
	// ReadParts over the head alone, with the full size, sees the same
	// model and never reads tensor data.
	m, err := ReadParts([]Part{{Name: "mixed.gguf", R: prefixReader{head.Bytes()}, Size: size}}, "mixed.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if m.FileBytes != full.FileBytes || len(m.Tensors) != len(full.Tensors) || m.FileQuant != full.FileQuant {
		t.Errorf("ReadParts: %d bytes in %d tensors (%s), Read: %d in %d (%s)",
			m.FileBytes, len(m.Tensors), m.FileQuant, full.FileBytes, len(full.Tensors), full.FileQuant)
	}
}

func TestReadPartsErrors(t *testing.T) {
	data, _ := mixedFile(t)
	whole := Part{Name: "a.gguf", R: bytes.NewReader(data), Size: int64(len(data))}
	cases := []struct {
		name  string
		parts []Part
		want  error
	}{
		{"no files", nil, nil},
		{"file shorter than its tensors", []Part{{Name: "a.gguf", R: bytes.NewReader(data), Size: int64(len(data)) - 1}}, ErrTruncated},
		{"same tensors twice", []Part{whole, {Name: "b.gguf", R: bytes.NewReader(data), Size: int64(len(data))}}, nil},
		{"not gguf", []Part{{Name: "x", R: bytes.NewReader([]byte("nope nope nope nope nope")), Size: 24}}, ErrNotGGUF},
		{"reader fails", []Part{{Name: "x", R: prefixReader{data[:8]}, Size: int64(len(data))}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadParts(c.parts, "model")
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("error %v, want one wrapping %v", err, c.want)
			}
		})
	}
}
