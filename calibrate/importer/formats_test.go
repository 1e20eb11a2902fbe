package importer

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

func TestDetectFormats(t *testing.T) {
	cases := []struct {
		file string
		want []Format
	}{
		{"000_c824402b6fa12abf.txt", []Format{HappyVLLM}},
		{"001_2f30d8bf8ad17cea.txt", []Format{HappyVLLM}},
		{seed002, []Format{VLLMServeText, LlamaBenchMarkdown}},
		{"004_21580a0e106e99c5.txt", []Format{TGIBenchmark}},
		{"llama-bench-rocm.json", []Format{LlamaBenchJSON}},
		{"llama-bench-rocm.jsonl", []Format{LlamaBenchJSONL}},
		{"llama-bench-rocm.csv", []Format{LlamaBenchCSV}},
		{"llama-bench-cuda-depth.md", []Format{LlamaBenchMarkdown}},
		{"llama-bench-cpu-old.md", []Format{LlamaBenchMarkdown}},
		{"vllm-serve-result.json", []Format{VLLMServeJSON}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			got := DetectFormats(data)
			if strings.Join(fmtStrings(got), ",") != strings.Join(fmtStrings(c.want), ",") {
				t.Errorf("DetectFormats = %v, want %v", got, c.want)
			}
			if f, err := DetectFormat(data); err != nil || f != c.want[0] {
				t.Errorf("DetectFormat = %v, %v", f, err)
			}
		})
	}
	if _, err := DetectFormat([]byte("hello\nworld\n")); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("plain text: %v", err)
	}
}

func fmtStrings(fs []Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

func TestLlamaBenchFormatsAgreeWithSeedMarkdown(t *testing.T) {
	ctx := Context{Hardware: "amd-ryzen-ai-max-395", Catalog: testCatalog()}
	seed := importFile(t, seed002, ctx)
	for _, file := range []string{"llama-bench-rocm.json", "llama-bench-rocm.jsonl", "llama-bench-rocm.csv"} {
		t.Run(file, func(t *testing.T) {
			res := importFile(t, file, ctx)
			if len(res.Rows) != 4 {
				t.Fatalf("got %d rows, want 4", len(res.Rows))
			}
			for _, m := range res.Rows {
				// The fixtures hold the seed's first Q4_0 and Q4_K_M runs.
				m.Source = seed002
				_, ok := findRow(seed.Rows, func(s planner.Measurement) bool {
					return sameConditions(s, m) && s.Value == m.Value && !strings.Contains(s.Notes, "HIPBLASLT")
				})
				if !ok {
					t.Errorf("row not in the seed's markdown tables: %+v", m)
				}
				if !strings.Contains(m.Notes, "n_ubatch 512") || !strings.Contains(m.Notes, "commit 4d74393bc") {
					t.Errorf("settings missing from notes: %q", m.Notes)
				}
			}
		})
	}
}

func TestLlamaBenchMarkdownDepthAndDevice(t *testing.T) {
	res := importFile(t, "llama-bench-cuda-depth.md", Context{Catalog: testCatalog()})
	want := []struct {
		metric             planner.Metric
		prompt, gen, depth int
		value              float64
	}{
		{planner.MetricPP, 512, 0, 0, 6012.48},
		{planner.MetricTG, 0, 128, 0, 104.37},
		{planner.MetricPP, 512, 0, 4096, 4811.90},
		{planner.MetricTG, 0, 128, 4096, 97.05},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d (pp+tg tests are skipped)", len(res.Rows), len(want))
	}
	for i, w := range want {
		m := res.Rows[i]
		if m.Metric != w.metric || m.PromptTokens != w.prompt || m.GenTokens != w.gen || m.ContextDepth != w.depth || m.Value != w.value {
			t.Errorf("row %d: %+v, want %+v", i, m, w)
		}
		// The device line names an RTX 4080; the -m file the model.
		if m.Hardware != "nvidia-rtx-4080" || m.Backend != "cuda" || m.Model != "Qwen/Qwen2.5-7B-Instruct" || m.Quant != "q4_k_m" || m.EngineVersion != "b5163" {
			t.Errorf("row %d conditions: %+v", i, m)
		}
	}
	if !hasWarning(res, "pp512+tg128 @ d4096 skipped") {
		t.Errorf("skipped pg test not reported: %v", res.Warnings)
	}
}

func TestLlamaBenchOldMarkdown(t *testing.T) {
	res := importFile(t, "llama-bench-cpu-old.md", Context{Hardware: "amd-ryzen-9-7950x", Model: "meta-llama/Llama-2-7b-hf"})
	if len(res.Rows) != 2 {
		t.Fatalf("got %d rows", len(res.Rows))
	}
	pp, tg := res.Rows[0], res.Rows[1]
	if pp.Metric != planner.MetricPP || pp.PromptTokens != 64 || pp.Value != 31.87 || tg.Metric != planner.MetricTG || tg.GenTokens != 16 || tg.Value != 15.94 {
		t.Errorf("rows: %+v / %+v", pp, tg)
	}
	for _, m := range res.Rows {
		if m.Quant != "q4_0" || m.Backend != "cpu" || m.EngineVersion != "b1035" || m.Hardware != "amd-ryzen-9-7950x" || m.Model != "meta-llama/Llama-2-7b-hf" || !strings.Contains(m.Notes, "threads 8") {
			t.Errorf("conditions: %+v", m)
		}
	}
	// Without --model the warning names what the file says instead.
	res = importFile(t, "llama-bench-cpu-old.md", Context{})
	if !hasWarning(res, `model not named (the file says only "llama 7B mostly Q4_0"): pass --model`) || !hasWarning(res, "hardware not stated: pass --hardware") {
		t.Errorf("warnings: %v", res.Warnings)
	}
}

func TestVLLMServeJSON(t *testing.T) {
	res := importFile(t, "vllm-serve-result.json", Context{Catalog: testCatalog()})
	text := importFile(t, seed002, seed002Context())
	if len(res.Rows) != 5 {
		t.Fatalf("got %d rows, want 5", len(res.Rows))
	}
	for _, m := range res.Rows {
		// The fixture is seed 002's FP16 c=16 run at full precision.
		s, ok := findRow(text.Rows, func(s planner.Measurement) bool {
			return s.Engine == "vllm" && s.Quant == "f16" && s.Concurrency == 16 && s.Metric == m.Metric
		})
		if !ok {
			t.Fatalf("no seed row for %s", m.Metric)
		}
		if math.Abs(m.Value-s.Value) > 0.005 {
			t.Errorf("%s = %v, seed prints %v", m.Metric, m.Value, s.Value)
		}
		m.Value, m.Source, s.Source = s.Value, "", ""
		if m.Lengths == "" {
			m.Lengths = s.Lengths // the JSON does not name its dataset
		}
		if !sameConditions(m, s) {
			t.Errorf("conditions differ:\n json %+v\n text %+v", m, s)
		}
	}
}

func TestVLLMServeJSONLAppended(t *testing.T) {
	in := `{"model_id": "Qwen/Qwen2.5-7B-Instruct", "backend": "vllm", "max_concurrency": 1, "num_prompts": 10, "completed": 10, "total_input_tokens": 10240, "total_output_tokens": 1280, "request_throughput": 0.52, "output_throughput": 66.5, "mean_ttft_ms": 35.2, "mean_tpot_ms": 14.1, "mean_itl_ms": 14.0}
{"model_id": "Qwen/Qwen2.5-7B-Instruct", "backend": "vllm", "max_concurrency": 8, "num_prompts": 80, "completed": 80, "total_input_tokens": 81920, "total_output_tokens": 10240, "request_throughput": 3.1, "output_throughput": 401.2, "mean_ttft_ms": 88.0, "mean_tpot_ms": 18.7, "mean_itl_ms": 18.5}
`
	res, err := Import(strings.NewReader(in), "append.jsonl", Context{Hardware: "nvidia-rtx-4080", Catalog: testCatalog(), EngineVersion: "0.10.1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Formats[0] != VLLMServeJSON || len(res.Rows) != 10 {
		t.Fatalf("formats %v, %d rows", res.Formats, len(res.Rows))
	}
	last := res.Rows[9]
	if res.Lines[9] != 2 || last.Concurrency != 8 || last.PromptTokens != 1024 || last.GenTokens != 128 || last.Metric != planner.MetricReqPerS || last.Value != 3.1 {
		t.Errorf("last row (line %d): %+v", res.Lines[9], last)
	}
	if last.Quant != "bf16" || last.KVType != "bf16" || last.Backend != "cuda" || last.EngineVersion != "0.10.1" {
		t.Errorf("filled conditions: %+v", last)
	}
}

func TestContextOverridesAndFills(t *testing.T) {
	// --model and --hardware override the file; the others fill gaps only.
	ctx := Context{Model: "meta-llama/Llama-2-7b-chat-hf", Hardware: "nvidia-h100-sxm5-80gb", Quant: "q8_0", Engine: "ik_llama.cpp", Devices: 2, Catalog: testCatalog()}
	res := importFile(t, "llama-bench-cuda-depth.md", ctx)
	m := res.Rows[0]
	if m.Model != ctx.Model || m.Hardware != ctx.Hardware {
		t.Errorf("overrides not applied: %+v", m)
	}
	if m.Quant != "q4_k_m" || !hasWarning(res, "--quant q8_0 ignored") {
		t.Errorf("the file's quantization must win with a warning: %+v %v", m, res.Warnings)
	}
	// llama-bench does not say which llama.cpp fork it is: --engine decides.
	if m.Engine != "ik_llama.cpp" {
		t.Errorf("engine %q", m.Engine)
	}
	if m.Devices != 1 || !hasWarning(res, "--devices 2 ignored") {
		t.Errorf("devices %d, warnings %v", m.Devices, res.Warnings)
	}
	if !hasWarning(res, `file names device "NVIDIA GeForce RTX 4080"`) || !strings.Contains(m.Notes, "file names model Qwen2.5-7B-Instruct-Q4_K_M") {
		t.Errorf("overridden names not reported: %v / %q", res.Warnings, m.Notes)
	}
	// A vLLM checkpoint with no stated format takes the catalog's dtype.
	res = importFile(t, "000_c824402b6fa12abf.txt", Context{Catalog: testCatalog()})
	if res.Rows[0].Quant != "bf16" || res.Rows[0].KVType != "bf16" {
		t.Errorf("native dtype not used: %+v", res.Rows[0])
	}
	// Without a catalog the same card warns instead of guessing.
	res = importFile(t, "000_c824402b6fa12abf.txt", Context{})
	if res.Rows[0].Quant != "" || !hasWarning(res, "quantization not stated: pass --quant") || !hasWarning(res, "pass --model") {
		t.Errorf("no-catalog import: %+v %v", res.Rows[0], res.Warnings)
	}
}

func TestErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, in, want string
		is             error
	}{
		{"notes.txt", "just some notes\n", "notes.txt: not a benchmark output", ErrUnknownFormat},
		{"empty.txt", "", "empty.txt: not a benchmark output", ErrUnknownFormat},
		{"broken.json", "[\n  {\"avg_ts\": 12,\n  \"n_gen\": }\n]\n", "broken.json:3: invalid JSON", nil},
		{"nothing.md", "| model | test | t/s |\n|---|---|---|\n| x | foo | bar |\n", "nothing.md: no benchmark results found", ErrNoResults},
		{"head.csv", "build_commit,avg_ts\n", "head.csv: no benchmark results found", ErrNoResults},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(strings.NewReader(c.in), c.name, Context{})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want prefix %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
		})
	}
}

func TestSkippedRowsAreWarnedWithLine(t *testing.T) {
	in := "| model | backend | test | t/s |\n|---|---|---|---|\n| llama 7B Q4_0 | CUDA | pp512 | 100 ± 1 |\n| llama 7B Q4_0 | CUDA | tg128 | n/a |\n| llama 7B Q4_0 | CUDA | tg128 |\n"
	res, err := Import(strings.NewReader(in), "t.md", Context{Hardware: "nvidia-rtx-4080", Model: "meta-llama/Llama-2-7b-hf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("rows %+v", res.Rows)
	}
	var got []string
	for _, w := range res.Warnings {
		got = append(got, w.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{`t.md:4: llama-bench t/s "n/a" is not a number`, "t.md:5: llama-bench row has 3 cells"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

func TestUnclosedServeBlock(t *testing.T) {
	in := "Namespace(model='meta-llama/Llama-2-7b-chat-hf', max_concurrency=4, num_prompts=8)\n" +
		"============ Serving Benchmark Result ============\nSuccessful requests: 8\nTotal input tokens: 800\nTotal generated tokens: 400\nMean TTFT (ms): 50.5\n"
	res, err := Import(strings.NewReader(in), "cut.log", Context{Hardware: "nvidia-rtx-4080", Catalog: testCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Value != 50.5 || res.Rows[0].Concurrency != 4 || res.Rows[0].PromptTokens != 100 {
		t.Errorf("rows %+v", res.Rows)
	}
	if !hasWarning(res, "not closed") {
		t.Errorf("warnings %v", res.Warnings)
	}
}

func TestImportedRowsRoundTripTheSchemaCSV(t *testing.T) {
	res := importFile(t, seed002, seed002Context())
	var buf bytes.Buffer
	if err := measurements.Write(&buf, res.Rows); err != nil {
		t.Fatal(err)
	}
	again, rowErrs, err := measurements.Read(&buf, "imported.csv")
	if err != nil || len(rowErrs) > 0 {
		t.Fatal(err, rowErrs)
	}
	if len(again) != len(res.Rows) {
		t.Fatalf("%d rows back, wrote %d", len(again), len(res.Rows))
	}
	for i := range again {
		if again[i] != res.Rows[i] {
			t.Errorf("row %d:\n wrote %+v\n read  %+v", i, res.Rows[i], again[i])
		}
	}
}

func TestParseModelName(t *testing.T) {
	cases := []struct{ in, clean, quant string }{
		{"/models/gguf/llama-2-7b.Q4_K_M.gguf", "llama-2-7b", "q4_k_m"},
		{"/models/gguf/Llama-2-7b-chat-hf.f16.gguf", "Llama-2-7b-chat-hf", "f16"},
		{"Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "Qwen3-30B-A3B", "q4_k_xl"},
		{"gpt-oss-120b-mxfp4-00001-of-00003.gguf", "gpt-oss-120b", "mxfp4"},
		{"RedHatAI/Llama-2-7b-chat-quantized.w8a8", "Llama-2-7b-chat", "w8a8-int8"},
		{"TheBloke/Llama-2-7B-Chat-GPTQ", "Llama-2-7B-Chat", "gptq-int4"},
		{"hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "Meta-Llama-3.1-8B-Instruct", "awq-int4"},
		{"neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "Meta-Llama-3.1-8B-Instruct", "fp8"},
		{"meta-llama/Llama-2-7b-chat-hf", "Llama-2-7b-chat-hf", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		got := parseModelName(c.in)
		if got.clean != c.clean || got.quant != c.quant {
			t.Errorf("parseModelName(%q) = %q, %q; want %q, %q", c.in, got.clean, got.quant, c.clean, c.quant)
		}
	}
}

func TestQuantFromModelType(t *testing.T) {
	cases := map[string]string{
		"llama 7B Q4_K - Medium":     "q4_k_m",
		"llama 7B Q4_0":              "q4_0",
		"llama 7B Q8_0":              "q8_0",
		"llama 7B F16":               "f16",
		"llama 7B mostly Q4_0":       "q4_0",
		"qwen2 7B all F32":           "f32",
		"llama 8B Q5_K - Small":      "q5_k_s",
		"qwen3moe 30B.A3B Q6_K":      "q6_k",
		"gpt-oss 20B MXFP4 MoE":      "mxfp4",
		"llama 8B IQ4_XS - 4.25 bpw": "iq4_xs",
		"llama 7B":                   "",
	}
	for in, want := range cases {
		if got := quantFromModelType(in); got != want {
			t.Errorf("quantFromModelType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseLBTest(t *testing.T) {
	cases := []struct {
		in      string
		p, g, d int
		ok      bool
	}{
		{"pp512", 512, 0, 0, true}, {"tg128", 0, 128, 0, true}, {"pp 512", 512, 0, 0, true},
		{"pp512 @ d4096", 512, 0, 4096, true}, {"tg128 @ d32768", 0, 128, 32768, true},
		{"pp512+tg128", 512, 128, 0, true}, {"pg", 0, 0, 0, false}, {"pp512 @ 4096", 0, 0, 0, false}, {"", 0, 0, 0, false},
	}
	for _, c := range cases {
		p, g, d, ok := parseLBTest(c.in)
		if p != c.p || g != c.g || d != c.d || ok != c.ok {
			t.Errorf("parseLBTest(%q) = %d %d %d %v", c.in, p, g, d, ok)
		}
	}
}

func TestParseNamespace(t *testing.T) {
	ns := parseNamespace(`subparser='bench', random_mm_bucket_config={(256, 256, 1): 0.5, (720, 1280, 1): 0.5}, dispatch_function=<function X.cmd at 0x7f>, max_concurrency=16, model='/models/a,b.gguf', request_rate=inf`)
	if ns["max_concurrency"] != "16" || ns["model"] != "/models/a,b.gguf" || ns["request_rate"] != "inf" || ns["subparser"] != "bench" {
		t.Errorf("parseNamespace: %v", ns)
	}
}
