package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// GGUF value types (ggml/src/gguf.cpp, enum gguf_type).
const (
	typeUint8 uint32 = iota
	typeInt8
	typeUint16
	typeInt16
	typeUint32
	typeInt32
	typeFloat32
	typeBool
	typeString
	typeArray
	typeUint64
	typeInt64
	typeFloat64
	typeCount
)

// magic is "GGUF" read as a little-endian uint32.
const magic = 0x46554747

// version is the GGUF version the writer emits.
const version = 3

// defaultAlignment is GGUF_DEFAULT_ALIGNMENT (ggml/src/gguf.cpp).
const defaultAlignment = 32

// KV is one metadata key-value pair. Value must be one of the GGUF scalar
// types as a sized Go type (uint8, int8, uint16, int16, uint32, int32,
// uint64, int64, float32, float64, bool, string) or a slice of one of them;
// a plain int is refused because llama.cpp checks the stored type exactly.
type KV struct {
	Key   string
	Value any
}

// TensorData is one tensor to write: its name, ggml type name (F32, F16,
// Q8_0, Q4_K ...), shape in ggml order (Shape[0] is the row length and must
// be a multiple of the type's block size) and its encoded bytes, whose
// length must equal the type's exact size for that shape.
type TensorData struct {
	Name  string
	Type  string
	Shape []int64
	Data  []byte
}

// TensorBytes returns the exact byte size of a tensor of ggml type typ and
// shape (ggml order): Shape[0]/block × bytes per block × the other
// dimensions. It fails for an unknown type or a row that is not a multiple of
// the block size.
func TensorBytes(typ string, shape []int64) (int64, error) {
	_, t, ok := typeByName(typ)
	if !ok {
		return 0, fmt.Errorf("unknown ggml type %q", typ)
	}
	ne, err := dims(shape)
	if err != nil {
		return 0, err
	}
	_, size, err := tensorSize(t, ne)
	return size, err
}

// dims converts a shape to ggml's unsigned dimensions.
func dims(shape []int64) ([]uint64, error) {
	if len(shape) == 0 || len(shape) > maxDims {
		return nil, fmt.Errorf("shape %v must have 1 to %d dimensions", shape, maxDims)
	}
	ne := make([]uint64, len(shape))
	for i, d := range shape {
		if d <= 0 {
			return nil, fmt.Errorf("shape %v has a dimension below 1", shape)
		}
		ne[i] = uint64(d)
	}
	return ne, nil
}

// Write writes a complete GGUF v3 file: the metadata in kv (in order), the
// tensor infos, and each tensor's data padded to the alignment
// (general.alignment when kv sets it as a uint32, else 32).
func Write(w io.Writer, kv []KV, tensors []TensorData) error {
	infos := make([]tensorInfo, len(tensors))
	for i, t := range tensors {
		infos[i] = tensorInfo{Name: t.Name, Type: t.Type, Shape: t.Shape}
	}
	return writeFile(w, kv, infos, func(i int, size int64, w io.Writer) error {
		if int64(len(tensors[i].Data)) != size {
			return fmt.Errorf("tensor %q: %d data bytes, its type and shape need %d", tensors[i].Name, len(tensors[i].Data), size)
		}
		_, err := w.Write(tensors[i].Data)
		return err
	})
}

// tensorInfo is what the writer needs to lay a tensor out: the exported
// TensorInfo that WriteHeader takes.
type tensorInfo = TensorInfo

// fillFunc writes the size bytes of tensor i.
type fillFunc func(i int, size int64, w io.Writer) error

// writeFile writes header, tensor infos and data; fill produces each
// tensor's bytes so that large tensors need not be held in memory together.
func writeFile(out io.Writer, kv []KV, infos []tensorInfo, fill fillFunc) error {
	w := &writer{w: bufio.NewWriterSize(out, 1<<20)}
	align, sizes, _, err := w.header(kv, infos)
	if err != nil {
		return err
	}
	for i := range infos {
		if w.err != nil {
			return w.err
		}
		start := w.n
		if err := fill(i, sizes[i], w); err != nil {
			return fmt.Errorf("write tensor %q: %w", infos[i].Name, err)
		}
		if w.err == nil && w.n-start != sizes[i] {
			return fmt.Errorf("write tensor %q: wrote %d bytes, want %d", infos[i].Name, w.n-start, sizes[i])
		}
		w.pad(align)
	}
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// header writes the magic, version, metadata kv, the tensor infos and the
// padding up to the data section (the part WriteHeader and writeFile
// share). It returns the alignment, each tensor's size and the size of
// the data section.
func (w *writer) header(kv []KV, infos []tensorInfo) (align int64, sizes []int64, data int64, err error) {
	align, err = alignmentOf(kv)
	if err != nil {
		return 0, nil, 0, err
	}
	sizes, ids, err := layout(infos)
	if err != nil {
		return 0, nil, 0, err
	}
	w.u32(magic)
	w.u32(version)
	w.u64(uint64(len(infos)))
	w.u64(uint64(len(kv)))
	for _, p := range kv {
		if err := w.kv(p); err != nil {
			return 0, nil, 0, err
		}
	}
	for i, t := range infos {
		w.str(t.Name)
		w.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			w.u64(uint64(d))
		}
		w.u32(ids[i])
		w.u64(uint64(data))
		data += pad(sizes[i], align)
	}
	w.pad(align)
	return align, sizes, data, w.err
}

// layout validates every tensor and returns its byte size and type id.
func layout(infos []tensorInfo) ([]int64, []uint32, error) {
	sizes := make([]int64, len(infos))
	ids := make([]uint32, len(infos))
	seen := make(map[string]bool, len(infos))
	for i, t := range infos {
		if seen[t.Name] {
			return nil, nil, fmt.Errorf("tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
		id, _, ok := typeByName(t.Type)
		if !ok {
			return nil, nil, fmt.Errorf("tensor %q: unknown ggml type %q", t.Name, t.Type)
		}
		size, err := TensorBytes(t.Type, t.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		sizes[i], ids[i] = size, id
	}
	return sizes, ids, nil
}

// alignmentOf returns general.alignment from kv, or the default.
func alignmentOf(kv []KV) (int64, error) {
	for _, p := range kv {
		if p.Key != "general.alignment" {
			continue
		}
		a, ok := p.Value.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			return 0, fmt.Errorf("general.alignment must be a uint32 power of two, got %v (%T)", p.Value, p.Value)
		}
		return int64(a), nil
	}
	return defaultAlignment, nil
}

// pad rounds n up to a multiple of align (GGML_PAD).
func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// writer writes little-endian GGUF primitives, keeping the first error and
// the byte count.
type writer struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

// Write implements io.Writer so fill functions can write tensor data.
func (w *writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.n += int64(n)
	w.err = err
	return n, err
}

func (w *writer) bytes(p []byte) { _, _ = w.Write(p) }

func (w *writer) u8(v uint8) { w.bytes([]byte{v}) }

func (w *writer) u16(v uint16) {
	binary.LittleEndian.PutUint16(w.buf[:2], v)
	w.bytes(w.buf[:2])
}

func (w *writer) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.bytes(w.buf[:4])
}

func (w *writer) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.bytes(w.buf[:8])
}

func (w *writer) str(s string) {
	w.u64(uint64(len(s)))
	w.bytes([]byte(s))
}

// pad writes zero bytes up to the next multiple of align.
func (w *writer) pad(align int64) {
	if n := pad(w.n, align) - w.n; n > 0 {
		w.bytes(make([]byte, n))
	}
}

// kv writes one metadata pair.
func (w *writer) kv(p KV) error {
	if p.Key == "" {
		return errors.New("metadata key is empty")
	}
	typ, ok := valueType(p.Value)
	if !ok {
		return fmt.Errorf("metadata %q: unsupported value type %T", p.Key, p.Value)
	}
	w.str(p.Key)
	w.u32(typ)
	w.value(p.Value)
	return nil
}

// valueType maps a Go value to its GGUF type.
func valueType(v any) (uint32, bool) {
	switch v.(type) {
	case uint8:
		return typeUint8, true
	case int8:
		return typeInt8, true
	case uint16:
		return typeUint16, true
	case int16:
		return typeInt16, true
	case uint32:
		return typeUint32, true
	case int32:
		return typeInt32, true
	case float32:
		return typeFloat32, true
	case bool:
		return typeBool, true
	case string:
		return typeString, true
	case uint64:
		return typeUint64, true
	case int64:
		return typeInt64, true
	case float64:
		return typeFloat64, true
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []float32,
		[]bool, []string, []uint64, []int64, []float64:
		return typeArray, true
	}
	return 0, false
}

// value writes a scalar or an array whose type valueType accepted.
func (w *writer) value(v any) {
	switch x := v.(type) {
	case uint8:
		w.u8(x)
	case int8:
		w.u8(uint8(x))
	case uint16:
		w.u16(x)
	case int16:
		w.u16(uint16(x))
	case uint32:
		w.u32(x)
	case int32:
		w.u32(uint32(x))
	case float32:
		w.u32(math.Float32bits(x))
	case bool:
		w.u8(boolByte(x))
	case string:
		w.str(x)
	case uint64:
		w.u64(x)
	case int64:
		w.u64(uint64(x))
	case float64:
		w.u64(math.Float64bits(x))
	default:
		w.array(v)
	}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// array writes an array header and its elements.
func (w *writer) array(v any) {
	switch x := v.(type) {
	case []uint8:
		writeArray(w, typeUint8, x)
	case []int8:
		writeArray(w, typeInt8, x)
	case []uint16:
		writeArray(w, typeUint16, x)
	case []int16:
		writeArray(w, typeInt16, x)
	case []uint32:
		writeArray(w, typeUint32, x)
	case []int32:
		writeArray(w, typeInt32, x)
	case []float32:
		writeArray(w, typeFloat32, x)
	case []bool:
		writeArray(w, typeBool, x)
	case []string:
		writeArray(w, typeString, x)
	case []uint64:
		writeArray(w, typeUint64, x)
	case []int64:
		writeArray(w, typeInt64, x)
	case []float64:
		writeArray(w, typeFloat64, x)
	}
}

func writeArray[T any](w *writer, typ uint32, xs []T) {
	w.u32(typ)
	w.u64(uint64(len(xs)))
	for _, x := range xs {
		w.value(x)
	}
}
