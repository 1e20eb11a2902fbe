package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-planner/headroom/internal/safefile"
	"github.com/headroom-planner/headroom/internal/textsafe"
)

func TestParseNumberRefusesNonFinite(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"878.31 ± 4.11", 878.31, true},
		{"**871.62**", 871.62, true},
		{"~13500 t/s", 13500, true},
		{"NaN ± 1", 0, false},
		{"nan", 0, false},
		{"-nan ± 0.00", 0, false},
		{"inf ± 2", 0, false},
		{"Infinity", 0, false},
		{"n/a, 5", 0, false},
		{"1e999", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, ok := parseNumber(tc.in)
			if ok != tc.ok || ok && v != tc.want {
				t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestNonFiniteValuesAreNotImported: llama-bench markdown "NaN ± 1" was
// imported as 1 (issue 15 item 13). In every format a NaN or infinite
// rate is skipped with a warning; the finite row beside it is kept.
func TestNonFiniteValuesAreNotImported(t *testing.T) {
	const md = "| model | backend | test | t/s |\n|---|---|---|---|\n| llama 7B Q4_0 | CUDA | pp512 | 100 ± 1 |\n| llama 7B Q4_0 | CUDA | tg128 | %s |\n"
	const csv = "\"model_type\",\"backends\",\"n_prompt\",\"n_gen\",\"avg_ts\"\n\"llama 7B Q4_0\",\"CUDA\",\"512\",\"0\",\"100\"\n\"llama 7B Q4_0\",\"CUDA\",\"0\",\"128\",\"%s\"\n"
	const jsonl = "{\"model_type\":\"llama 7B Q4_0\",\"backends\":\"CUDA\",\"n_prompt\":512,\"n_gen\":0,\"avg_ts\":100}\n{\"model_type\":\"llama 7B Q4_0\",\"backends\":\"CUDA\",\"n_prompt\":0,\"n_gen\":128,\"avg_ts\":\"%s\"}\n"
	for _, format := range []struct{ name, text string }{{"md", md}, {"csv", csv}, {"jsonl", jsonl}} {
		for _, bad := range []string{"NaN ± 1", "NaN", "inf", "-Infinity ± 3"} {
			t.Run(format.name+" "+bad, func(t *testing.T) {
				in := fmt.Sprintf(format.text, bad)
				res, err := Import(strings.NewReader(in), "t."+format.name, Context{Hardware: "nvidia-rtx-4080", Model: "meta-llama/Llama-2-7b-hf"})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) != 1 || res.Rows[0].Value != 100 {
					t.Errorf("rows %+v, want only the finite 100 t/s row", res.Rows)
				}
				if len(res.Warnings) == 0 {
					t.Error("the skipped row has no warning")
				}
			})
		}
	}
}

// TestLargeJSONImportIsLinear: each object's line was found by counting
// newlines from the start of the file, so a large llama-bench JSON took
// quadratic time (61 s; issue 15 item 10). The lines must still be right.
func TestLargeJSONImportIsLinear(t *testing.T) {
	const n = 20000
	var b bytes.Buffer
	b.WriteString("[\n")
	for i := range n {
		obj := map[string]any{"model_type": "llama 7B Q4_0", "backends": "CUDA", "n_prompt": 512 + i, "n_gen": 0, "avg_ts": 100 + float64(i%7),
			"samples_ts": []float64{99, 100, 101}, "build_commit": "4d74393bc", "gpu_info": "NVIDIA GeForce RTX 4080"}
		enc, _ := json.MarshalIndent(obj, "  ", "  ")
		b.WriteString("  ")
		b.Write(enc)
		if i < n-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	data := b.Bytes()
	objLines := bytes.Count(data, []byte("\n")) / n
	res, err := Import(bytes.NewReader(data), "big.json", Context{Hardware: "nvidia-rtx-4080", Model: "meta-llama/Llama-2-7b-hf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != n {
		t.Fatalf("%d rows, want %d", len(res.Rows), n)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if want := 2 + i*objLines; res.Lines[i] != want {
			t.Errorf("row %d on line %d, want %d", i, res.Lines[i], want)
		}
	}
	// Finding every object's line scans the file once, not once per object.
	p := newParse("big.json", data)
	if err := parseLlamaBenchJSON(p); err != nil {
		t.Fatal(err)
	}
	if p.lineBytes > 2*int64(len(data)) {
		t.Errorf("scanned %d bytes to number the lines of a %d-byte file", p.lineBytes, len(data))
	}
	ix := newLineIndex(data)
	for _, off := range []int64{0, 1, int64(len(data) / 2), int64(len(data)) - 1} {
		if got, want := ix.line(off), lineAt(data, off); got != want {
			t.Errorf("line of offset %d: %d, lineAt says %d", off, got, want)
		}
	}
}

// TestImportedTextIsPrintable: escape sequences in a benchmark file reach
// neither the rows nor the warnings (issue 15 item 4).
func TestImportedTextIsPrintable(t *testing.T) {
	evil := "llama\x1b[2J 7B Q4_0" + strings.Repeat("x", 1<<16)
	in := "| model | backend | test | t/s |\n|---|---|---|---|\n| " + evil + " | CUDA | pp512 | 100 ± 1 |\n| " + evil + " | CUDA | tg\x1b]0;t\x07 | 5 |\n"
	res, err := Import(strings.NewReader(in), "evil.md", Context{Hardware: "nvidia-rtx-4080"})
	if err != nil && !errors.Is(err, ErrNoResults) {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		for _, f := range []string{r.Model, r.Notes, r.Quant, r.Source} {
			if !textsafe.Clean(f) || len(f) > 4*maxField+8 {
				t.Errorf("row field %.60q (%d bytes) is not printable or not capped", f, len(f))
			}
		}
	}
	for _, w := range res.Warnings {
		if s := w.String(); !textsafe.Clean(s) || len(w.Msg) > maxWarning {
			t.Errorf("warning %.80q (%d bytes) is not printable or not capped", s, len(w.Msg))
		}
	}
	if len(res.Warnings) == 0 {
		t.Error("no warnings: the test does not exercise them")
	}
}

// TestImportFileRefusesFIFOs: a FIFO or device named as the benchmark file
// is refused at once (issue 15 item 9); a real file imports.
func TestImportFileRefusesFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "bench.md")
	if err := mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx := Context{Hardware: "nvidia-rtx-4080", Model: "meta-llama/Llama-2-7b-hf"}
	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"fifo", fifo, safefile.ErrNotRegular},
		{"device", "/dev/zero", safefile.ErrNotRegular},
		{"seed file", filepath.Join("testdata", "llama-bench-cuda-depth.md"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ImportFile(tc.path, ctx); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
			case <-time.After(time.Minute): // a hang, not a slow machine
				t.Fatal("ImportFile blocked")
			}
		})
	}
}
