// Package gguf reads the header of a GGUF model file into a planner.Model
// and writes GGUF files for tests and calibration.
//
// # Reading
//
// ReadFile and Read parse the metadata key-value pairs and the tensor
// infos (GGUF v2 and v3, little-endian) and stop there: tensor data is
// never read, only its extents are checked against the file size. The
// model's geometry comes from the "<general.architecture>." keys that
// llama.cpp reads; its weight bytes are the exact sum of the tensor sizes,
// each ggml_row_size(type, ne0) × ne1 × ne2 × ne3 with the block sizes of
// ggml-common.h (modeling.md §1.1).
//
// Every count read from the file (metadata pairs, tensors, string and
// array lengths) is checked against the bytes left in the file before
// anything is allocated, so a corrupt or hostile header gives an error,
// wrapping ErrNotGGUF or ErrTruncated where they apply, and never a panic
// or a huge allocation. A sparse file can claim terabytes, so fixed caps
// bound the rest whatever the size: 128 MiB of kept metadata strings,
// 2^16 keys, 2^20 tensors, 2^24 elements walked in one array of strings
// or arrays, 63-byte tensor names (ggml's GGML_MAX_NAME), block_count up to
// llama.cpp's LLAMA_MAX_LAYERS (512); arrays that are not kept are seeked
// over, not read. Names from the file (general.name, tensor names) come
// back printable (internal/textsafe) and capped, since they are printed.
// ReadFile refuses FIFOs and devices without blocking (internal/safefile).
//
// The reader is hand-written rather than built on
// github.com/gpustack/gguf-parser-go. That library parses headers
// robustly at its core (with a recover wrapper it survived every truncated
// prefix of a test file and thousands of mutations) but it only opens
// paths, so Read on an io.ReaderAt would have to copy the whole file,
// tensor data included, to a temporary file; it opens sibling shards
// silently for names like -00001-of-00002.gguf; its typed accessors panic
// on unexpected value types; and its Architecture summary allocates slices
// sized by metadata values, which a mutated file turned into a fatal
// out-of-memory error that recover cannot catch. The GGUF header format is
// small enough that reading it directly costs less than guarding all that.
//
// # Writing
//
// Write emits a GGUF v3 file from metadata pairs and tensors of any ggml
// type with their encoded bytes; WriteLlama builds a complete
// llama-architecture model with a SentencePiece-style vocabulary and
// seeded random weights (F32, F16 or Q8_0) that llama.cpp and Ollama load.
package gguf
