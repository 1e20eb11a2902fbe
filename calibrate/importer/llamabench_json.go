package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// fields is one llama-bench (or vLLM) result object with loosely typed
// values: JSON gives numbers and booleans, CSV gives strings.
type fields map[string]any

// str returns a field as text ("" when absent or null).
func (f fields) str(k string) string {
	switch v := f[k].(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// num returns a numeric field; ok is false when absent or not a finite
// number.
func (f fields) num(k string) (float64, bool) {
	switch v := f[k].(type) {
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	case string:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// count returns a non-negative integer field (0 when absent).
func (f fields) count(k string) int {
	v, ok := f.num(k)
	if !ok || v < 0 || v > 1e9 {
		return 0
	}
	return int(v)
}

// lbFromFields maps llama-bench's JSON/CSV fields to a record.
func lbFromFields(line int, f fields) lbRecord {
	r := lbRecord{
		line: line, commit: f.str("build_commit"), modelFile: f.str("model_filename"),
		modelType: f.str("model_type"), backends: f.str("backends"),
		nPrompt: f.count("n_prompt"), nGen: f.count("n_gen"), nDepth: f.count("n_depth"),
		typeK: f.str("type_k"), ngl: f.str("n_gpu_layers"),
	}
	if n := f.count("build_number"); n > 0 {
		r.build = "b" + strconv.Itoa(n)
	}
	r.avgTS, _ = f.num("avg_ts")
	if sd, ok := f.num("stddev_ts"); ok {
		r.stdTS = strconv.FormatFloat(sd, 'f', 2, 64)
	}
	if backendFromList(r.backends) == "cpu" {
		r.device = f.str("cpu_info")
	} else if g := f.str("gpu_info"); g != "" {
		names := strings.Split(g, ",")
		r.device = strings.TrimSpace(names[0])
		r.devices = len(names)
	}
	for _, k := range []string{"flash_attn", "n_threads", "n_batch", "n_ubatch", "type_v", "split_mode", "n_cpu_moe"} {
		if v := f.str(k); v != "" {
			r.settings = append(r.settings, k+" "+v)
		}
	}
	return r
}

// lineAt returns the 1-based line of byte offset off in data, skipping
// whitespace at off. It counts newlines from the start: for one lookup.
func lineAt(data []byte, off int64) int {
	off = skipSpace(data, off)
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// skipSpace clamps off to data and moves it past whitespace and commas.
func skipSpace(data []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(data)))
	for off < int64(len(data)) && (data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t' || data[off] == ',') {
		off++
	}
	return off
}

// lineIndex finds the line of many offsets in one file in O(log n) each:
// counting newlines from the start for every object made a large import
// quadratic (61 s for one file).
type lineIndex struct {
	data     []byte
	newlines []int64 // offsets of every '\n'
}

func newLineIndex(data []byte) *lineIndex {
	ix := &lineIndex{data: data}
	for i, b := range data {
		if b == '\n' {
			ix.newlines = append(ix.newlines, int64(i))
		}
	}
	return ix
}

// line is lineAt(data, off).
func (ix *lineIndex) line(off int64) int {
	off = skipSpace(ix.data, off)
	return sort.Search(len(ix.newlines), func(i int) bool { return ix.newlines[i] >= off }) + 1
}

// jsonError names the line of a JSON syntax or type error.
func (p *parse) jsonError(base int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return p.errorf(lineAt(p.data, base+se.Offset), "invalid JSON: %w", err)
	case errors.As(err, &te):
		return p.errorf(lineAt(p.data, base+te.Offset), "unexpected JSON value: %w", err)
	}
	return p.errorf(0, "invalid JSON: %w", err)
}

// decodeObjects reads a JSON array of objects or a single object, with the
// line each object starts on.
func (p *parse) decodeObjects() ([]fields, []int, error) {
	dec := json.NewDecoder(bytes.NewReader(p.data))
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, p.jsonError(0, err)
	}
	if tok == json.Delim('{') {
		var f fields
		if err := json.Unmarshal(p.data, &f); err != nil {
			return nil, nil, p.jsonError(0, err)
		}
		return []fields{f}, []int{lineAt(p.data, start)}, nil
	}
	if tok != json.Delim('[') {
		return nil, nil, p.errorf(1, "JSON is neither an array nor an object")
	}
	var out []fields
	var lines []int
	ix := newLineIndex(p.data)
	p.lineBytes += int64(len(p.data))
	for dec.More() {
		off := dec.InputOffset()
		var f fields
		if err := dec.Decode(&f); err != nil {
			return nil, nil, p.jsonError(0, err)
		}
		out = append(out, f)
		lines = append(lines, ix.line(off))
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, p.jsonError(0, err)
	}
	return out, lines, nil
}

// decodeLines reads one JSON object per line (JSONL); a line that is not a
// JSON object is a warning, not an error.
func (p *parse) decodeLines() ([]fields, []int) {
	var out []fields
	var lines []int
	for i, line := range p.lines {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		var f fields
		if err := json.Unmarshal([]byte(s), &f); err != nil || f == nil {
			p.warn(i+1, "not a JSON object; line skipped")
			continue
		}
		out = append(out, f)
		lines = append(lines, i+1)
	}
	return out, lines
}

// parseLlamaBenchJSON reads `llama-bench -o json`: an array of result
// objects.
func parseLlamaBenchJSON(p *parse) error {
	objs, lines, err := p.decodeObjects()
	if err != nil {
		return err
	}
	for i, f := range objs {
		p.addLlamaBench(lbFromFields(lines[i], f))
	}
	return nil
}

// parseLlamaBenchJSONL reads `llama-bench -o jsonl`: one object per line.
func parseLlamaBenchJSONL(p *parse) error {
	objs, lines := p.decodeLines()
	for i, f := range objs {
		p.addLlamaBench(lbFromFields(lines[i], f))
	}
	return nil
}

// parseLlamaBenchCSV reads `llama-bench -o csv`: a header and one row per
// result, every value quoted.
func parseLlamaBenchCSV(p *parse) error {
	cr := csv.NewReader(bytes.NewReader(p.data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return p.errorf(1, "reading CSV header: %w", err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(header[i], "\ufeff"))
	}
	if !contains(header, "avg_ts") {
		return p.errorf(1, "CSV header lacks avg_ts: not llama-bench -o csv")
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				p.warn(pe.Line, "bad CSV row skipped: %v", pe.Err)
				continue
			}
			return p.errorf(line, "reading CSV: %w", err)
		}
		if len(rec) != len(header) {
			p.warn(line, "CSV row has %d fields, the header %d; skipped", len(rec), len(header))
			continue
		}
		f := fields{}
		for j, h := range header {
			f[h] = rec[j]
		}
		p.addLlamaBench(lbFromFields(line, f))
	}
	return nil
}
