package endpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/headroom-planner/headroom/internal/textsafe"
)

// Sentinel errors of a broken stream; requests wrap them with the URL and
// the step.
var (
	// ErrMalformedStream means the server sent bytes that are not the
	// stream format it announced (SSE or NDJSON), or a chunk that is not the
	// JSON object the API defines.
	ErrMalformedStream = errors.New("malformed stream")
	// ErrTruncatedStream means the stream ended before its end marker
	// ([DONE], a final chunk, done:true): the server died or closed the
	// connection mid-response.
	ErrTruncatedStream = errors.New("stream ended before the response was complete")
	// ErrStalled means the server sent nothing for longer than the stall
	// timeout.
	ErrStalled = errors.New("server stalled")
)

// maxLine bounds one SSE or NDJSON line. Generation chunks are a few hundred
// bytes; a final Ollama chunk carries the context array (a few tokens per
// prompt token), so the bound is generous.
const maxLine = 4 << 20

// maxEvent bounds the data of one SSE event (its data: lines joined). A
// server that sends data: lines and never the blank line that ends an
// event would otherwise grow the buffer without limit.
const maxEvent = 8 << 20

// maxMessage bounds an error message a server sends in a stream, as kept
// and printed.
const maxMessage = 512

// chunk is one decoded message of a completion stream, whatever the API.
type chunk struct {
	// Tokens is the number of generated tokens the chunk carries: 1 for a
	// chunk with generated text (streams send one token per chunk; the
	// final usage corrects the count), 0 for a usage-only or final chunk.
	Tokens int
	// Done marks the stream's last message.
	Done bool
	// PromptTokens and GenTokens are the server's counts when the chunk
	// states them (OpenAI usage, Ollama prompt_eval_count/eval_count,
	// llama-server tokens_evaluated, TGI details); -1 when not stated.
	PromptTokens, GenTokens int
	// Server-side timings when the chunk carries them: prompt processing
	// and decode time with the token counts they cover (Ollama durations,
	// llama-server timings). Zero when not stated.
	PrefillTokens, DecodeTokens int
	Prefill, Decode             time.Duration
}

func newChunk() chunk { return chunk{PromptTokens: -1, GenTokens: -1} }

// readSSE reads a server-sent event stream (the WHATWG EventSource format:
// "data:" lines, ":" comments, blank-line dispatch) and calls onData with
// the data of each event. It stops when onData reports done or at the end
// of the stream, which is ErrTruncatedStream if no event reported done.
func readSSE(r io.Reader, onData func(data []byte) (done bool, err error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	hasData := false
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if line == nil { // end of stream
			if hasData {
				if done, err := onData(data); err != nil || done {
					return err
				}
			}
			return ErrTruncatedStream
		}
		if len(line) == 0 {
			if hasData {
				done, err := onData(data)
				if err != nil || done {
					return err
				}
			}
			data, hasData = data[:0], false
			continue
		}
		field, value, err := sseField(line)
		if err != nil {
			return err
		}
		if field != "data" {
			continue // event, id, retry and comments carry nothing we use
		}
		if len(data)+len(value)+1 > maxEvent {
			return fmt.Errorf("%w: an event's data passed %d bytes without the blank line that ends it", ErrMalformedStream, maxEvent)
		}
		if hasData {
			data = append(data, '\n')
		}
		data = append(data, value...)
		hasData = true
	}
}

// sseField splits "field: value" as the EventSource spec does. Lines of a
// completion stream are ASCII field names; a line that has no colon and is
// not a known field name is refused, so that an HTML page or a JSON body
// served as a stream is caught early.
func sseField(line []byte) (string, []byte, error) {
	if line[0] == ':' {
		return "", nil, nil // comment (keep-alive)
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && bytes.HasPrefix(value, []byte{' '}) {
		value = value[1:]
	}
	switch string(name) {
	case "data", "event", "id", "retry":
		return string(name), value, nil
	}
	return "", nil, fmt.Errorf("%w: line %q is not a server-sent event field", ErrMalformedStream, clip(line))
}

// readLine returns the next line without its end (\n or \r\n),
// nil at a clean end of stream, and an error for a read error or a line
// longer than maxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrMalformedStream, maxLine)
		}
		switch {
		case err == nil:
			return trimEOL(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, nil
			}
			return trimEOL(line), nil // last line without newline
		default:
			return nil, err
		}
	}
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if line == nil {
		return []byte{}
	}
	return line
}

// sseChunk is the union of the JSON chunks the SSE APIs send: OpenAI
// completions and chat completions (vLLM, SGLang, TGI, llama-server,
// Ollama), llama-server's /completion and TGI's /generate_stream.
type sseChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// llama-server (/completion, and the OpenAI endpoints of recent builds).
	Content         *string   `json:"content"`
	Stop            bool      `json:"stop"`
	TokensEvaluated *int      `json:"tokens_evaluated"`
	TokensPredicted *int      `json:"tokens_predicted"`
	Timings         *timings  `json:"timings"`
	Error           jsonError `json:"error"`
	// TGI /generate_stream.
	Token *struct {
		Text    string `json:"text"`
		Special bool   `json:"special"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		GeneratedTokens int  `json:"generated_tokens"`
		InputLength     *int `json:"input_length"`
	} `json:"details"`
}

// timings is llama-server's per-request timing block (tools/server
// server.cpp, result_timings).
type timings struct {
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

// jsonError is an "error" member: a string (Ollama, TGI) or an object with a
// message (OpenAI, vLLM, llama-server).
type jsonError string

func (e *jsonError) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*e = jsonError(s)
		return nil
	}
	var o struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	if o.Message == "" && !bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Message = string(clip(b))
	}
	*e = jsonError(o.Message)
	return nil
}

// decodeSSEData decodes the data of one SSE event. "[DONE]" ends an OpenAI
// stream; llama-server's /completion ends with stop:true and TGI's
// /generate_stream with a non-null generated_text.
func decodeSSEData(data []byte) (chunk, error) {
	c := newChunk()
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		c.Done = true
		return c, nil
	}
	var m sseChunk
	if err := strictUnmarshal(data, &m); err != nil {
		return c, fmt.Errorf("%w: event %q: %v", ErrMalformedStream, clip(data), err)
	}
	if m.Error != "" {
		return c, &StreamError{Message: textsafe.Printable(string(m.Error), maxMessage)}
	}
	for _, ch := range m.Choices {
		if ch.Text != "" || ch.Delta.Content != "" || ch.Delta.ReasoningContent != "" {
			c.Tokens = 1
		}
	}
	if m.Usage != nil && (m.Usage.PromptTokens > 0 || m.Usage.CompletionTokens > 0) {
		c.PromptTokens, c.GenTokens = m.Usage.PromptTokens, m.Usage.CompletionTokens
	}
	llamaChunk(&c, m)
	tgiChunk(&c, m)
	if c.PromptTokens < -1 || c.GenTokens < -1 || c.PrefillTokens < 0 || c.DecodeTokens < 0 || c.Prefill < 0 || c.Decode < 0 {
		return c, fmt.Errorf("%w: negative count or time in %q", ErrMalformedStream, clip(data))
	}
	return c, nil
}

// llamaChunk reads llama-server's fields: content with stop, and on the last
// chunk tokens_evaluated, tokens_predicted and timings.
func llamaChunk(c *chunk, m sseChunk) {
	if m.Content != nil && *m.Content != "" && !m.Stop {
		c.Tokens = 1
	}
	if m.Content != nil && m.Stop {
		c.Done = true
	}
	if m.TokensEvaluated != nil {
		c.PromptTokens = *m.TokensEvaluated
	}
	if m.TokensPredicted != nil {
		c.GenTokens = *m.TokensPredicted
	}
	if t := m.Timings; t != nil {
		c.PrefillTokens, c.Prefill = t.PromptN, msDuration(t.PromptMS)
		c.DecodeTokens, c.Decode = t.PredictedN, msDuration(t.PredictedMS)
	}
}

// tgiChunk reads TGI's /generate_stream fields: one token per event, and
// details with the counts on the last one.
func tgiChunk(c *chunk, m sseChunk) {
	if m.Token != nil && !m.Token.Special {
		c.Tokens = 1
	}
	if m.GeneratedText != nil {
		c.Done = true
	}
	if d := m.Details; d != nil {
		c.GenTokens = d.GeneratedTokens
		if d.InputLength != nil {
			c.PromptTokens = *d.InputLength
		}
	}
}

// ollamaChunk is one line of Ollama's /api/generate NDJSON stream
// (api/types.go GenerateResponse, Metrics; durations in nanoseconds).
type ollamaChunk struct {
	Response           *string   `json:"response"`
	Thinking           string    `json:"thinking"`
	Done               bool      `json:"done"`
	PromptEvalCount    int       `json:"prompt_eval_count"`
	PromptEvalDuration int64     `json:"prompt_eval_duration"`
	EvalCount          int       `json:"eval_count"`
	EvalDuration       int64     `json:"eval_duration"`
	Error              jsonError `json:"error"`
}

// readNDJSON reads Ollama's /api/generate stream, one JSON object per line,
// and calls onChunk for each. The stream must end with done:true.
func readNDJSON(r io.Reader, onChunk func(chunk) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if line == nil {
			return ErrTruncatedStream
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c, err := decodeOllamaLine(line)
		if err != nil {
			return err
		}
		if err := onChunk(c); err != nil {
			return err
		}
		if c.Done {
			return nil
		}
	}
}

// decodeOllamaLine decodes one NDJSON line of /api/generate.
func decodeOllamaLine(line []byte) (chunk, error) {
	c := newChunk()
	var m ollamaChunk
	if err := strictUnmarshal(line, &m); err != nil {
		return c, fmt.Errorf("%w: line %q: %v", ErrMalformedStream, clip(line), err)
	}
	if m.Error != "" {
		return c, &StreamError{Message: textsafe.Printable(string(m.Error), maxMessage)}
	}
	if m.Response == nil && !m.Done {
		return c, fmt.Errorf("%w: line %q has neither response nor done", ErrMalformedStream, clip(line))
	}
	if !m.Done && (*m.Response != "" || m.Thinking != "") {
		c.Tokens = 1
	}
	if !m.Done {
		return c, nil
	}
	if m.PromptEvalDuration < 0 || m.EvalDuration < 0 || m.PromptEvalCount < 0 || m.EvalCount < 0 {
		return c, fmt.Errorf("%w: negative count or duration in %q", ErrMalformedStream, clip(line))
	}
	c.Done = true
	c.PromptTokens, c.GenTokens = m.PromptEvalCount, m.EvalCount
	c.PrefillTokens, c.Prefill = m.PromptEvalCount, time.Duration(m.PromptEvalDuration)
	c.DecodeTokens, c.Decode = m.EvalCount, time.Duration(m.EvalDuration)
	return c, nil
}

// strictUnmarshal decodes one JSON object and refuses anything else (an
// array, a number, trailing data).
func strictUnmarshal(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// msDuration converts milliseconds to a Duration, saturating absurd values.
func msDuration(ms float64) time.Duration {
	const maxMS = float64(1<<62) / float64(time.Millisecond)
	switch {
	case ms > maxMS:
		return time.Duration(1 << 62)
	case ms < -maxMS:
		return -time.Duration(1 << 62)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// clip shortens b for an error message.
func clip(b []byte) []byte {
	const n = 120
	if len(b) <= n {
		return b
	}
	return append(append([]byte{}, b[:n]...), "..."...)
}

// StreamError is an error the server reported inside a stream (an "error"
// member in a chunk) after answering 200.
type StreamError struct {
	Message string
}

func (e *StreamError) Error() string { return "server reported an error in the stream: " + e.Message }
