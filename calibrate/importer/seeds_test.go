package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// importFile imports a testdata file, failing the test on error.
func importFile(t *testing.T, name string, ctx Context) Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Import(bytes.NewReader(data), name, ctx)
	if err != nil {
		t.Fatalf("import %s: %v", name, err)
	}
	if len(res.Rows) != len(res.Lines) {
		t.Fatalf("%d rows but %d lines", len(res.Rows), len(res.Lines))
	}
	return res
}

// sameConditions compares every column but value and notes.
func sameConditions(a, b planner.Measurement) bool {
	a.Value, b.Value, a.Notes, b.Notes = 0, 0, "", ""
	return a == b
}

// published returns the published rows whose source is the seed file.
func published(t *testing.T, seed string) []planner.Measurement {
	t.Helper()
	rows, rowErrs, err := measurements.LoadPublished()
	if err != nil || len(rowErrs) > 0 {
		t.Fatal(err, rowErrs)
	}
	var out []planner.Measurement
	for _, m := range rows {
		if m.Source == "seed "+seed {
			out = append(out, m)
		}
	}
	return out
}

// assertPublishedImported checks that every published row of the seed has
// an imported row with the same conditions and the same value (both are
// the seed's printed decimals, so they are compared exactly).
func assertPublishedImported(t *testing.T, seed string, got []planner.Measurement) (matched map[int]bool) {
	t.Helper()
	matched = map[int]bool{}
	for _, want := range published(t, seed) {
		found := false
		for i, g := range got {
			if sameConditions(g, want) && g.Value == want.Value {
				matched[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("published row not imported: %+v", want)
		}
	}
	return matched
}

const seed002 = "002_2b0a8c2b1e11073a.txt"

// seed002Context is what the seed says in prose (Strix Halo, ROCm, vLLM
// built from source in August 2025) and its raw output does not.
func seed002Context() Context {
	return Context{
		Hardware: "amd-ryzen-ai-max-395", Backend: "rocm", EngineVersion: "2025-08 source build",
		Source: "seed " + seed002, Catalog: testCatalog(),
	}
}

func TestSeed002MatchesPublishedRows(t *testing.T) {
	res := importFile(t, seed002, seed002Context())
	if want := []Format{VLLMServeText, LlamaBenchMarkdown}; len(res.Formats) != 2 || res.Formats[0] != want[0] || res.Formats[1] != want[1] {
		t.Fatalf("formats %v, want %v", res.Formats, want)
	}
	// 11 serve runs × 5 metrics, 8 llama-bench tables × 2 tests.
	if len(res.Rows) != 71 {
		t.Fatalf("got %d rows, want 71", len(res.Rows))
	}
	if n := len(published(t, seed002)); n != 30 {
		t.Fatalf("published rows of seed 002: %d, want 30 (10 runs × ttft, tpot, total_out)", n)
	}
	matched := assertPublishedImported(t, seed002, res.Rows)
	// What the published file leaves out: ITL and request rate, the Q4_K_M
	// c=1 run (its counts equal the Q8_0 run's), and the llama-bench tables.
	for i, m := range res.Rows {
		if matched[i] {
			continue
		}
		leftOut := m.Metric == planner.MetricITL || m.Metric == planner.MetricReqPerS ||
			m.EngineVersion == "b6327" || (m.Quant == "q4_k_m" && m.Concurrency == 1)
		if !leftOut {
			t.Errorf("imported row %d (line %d) matches no published row: %+v", i, res.Lines[i], m)
		}
	}
	if !hasWarning(res, "same request and token counts") {
		t.Errorf("the duplicated Q4_K_M c=1 run is not flagged: %v", res.Warnings)
	}
}

// servedRun is one row of the seed's summary tables.
type servedRun struct {
	name              string
	engine, quant     string
	concurrency       int
	ttft, tpot, out   float64
	reqPerS           float64
	prompt, generated int
}

func TestSeed002StatedNumbers(t *testing.T) {
	// Every run of the seed's summary tables ("vLLM Concurrency", "vLLM
	// Quant comparison", "vLLM vs llama.cpp"), as the seed states them.
	runs := []servedRun{
		{"vLLM FP16 c=1", "vllm", "f16", 1, 121.23, 115.88, 8.61, 0.05, 278, 174},
		{"vLLM FP16 c=8", "vllm", "f16", 8, 536.74, 135.23, 49.41, 0.28, 278, 174},
		{"vLLM FP16 c=16", "vllm", "f16", 16, 871.62, 162.64, 72.17, 0.41, 278, 176},
		{"vLLM W8A8-INT8 c=16", "vllm", "w8a8-int8", 16, 2213.22, 361.97, 28.66, 0.16, 278, 182},
		{"vLLM GPTQ c=16", "vllm", "gptq-int4", 16, 787.02, 90.31, 148.91, 0.75, 278, 199},
		{"llama.cpp F16 c=1", "llama.cpp", "f16", 1, 200.52, 76.32, 12.75, 0.09, 37, 146},
		{"llama.cpp Q8_0 c=1", "llama.cpp", "q8_0", 1, 146.13, 39.16, 24.74, 0.15, 37, 163},
		{"llama.cpp Q4_K_M c=1", "llama.cpp", "q4_k_m", 1, 145.18, 39.09, 24.75, 0.15, 37, 163},
		{"llama.cpp F16 c=16", "llama.cpp", "f16", 16, 497.90, 175.86, 66.85, 0.45, 37, 148},
		{"llama.cpp Q8_0 c=16", "llama.cpp", "q8_0", 16, 395.97, 71.05, 161.34, 1.01, 37, 159},
		{"llama.cpp Q4_K_M c=16", "llama.cpp", "q4_k_m", 16, 381.53, 64.94, 178.68, 1.10, 37, 163},
	}
	res := importFile(t, seed002, seed002Context())
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			for metric, want := range map[planner.Metric]float64{
				planner.MetricTTFT: run.ttft, planner.MetricTPOT: run.tpot,
				planner.MetricTotalOut: run.out, planner.MetricReqPerS: run.reqPerS,
			} {
				m, ok := findRow(res.Rows, func(m planner.Measurement) bool {
					return m.Engine == run.engine && m.Quant == run.quant && m.Concurrency == run.concurrency && m.Metric == metric
				})
				if !ok {
					t.Fatalf("no %s row", metric)
				}
				if m.Value != want || m.PromptTokens != run.prompt || m.GenTokens != run.generated {
					t.Errorf("%s = %v (prompt %d, gen %d), seed states %v (prompt %d, gen %d)",
						metric, m.Value, m.PromptTokens, m.GenTokens, want, run.prompt, run.generated)
				}
			}
		})
	}
}

func TestSeed002LlamaBenchTables(t *testing.T) {
	type bench struct {
		name      string
		quant     string
		model     string
		hipblaslt bool
		pp, tg    float64
	}
	benches := []bench{
		{"Q4_0", "q4_0", "meta-llama/Llama-2-7b-hf", false, 878.31, 39.33},
		{"Q4_0 hipBLASLt", "q4_0", "meta-llama/Llama-2-7b-hf", true, 972.75, 39.23},
		{"Q4_K_M", "q4_k_m", "meta-llama/Llama-2-7b-hf", false, 873.74, 33.28},
		{"Q4_K_M hipBLASLt", "q4_k_m", "meta-llama/Llama-2-7b-hf", true, 958.96, 33.30},
		{"Q8_0", "q8_0", "meta-llama/Llama-2-7b-hf", false, 859.40, 25.25},
		{"Q8_0 hipBLASLt", "q8_0", "meta-llama/Llama-2-7b-hf", true, 944.45, 25.24},
		{"F16", "f16", "meta-llama/Llama-2-7b-chat-hf", false, 1056.97, 13.91},
		{"F16 hipBLASLt", "f16", "meta-llama/Llama-2-7b-chat-hf", true, 1189.21, 13.93},
	}
	res := importFile(t, seed002, seed002Context())
	for _, b := range benches {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range []struct {
				metric         planner.Metric
				prompt, gen    int
				want           float64
				wantTestInNote string
			}{{planner.MetricPP, 512, 0, b.pp, "llama-bench pp512"}, {planner.MetricTG, 0, 128, b.tg, "llama-bench tg128"}} {
				m, ok := findRow(res.Rows, func(m planner.Measurement) bool {
					return m.Engine == "llama.cpp" && m.EngineVersion == "b6327" && m.Quant == b.quant && m.Metric == c.metric &&
						strings.Contains(m.Notes, "ROCBLAS_USE_HIPBLASLT=1") == b.hipblaslt
				})
				if !ok {
					t.Fatalf("no %s row", c.metric)
				}
				if m.Value != c.want || m.PromptTokens != c.prompt || m.GenTokens != c.gen || m.Concurrency != 1 ||
					m.ContextDepth != 0 || m.Backend != "rocm" || m.Model != b.model || m.KVType != "f16" {
					t.Errorf("got %+v, want %s %v (prompt %d gen %d) on rocm, model %s", m, c.metric, c.want, c.prompt, c.gen, b.model)
				}
				if !strings.Contains(m.Notes, c.wantTestInNote) {
					t.Errorf("notes %q lack the test name", m.Notes)
				}
			}
		})
	}
}

func TestHappyVLLMSeeds(t *testing.T) {
	cases := []struct {
		seed, hardware, model, version, warning string
		pp, tg, kv                              float64
	}{
		{"000_c824402b6fa12abf.txt", "nvidia-a100-sxm4-80gb", "codellama/CodeLlama-7b-Instruct-hf", "0.4.3", "SXM4 assumed", 13500, 41, 100000},
		{"001_2f30d8bf8ad17cea.txt", "nvidia-h100-nvl-94gb", "microsoft/Phi-3-vision-128k-instruct", "0.6.3.post1", "pass --hardware", 15000, 18, 125000},
	}
	for _, c := range cases {
		t.Run(c.seed, func(t *testing.T) {
			res := importFile(t, c.seed, Context{Source: "seed " + c.seed, Catalog: testCatalog()})
			if len(res.Rows) != 3 {
				t.Fatalf("got %d rows, want 3", len(res.Rows))
			}
			matched := assertPublishedImported(t, c.seed, res.Rows)
			if len(matched) != 3 {
				t.Errorf("%d of 3 rows match published rows", len(matched))
			}
			for metric, want := range map[planner.Metric]float64{planner.MetricPP: c.pp, planner.MetricTG: c.tg, planner.MetricKV: c.kv} {
				m, ok := findRow(res.Rows, func(m planner.Measurement) bool { return m.Metric == metric })
				if !ok || m.Value != want || m.Hardware != c.hardware || m.Model != c.model || m.EngineVersion != c.version {
					t.Errorf("%s: got %+v, want %v on %s", metric, m, want, c.hardware)
				}
			}
			tg, _ := findRow(res.Rows, func(m planner.Measurement) bool { return m.Metric == planner.MetricTG })
			if tg.Concurrency != 10 || tg.PromptTokens != 1024 || tg.GenTokens != 128 {
				t.Errorf("tg conditions: %+v", tg)
			}
			if !hasWarning(res, c.warning) {
				t.Errorf("no warning containing %q: %v", c.warning, res.Warnings)
			}
		})
	}
}

func TestTGISeed004(t *testing.T) {
	const seed = "004_21580a0e106e99c5.txt"
	res := importFile(t, seed, Context{Hardware: "nvidia-a100-sxm4-80gb", Source: "seed " + seed, Catalog: testCatalog()})
	// 3 TP sections × 6 batch sizes × (ttft, tpot, pp, total_out, tg).
	if len(res.Rows) != 90 {
		t.Fatalf("got %d rows, want 90", len(res.Rows))
	}
	// The published file has no rows from this seed; if some are added,
	// they must be what the importer reads.
	assertPublishedImported(t, seed, res.Rows)
	cases := []struct {
		name          string
		tp, batch     int
		metric        planner.Metric
		want          float64
		wantNoteMatch string
	}{
		{"TP2 prefill latency b1", 2, 1, planner.MetricTTFT, 65.65, "prefill step latency"},
		{"TP2 decode token latency b32", 2, 32, planner.MetricTPOT, 63.96, "decode latency per token"},
		{"TP4 decode throughput b16", 4, 16, planner.MetricTotalOut, 297.92, "decode throughput"},
		{"TP8 decode throughput b32", 8, 32, planner.MetricTotalOut, 470.06, "decode throughput"},
		{"TP8 per-request decode b32", 8, 32, planner.MetricTG, 14.6894, "470.06 / batch 32"},
		{"TP2 prefill tokens/s b1", 2, 1, planner.MetricPP, 1528, "printed prefill throughput 15.28"},
		{"TP8 prefill tokens/s b32", 8, 32, planner.MetricPP, 9069, "printed prefill throughput 90.69"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, ok := findRow(res.Rows, func(m planner.Measurement) bool {
				return m.Devices == c.tp && m.Concurrency == c.batch && m.Metric == c.metric
			})
			if !ok {
				t.Fatal("row missing")
			}
			if m.Value != c.want || !strings.Contains(m.Notes, c.wantNoteMatch) {
				t.Errorf("got %v (%s), want %v with %q", m.Value, m.Notes, c.want, c.wantNoteMatch)
			}
			if m.Model != "bigscience/bloomz-7b1-mt" || m.Engine != "tgi" || m.Quant != "f16" || m.PromptTokens != 100 || m.GenTokens != 100 || m.Backend != "cuda" {
				t.Errorf("conditions: %+v", m)
			}
		})
	}
	if !hasWarning(res, "tokenizer-name") {
		t.Errorf("the mt0-xxl-mt tokenizer row is not explained: %v", res.Warnings)
	}
}

func findRow(rows []planner.Measurement, ok func(planner.Measurement) bool) (planner.Measurement, bool) {
	for _, m := range rows {
		if ok(m) {
			return m, true
		}
	}
	return planner.Measurement{}, false
}

func hasWarning(res Result, substr string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w.Msg, substr) {
			return true
		}
	}
	return false
}
