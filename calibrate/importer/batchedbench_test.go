package importer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

const m2UltraSource = "https://github.com/ggml-org/llama.cpp/blob/master/benches/mac-m2-ultra/mac-m2-ultra.md"

// llama-batched-bench's table, real output from llama.cpp's M2 Ultra
// bench page: every S_PP and S_TG becomes a batched row at B sequences,
// and every published row of that page for gpt-oss-20b (batched rows and
// the llama-bench rows beside them, Metal shown as "MTL,BLAS") is
// imported with its conditions and value.
func TestBatchedBenchMarkdownMatchesPublishedRows(t *testing.T) {
	// The batched-bench table does not name its backend (its log would);
	// the llama-bench table beside it does, as "MTL,BLAS".
	res := importFile(t, "batched-bench-m2-ultra.md", Context{Hardware: "apple-m2-ultra-76c", Model: "openai/gpt-oss-20b", Quant: "mxfp4", Catalog: testCatalog()})
	for _, m := range res.Rows {
		if m.Scenario == planner.WorkloadSingle && m.Backend != "metal" {
			t.Errorf("llama-bench %s row on %q: MTL,BLAS is Metal", m.Metric, m.Backend)
		}
	}
	res = importFile(t, "batched-bench-m2-ultra.md", Context{Hardware: "apple-m2-ultra-76c", Model: "openai/gpt-oss-20b", Quant: "mxfp4", Backend: "metal", Catalog: testCatalog()})
	if got := formatsText(res.Formats); got != "llama-bench-md llama-batched-bench-md" {
		t.Errorf("formats %s", got)
	}
	var batched int
	for _, m := range res.Rows {
		if m.Scenario == planner.WorkloadBatched {
			batched++
			if m.Concurrency < 1 || m.PromptTokens == 0 || m.GenTokens != 32 || m.Lengths != planner.LengthsFixed {
				t.Errorf("batched row %+v", m)
			}
		}
	}
	if batched != 36 {
		t.Errorf("%d batched rows from 18 table rows, want 36 (S_PP and S_TG each)", batched)
	}
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, p := range rows {
		if !strings.HasPrefix(p.Source, m2UltraSource) || p.Model != "openai/gpt-oss-20b" {
			continue
		}
		want++
		found := false
		for _, g := range res.Rows {
			if g.Metric == p.Metric && g.Scenario == p.Scenario && g.PromptTokens == p.PromptTokens && g.GenTokens == p.GenTokens &&
				g.Concurrency == p.Concurrency && g.ContextDepth == p.ContextDepth && g.Backend == p.Backend && g.Quant == p.Quant && g.Value == p.Value {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("published row not imported: %s %s p%d g%d c%d d%d = %g", p.Metric, p.Scenario, p.PromptTokens, p.GenTokens, p.Concurrency, p.ContextDepth, p.Value)
		}
	}
	if want < 10 {
		t.Errorf("only %d published rows of the M2 Ultra page to check", want)
	}
}

func formatsText(fs []Format) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f))
	}
	return strings.Join(s, " ")
}

// --output-format jsonl: the same rows, the run's settings in the notes.
func TestBatchedBenchJSONL(t *testing.T) {
	res := importFile(t, "batched-bench-cuda.jsonl", Context{Hardware: "nvidia-rtx-4090", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", Backend: "cuda", Catalog: testCatalog()})
	if len(res.Formats) != 1 || res.Formats[0] != BatchedBenchJSONL {
		t.Fatalf("formats %v", res.Formats)
	}
	if len(res.Rows) != 6 {
		t.Fatalf("%d rows from 3 objects, want 6", len(res.Rows))
	}
	m := res.Rows[3] // B = 4: S_TG
	if m.Metric != planner.MetricTotalOut || m.Concurrency != 4 || m.Value != 425.956726 || m.PromptTokens != 512 || m.GenTokens != 128 ||
		m.Scenario != planner.WorkloadBatched || !strings.Contains(m.Notes, "ubatch 512") || !strings.Contains(m.Notes, "ngl 99") {
		t.Errorf("B=4 generation row %+v", m)
	}
}

// What the tool can print that is no schema row: a shared prompt's S_PP
// (-pps), a run with no generation (TG 0, S_TG nan), a malformed row. The
// rest of the table still imports, each gap with a warning on its line.
func TestBatchedBenchGaps(t *testing.T) {
	in := "main: n_kv_max = 4096, n_batch = 2048, n_ubatch = 512, flash_attn = 0, is_pp_shared = 1, n_gpu_layers = 99, n_threads = 8, n_threads_batch = 8\n\n" +
		"|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n" +
		"|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|\n" +
		"|   128 |    128 |    2 |    384 |    0.050 |  2560.00 |    1.500 |   170.67 |    1.550 |   247.74 |\n" +
		"|   128 |      0 |    2 |    128 |    0.050 |  2560.00 |    0.000 |      nan |    0.050 |  2560.00 |\n" +
		"|   12x |    128 |    2 |    384 |    0.050 |  2560.00 |    1.500 |   170.67 |    1.550 |   247.74 |\n"
	res, err := Import(bytes.NewReader([]byte(in)), "pps.txt", Context{Hardware: "nvidia-rtx-4090", Model: "meta-llama/Llama-3.1-8B-Instruct", Quant: "q4_k_m", Backend: "cuda", Catalog: testCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Metric != planner.MetricTotalOut || res.Rows[0].Value != 170.67 {
		t.Errorf("rows %+v, want only the first row's S_TG", res.Rows)
	}
	var warned []string
	for _, w := range res.Warnings {
		warned = append(warned, w.String())
	}
	all := strings.Join(warned, "\n")
	for _, want := range []string{"pps.txt:5: llama-batched-bench PP 128, TG 128, B 2: with a shared prompt", "pps.txt:7: llama-batched-bench row"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in\n%s", want, all)
		}
	}
}
