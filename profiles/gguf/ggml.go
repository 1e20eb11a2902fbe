package gguf

import (
	"fmt"
	"math/bits"
)

// ggmlType is one ggml tensor type: its name as GGUF tools print it, the
// number of weights in a block and the bytes one block occupies.
type ggmlType struct {
	Name      string
	BlockSize int64
	TypeSize  int64
}

// ggmlTypes maps the ggml_type ids stored in GGUF tensor infos to their
// block geometry. Ids and sizes are those of ggml/src/ggml.h and the
// static_assert(sizeof(block_*)) lines of ggml/src/ggml-common.h
// (ggml-org/llama.cpp @ aca2e6c; modeling.md §1.1). Ids 4, 5 (Q4_2, Q4_3),
// 31-33 (Q4_0_4_4 ...) and 36-38 (IQ4_NL_4_4 ...) were removed from ggml and
// are refused. NVFP4, Q1_0 and Q2_0 are taken from gpustack/gguf-parser-go
// v0.28.1 ggml.go, which tracks newer ggml builds than modeling.md.
var ggmlTypes = map[uint32]ggmlType{
	0:  {"F32", 1, 4},
	1:  {"F16", 1, 2},
	2:  {"Q4_0", 32, 18},
	3:  {"Q4_1", 32, 20},
	6:  {"Q5_0", 32, 22},
	7:  {"Q5_1", 32, 24},
	8:  {"Q8_0", 32, 34},
	9:  {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84},
	11: {"Q3_K", 256, 110},
	12: {"Q4_K", 256, 144},
	13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210},
	15: {"Q8_K", 256, 292},
	16: {"IQ2_XXS", 256, 66},
	17: {"IQ2_XS", 256, 74},
	18: {"IQ3_XXS", 256, 98},
	19: {"IQ1_S", 256, 50},
	20: {"IQ4_NL", 32, 18},
	21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82},
	23: {"IQ4_XS", 256, 136},
	24: {"I8", 1, 1},
	25: {"I16", 1, 2},
	26: {"I32", 1, 4},
	27: {"I64", 1, 8},
	28: {"F64", 1, 8},
	29: {"IQ1_M", 256, 56},
	30: {"BF16", 1, 2},
	34: {"TQ1_0", 256, 54},
	35: {"TQ2_0", 256, 66},
	39: {"MXFP4", 32, 17},
	40: {"NVFP4", 64, 36},
	41: {"Q1_0", 128, 18},
	42: {"Q2_0", 64, 18},
}

// typeByName finds a ggml type id by its name (F32, Q8_0, Q4_K ...).
func typeByName(name string) (uint32, ggmlType, bool) {
	for id, t := range ggmlTypes {
		if t.Name == name {
			return id, t, true
		}
	}
	return 0, ggmlType{}, false
}

// maxDims is GGML_MAX_DIMS (ggml/include/ggml.h).
const maxDims = 4

// tensorSize returns the element count and the byte size of a tensor of type
// t and shape ne (ne[0] is the row length, as in ggml). The size is
// ggml_row_size(type, ne0) × ne1 × ne2 × ne3 with ggml_row_size = ne0/blck ×
// type_size (ggml.c ggml_row_size / ggml_nbytes); ne0 must be a multiple of
// the block size. Overflow of int64 is an error, never a wrapped value.
func tensorSize(t ggmlType, ne []uint64) (elems, size int64, err error) {
	if len(ne) == 0 {
		return 0, 0, fmt.Errorf("tensor has no dimensions")
	}
	if ne[0]%uint64(t.BlockSize) != 0 {
		return 0, 0, fmt.Errorf("row length %d is not a multiple of the %s block size %d", ne[0], t.Name, t.BlockSize)
	}
	n := uint64(1)
	for _, d := range ne {
		n, err = mulCheck(n, d)
		if err != nil {
			return 0, 0, fmt.Errorf("element count of shape %v: %w", ne, err)
		}
	}
	row, err := mulCheck(ne[0]/uint64(t.BlockSize), uint64(t.TypeSize))
	if err != nil {
		return 0, 0, fmt.Errorf("row size of shape %v: %w", ne, err)
	}
	s := row
	for _, d := range ne[1:] {
		s, err = mulCheck(s, d)
		if err != nil {
			return 0, 0, fmt.Errorf("byte size of shape %v: %w", ne, err)
		}
	}
	return int64(n), int64(s), nil
}

// mulCheck multiplies two sizes, failing when the product leaves int64.
func mulCheck(a, b uint64) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 || lo > 1<<62 {
		return 0, fmt.Errorf("size overflows (%d × %d)", a, b)
	}
	return lo, nil
}

// fileTypeNames are the llama_ftype values written to general.file_type,
// lowercased without their LLAMA_FTYPE_MOSTLY_ prefix, the way the catalog
// names quantizations (include/llama.h, llama_ftype; gguf-parser-go v0.28.1
// file_metadata.go for MXFP4 = 38).
var fileTypeNames = map[uint64]string{
	0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 4: "q4_1_some_f16",
	7: "q8_0", 8: "q5_0", 9: "q5_1", 10: "q2_k", 11: "q3_k_s", 12: "q3_k_m",
	13: "q3_k_l", 14: "q4_k_s", 15: "q4_k_m", 16: "q5_k_s", 17: "q5_k_m",
	18: "q6_k", 19: "iq2_xxs", 20: "iq2_xs", 21: "q2_k_s", 22: "iq3_xs",
	23: "iq3_xxs", 24: "iq1_s", 25: "iq4_nl", 26: "iq3_s", 27: "iq3_m",
	28: "iq2_s", 29: "iq2_m", 30: "iq4_xs", 31: "iq1_m", 32: "bf16",
	36: "tq1_0", 37: "tq2_0", 38: "mxfp4",
}

// nativeDTypes names the checkpoint dtype of unquantized and natively
// quantized file types; block-quantized files do not record the dtype
// they were converted from.
var nativeDTypes = map[string]string{
	"f32": "float32", "f16": "float16", "bf16": "bfloat16", "mxfp4": "mxfp4",
}
