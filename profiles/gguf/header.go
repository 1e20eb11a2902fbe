package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// ErrNotGGUF says the input does not start with the GGUF magic.
var ErrNotGGUF = errors.New("not a GGUF file (no GGUF magic)")

// ErrTruncated says the input ends before the header or a tensor's data does.
var ErrTruncated = errors.New("file is truncated")

// Limits on what one header may make the reader hold or loop over. Every
// count is also bounded by the bytes left in the file, so a corrupt count
// fails before it allocates; but a sparse file can claim terabytes, so
// these caps bound memory and time whatever the file's size. Real files
// are far inside them: ~50 keys, a few thousand tensors, a 260k-token
// vocabulary, chat templates of a few KiB.
const (
	maxString      = 64 << 20  // bytes in one metadata string (chat templates are KiB)
	maxKeptBytes   = 128 << 20 // bytes of all metadata strings kept, together
	maxKey         = 64 << 10  // bytes in one metadata key
	maxStoredElem  = 1 << 16   // array elements kept in memory; longer arrays keep only their length
	maxArrayDepth  = 2         // arrays of arrays; deeper nesting is refused
	maxWalkedElems = 1 << 24   // string or array elements read one by one, per array (a vocabulary has < 1M)
	maxKVs         = 1 << 16   // metadata pairs
	maxTensors     = 1 << 20   // tensor infos (DeepSeek-V3 has about 1,100)
	// maxTensorName: gguf.cpp refuses names of GGML_MAX_NAME (64) bytes or
	// more (ggml/include/ggml.h, ggml/src/gguf.cpp gguf_init_from_file_impl).
	maxTensorName = 63
)

// header is the parsed head of a GGUF file: metadata and tensor infos.
type header struct {
	Version   uint32
	Keys      []string // metadata keys in file order
	KV        map[string]any
	Tensors   []tensor
	Alignment int64
	DataStart int64 // first byte of the tensor data section
	Size      int64 // file size
}

// tensor is one tensor info with its sizes resolved.
type tensor struct {
	Name     string
	Type     ggmlType
	Shape    []uint64 // ggml order
	Offset   int64    // relative to DataStart
	Elements int64
	Bytes    int64
}

// bigArray stands for an array longer than maxStoredElem, or an array of
// arrays: only its element type and length are kept.
type bigArray struct {
	Elem uint32
	Len  uint64
}

// readHeader parses the GGUF header of r (size bytes) and checks that every
// tensor's data lies inside the file. It reads the metadata and tensor
// infos only, never the tensor data.
func readHeader(r io.ReaderAt, size int64) (*header, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative file size %d", size)
	}
	d := &decoder{r: r, br: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10), size: size}
	h := &header{Size: size}
	if err := d.preamble(h); err != nil {
		return nil, err
	}
	nt, nkv, err := d.counts()
	if err != nil {
		return nil, err
	}
	if err := d.metadata(h, nkv); err != nil {
		return nil, err
	}
	if h.Alignment, err = alignment(h.KV); err != nil {
		return nil, err
	}
	if err := d.tensorInfos(h, nt); err != nil {
		return nil, err
	}
	h.DataStart = pad(d.off, h.Alignment)
	if err := h.checkExtents(); err != nil {
		return nil, err
	}
	return h, nil
}

// decoder reads little-endian GGUF primitives and counts the bytes consumed.
type decoder struct {
	r    io.ReaderAt
	br   *bufio.Reader // reads r from off
	off  int64
	size int64
	kept int64 // bytes of strings kept so far (maxKeptBytes)
	buf  [8]byte
}

// remaining is the number of bytes not yet read.
func (d *decoder) remaining() int64 { return d.size - d.off }

// fill reads exactly n ≤ 8 bytes into d.buf.
func (d *decoder) fill(n int) ([]byte, error) {
	if _, err := io.ReadFull(d.br, d.buf[:n]); err != nil {
		return nil, d.eof(err)
	}
	d.off += int64(n)
	return d.buf[:n], nil
}

// eof turns a short read into ErrTruncated with the offset.
func (d *decoder) eof(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: header ends early near byte %d of %d", ErrTruncated, d.off, d.size)
	}
	return fmt.Errorf("read at byte %d: %w", d.off, err)
}

func (d *decoder) u8() (uint8, error) {
	b, err := d.fill(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *decoder) u16() (uint16, error) {
	b, err := d.fill(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.fill(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.fill(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// need fails when n items of at least unit bytes cannot fit in the rest of
// the file; what names the count for the error.
func (d *decoder) need(n uint64, unit int64, what string) error {
	if n > uint64(d.remaining()/unit) {
		return fmt.Errorf("%w: %s %d needs at least %d bytes per item, only %d bytes are left at byte %d",
			ErrTruncated, what, n, unit, d.remaining(), d.off)
	}
	return nil
}

// str reads a GGUF string: a uint64 length and that many bytes.
func (d *decoder) str() (string, error) {
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	if err := d.need(n, 1, "string length"); err != nil {
		return "", err
	}
	if n > maxString {
		return "", fmt.Errorf("string of %d bytes at byte %d exceeds the %d-byte limit", n, d.off, maxString)
	}
	if d.kept+int64(n) > maxKeptBytes {
		return "", fmt.Errorf("metadata strings pass %d MiB at byte %d; no model needs that much", maxKeptBytes>>20, d.off)
	}
	d.kept += int64(n)
	b := make([]byte, n)
	if _, err := io.ReadFull(d.br, b); err != nil {
		return "", d.eof(err)
	}
	d.off += int64(n)
	return string(b), nil
}

// skip moves past n bytes: through the buffer when they are in it, else
// by restarting the buffered reader at the new offset, so a skipped
// gigabyte array is seeked over, not read.
func (d *decoder) skip(n int64) error {
	if n < 0 || n > d.remaining() {
		return fmt.Errorf("%w: %d bytes to skip at byte %d, %d left", ErrTruncated, n, d.off, d.remaining())
	}
	if n <= int64(d.br.Buffered()) {
		if _, err := d.br.Discard(int(n)); err != nil {
			return d.eof(err)
		}
		d.off += n
		return nil
	}
	d.off += n
	d.br.Reset(io.NewSectionReader(d.r, d.off, d.size-d.off))
	return nil
}

// preamble reads and checks the magic and version.
func (d *decoder) preamble(h *header) error {
	m, err := d.u32()
	if err != nil {
		if errors.Is(err, ErrTruncated) {
			return fmt.Errorf("%w: %w", ErrNotGGUF, err)
		}
		return err
	}
	if m != magic {
		return ErrNotGGUF
	}
	v, err := d.u32()
	if err != nil {
		return err
	}
	switch {
	case v == 2 || v == 3:
	case v == 1:
		return fmt.Errorf("GGUF version 1 (2023 files with 32-bit counts) is not supported; reconvert the model")
	case v&0xffff == 0 && (v>>24 == 2 || v>>24 == 3):
		return fmt.Errorf("big-endian GGUF files are not supported")
	default:
		return fmt.Errorf("unsupported GGUF version %d (2 and 3 are supported)", v)
	}
	h.Version = v
	return nil
}

// Smallest encodings, used to bound counts by the remaining bytes.
const (
	minTensorInfo = 8 + 4 + 4 + 8 // empty name, n_dims, type, offset
	minKV         = 8 + 4 + 1     // empty key, value type, one-byte value
)

// counts reads the tensor and metadata counts.
func (d *decoder) counts() (nt, nkv uint64, err error) {
	if nt, err = d.u64(); err != nil {
		return 0, 0, err
	}
	if nkv, err = d.u64(); err != nil {
		return 0, 0, err
	}
	if err := d.need(nkv, minKV, "metadata count"); err != nil {
		return 0, 0, err
	}
	if err := d.need(nt, minTensorInfo, "tensor count"); err != nil {
		return 0, 0, err
	}
	if nkv > maxKVs {
		return 0, 0, fmt.Errorf("metadata count %d is more than the %d this reader accepts", nkv, maxKVs)
	}
	if nt > maxTensors {
		return 0, 0, fmt.Errorf("tensor count %d is more than the %d this reader accepts", nt, maxTensors)
	}
	return nt, nkv, nil
}

// metadata reads nkv key-value pairs.
func (d *decoder) metadata(h *header, nkv uint64) error {
	h.KV = make(map[string]any, min(nkv, 1024))
	for i := uint64(0); i < nkv; i++ {
		key, err := d.str()
		if err != nil {
			return fmt.Errorf("metadata pair %d: key: %w", i, err)
		}
		if len(key) > maxKey {
			return fmt.Errorf("metadata pair %d: key of %d bytes (at most %d)", i, len(key), maxKey)
		}
		if _, dup := h.KV[key]; dup {
			return fmt.Errorf("metadata key %q appears twice", key)
		}
		typ, err := d.u32()
		if err != nil {
			return fmt.Errorf("metadata %q: value type: %w", key, err)
		}
		v, err := d.value(typ, 0)
		if err != nil {
			return fmt.Errorf("metadata %q: %w", key, err)
		}
		h.KV[key] = v
		h.Keys = append(h.Keys, key)
	}
	return nil
}

// scalarSize is the encoded size of each fixed-size value type.
var scalarSize = [typeCount]int64{
	typeUint8: 1, typeInt8: 1, typeUint16: 2, typeInt16: 2, typeUint32: 4,
	typeInt32: 4, typeFloat32: 4, typeBool: 1, typeUint64: 8, typeInt64: 8,
	typeFloat64: 8,
}

// minSize is the smallest encoding of a value of type typ.
func minSize(typ uint32) int64 {
	switch typ {
	case typeString:
		return 8
	case typeArray:
		return 4 + 8
	}
	return scalarSize[typ]
}

// value reads one value of GGUF type typ.
func (d *decoder) value(typ uint32, depth int) (any, error) {
	switch typ {
	case typeUint8:
		return d.u8()
	case typeInt8:
		v, err := d.u8()
		return int8(v), err
	case typeUint16:
		return d.u16()
	case typeInt16:
		v, err := d.u16()
		return int16(v), err
	case typeUint32:
		return d.u32()
	case typeInt32:
		v, err := d.u32()
		return int32(v), err
	case typeFloat32:
		v, err := d.u32()
		return math.Float32frombits(v), err
	case typeBool:
		v, err := d.u8()
		return v != 0, err
	case typeString:
		return d.str()
	case typeArray:
		return d.array(depth + 1)
	case typeUint64:
		return d.u64()
	case typeInt64:
		v, err := d.u64()
		return int64(v), err
	case typeFloat64:
		v, err := d.u64()
		return math.Float64frombits(v), err
	}
	return nil, fmt.Errorf("unknown value type %d at byte %d", typ, d.off-4)
}

// array reads an array: element type, length, elements. Short arrays of
// scalars or strings come back as typed slices ([]uint32, []string ...);
// longer ones and arrays of arrays as a bigArray.
func (d *decoder) array(depth int) (any, error) {
	if depth > maxArrayDepth {
		return nil, fmt.Errorf("arrays nested deeper than %d at byte %d", maxArrayDepth, d.off)
	}
	elem, err := d.u32()
	if err != nil {
		return nil, err
	}
	if elem >= typeCount {
		return nil, fmt.Errorf("array of unknown value type %d at byte %d", elem, d.off-4)
	}
	n, err := d.u64()
	if err != nil {
		return nil, err
	}
	if err := d.need(n, minSize(elem), "array length"); err != nil {
		return nil, err
	}
	if (elem == typeString || elem == typeArray) && n > maxWalkedElems {
		return nil, fmt.Errorf("array of %d %s elements at byte %d is more than the %d this reader walks", n, typeName(elem), d.off, maxWalkedElems)
	}
	if n > maxStoredElem || elem == typeArray {
		return bigArray{elem, n}, d.skipArray(elem, n, depth)
	}
	return d.storeArray(elem, int(n), depth)
}

// skipArray reads past n elements of type elem without keeping them.
func (d *decoder) skipArray(elem uint32, n uint64, depth int) error {
	if s := scalarSize[elem]; s > 0 {
		return d.skip(int64(n) * s) // n×s ≤ remaining: checked by need
	}
	for i := uint64(0); i < n; i++ {
		var err error
		if elem == typeString {
			var l uint64
			if l, err = d.u64(); err == nil {
				if err = d.need(l, 1, "string length"); err == nil {
					err = d.skip(int64(l))
				}
			}
		} else {
			_, err = d.array(depth + 1)
		}
		if err != nil {
			return fmt.Errorf("array element %d: %w", i, err)
		}
	}
	return nil
}

// storeArray reads n ≤ maxStoredElem scalar or string elements into a typed
// slice.
func (d *decoder) storeArray(elem uint32, n, depth int) (any, error) {
	switch elem {
	case typeUint8:
		return readSlice[uint8](d, elem, n, depth)
	case typeInt8:
		return readSlice[int8](d, elem, n, depth)
	case typeUint16:
		return readSlice[uint16](d, elem, n, depth)
	case typeInt16:
		return readSlice[int16](d, elem, n, depth)
	case typeUint32:
		return readSlice[uint32](d, elem, n, depth)
	case typeInt32:
		return readSlice[int32](d, elem, n, depth)
	case typeFloat32:
		return readSlice[float32](d, elem, n, depth)
	case typeBool:
		return readSlice[bool](d, elem, n, depth)
	case typeString:
		return readSlice[string](d, elem, n, depth)
	case typeUint64:
		return readSlice[uint64](d, elem, n, depth)
	case typeInt64:
		return readSlice[int64](d, elem, n, depth)
	}
	return readSlice[float64](d, elem, n, depth)
}

// readSlice reads n values of type elem, which decode to T.
func readSlice[T any](d *decoder, elem uint32, n, depth int) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		v, err := d.value(elem, depth)
		if err != nil {
			return nil, fmt.Errorf("array element %d: %w", i, err)
		}
		out[i] = v.(T)
	}
	return out, nil
}

// alignment returns general.alignment (a uint32 power of two; gguf.cpp
// refuses anything else) or the default 32.
func alignment(kv map[string]any) (int64, error) {
	v, ok := kv["general.alignment"]
	if !ok {
		return defaultAlignment, nil
	}
	a, ok := v.(uint32)
	if !ok || a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("general.alignment must be a uint32 power of two, got %v", v)
	}
	return int64(a), nil
}

// tensorInfos reads nt tensor infos.
func (d *decoder) tensorInfos(h *header, nt uint64) error {
	h.Tensors = make([]tensor, 0, min(nt, 4096))
	seen := make(map[string]bool, min(nt, 4096))
	for i := uint64(0); i < nt; i++ {
		t, err := d.tensorInfo(h.Alignment)
		if err != nil {
			if t.Name != "" {
				return fmt.Errorf("tensor %d (%q): %w", i, t.Name, err)
			}
			return fmt.Errorf("tensor %d: %w", i, err)
		}
		if seen[t.Name] {
			return fmt.Errorf("tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
		h.Tensors = append(h.Tensors, t)
	}
	return nil
}

// tensorInfo reads one tensor info: name, n_dims, dims, type, offset.
func (d *decoder) tensorInfo(align int64) (tensor, error) {
	var t tensor
	var err error
	if t.Name, err = d.str(); err != nil {
		return t, fmt.Errorf("name: %w", err)
	}
	if len(t.Name) > maxTensorName {
		name := t.Name
		t.Name = ""
		return t, fmt.Errorf("tensor name %.40q... is %d bytes; ggml allows at most %d", name, len(name), maxTensorName)
	}
	nd, err := d.u32()
	if err != nil {
		return t, err
	}
	if nd > maxDims {
		return t, fmt.Errorf("%d dimensions, ggml allows at most %d", nd, maxDims)
	}
	t.Shape = make([]uint64, max(nd, 1))
	t.Shape[0] = 1 // a 0-dimensional tensor is a scalar, as in ggml
	for j := range nd {
		if t.Shape[j], err = d.u64(); err != nil {
			return t, err
		}
		if t.Shape[j] > math.MaxInt64 {
			return t, fmt.Errorf("dimension %d is negative as int64", j)
		}
	}
	id, err := d.u32()
	if err != nil {
		return t, err
	}
	var ok bool
	if t.Type, ok = ggmlTypes[id]; !ok {
		return t, fmt.Errorf("unknown or removed ggml type id %d", id)
	}
	if t.Elements, t.Bytes, err = tensorSize(t.Type, t.Shape); err != nil {
		return t, err
	}
	off, err := d.u64()
	if err != nil {
		return t, err
	}
	if off > math.MaxInt64 || int64(off)%align != 0 {
		return t, fmt.Errorf("data offset %d is not a multiple of the alignment %d", off, align)
	}
	t.Offset = int64(off)
	return t, nil
}

// checkExtents checks that every tensor's data lies inside the file and
// that no two tensors overlap.
func (h *header) checkExtents() error {
	if h.DataStart > h.Size && len(h.Tensors) > 0 {
		return fmt.Errorf("%w: tensor data would start at byte %d, the file has %d", ErrTruncated, h.DataStart, h.Size)
	}
	data := h.Size - h.DataStart
	order := make([]int, len(h.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return h.Tensors[order[a]].Offset < h.Tensors[order[b]].Offset })
	end := int64(0)
	for k, i := range order {
		t := h.Tensors[i]
		if k > 0 && t.Offset < end {
			return fmt.Errorf("tensor %q data at offset %d overlaps the previous tensor, which ends at %d", t.Name, t.Offset, end)
		}
		if t.Offset > data || t.Bytes > data-t.Offset {
			return fmt.Errorf("%w: tensor %q needs bytes %d to %d of the data section, which holds %d",
				ErrTruncated, t.Name, t.Offset, t.Offset+t.Bytes, data)
		}
		end = t.Offset + t.Bytes
	}
	return nil
}

// typeName names a value type for messages.
func typeName(typ uint32) string {
	switch typ {
	case typeString:
		return "string"
	case typeArray:
		return "array"
	}
	return fmt.Sprintf("type-%d", typ)
}
