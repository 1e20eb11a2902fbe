package importer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// addSeeds adds testdata files and literal snippets to the fuzz corpus.
func addSeeds(f *testing.F, files []string, snippets ...string) {
	f.Helper()
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range snippets {
		f.Add([]byte(s))
	}
}

// checkImport imports fuzzed data with one parser (or detection) and
// checks what must hold for any input: no panic, errors that name the
// file, rows that are valid schema rows with lines inside the file.
func checkImport(t *testing.T, data []byte, format Format) {
	res, err := Import(bytes.NewReader(data), "fuzz.txt", Context{Format: format, Catalog: testCatalog()})
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fuzz.txt") {
			t.Fatalf("error does not name the file: %v", err)
		}
		return
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	if len(res.Rows) == 0 || len(res.Lines) != len(res.Rows) {
		t.Fatalf("success with %d rows and %d lines", len(res.Rows), len(res.Lines))
	}
	known := map[planner.Metric]bool{}
	for _, m := range planner.Metrics {
		known[m] = true
	}
	for i, m := range res.Rows {
		if !usable(m.Value) || !known[m.Metric] || m.Unit == "" {
			t.Fatalf("bad row %+v", m)
		}
		if m.PromptTokens < 0 || m.GenTokens < 0 || m.Concurrency < 0 || m.ContextDepth < 0 || m.Devices < 1 {
			t.Fatalf("negative condition in %+v", m)
		}
		if res.Lines[i] < 1 || res.Lines[i] > lines {
			t.Fatalf("row %d on line %d of %d", i, res.Lines[i], lines)
		}
		for _, f := range []string{m.Hardware, m.Model, m.Quant, m.Notes, m.Source, m.EngineVersion} {
			if !textsafe.Clean(f) {
				t.Fatalf("row %d has unprintable text %q", i, f)
			}
		}
	}
	for _, w := range res.Warnings {
		if !textsafe.Clean(w.Msg) || len(w.Msg) > maxWarning {
			t.Fatalf("warning %q is unprintable or too long", w.Msg)
		}
		if w.Line < 0 || w.Line > lines || w.File != "fuzz.txt" {
			t.Fatalf("bad warning %+v", w)
		}
	}
	if err := measurements.Write(io.Discard, res.Rows); err != nil {
		t.Fatal(err)
	}
}

func FuzzLlamaBenchMarkdown(f *testing.F) {
	addSeeds(f, []string{"llama-bench-cuda-depth.md", "llama-bench-cpu-old.md"},
		"build/bin/llama-bench -m /m/x.Q4_0.gguf\nfound 2 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 4080, compute\n| model | backend | ngl | test | t/s |\n|--|--|--|--|--|\n| llama 7B Q4_0 | CUDA | 0 | pp512 @ d1 | 1 ± 2 |\n\nbuild: abc (12)\n",
		"| test | t/s |\n| tg99999999999 | 1e308 |\n| pp1+tg1 | -1 |\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, LlamaBenchMarkdown) })
}

func FuzzLlamaBenchJSON(f *testing.F) {
	addSeeds(f, []string{"llama-bench-rocm.json"}, `[{"avg_ts": "1e999", "n_prompt": -5}, {"n_gen": 1.5, "avg_ts": 3}]`, `{"avg_ts": 1, "n_gen": 1}`, `[1, 2]`, `[`)
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, LlamaBenchJSON) })
}

func FuzzLlamaBenchJSONL(f *testing.F) {
	addSeeds(f, []string{"llama-bench-rocm.jsonl"}, "{\"avg_ts\": 2, \"n_gen\": 8, \"gpu_info\": \",,,\"}\nnot json\n{}\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, LlamaBenchJSONL) })
}

func FuzzLlamaBenchCSV(f *testing.F) {
	addSeeds(f, []string{"llama-bench-rocm.csv"}, "avg_ts,n_prompt\n\"5\",\"512\"\n\"x\n", "avg_ts\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, LlamaBenchCSV) })
}

func FuzzVLLMServeText(f *testing.F) {
	addSeeds(f, []string{seed002},
		"# llama.cpp Q8_0\nNamespace(model='x.gguf', max_concurrency=(, num_prompts='\n===== Serving Benchmark Result =====\nSuccessful requests: 1e400\nMean TTFT (ms): 5\n=============\n",
		"============ Serving Benchmark Result ============\nSuccessful requests: 3\nTotal input tokens: -9\nP99.9 ITL (ms): 2\nMean ITL (ms): 1\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, VLLMServeText) })
}

func FuzzVLLMServeJSON(f *testing.F) {
	addSeeds(f, []string{"vllm-serve-result.json"}, `{"completed": 2, "total_input_tokens": 1e300, "mean_ttft_ms": "7", "max_concurrency": null}`, "{\"completed\":1,\"mean_itl_ms\":1}\n{\"completed\":1}\n", `[{"completed": true}]`)
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, VLLMServeJSON) })
}

func FuzzHappyVLLM(f *testing.F) {
	addSeeds(f, []string{"000_c824402b6fa12abf.txt", "001_2f30d8bf8ad17cea.txt"},
		"Model card for a on b\n|Metric|Value|\n|Estimate of the max nb of tokens in KV cache|~9999999999999999999999M tokens|\n|Mean generation speed for 0 parallel requests with a prompt of 1 tokens and 99999999999 tokens generated|~1 t/s|\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, HappyVLLM) })
}

func FuzzTGI(f *testing.F) {
	addSeeds(f, []string{"004_21580a0e106e99c5.txt"},
		"| Sequence Length | 0 |\n# Tensor Parallel (TP) - 0 GPUs\n| Step | Batch Size | Average |\n| Prefill | 0 | 1 tokens/secs |\n| | 3 | 5 ms |\n| Decode | 2 | x |\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, TGIBenchmark) })
}

func FuzzImport(f *testing.F) {
	addSeeds(f, []string{"000_c824402b6fa12abf.txt", "004_21580a0e106e99c5.txt", "llama-bench-rocm.csv", "llama-bench-rocm.jsonl", "vllm-serve-result.json", "llama-bench-cuda-depth.md", "batched-bench-m2-ultra.md", "batched-bench-cuda.jsonl"}, "", "{", "[]", "\ufeff| test | t/s |")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, "") })
}

func FuzzBatchedBenchMarkdown(f *testing.F) {
	addSeeds(f, []string{"batched-bench-m2-ultra.md"},
		"build: 1 (abc) with cc\nllama-batched-bench -m /m/x.Q4_0.gguf\nmain: n_kv_max = 1, is_pp_shared = 1, n_gpu_layers = 0\n| PP | TG | B | S_PP t/s | S_TG t/s |\n|--|--|--|--|--|\n| 1 | 1 | 0 | 1 | inf |\n| 99999999999 | 1 | 1 | 1e400 | -1 |\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, BatchedBenchMarkdown) })
}

func FuzzBatchedBenchJSONL(f *testing.F) {
	addSeeds(f, []string{"batched-bench-cuda.jsonl"}, "{\"pp\": -1, \"tg\": 1e99, \"pl\": 3, \"speed_pp\": \"nan\", \"speed_tg\": 1}\n[]\n{\"pl\": 0}\n")
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, BatchedBenchJSONL) })
}
