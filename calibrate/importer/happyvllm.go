package importer

import (
	"regexp"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// Model cards written by happy_vllm's benchmark_llm_serving:
//
//	Model card for CodeLlama-7b-Instruct-hf on A100-80g
//	|Prompt ingestion speed|~13500 t/s |
//	|Mean generation speed for 10 parallel requests with a prompt of 1024 tokens and 128 tokens generated|~41 t/s for each request|
//	|Estimate of the max nb of tokens in KV cache|~100k tokens |
//	|vllm_version|0.4.3|   (parameters table)
//	|gpu_name|A100-80g|
var (
	happyTitleRE = regexp.MustCompile(`(?i)^\s*Model card for (.+?) on (.+?)\s*$`)
	happyGenRE   = regexp.MustCompile(`(?i)generation speed for (\d+) parallel requests? with a prompt of (\d+) tokens and (\d+) tokens generated`)
)

func isHappyVLLM(text string) bool {
	return strings.Contains(text, "Prompt ingestion speed") ||
		(strings.Contains(text, "happy_vllm") && strings.Contains(text, "|Metric|Value|"))
}

// happyCard is what one model card says.
type happyCard struct {
	titleModel, titleGPU string
	titleLine            int
	params               map[string]string
	paramLine            map[string]int
	metrics              []happyMetric
}

type happyMetric struct {
	line        int
	name, value string
}

// parseHappyVLLM reads a happy_vllm benchmark_llm_serving model card.
func parseHappyVLLM(p *parse) error {
	c := happyCard{params: map[string]string{}, paramLine: map[string]int{}}
	section := ""
	for i, line := range p.lines {
		if m := happyTitleRE.FindStringSubmatch(line); m != nil && c.titleModel == "" {
			c.titleModel, c.titleGPU, c.titleLine = m[1], m[2], i+1
			continue
		}
		cells, ok := mdCells(line)
		if !ok || len(cells) < 2 || isSeparatorRow(cells) {
			continue
		}
		switch k := strings.ToLower(cells[0]); {
		case k == "metric" || k == "parameter":
			section = k
		case section == "metric":
			c.metrics = append(c.metrics, happyMetric{i + 1, cells[0], cells[1]})
		case section == "parameter":
			c.params[cells[0]] = cells[1]
			c.paramLine[cells[0]] = i + 1
		}
	}
	if len(c.metrics) == 0 {
		return nil
	}
	p.addHappyCard(c)
	return nil
}

// param returns a launch parameter, "" for absent or None.
func (c happyCard) param(k string) string {
	v := strings.TrimSpace(c.params[k])
	if v == "None" || v == "none" {
		return ""
	}
	return v
}

func (p *parse) addHappyCard(c happyCard) {
	model := c.param("model")
	if model == "" {
		model = c.param("model_name")
	}
	if model == "" {
		model = c.titleModel
	}
	gpu := c.param("gpu_name")
	if gpu == "" {
		gpu = c.titleGPU
	}
	base := planner.Measurement{Engine: "vllm", EngineVersion: c.param("vllm_version"), KVType: happyKV(c.param("kv_cache_dtype"))}
	tp, pp := 1, 1
	if n, ok := parseCount(c.param("tensor_parallel_size")); ok && n > 0 {
		tp = n
	}
	if n, ok := parseCount(c.param("pipeline_parallel_size")); ok && n > 0 {
		pp = n
	}
	base.Devices = tp * pp
	native := c.param("quantization") == ""
	if native {
		base.Quant = dtypeQuant(c.param("dtype")) // "auto": the checkpoint's dtype, filled later
	} else {
		base.Quant = happyQuant(c.param("quantization"))
	}
	card := "happy_vllm"
	if v := c.param("happy_vllm_version"); v != "" {
		card += " " + v
	}
	card += " model card"
	if tp*pp > 1 {
		card += ", tensor_parallel_size " + c.param("tensor_parallel_size")
	}
	for _, mt := range c.metrics {
		d := draft{line: mt.line, m: base, model: model, hardware: gpu, nativeQuant: native}
		if !p.happyMetric(&d, c, mt, card) {
			continue
		}
		p.add(d)
	}
}

// happyMetric fills d from one row of the main metrics table; false skips
// the row.
func (p *parse) happyMetric(d *draft, c happyCard, mt happyMetric, card string) bool {
	name := strings.ToLower(mt.name)
	switch {
	case strings.Contains(name, "prompt ingestion speed"):
		v, ok := parseNumber(mt.value)
		if !ok || !usable(v) {
			p.warn(mt.line, "prompt ingestion speed %q is not a number; skipped", mt.value)
			return false
		}
		d.m.Metric, d.m.Value, d.m.Unit, d.m.Concurrency = planner.MetricPP, v, unitTPS, 1
		// Measured over the tool's dataset of varied prompts, one at a time.
		d.m.Scenario, d.m.Lengths = planner.WorkloadSingle, planner.LengthsVariable
		d.notes = []string{card + ": prompt ingestion speed, rounded by the source"}
	case happyGenRE.MatchString(mt.name):
		g := happyGenRE.FindStringSubmatch(mt.name)
		v, ok := parseNumber(mt.value)
		if !ok || !usable(v) {
			p.warn(mt.line, "generation speed %q is not a number; skipped", mt.value)
			return false
		}
		d.m.Concurrency, _ = parseCount(g[1])
		d.m.PromptTokens, _ = parseCount(g[2])
		d.m.GenTokens, _ = parseCount(g[3])
		d.m.Metric, d.m.Value, d.m.Unit = planner.MetricTG, v, unitTPS
		// N clients in a closed loop at fixed lengths; the card's figure
		// is the median request's speed (benchmark_llm_serving).
		d.m.Scenario, d.m.Lengths, d.m.Statistic = planner.WorkloadClosed, planner.LengthsFixed, planner.StatMedian
		d.notes = []string{card + ": mean generation speed per request, " + g[1] + " parallel requests, rounded by the source"}
	case strings.Contains(name, "tokens in kv cache"):
		v, ok := parseScaled(mt.value)
		if !ok || !usable(v) {
			p.warn(mt.line, "KV cache estimate %q is not a number; skipped", mt.value)
			return false
		}
		d.m.Metric, d.m.Value, d.m.Unit = planner.MetricKV, v, unitTok
		d.m.Scenario = planner.WorkloadCapacity
		d.notes = []string{card + "; " + happyKVSettings(c) + "; estimate rounded by the source"}
	default:
		p.warn(mt.line, "metric %q not understood; skipped", mt.name)
		return false
	}
	return true
}

// happyKVSettings lists the launch parameters that size vLLM's KV pool.
func happyKVSettings(c happyCard) string {
	var s []string
	for _, k := range []string{"gpu_memory_utilization", "block_size", "max_num_seqs", "max_model_len", "swap_space", "enable_prefix_caching"} {
		if v := c.param(k); v != "" {
			s = append(s, k+" "+v)
		}
	}
	return strings.Join(s, ", ")
}

// happyKV maps vLLM's --kv-cache-dtype ("auto" means the model's dtype,
// filled later).
func happyKV(s string) string {
	switch l := strings.ToLower(strings.TrimSpace(s)); l {
	case "", "auto":
		return ""
	case "fp8", "fp8_e4m3", "fp8_e5m2":
		return "fp8"
	default:
		return normQuant(l)
	}
}

// happyQuant maps vLLM's --quantization to a weight format.
func happyQuant(s string) string {
	switch l := strings.ToLower(strings.TrimSpace(s)); {
	case strings.Contains(l, "awq"):
		return "awq-int4"
	case strings.Contains(l, "gptq") || strings.Contains(l, "marlin"):
		return "gptq-int4"
	case strings.Contains(l, "fp8"):
		return "fp8"
	case l == "bitsandbytes":
		return "4bit-unspecified"
	default:
		return l
	}
}
