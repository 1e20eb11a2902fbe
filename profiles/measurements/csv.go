// Package measurements reads and writes rows of Headroom's measurement
// schema (see data/README.md, copied from the published-measurements
// collection) and embeds the published measurements the performance model
// is fitted and validated on.
package measurements

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Published is measurements.csv as shipped (963 rows from benchmark
// repositories, engine docs, MLPerf logs and the seed documents; every row
// names its source and states its workload in the scenario columns).
// Never edit a row to suit the model.
//
//go:embed data/measurements.csv
var Published []byte

// RowError is a problem with one CSV row; reading goes on past it.
type RowError struct {
	File string
	Line int
	Col  string
	Err  error
}

func (e *RowError) Error() string {
	if e.Col != "" {
		return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Col, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// LoadPublished parses the embedded published measurements.
func LoadPublished() ([]planner.Measurement, []error, error) {
	return Read(bytes.NewReader(Published), "measurements.csv")
}

// ErrNoRows is returned by Read for a file with a header and no rows.
var ErrNoRows = errors.New("no measurement rows after the header")

// Read parses a CSV in the measurement schema. Columns are found by header
// name, so extra or reordered columns are fine, and files written before
// the scenario columns existed still read (those columns blank). Bad rows
// are returned as RowErrors naming the file line where the row starts and
// skipped; a missing header or required column, or a file with no rows
// at all, is fatal.
func Read(r io.Reader, name string) ([]planner.Measurement, []error, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.ToLower(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, req := range []string{"hardware", "engine", "model", "metric", "value"} {
		if _, ok := col[req]; !ok {
			return nil, nil, fmt.Errorf("%s: header lacks column %q (need %s)", name, req, strings.Join(planner.MeasurementHeader, ","))
		}
	}
	var out []planner.Measurement
	var rowErrs []error
	records := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		records++
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				rowErrs = append(rowErrs, &RowError{File: name, Err: err})
				break
			}
			rowErrs = append(rowErrs, &RowError{File: name, Line: pe.StartLine, Err: err})
			continue
		}
		// The line the record starts on, not its ordinal: a quoted note
		// with a newline spans lines.
		line, _ := cr.FieldPos(0)
		m, rerr := parseRow(rec, col, name, line)
		if rerr != nil {
			rowErrs = append(rowErrs, rerr)
			continue
		}
		out = append(out, m)
	}
	if records == 0 {
		return nil, nil, fmt.Errorf("%s: %w", name, ErrNoRows)
	}
	return out, rowErrs, nil
}

func parseRow(rec []string, col map[string]int, name string, line int) (planner.Measurement, error) {
	get := func(k string) string {
		i, ok := col[k]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	var firstErr error
	num := func(k string) int {
		s := get(k)
		if s == "" {
			return 0
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v > 1e12 || math.IsNaN(v) {
			if firstErr == nil {
				firstErr = &RowError{File: name, Line: line, Col: k, Err: fmt.Errorf("%q is not a non-negative number", s)}
			}
			return 0
		}
		return int(v)
	}
	m := planner.Measurement{
		Hardware: get("hardware"), Engine: get("engine"), Backend: get("backend"),
		EngineVersion: get("engine_version"), Model: get("model"), Quant: get("quant"),
		KVType: get("kv_type"), Metric: planner.Metric(get("metric")), Unit: get("unit"),
		Source: get("source"), Notes: get("notes"),
	}
	m.Devices = num("devices")
	m.PromptTokens = num("prompt_tokens")
	m.GenTokens = num("gen_tokens")
	m.Concurrency = num("concurrency")
	m.ContextDepth = num("context_depth")
	m.NumPrompts = num("num_prompts")
	if firstErr != nil {
		return m, firstErr
	}
	if err := parseWorkloadColumns(&m, get); err != nil {
		return m, &RowError{File: name, Line: line, Col: err.col, Err: err.err}
	}
	v, err := strconv.ParseFloat(get("value"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return m, &RowError{File: name, Line: line, Col: "value", Err: fmt.Errorf("%q is not a positive number", get("value"))}
	}
	m.Value = v
	if m.Hardware == "" || m.Model == "" || m.Metric == "" {
		return m, &RowError{File: name, Line: line, Err: errors.New("hardware, model and metric must not be empty")}
	}
	if m.Devices == 0 {
		m.Devices = 1
	}
	return m, nil
}

// columnError is a bad cell of the workload columns.
type columnError struct {
	col string
	err error
}

// parseWorkloadColumns reads scenario, request_rate, lengths and statistic
// into m's typed fields.
func parseWorkloadColumns(m *planner.Measurement, get func(string) string) *columnError {
	var err error
	if m.Scenario, err = planner.ParseWorkloadKind(get("scenario")); err != nil {
		return &columnError{"scenario", err}
	}
	if s := get("request_rate"); s != "" {
		r, perr := strconv.ParseFloat(s, 64)
		if perr != nil || !(r > 0) || r > 1e6 {
			return &columnError{"request_rate", fmt.Errorf("%q is not a positive rate (requests/s)", s)}
		}
		m.RequestRate = r
	}
	if m.Lengths, err = planner.ParseLengths(get("lengths")); err != nil {
		return &columnError{"lengths", err}
	}
	if m.Statistic, err = planner.ParseStatistic(get("statistic")); err != nil {
		return &columnError{"statistic", err}
	}
	return nil
}

// Write writes rows as CSV with the schema's header.
func Write(w io.Writer, rows []planner.Measurement) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(planner.MeasurementHeader); err != nil {
		return err
	}
	itoa := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	rate := func(r float64) string {
		if r == 0 {
			return ""
		}
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	for _, m := range rows {
		rec := []string{m.Hardware, strconv.Itoa(max(m.Devices, 1)), m.Engine, m.Backend, m.EngineVersion, m.Model, m.Quant, m.KVType,
			itoa(m.PromptTokens), itoa(m.GenTokens), itoa(m.Concurrency), strconv.Itoa(m.ContextDepth), string(m.Metric),
			strconv.FormatFloat(m.Value, 'g', -1, 64), m.Unit, m.Source, m.Notes,
			string(m.Scenario), rate(m.RequestRate), itoa(m.NumPrompts), string(m.Lengths), string(m.Statistic)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
