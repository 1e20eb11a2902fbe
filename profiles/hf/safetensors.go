package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/planner"
)

// maxHeader bounds a safetensors JSON header. The format's own reader
// refuses headers over 100 MB (safetensors MAX_HEADER_SIZE).
const maxHeader = 100 << 20

// ErrTruncated says a safetensors file ends before its header or before
// the data its header describes.
var ErrTruncated = errors.New("file is truncated")

// dtypeBits is the storage width of each safetensors dtype
// (huggingface/safetensors safetensors/src/tensor.rs, Dtype::bitsize).
var dtypeBits = map[string]int64{
	"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32, "C64": 64,
	"F64": 64, "I64": 64, "U64": 64,
	"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

// stEntry is one tensor of a safetensors header.
type stEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// maxModelFile bounds a weights file opened for its header (1 PiB: any
// real file; the bound only makes safefile refuse what is not a file).
const maxModelFile = 1 << 50

// readSafetensors reads the header of the safetensors file at path and
// returns its tensors sorted by name, each with its exact byte size.
func readSafetensors(path string) ([]planner.Tensor, error) {
	f, err := safefile.Open(path, maxModelFile) // a FIFO or device is refused, not waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ts, err := parseSafetensors(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	return ts, nil
}

// parseSafetensors reads a safetensors header from r (size bytes): an
// 8-byte little-endian header length, then that many bytes of JSON mapping
// tensor names to dtype, shape and data_offsets (relative to the end of the
// header). It checks what the format's own reader checks: offsets cover
// the data section exactly, without gaps or overlaps, and each tensor's
// byte size matches its dtype and shape. Tensor data is never read.
func parseSafetensors(r io.ReaderAt, size int64) ([]planner.Tensor, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the 8-byte header length", ErrTruncated, size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	switch {
	case n > maxHeader:
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit: not a safetensors file?", n, maxHeader)
	case int64(n) > size-8:
		return nil, fmt.Errorf("%w: header length %d, only %d bytes follow", ErrTruncated, n, size-8)
	}
	header := make([]byte, n)
	if _, err := r.ReadAt(header, 8); err != nil {
		return nil, err
	}
	entries, err := decodeHeader(header)
	if err != nil {
		return nil, err
	}
	return checkEntries(entries, size-8-int64(n))
}

// decodeHeader parses the JSON header into its tensor entries, leaving out
// __metadata__.
func decodeHeader(header []byte) (map[string]stEntry, error) {
	if len(header) == 0 || header[0] != '{' {
		return nil, errors.New("header is not a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		return nil, fmt.Errorf("header: %w", jsonError(header, err))
	}
	entries := make(map[string]stEntry, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		dec := json.NewDecoder(bytes.NewReader(msg))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		entries[name] = e
	}
	return entries, nil
}

// checkEntries validates dtypes, shapes and offsets against a data section
// of dataSize bytes and returns the tensors sorted by name.
func checkEntries(entries map[string]stEntry, dataSize int64) ([]planner.Tensor, error) {
	ts := make([]planner.Tensor, 0, len(entries))
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(entries))
	for name, e := range entries {
		elems, nbytes, err := entrySize(e)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end-b != nbytes {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] do not hold the %d bytes its dtype %s and shape %v need",
				name, b, end, nbytes, e.DType, e.Shape)
		}
		spans = append(spans, span{name, b, end})
		ts = append(ts, planner.Tensor{Name: name, Type: e.DType, Elements: elems, Bytes: planner.Bytes(nbytes), Shape: e.Shape})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	var at int64
	for _, s := range spans {
		if s.begin != at {
			return nil, fmt.Errorf("tensor %q starts at data byte %d, the previous tensor ends at %d: offsets must tile the data section",
				s.name, s.begin, at)
		}
		at = s.end
	}
	if at > dataSize {
		return nil, fmt.Errorf("%w: tensors need %d data bytes, the file holds %d", ErrTruncated, at, dataSize)
	}
	if at < dataSize {
		return nil, fmt.Errorf("%d bytes after the last tensor's data: not a safetensors file?", dataSize-at)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts, nil
}

// entrySize returns a tensor's element count and byte size.
func entrySize(e stEntry) (elems, nbytes int64, err error) {
	bitsPer, ok := dtypeBits[e.DType]
	if !ok {
		return 0, 0, fmt.Errorf("unknown dtype %q", e.DType)
	}
	n := uint64(1)
	for _, d := range e.Shape {
		if d < 0 {
			return 0, 0, fmt.Errorf("negative dimension in shape %v", e.Shape)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<56 {
			return 0, 0, fmt.Errorf("shape %v is too large", e.Shape)
		}
		n = lo
	}
	total := n * uint64(bitsPer)
	if total%8 != 0 {
		return 0, 0, fmt.Errorf("%d elements of %s do not fill whole bytes", n, e.DType)
	}
	return int64(n), int64(total / 8), nil
}
