package importer

import (
	"regexp"
	"strings"
)

// statKeyRE matches the per-metric statistics of --save-result JSON:
// mean_ttft_ms, median_tpot_ms, p99_itl_ms, std_e2el_ms.
var statKeyRE = regexp.MustCompile(`^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms$`)

// parseVLLMServeJSON reads the JSON that `vllm bench serve --save-result`
// (benchmark_serving.py) writes: one object, an array of objects, or one
// object per line (--append-result).
func parseVLLMServeJSON(p *parse) error {
	var objs []fields
	var lines []int
	if looksJSONL(p.lines) {
		objs, lines = p.decodeLines()
	} else {
		var err error
		if objs, lines, err = p.decodeObjects(); err != nil {
			return err
		}
	}
	for i, f := range objs {
		p.addServeRun(serveRunFromJSON(lines[i], f), "vllm bench serve --save-result")
	}
	return nil
}

// looksJSONL says whether the text holds several lines that each start a
// JSON object (--append-result).
func looksJSONL(lines []string) bool {
	n := 0
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if s == "" {
			continue
		}
		if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
			return false
		}
		n++
	}
	return n > 1
}

// serveRunFromJSON maps one --save-result object to a serve run. Keys given
// with --metadata (hardware, engine, engine_version or vllm_version,
// quantization, tensor_parallel_size) are read too.
func serveRunFromJSON(line int, f fields) serveRun {
	r := serveRun{line: line, model: f.str("model_id"), weakEngine: true}
	if r.model == "" {
		r.model = f.str("model")
	}
	r.numPrompts = f.count("num_prompts")
	r.concurrency = f.count("max_concurrency")
	if v, ok := f.num("request_rate"); ok && v > 0 && v <= 1e6 {
		r.requestRate = v
	}
	r.successful, _ = f.num("completed")
	if r.successful == 0 {
		r.successful, _ = f.num("completed_requests")
	}
	r.totalIn, _ = f.num("total_input_tokens")
	r.totalOut, _ = f.num("total_output_tokens")
	r.reqPerS, _ = f.num("request_throughput")
	r.outTPS, _ = f.num("output_throughput")
	for k := range f {
		if m := statKeyRE.FindStringSubmatch(k); m != nil {
			if v, ok := f.num(k); ok {
				r.stat(m[2], m[1], v)
			}
		}
	}
	for _, k := range []string{"backend", "endpoint_type"} {
		switch e := normEngine(f.str(k)); e {
		case "vllm", "tgi", "sglang", "llama.cpp", "trtllm":
			r.engine = e
		}
	}
	if e := normEngine(f.str("engine")); e != "" {
		r.engine, r.weakEngine = e, false
	}
	if strings.HasSuffix(strings.ToLower(r.model), ".gguf") && r.weakEngine {
		r.engine = "llama.cpp"
	}
	r.hardware = firstOf(f, "hardware", "gpu", "gpu_name", "device")
	r.engineVersion = firstOf(f, "engine_version", "vllm_version", "version")
	r.quant = normQuant(firstOf(f, "quant", "quantization"))
	if q := r.quant; q == "none" || q == "null" {
		r.quant = ""
	}
	for _, k := range []string{"devices", "tensor_parallel_size", "tp"} {
		if n := f.count(k); n > 0 {
			r.devices = n
			break
		}
	}
	if d := f.str("date"); d != "" {
		r.notes = append(r.notes, "run "+d)
	}
	if l := f.str("label"); l != "" {
		r.notes = append(r.notes, "label "+l)
	}
	return r
}

// firstOf returns the first non-empty string field among keys.
func firstOf(f fields, keys ...string) string {
	for _, k := range keys {
		if v := f.str(k); v != "" {
			return v
		}
	}
	return ""
}
