//go:build unix

package gguf

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
)

// sparse is a file of size bytes that reads as zeros except for the
// segments written into it, like a sparse file claiming terabytes; read
// counts the bytes handed out.
type sparse struct {
	size int64
	segs map[int64][]byte
	read int64
}

func (s *sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, errors.New("EOF")
	}
	n := int(min(int64(len(p)), s.size-off))
	clear(p[:n])
	offs := make([]int64, 0, len(s.segs))
	for o := range s.segs {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(a, b int) bool { return offs[a] < offs[b] })
	for _, o := range offs {
		b := s.segs[o]
		if o+int64(len(b)) <= off || o >= off+int64(n) {
			continue
		}
		lo := max(o, off)
		copy(p[lo-off:n], b[lo-o:])
	}
	s.read += int64(n)
	return n, nil
}

// rawKV starts a header with nkv pairs and no tensors; add appends bytes.
type rawKV struct{ r *rawHeader }

func newRawKV(nkv uint64) rawKV { return rawKV{newRaw(3, 0, nkv)} }

func (k rawKV) bytes() []byte {
	_ = k.r.w.w.Flush()
	return bytes.Clone(k.r.buf.Bytes())
}

// TestSkippedHugeArrayIsSeekedOver: an 8 GiB array of bytes in the
// metadata is skipped by seeking, not read through (issue 15 item 10).
func TestSkippedHugeArrayIsSeekedOver(t *testing.T) {
	const n = 8 << 30
	k := newRawKV(1)
	k.r.w.str("huge.array")
	k.r.w.u32(typeArray)
	k.r.w.u32(typeUint8)
	k.r.w.u64(n)
	f := &sparse{size: 1 << 40, segs: map[int64][]byte{0: k.bytes()}}
	h, err := readHeader(f, f.size)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := arrayLen(h.KV["huge.array"]); !ok || got != n {
		t.Errorf("array length %d, want %d", got, n)
	}
	if f.read > 4<<20 {
		t.Errorf("read %d MiB to skip the array, want it seeked over (< 4 MiB)", f.read>>20)
	}
}

// TestMetadataStringsAreBounded: a sparse file whose metadata holds a dozen
// 60 MiB strings is refused before the reader holds more than
// maxKeptBytes of them (one header took 3.5 GB; issue 15 item 10).
func TestMetadataStringsAreBounded(t *testing.T) {
	const count, each = 12, 60 << 20
	f := &sparse{size: 1 << 40, segs: map[int64][]byte{}}
	k := newRawKV(count)
	head := k.bytes()
	f.segs[0] = head
	off := int64(len(head))
	for i := range count {
		var b bytes.Buffer
		w := &writer{w: bufio.NewWriter(&b)}
		w.str("key." + string(rune('a'+i)))
		w.u32(typeString)
		w.u64(each)
		_ = w.w.Flush()
		f.segs[off] = b.Bytes()
		off += int64(b.Len()) + each
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readHeader(f, f.size)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("err = %v, want the metadata string budget", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*maxKeptBytes+(64<<20) {
		t.Errorf("allocated %d MiB reading the header, want at most about %d", alloc>>20, 2*maxKeptBytes>>20)
	}
}

func TestHeaderCountLimits(t *testing.T) {
	strArray := func(n uint64) []byte {
		k := newRawKV(1)
		k.r.w.str("tokenizer.ggml.tokens")
		k.r.w.u32(typeArray)
		k.r.w.u32(typeString)
		k.r.w.u64(n)
		return k.bytes()
	}
	for _, tc := range []struct {
		name string
		head []byte
		msg  string
	}{
		{"a billion strings", strArray(1 << 30), "more than"},
		{"a million metadata pairs", newRawKV(1 << 20).bytes(), "metadata count"},
		{"a billion tensors", newRaw(3, 1<<30, 0).bytes(), "tensor count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &sparse{size: 1 << 40, segs: map[int64][]byte{0: tc.head}}
			_, err := readHeader(f, f.size)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %q", err, tc.msg)
			}
			if f.read > 4<<20 {
				t.Errorf("read %d MiB before refusing", f.read>>20)
			}
		})
	}
}

// TestModelBounds: counts no model has are refused with the key named,
// without looping over them (block_count 2^31 looped for seconds).
func TestModelBounds(t *testing.T) {
	base := func(extra ...KV) []KV {
		return append([]KV{{"general.architecture", "gemma3"}, {"gemma3.embedding_length", uint32(8)},
			{"gemma3.attention.head_count", uint32(2)}, {"gemma3.attention.sliding_window", uint32(4)}}, extra...)
	}
	for _, tc := range []struct {
		name string
		kv   []KV
		msg  string
	}{
		{"block_count 2^31-1", base(KV{"gemma3.block_count", uint32(1<<31 - 1)}), "block_count = 2147483647"},
		{"block_count 513", base(KV{"gemma3.block_count", uint32(513)}), "at most 512"},
		{"more experts used than exist", base(KV{"gemma3.block_count", uint32(2)}, KV{"gemma3.expert_count", uint32(4)}, KV{"gemma3.expert_used_count", uint32(8)}), "expert_used_count = 8"},
		{"architecture with an escape", []KV{{"general.architecture", "lla\x1b[2Jma"}}, `lla\\x1b[2Jma`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.kv, nil); err != nil {
				t.Fatal(err)
			}
			_, err := readBytes(buf.Bytes(), "bounds.gguf")
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %q", err, tc.msg)
			}
		})
	}
}

func TestSlidingLayersClosedForm(t *testing.T) {
	for _, tc := range []struct{ layers, period, want int }{
		{62, 6, 52}, {26, 6, 22}, {24, 2, 12}, {7, 4, 6}, {1, 6, 1}, {0, 6, 0},
	} {
		k := keys{kv: map[string]any{"x.attention.sliding_window_pattern": uint32(tc.period)}, prefix: "x."}
		if got := k.slidingLayers("x", tc.layers, 4); got != tc.want {
			t.Errorf("layers %d period %d: %d sliding, want %d", tc.layers, tc.period, got, tc.want)
		}
	}
}

// TestNamesFromTheFileArePrintable: general.name with escape sequences and
// a megabyte of text comes out escaped and capped (issue 15 item 4).
func TestNamesFromTheFileArePrintable(t *testing.T) {
	evil := "Llama\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("A", 1<<20)
	var buf bytes.Buffer
	if err := Write(&buf, []KV{{"general.architecture", "llama"}, {"general.name", evil},
		{"llama.block_count", uint32(1)}, {"llama.embedding_length", uint32(8)}}, nil); err != nil {
		t.Fatal(err)
	}
	m, err := readBytes(buf.Bytes(), "evil\x1b[31m.gguf")
	if err != nil {
		t.Fatal(err)
	}
	for field, v := range map[string]string{"ID": m.ID, "Name": m.Name, "Source": m.Source} {
		if !textsafe.Clean(v) || len(v) > maxName+32 {
			t.Errorf("%s = %.60q (%d bytes), want printable and at most %d bytes", field, v, len(v), maxName)
		}
	}
	if !strings.HasPrefix(m.Name, `Llama\x1b[2J`) {
		t.Errorf("Name = %.40q, want the escapes shown", m.Name)
	}
}

func TestTensorNameTooLong(t *testing.T) {
	r := newRaw(3, 1, 1)
	_ = r.w.kv(KV{"general.architecture", "llama"})
	r.w.str(strings.Repeat("n", 64))
	_, err := readBytes(r.bytes(), "long.gguf")
	if err == nil || !strings.Contains(err.Error(), "at most 63") {
		t.Fatalf("err = %v, want a refused 64-byte tensor name", err)
	}
}

// TestReadFileRefusesFIFO: a FIFO named as the model file is refused at
// once instead of blocking forever (issue 15 item 9).
func TestReadFileRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.gguf")
	if err := mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("err = %v, want ErrNotRegular", err)
		}
	case <-time.After(time.Minute): // a hang, not a slow machine
		t.Fatal("ReadFile blocked on a FIFO")
	}
}
