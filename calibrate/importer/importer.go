package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// Format names an input format the importer reads.
type Format string

// Formats the importer reads.
const (
	LlamaBenchMarkdown Format = "llama-bench-md"    // llama-bench -o md (the default)
	LlamaBenchCSV      Format = "llama-bench-csv"   // llama-bench -o csv
	LlamaBenchJSON     Format = "llama-bench-json"  // llama-bench -o json
	LlamaBenchJSONL    Format = "llama-bench-jsonl" // llama-bench -o jsonl
	VLLMServeText      Format = "vllm-serve"        // vllm bench serve / benchmark_serving.py console output
	VLLMServeJSON      Format = "vllm-serve-json"   // vllm bench serve --save-result
	HappyVLLM          Format = "happy-vllm"        // happy_vllm benchmark_llm_serving model card
	TGIBenchmark       Format = "tgi-benchmark"     // text-generation-benchmark markdown tables
	// BatchedBenchMarkdown is llama-batched-bench's table (the default).
	BatchedBenchMarkdown Format = "llama-batched-bench-md"
	// BatchedBenchJSONL is llama-batched-bench --output-format jsonl.
	BatchedBenchJSONL Format = "llama-batched-bench-jsonl"
)

// Formats lists every format in detection order.
var Formats = []Format{LlamaBenchJSON, LlamaBenchJSONL, BatchedBenchJSONL, LlamaBenchCSV, VLLMServeJSON, VLLMServeText, LlamaBenchMarkdown, BatchedBenchMarkdown, HappyVLLM, TGIBenchmark}

// ParseFormat returns the Format named s ("" is not a format).
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(string(f), strings.TrimSpace(s)) {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (known: %s)", s, strings.Join(names, ", "))
}

// MaxInputBytes bounds what Import reads: benchmark outputs are small, and a
// larger file is not one.
const MaxInputBytes = 64 << 20

// Sentinel errors, wrapped in a *ParseError that names the file.
var (
	// ErrUnknownFormat says no known benchmark output was recognized.
	ErrUnknownFormat = errors.New("not a benchmark output Headroom reads (llama-bench md/csv/json/jsonl, llama-batched-bench md/jsonl, vllm bench serve text or --save-result json, happy_vllm model card, TGI benchmark tables)")
	// ErrNoResults says the format was recognized but no result could be read.
	ErrNoResults = errors.New("no benchmark results found")
)

// ParseError is a problem that stops the import of a file. Line is 1-based;
// 0 means the problem is not tied to one line.
type ParseError struct {
	File string
	Line int
	Err  error
}

// Error formats the error as "file:line: message".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the underlying error (ErrUnknownFormat, ErrNoResults, a
// JSON or CSV error).
func (e *ParseError) Unwrap() error { return e.Err }

// Warning is something the user should know about an imported file: a
// guess, a value the file did not state, a row that was skipped.
type Warning struct {
	File string
	Line int // 0: the whole file
	Msg  string
}

// String formats the warning as "file:line: msg".
func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Msg)
}

// Context carries what a benchmark file does not say. Hardware and Model
// override the file; every other non-zero field fills only what the file
// leaves unsaid (a warning reports a disagreement).
type Context struct {
	Hardware      string // catalog id of ONE device (nvidia-a100-sxm4-80gb)
	Model         string // catalog model id (Hugging Face repo id of the weights family)
	Engine        string // llama.cpp, vllm, tgi, sglang, ollama ...
	EngineVersion string // as published: b6327, 0.6.3.post1 ...
	Quant         string // weight format id (q4_k_m, f16, gptq-int4 ...)
	KVType        string // KV-cache element type; default f16 or the model's dtype
	Backend       string // cuda, rocm, vulkan, metal, sycl, cpu
	Devices       int    // number of devices; 0 = as the file says, else 1
	// Source fills the source column; empty means the file's base name.
	Source string
	// Format forces one parser; empty means detect from the content.
	Format Format
	// Catalog, when set, maps the file's model and device names to catalog
	// ids and gives unquantized checkpoints their native dtype.
	Catalog *planner.Catalog
}

// Result is what one file gave.
type Result struct {
	// Formats are the formats found in the file (seed-style notes can hold
	// vllm bench serve runs and llama-bench tables together).
	Formats []Format
	// Rows are the measurements, in file order.
	Rows []planner.Measurement
	// Lines[i] is the 1-based line of the file Rows[i] was read from.
	Lines []int
	// Warnings are guesses, gaps and skipped rows, in file order.
	Warnings []Warning
}

// Import reads one benchmark output and returns its measurements. name is
// used in errors, warnings and (unless ctx.Source is set) the source column.
func Import(r io.Reader, name string, ctx Context) (Result, error) {
	if name == "" || name == "-" {
		name = "stdin"
	}
	name = textsafe.Printable(name, 4*maxField)
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return Result{}, &ParseError{File: name, Err: fmt.Errorf("reading: %w", err)}
	}
	if len(data) > MaxInputBytes {
		return Result{}, &ParseError{File: name, Err: fmt.Errorf("larger than %d MiB: %w", MaxInputBytes>>20, ErrUnknownFormat)}
	}
	formats := []Format{ctx.Format}
	if ctx.Format == "" {
		formats = DetectFormats(data)
	}
	if len(formats) == 0 {
		return Result{}, &ParseError{File: name, Err: ErrUnknownFormat}
	}
	p := newParse(name, data)
	for _, f := range formats {
		parser, ok := parsers[f]
		if !ok {
			return Result{}, &ParseError{File: name, Err: fmt.Errorf("unknown format %q", f)}
		}
		if err := parser(p); err != nil {
			return Result{}, err
		}
	}
	res := Result{Formats: formats}
	if len(p.drafts) == 0 {
		res.Warnings = p.sortedWarnings()
		return res, &ParseError{File: name, Err: ErrNoResults}
	}
	sort.SliceStable(p.drafts, func(i, j int) bool { return p.drafts[i].line < p.drafts[j].line })
	r2 := newResolver(ctx, p)
	for _, d := range p.drafts {
		row := printableRow(r2.finish(d))
		res.Rows = append(res.Rows, row)
		res.Lines = append(res.Lines, d.line)
		p.checkBound(ctx.Catalog, d.line, row)
	}
	res.Warnings = p.sortedWarnings()
	return res, nil
}

// ImportFile imports the benchmark output at path, which must be a regular
// file of at most MaxInputBytes: a FIFO, a device or a directory is
// refused at once (internal/safefile) instead of blocking or reading
// without end. Errors are *ParseError naming path.
func ImportFile(path string, ctx Context) (Result, error) {
	f, err := safefile.Open(path, MaxInputBytes)
	if err != nil {
		return Result{}, &ParseError{File: textsafe.Printable(path, 4*maxField), Err: err}
	}
	defer f.Close()
	return Import(f, path, ctx)
}

// DetectFormat returns the first format found in data, or an error wrapping
// ErrUnknownFormat.
func DetectFormat(data []byte) (Format, error) {
	fs := DetectFormats(data)
	if len(fs) == 0 {
		return "", ErrUnknownFormat
	}
	return fs[0], nil
}

// DetectFormats returns every format found in data. Structured outputs
// (JSON, JSONL, CSV) are exclusive; text outputs can share a file.
func DetectFormats(data []byte) []Format {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	if f, ok := detectStructured(trimmed); ok {
		return []Format{f}
	}
	text := string(data)
	var out []Format
	if strings.Contains(text, "Serving Benchmark Result") {
		out = append(out, VLLMServeText)
	}
	if hasLlamaBenchTable(text) {
		out = append(out, LlamaBenchMarkdown)
	}
	if hasBatchedBenchTable(text) {
		out = append(out, BatchedBenchMarkdown)
	}
	if isHappyVLLM(text) {
		out = append(out, HappyVLLM)
	}
	if isTGIBenchmark(text) {
		out = append(out, TGIBenchmark)
	}
	return out
}

// detectStructured recognizes JSON, JSONL and CSV outputs by their keys.
func detectStructured(t []byte) (Format, bool) {
	first, _, _ := bytes.Cut(t, []byte("\n"))
	first = bytes.TrimSpace(first)
	switch t[0] {
	case '[':
		if bytes.Contains(t, []byte(`"avg_ts"`)) || bytes.Contains(t, []byte(`"build_commit"`)) {
			return LlamaBenchJSON, true
		}
		if isVLLMJSON(t) {
			return VLLMServeJSON, true
		}
	case '{':
		if isVLLMJSON(t) {
			return VLLMServeJSON, true
		}
		if bytes.Contains(first, []byte(`"speed_pp"`)) && bytes.Contains(first, []byte(`"pl"`)) {
			return BatchedBenchJSONL, true
		}
		if bytes.Contains(first, []byte(`"avg_ts"`)) || bytes.Contains(first, []byte(`"build_commit"`)) {
			return LlamaBenchJSONL, true
		}
		if bytes.Contains(t, []byte(`"avg_ts"`)) {
			return LlamaBenchJSON, true
		}
	}
	if bytes.Contains(first, []byte("avg_ts")) && bytes.Contains(first, []byte(",")) && !bytes.HasPrefix(first, []byte("|")) {
		return LlamaBenchCSV, true
	}
	return "", false
}

func isVLLMJSON(t []byte) bool {
	for _, k := range []string{`"mean_ttft_ms"`, `"request_throughput"`, `"output_throughput"`} {
		if bytes.Contains(t, []byte(k)) {
			return true
		}
	}
	return false
}

// parsers maps each format to its parser.
var parsers = map[Format]func(*parse) error{
	LlamaBenchMarkdown: parseLlamaBenchMarkdown,
	LlamaBenchCSV:      parseLlamaBenchCSV,
	LlamaBenchJSON:     parseLlamaBenchJSON,
	LlamaBenchJSONL:    parseLlamaBenchJSONL,
	VLLMServeText:      parseVLLMServeText,
	VLLMServeJSON:      parseVLLMServeJSON,
	HappyVLLM:          parseHappyVLLM,
	TGIBenchmark:       parseTGI,

	BatchedBenchMarkdown: parseBatchedBenchMarkdown,
	BatchedBenchJSONL:    parseBatchedBenchJSONL,
}

// draft is one row as the file states it, before Context and the catalog
// fill the gaps. Empty fields mean "not stated".
type draft struct {
	line int
	m    planner.Measurement
	// model and hardware are the names the file uses (a path, a checkpoint,
	// "A100-80g"); resolved to catalog ids later.
	model    string
	hardware string
	// modelDesc describes the model when the file gives no name to resolve
	// ("llama 7B Q4_0"), for the warning.
	modelDesc string
	// quantHint is a weight format read from a heading or title; the model
	// name's own format wins over it.
	quantHint string
	// weakEngine marks m.Engine as a guess that Context.Engine overrides.
	weakEngine bool
	// nativeQuant says the run used the checkpoint's own dtype (vLLM dtype
	// auto, no quantization).
	nativeQuant bool
	notes       []string
}

// parse is the state shared by the parsers of one file.
type parse struct {
	name     string
	data     []byte
	lines    []string // without line terminators; lines[0] is line 1
	drafts   []draft
	warnings []Warning
	seen     map[string]bool
	// lineBytes counts the bytes scanned to find the lines of JSON objects,
	// so a test can tell a linear import from a quadratic one.
	lineBytes int64
}

func newParse(name string, data []byte) *parse {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	return &parse{name: name, data: data, lines: strings.Split(text, "\n"), seen: map[string]bool{}}
}

// Caps on text taken from a file: a field of a row, and a warning.
const (
	maxField   = 256
	maxWarning = 1024
)

// printableRow makes every text field of a row printable and bounded
// (internal/textsafe): a benchmark file is outside input, and its model
// names and notes reach terminals, CSV files and the GUI.
func printableRow(m planner.Measurement) planner.Measurement {
	for _, f := range []*string{&m.Hardware, &m.Engine, &m.Backend, &m.EngineVersion, &m.Model, &m.Quant, &m.KVType, &m.Unit, &m.Source} {
		*f = textsafe.Printable(*f, maxField)
	}
	m.Notes = textsafe.Printable(m.Notes, 4*maxField)
	return m
}

// warn records a warning once per distinct message; the message is made
// printable and bounded, since it quotes the file.
func (p *parse) warn(line int, format string, a ...any) {
	msg := textsafe.Printable(fmt.Sprintf(format, a...), maxWarning)
	if p.seen[msg] {
		return
	}
	p.seen[msg] = true
	p.warnings = append(p.warnings, Warning{File: p.name, Line: line, Msg: msg})
}

// checkBound warns about a row beyond what its own columns allow
// physically (planner.RowBound): a device, model or format named wrong
// (a flag or a guess from the file) shows here before the row reaches a
// fit. The row is kept.
func (p *parse) checkBound(c *planner.Catalog, line int, m planner.Measurement) {
	if c == nil {
		return
	}
	if b, ok := planner.RowBound(c, m); ok && b.Breached(m.Value) {
		p.warn(line, "%s %.4g on %s (%s %s) is beyond what these columns allow physically, %s: check --hardware, --model, --quant and --kv-type", m.Metric, m.Value, m.Hardware, m.Model, m.Quant, b)
	}
}

func (p *parse) errorf(line int, format string, a ...any) error {
	return &ParseError{File: p.name, Line: line, Err: fmt.Errorf(format, a...)}
}

func (p *parse) add(d draft) { p.drafts = append(p.drafts, d) }

func (p *parse) sortedWarnings() []Warning {
	sort.SliceStable(p.warnings, func(i, j int) bool { return p.warnings[i].Line < p.warnings[j].Line })
	return p.warnings
}

// defaultSource is the source column for a file: its base name.
func defaultSource(name string) string {
	return filepath.Base(name)
}
