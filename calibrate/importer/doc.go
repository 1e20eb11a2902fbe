// Package importer turns benchmark outputs that users already have into rows
// of Headroom's measurement schema (planner.Measurement; the columns of
// benchmarks/README.md), so that `validate` can score the performance model
// on them and calibration can be fitted from them.
//
// # Formats
//
// Import detects the format from the content (DetectFormats) and reads:
//
//   - llama-bench output as markdown tables (the default `-o md`, including
//     the command line, device lines and "build:" line around a table), CSV,
//     JSON and JSONL (tools/llama-bench/README.md). ppN tests become pp_tps
//     rows with prompt_tokens N, tgN tests tg_tps rows with gen_tokens N, and
//     "@ dD" sets context_depth D. The quantization comes from the GGUF file
//     name where it names one (Q4_K_XL) and from the model type otherwise
//     ("llama 7B Q4_K - Medium" is q4_k_m); "build: 4d74393bc (6327)" is
//     engine_version b6327.
//   - llama-batched-bench output as its markdown table (the default) or
//     --output-format jsonl (tools/batched-bench/batched-bench.cpp): each
//     row (PP, TG, B) gives a pp_tps row from S_PP (the prompt tokens of all
//     B sequences over the prefill time) and a total_out_tps row from S_TG
//     (the generated tokens of all B over the generation time), scenario
//     batched, concurrency B. With -pps (a shared prompt) S_PP is not a
//     schema metric and its rows are left out, with a warning.
//   - `vllm bench serve` / benchmark_serving.py text output: every
//     "Serving Benchmark Result" block gives ttft_ms, tpot_ms and itl_ms
//     (means), total_out_tps and req_per_s, at the block's maximum request
//     concurrency; prompt_tokens and gen_tokens are the total input and
//     generated tokens divided by the successful requests, rounded. The
//     Namespace(...) line gives the model; "#" headings just before a run
//     ("# llama.cpp Q8_0 - c=1") name the engine and quantization.
//   - the JSON that `vllm bench serve --save-result` writes (one object, an
//     array, or one object per line with --append-result); --metadata
//     hardware=..., engine_version=..., quantization=... are read too.
//   - model cards of happy_vllm's benchmark_llm_serving: prompt ingestion
//     speed (pp_tps), mean generation speed per request (tg_tps), and the KV
//     cache estimate (kv_tokens), with the launch parameters table.
//   - the markdown tables of TGI's text-generation-benchmark: prefill
//     latency (ttft_ms), decode token latency (tpot_ms), decode throughput
//     (total_out_tps and tg_tps = total / batch) and prefill tokens/s, per
//     batch size and per "Tensor Parallel (TP) - N GPUs" section.
//
// # What the file does not say
//
// Benchmark outputs rarely name the device, and often not the engine version
// or the weight format. Context carries those: Hardware and Model given
// there override the file (files name GPUs and models loosely: "H100",
// "/models/llama-2-7b.Q8_0.gguf"); every other field of Context only fills
// what the file leaves unsaid. With a catalog, names in the file are mapped
// to catalog ids (a GGUF file name or a quantized checkpoint maps to its
// parent model, named in the notes) and an unquantized checkpoint's format
// is its native dtype. Every guess and every gap is reported as a Warning
// that names the flag to pass.
//
// Parsers never panic on input; errors and warnings name the file and line.
package importer
