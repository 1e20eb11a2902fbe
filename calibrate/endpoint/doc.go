// Package endpoint calibrates Headroom against a running inference server:
// it measures prefill and decode speed through the server's streaming API
// and returns them as samples and rows of the measurement schema.
//
// # What it talks to
//
// OpenAI-compatible servers (vLLM, SGLang, TGI, llama-server, Ollama)
// through POST /v1/completions or /v1/chat/completions with stream:true and
// stream_options.include_usage, so the last chunk states the prompt and
// completion token counts. Where an engine's own API reports server-side
// timings, that API is used instead:
//
//   - Ollama: POST /api/generate (NDJSON); the last line gives
//     prompt_eval_count, prompt_eval_duration, eval_count and eval_duration
//     (nanoseconds), so prefill tok/s = prompt_eval_count /
//     prompt_eval_duration and decode tok/s = eval_count / eval_duration.
//   - llama-server: POST /completion (SSE); the last event gives timings
//     {prompt_n, prompt_ms, predicted_n, predicted_ms}.
//   - TGI: POST /generate_stream (SSE); the last event gives details
//     {generated_tokens, input_length}.
//
// The engine is detected from GET /api/version (Ollama), /props
// (llama-server), /info (TGI) and /v1/models (owned_by names vLLM and
// SGLang).
//
// # What it measures
//
// On the client: time to first token (TTFT), time per output token after
// the first (TPOT), inter-chunk latency, and the wall time of concurrent
// rounds. Prompt lengths are always the server's count (usage,
// prompt_eval_count, timings), never the requested one: prompts are built
// from repeated words sized by the tokens-per-word ratio the warm-up
// measured, and each starts with a tag unique to the run and request so no
// prefix cache can serve it.
//
// A run (Run) is: detection, one warm-up request, prefill at several
// prompt lengths (one generated token, one request at a time), then decode
// at concurrency 1, 2, 4, 8, 16 up to the server's limit, a few repeats
// each, all within a time budget (60 s by default). Steps that would
// overrun the budget are dropped and Samples.Notes says which.
//
// # Failures
//
// Every request has a timeout and a stall timeout (no bytes for a while);
// an error status, a refused connection, a timeout, a stall, or a stream
// that is malformed or ends early fails the whole run with a *StepError
// naming the step and the URL. RunAndSave writes the calibration file
// atomically and only after a complete run, so a failed or interrupted run
// leaves the previous file as it was.
package endpoint
