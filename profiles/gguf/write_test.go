package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestF16Conversion(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to +Inf
		{1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{5.9604645e-08, 0x0001}, // smallest subnormal
		{6.097555e-05, 0x03ff},  // largest subnormal
		{1e-9, 0x0000},
		{1.0009765625, 0x3c01},
		{1.00048828125, 0x3c00}, // tie rounds to even
		{1.00146484375, 0x3c02}, // tie rounds to even
	}
	for _, c := range cases {
		if got := f32ToF16(c.in); got != c.want {
			t.Errorf("f32ToF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if got := f32ToF16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("f32ToF16(NaN) = %#04x, not a NaN", got)
	}
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are not preserved
		}
		if got := f32ToF16(f16ToF32(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip of half %#04x gave %#04x", h, got)
		}
	}
}

func TestQ8_0Encoding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	vals := make([]float32, 96)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	vals[40] = 0 // a block may contain zeros
	enc, err := encode(nil, "Q8_0", vals)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != 3*34 {
		t.Fatalf("Q8_0 of 96 values is %d bytes, want 102", len(enc))
	}
	for b := 0; b < 3; b++ {
		blk := enc[b*34 : (b+1)*34]
		d := f16ToF32(uint16(blk[0]) | uint16(blk[1])<<8)
		for i := 0; i < 32; i++ {
			got := d * float32(int8(blk[2+i]))
			want := vals[b*32+i]
			// Error is half a quantization step plus the fp16 rounding of d.
			if tol := d/2 + 127*d/1024; math.Abs(float64(got-want)) > float64(tol) {
				t.Errorf("block %d value %d decodes to %g, want %g ± %g", b, i, got, want, tol)
			}
		}
	}
	zeros, _ := encode(nil, "Q8_0", make([]float32, 32))
	if !bytes.Equal(zeros, make([]byte, 34)) {
		t.Errorf("Q8_0 of zeros = %x, want all zero", zeros)
	}
	if _, err := encode(nil, "Q8_0", make([]float32, 33)); err == nil {
		t.Error("Q8_0 of 33 values: no error")
	}
}

func TestTensorBytes(t *testing.T) {
	cases := []struct {
		typ   string
		shape []int64
		want  int64
	}{
		{"F32", []int64{7, 3}, 84},
		{"F16", []int64{4096}, 8192},
		{"BF16", []int64{10, 2, 3}, 120},
		{"Q8_0", []int64{4096, 4096}, 4096 / 32 * 34 * 4096},
		{"Q4_0", []int64{64, 5}, 2 * 18 * 5},
		{"Q4_1", []int64{32}, 20},
		{"Q5_0", []int64{32}, 22},
		{"Q5_1", []int64{32}, 24},
		{"Q8_1", []int64{32}, 36},
		{"MXFP4", []int64{2880, 2880, 32}, 2880 / 32 * 17 * 2880 * 32},
		{"IQ4_NL", []int64{32}, 18},
		{"Q2_K", []int64{256}, 84},
		{"Q3_K", []int64{256}, 110},
		{"Q4_K", []int64{4096, 14336}, 16 * 144 * 14336},
		{"Q5_K", []int64{256}, 176},
		{"Q6_K", []int64{512, 3}, 2 * 210 * 3},
		{"Q8_K", []int64{256}, 292},
		{"IQ1_S", []int64{256}, 50},
		{"IQ1_M", []int64{256}, 56},
		{"IQ2_XXS", []int64{256}, 66},
		{"IQ2_XS", []int64{256}, 74},
		{"IQ2_S", []int64{256}, 82},
		{"IQ3_XXS", []int64{256}, 98},
		{"IQ3_S", []int64{256}, 110},
		{"IQ4_XS", []int64{256}, 136},
		{"TQ1_0", []int64{256}, 54},
		{"TQ2_0", []int64{256}, 66},
	}
	for _, c := range cases {
		got, err := TensorBytes(c.typ, c.shape)
		if err != nil || got != c.want {
			t.Errorf("TensorBytes(%s, %v) = %d, %v; want %d", c.typ, c.shape, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		typ   string
		shape []int64
		msg   string
	}{
		{"Q4_K", []int64{4000, 2}, "not a multiple of the Q4_K block size 256"},
		{"Q8_0", []int64{33}, "not a multiple of the Q8_0 block size 32"},
		{"Q9_9", []int64{32}, "unknown ggml type"},
		{"F32", []int64{0}, "dimension below 1"},
		{"F32", []int64{1, 1, 1, 1, 1}, "1 to 4 dimensions"},
		{"F32", []int64{1 << 40, 1 << 40}, "overflows"},
	} {
		if _, err := TensorBytes(bad.typ, bad.shape); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("TensorBytes(%s, %v) error %v, want one containing %q", bad.typ, bad.shape, err, bad.msg)
		}
	}
}

func TestWriteRefusesBadInput(t *testing.T) {
	cases := []struct {
		name    string
		kv      []KV
		tensors []TensorData
		msg     string
	}{
		{"plain int", []KV{{"a.b", 3}}, nil, `"a.b": unsupported value type int`},
		{"empty key", []KV{{"", uint32(1)}}, nil, "key is empty"},
		{"bad alignment", []KV{{"general.alignment", uint32(24)}}, nil, "power of two"},
		{"short data", nil, []TensorData{{"x", "F32", []int64{4}, make([]byte, 15)}}, `"x": 15 data bytes, its type and shape need 16`},
		{"duplicate", nil, []TensorData{{"x", "F32", []int64{1}, make([]byte, 4)}, {"x", "F32", []int64{1}, make([]byte, 4)}}, "appears twice"},
		{"bad row", nil, []TensorData{{"w", "Q4_0", []int64{48}, make([]byte, 27)}}, `tensor "w": row length 48 is not a multiple of the Q4_0 block size 32`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Write(&bytes.Buffer{}, c.kv, c.tensors)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Write error %v, want one containing %q", err, c.msg)
			}
		})
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	long := make([]uint32, maxStoredElem+1)
	kv := []KV{
		{"general.architecture", "llama"},
		{"t.u8", uint8(200)}, {"t.i8", int8(-100)}, {"t.u16", uint16(60000)}, {"t.i16", int16(-30000)},
		{"t.u32", uint32(4_000_000_000)}, {"t.i32", int32(-2_000_000_000)}, {"t.f32", float32(1.5)},
		{"t.bool", true}, {"t.str", "héllo ▁world "}, {"t.empty", ""}, {"t.u64", uint64(1) << 40},
		{"t.i64", int64(-1) << 40}, {"t.f64", math.Pi},
		{"t.au8", []uint8{1, 2}}, {"t.ai8", []int8{-1}}, {"t.au16", []uint16{7}}, {"t.ai16", []int16{-7}},
		{"t.au32", []uint32{1, 2, 3}}, {"t.ai32", []int32{-3}}, {"t.af32", []float32{0.5, -0.25}},
		{"t.abool", []bool{true, false}}, {"t.astr", []string{"<s>", "", "▁a"}}, {"t.au64", []uint64{9}},
		{"t.ai64", []int64{-9}}, {"t.af64", []float64{2.5}}, {"t.aempty", []string{}},
		{"t.long", long},
	}
	var buf bytes.Buffer
	if err := Write(&buf, kv, nil); err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Keys) != len(kv) {
		t.Fatalf("read %d keys, wrote %d", len(h.Keys), len(kv))
	}
	for i, p := range kv {
		if h.Keys[i] != p.Key {
			t.Errorf("key %d = %q, want %q", i, h.Keys[i], p.Key)
		}
		want := p.Value
		if p.Key == "t.long" {
			want = bigArray{typeUint32, uint64(len(long))}
		}
		if got := h.KV[p.Key]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", p.Key, got, want)
		}
	}
	if h.Version != 3 || h.Alignment != 32 {
		t.Errorf("version %d alignment %d, want 3 and 32", h.Version, h.Alignment)
	}
}
