package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// encode appends the ggml encoding of vals in type typ (F32, F16 or Q8_0)
// to dst. Q8_0 needs len(vals) to be a multiple of 32.
func encode(dst []byte, typ string, vals []float32) ([]byte, error) {
	switch typ {
	case "F32":
		for _, v := range vals {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
		}
	case "F16":
		for _, v := range vals {
			dst = binary.LittleEndian.AppendUint16(dst, f32ToF16(v))
		}
	case "Q8_0":
		return appendQ8_0(dst, vals)
	default:
		return nil, fmt.Errorf("cannot encode values as %q (F32, F16 or Q8_0)", typ)
	}
	return dst, nil
}

// appendQ8_0 quantizes vals into block_q8_0 blocks: an fp16 scale
// d = max|x|/127 followed by 32 int8 values round(x/d), as
// quantize_row_q8_0_ref in ggml/src/ggml-quants.c does.
func appendQ8_0(dst []byte, vals []float32) ([]byte, error) {
	const qk = 32
	if len(vals)%qk != 0 {
		return nil, fmt.Errorf("q8_0 needs a multiple of %d values, got %d", qk, len(vals))
	}
	for b := 0; b < len(vals); b += qk {
		blk := vals[b : b+qk]
		amax := float32(0)
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, f32ToF16(d))
		for _, v := range blk {
			dst = append(dst, byte(int8(math.Round(float64(v*id)))))
		}
	}
	return dst, nil
}

// f32ToF16 converts to IEEE 754 half precision, rounding to nearest even;
// values too large become ±Inf and values below half's subnormal range ±0.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	rawExp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case rawExp == 0xff && mant != 0:
		return sign | 0x7e00
	case rawExp == 0xff:
		return sign | 0x7c00
	}
	exp := rawExp - 127 + 15
	switch {
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		return sign | f16Subnormal(mant|0x800000, exp)
	}
	half := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // a carry into the exponent is the correct rounding
	}
	return sign | uint16(half)
}

// f16Subnormal rounds a 24-bit significand with biased half exponent
// exp ≤ 0 to a half subnormal.
func f16Subnormal(mant uint32, exp int32) uint16 {
	if exp < -10 {
		return 0
	}
	shift := uint32(14 - exp)
	half := mant >> shift
	rem := mant & (1<<shift - 1)
	mid := uint32(1) << (shift - 1)
	if rem > mid || (rem == mid && half&1 == 1) {
		half++
	}
	return uint16(half)
}

// f16ToF32 converts an IEEE 754 half to float32 exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
