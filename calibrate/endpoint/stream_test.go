package endpoint

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Streams as the engines send them (shapes from their sources and captures
// of Ollama v0.6.5; trimmed to the fields that matter).
const (
	vllmStream = `data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" the","finish_reason":null}],"usage":null}

data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" cat","finish_reason":"length"}],"usage":null}

data: {"id":"cmpl-1","object":"text_completion","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}

data: [DONE]

`
	ollamaOpenAIStream = "data: {\"id\":\"cmpl-322\",\"object\":\"text_completion\",\"choices\":[{\"text\":\"bot\",\"index\":0,\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}}\r\n\r\n" +
		"data: {\"id\":\"cmpl-322\",\"object\":\"text_completion\",\"choices\":[{\"text\":\"\",\"index\":0,\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0,\"total_tokens\":0}}\r\n\r\n" +
		"data: {\"id\":\"cmpl-322\",\"object\":\"text_completion\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1,\"total_tokens\":8}}\r\n\r\n" +
		"data: [DONE]\r\n\r\n"
	chatStream = `: keep-alive

event: message
data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}

data: {"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}

data: [DONE]
`
	llamaStream = `data: {"content":" ab","stop":false,"id_slot":0}

data: {"content":" cd","stop":false,"id_slot":0}

data: {"content":"","stop":true,"tokens_evaluated":33,"tokens_predicted":2,"timings":{"prompt_n":33,"prompt_ms":12.5,"prompt_per_second":2640,"predicted_n":2,"predicted_ms":8.0}}

`
	tgiStream = `data:{"index":1,"token":{"id":5,"text":" ab","logprob":-1.2,"special":false},"generated_text":null,"details":null}

data:{"index":2,"token":{"id":2,"text":"</s>","logprob":-0.1,"special":true},"generated_text":" ab","details":{"finish_reason":"eos_token","generated_tokens":2,"seed":null,"input_length":17}}

`
	ollamaStream = `{"model":"tiny","created_at":"2026-11-22T02:48:03Z","response":" kx","done":false}
{"model":"tiny","created_at":"2026-11-22T02:48:03Z","response":"","done":false}
{"model":"tiny","created_at":"2026-11-22T02:48:03Z","response":"","done":true,"done_reason":"length","total_duration":1986046911,"load_duration":267975770,"prompt_eval_count":15,"prompt_eval_duration":53220396,"eval_count":16,"eval_duration":1660479308}
`
)

// parsed is what a stream parse adds up to.
type parsed struct {
	tokens, prompt, gen       int
	prefill, decode           time.Duration
	prefillTokens, decodeToks int
	done                      bool // an end marker was seen
}

func sumChunks(p *parsed, c chunk) {
	p.done = p.done || c.Done
	p.tokens += c.Tokens
	if c.PromptTokens >= 0 {
		p.prompt = c.PromptTokens
	}
	if c.GenTokens >= 0 {
		p.gen = c.GenTokens
	}
	if c.Prefill > 0 || c.Decode > 0 {
		p.prefill, p.decode, p.prefillTokens, p.decodeToks = c.Prefill, c.Decode, c.PrefillTokens, c.DecodeTokens
	}
}

func parseSSE(s string) (parsed, error) {
	var p parsed
	err := readSSE(strings.NewReader(s), func(data []byte) (bool, error) {
		c, err := decodeSSEData(data)
		if err != nil {
			return false, err
		}
		sumChunks(&p, c)
		return c.Done, nil
	})
	return p, err
}

func parseNDJSON(s string) (parsed, error) {
	var p parsed
	err := readNDJSON(strings.NewReader(s), func(c chunk) error {
		sumChunks(&p, c)
		return nil
	})
	return p, err
}

func TestStreams(t *testing.T) {
	tests := []struct {
		name   string
		ndjson bool
		in     string
		want   parsed
		err    error
		errMsg string
	}{
		{name: "vllm completions", in: vllmStream, want: parsed{done: true, tokens: 2, prompt: 12, gen: 2}},
		{name: "ollama openai with zero usage per chunk, CRLF", in: ollamaOpenAIStream, want: parsed{done: true, tokens: 1, prompt: 7, gen: 1}},
		{name: "chat with comments, events and reasoning", in: chatStream, want: parsed{done: true, tokens: 2, prompt: 9, gen: 2}},
		{name: "llama-server completion", in: llamaStream, want: parsed{done: true, tokens: 2, prompt: 33, gen: 2, prefill: 12500 * time.Microsecond, decode: 8 * time.Millisecond, prefillTokens: 33, decodeToks: 2}},
		{name: "tgi generate_stream", in: tgiStream, want: parsed{done: true, tokens: 1, prompt: 17, gen: 2}},
		{name: "ollama generate", ndjson: true, in: ollamaStream, want: parsed{done: true, tokens: 1, prompt: 15, gen: 16, prefill: 53220396, decode: 1660479308, prefillTokens: 15, decodeToks: 16}},
		{name: "ollama without final newline", ndjson: true, in: strings.TrimSuffix(ollamaStream, "\n"), want: parsed{done: true, tokens: 1, prompt: 15, gen: 16, prefill: 53220396, decode: 1660479308, prefillTokens: 15, decodeToks: 16}},
		{name: "sse cut before [DONE]", in: strings.TrimSuffix(vllmStream, "data: [DONE]\n\n"), err: ErrTruncatedStream},
		{name: "sse empty", in: "", err: ErrTruncatedStream},
		{name: "sse not json", in: "data: hello\n\n", err: ErrMalformedStream},
		{name: "sse json array", in: "data: [1,2]\n\n", err: ErrMalformedStream},
		{name: "sse trailing garbage", in: "data: {\"choices\":[]} x\n\n", err: ErrMalformedStream},
		{name: "sse wrong type", in: "data: {\"usage\":{\"prompt_tokens\":\"many\"}}\n\n", err: ErrMalformedStream},
		{name: "sse html", in: "<!DOCTYPE html>\n<html>\n", err: ErrMalformedStream},
		{name: "sse error object", in: "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n", errMsg: "out of memory"},
		{name: "ndjson cut", ndjson: true, in: `{"response":" a","done":false}` + "\n", err: ErrTruncatedStream},
		{name: "ndjson empty", ndjson: true, in: "", err: ErrTruncatedStream},
		{name: "ndjson not json", ndjson: true, in: "data: {}\n", err: ErrMalformedStream},
		{name: "ndjson neither response nor done", ndjson: true, in: `{"model":"x"}` + "\n", err: ErrMalformedStream},
		{name: "ndjson negative duration", ndjson: true, in: `{"done":true,"prompt_eval_duration":-5}` + "\n", err: ErrMalformedStream},
		{name: "ndjson error", ndjson: true, in: `{"error":"model not found"}` + "\n", errMsg: "model not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parse := parseSSE
			if tc.ndjson {
				parse = parseNDJSON
			}
			got, err := parse(tc.in)
			switch {
			case tc.err != nil || tc.errMsg != "":
				if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(err.Error(), tc.errMsg) {
					t.Errorf("err = %v, want %v %q", err, tc.err, tc.errMsg)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case got != tc.want:
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	in := "data: {\"choices\":[{\"text\":\"" + strings.Repeat("a", maxLine) + "\"}]}\n\n"
	if _, err := parseSSE(in); !errors.Is(err, ErrMalformedStream) {
		t.Errorf("err = %v, want a refused long line", err)
	}
	// A long but allowed line (Ollama's final chunk carries the context).
	in = `{"done":true,"context":[` + strings.Repeat("1,", 200_000) + `1],"eval_count":3,"eval_duration":30}` + "\n"
	if p, err := parseNDJSON(in); err != nil || p.gen != 3 {
		t.Errorf("got %+v, %v", p, err)
	}
}

// checkParse is the contract both parsers keep on any input: no panic;
// either an error, or an end marker with counts that are not negative.
func checkParse(t *testing.T, p parsed, err error) {
	if err != nil {
		return
	}
	if !p.done {
		t.Errorf("stream parsed without error but without an end marker: %+v", p)
	}
	if p.tokens < 0 || p.prompt < 0 || p.gen < 0 || p.prefill < 0 || p.decode < 0 || p.prefillTokens < 0 || p.decodeToks < 0 {
		t.Errorf("negative counts or times from a stream parsed without error: %+v", p)
	}
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{vllmStream, ollamaOpenAIStream, chatStream, llamaStream, tgiStream, "data: [DONE]\n\n", ":\n\ndata:\ndata: x\n\n", "data: {\"error\":null}\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseSSE(string(b))
		checkParse(t, p, err)
	})
}

func FuzzNDJSON(f *testing.F) {
	for _, s := range []string{ollamaStream, `{"done":true}`, "\n\n{\"response\":\"\",\"done\":false}\n{\"done\":true,\"eval_count\":1}\n", `{"error":{"message":"x"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseNDJSON(string(b))
		checkParse(t, p, err)
	})
}

// endless yields "data: xxxx\n" lines and never the blank line that ends an
// event, up to limit bytes; n counts what was read.
type endless struct{ n, limit int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.limit {
		return 0, errors.New("test reader exhausted: the parser kept reading")
	}
	line := "data: " + strings.Repeat("x", 1000) + "\n"
	k := 0
	for k+len(line) <= len(p) && e.n+k < e.limit {
		k += copy(p[k:], line)
	}
	if k == 0 {
		k = copy(p, line[:min(len(p), len(line))])
	}
	e.n += k
	return k, nil
}

// TestEndlessEventIsCapped: a server that sends data: lines and never ends
// the event is cut off once the event passes maxEvent (it drove memory to
// 7.5 GB; issue 15 item 8).
func TestEndlessEventIsCapped(t *testing.T) {
	r := &endless{limit: 64 << 20}
	err := readSSE(r, func([]byte) (bool, error) { return false, nil })
	if !errors.Is(err, ErrMalformedStream) || !strings.Contains(err.Error(), "event") {
		t.Errorf("err = %v, want a malformed stream naming the event size", err)
	}
	if r.n > maxEvent+maxLine+(64<<10) {
		t.Errorf("read %d bytes before stopping, want at most about %d", r.n, maxEvent+maxLine)
	}
}

// FuzzOllamaNumCtx: /api/show's parameters text is a server's; any text
// gives a context of zero (unknown) or a positive count.
func FuzzOllamaNumCtx(f *testing.F) {
	f.Add("num_ctx                        4096\nstop \"<|eot|>\"")
	f.Add("num_ctx -1\nnum_ctx 99999999999999999999999")
	f.Add("")
	f.Fuzz(func(t *testing.T, params string) {
		if n := ollamaNumCtx(params); n < 0 {
			t.Fatalf("ollamaNumCtx(%q) = %d", params, n)
		}
	})
}
