package importer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// TGI's text-generation-benchmark prints (benchmark/src/table.rs) a
// parameters table, a latency table (Prefill, Decode (token), Decode
// (total) per batch size, in ms) and a throughput table (Prefill, Decode in
// "tokens/secs"). Its prefill "throughput" is batch size / prefill latency
// (benchmark/src/generation.rs): one token per sequence, not prompt tokens/s.
// Its decode throughput is batch × decode steps / decode latency, i.e. all
// sequences together. The "Model" parameter is the --tokenizer-name.
var (
	tpHeadingRE   = regexp.MustCompile(`(?i)tensor parallel.*?(\d+)\s*gpus?`)
	tgiModelIDRE  = regexp.MustCompile(`^\s*-\s*model_id:\s*"?([^"\s]+)"?`)
	tgiQuantizeRE = regexp.MustCompile(`^\s*-\s*quantize:\s*"?([^"\s]+)"?`)
	tgiDtypeRE    = regexp.MustCompile(`^\s*-\s*dtype:\s*"?([^"\s]+)"?`)
	tgiShardRE    = regexp.MustCompile(`^\s*-\s*num_shard:\s*(\d+)`)
)

func isTGIBenchmark(text string) bool {
	return strings.Contains(text, "Decode (token)") || (strings.Contains(text, "tokens/secs") && strings.Contains(text, "Batch Size"))
}

// tgiRun is the state of one benchmark output (one TP section).
type tgiRun struct {
	model, tokenizer  string
	quant             string
	seqLen, decodeLen int
	devices           int
	cudaVisible       bool
}

// parseTGI reads TGI benchmark tables, one section per "Tensor Parallel
// (TP) - N GPUs" heading when the document has them.
func parseTGI(p *parse) error {
	run := tgiRun{}
	p.tgiHeader(&run)
	for i := 0; i < len(p.lines); i++ {
		line := p.lines[i]
		if m := tpHeadingRE.FindStringSubmatch(line); m != nil && strings.HasPrefix(strings.TrimSpace(line), "#") {
			run.devices, _ = parseCount(m[1])
			continue
		}
		cells, ok := mdCells(line)
		if !ok || len(cells) < 3 || !strings.EqualFold(cells[0], "step") || !strings.EqualFold(cells[1], "batch size") {
			continue
		}
		end := i + 1
		for end < len(p.lines) {
			if _, ok := mdCells(p.lines[end]); !ok {
				break
			}
			end++
		}
		p.tgiTable(&run, i, end)
		i = end - 1
	}
	return nil
}

// tgiHeader reads the deployment arguments and the parameters table.
func (p *parse) tgiHeader(run *tgiRun) {
	for _, line := range p.lines {
		if m := tgiModelIDRE.FindStringSubmatch(line); m != nil && run.model == "" {
			run.model = m[1]
		}
		if m := tgiQuantizeRE.FindStringSubmatch(line); m != nil && !strings.EqualFold(m[1], "None") {
			run.quant = happyQuant(m[1])
		}
		if m := tgiDtypeRE.FindStringSubmatch(line); m != nil && run.quant == "" {
			run.quant = dtypeQuant(m[1])
		}
		if m := tgiShardRE.FindStringSubmatch(line); m != nil && run.devices == 0 {
			run.devices, _ = parseCount(m[1])
		}
		if strings.Contains(line, "CUDA_VISIBLE_DEVICES") {
			run.cudaVisible = true
		}
		cells, ok := mdCells(line)
		if !ok || len(cells) != 2 {
			continue
		}
		switch strings.ToLower(cells[0]) {
		case "model":
			run.tokenizer = cells[1]
		case "sequence length":
			run.seqLen, _ = parseCount(cells[1])
		case "decode length":
			run.decodeLen, _ = parseCount(cells[1])
		}
	}
	switch {
	case run.model == "" && run.tokenizer != "":
		run.model = run.tokenizer
		p.warn(0, "the benchmark's Model row is its --tokenizer-name (%s); the served model is not stated: pass --model if it differs", run.tokenizer)
	case run.tokenizer != "" && !strings.EqualFold(run.tokenizer, run.model):
		p.warn(0, "the benchmark's Model row %s is its --tokenizer-name; the served model is %s (deployment model_id): sequence lengths were counted with the former's tokenizer", run.tokenizer, run.model)
	}
}

// tgiTable reads one latency or throughput table spanning lines
// [header, end).
func (p *parse) tgiTable(run *tgiRun, header, end int) {
	hdr, _ := mdCells(p.lines[header])
	avg := -1
	for i, h := range hdr {
		if strings.EqualFold(h, "average") {
			avg = i
		}
	}
	if avg < 0 {
		p.warn(header+1, "TGI table without an Average column skipped")
		return
	}
	step := ""
	p.mdTableRows(header, end, len(hdr), "TGI", func(line int, cells []string) {
		if cells[0] != "" {
			step = cells[0] // merged cells repeat the step only on its first row
		}
		batch, ok := parseCount(cells[1])
		v, okv := parseNumber(cells[avg])
		if !ok || batch == 0 || !okv {
			p.warn(line, "TGI row %q not understood; skipped", strings.Join(cells[:2], " | "))
			return
		}
		p.tgiValue(run, line, step, batch, v, cells[avg])
	})
}

// tgiValue turns one table cell into rows.
func (p *parse) tgiValue(run *tgiRun, line int, step string, batch int, v float64, cell string) {
	ms := strings.HasSuffix(strings.TrimSpace(cell), "ms")
	tps := strings.Contains(cell, "tokens/sec")
	tp := fmt.Sprintf("TGI benchmark, batch %d", batch)
	if run.devices > 1 {
		tp += fmt.Sprintf(", TP %d", run.devices)
	}
	switch {
	case ms && strings.EqualFold(step, "Prefill"):
		p.tgiRow(run, line, batch, planner.MetricTTFT, v, unitMS, tp+": prefill step latency, average (sharded client, no router queueing)")
	case ms && strings.EqualFold(step, "Decode (token)"):
		p.tgiRow(run, line, batch, planner.MetricTPOT, v, unitMS, tp+": decode latency per token, average")
	case ms && strings.EqualFold(step, "Decode (total)"):
		// The per-token latency above says the same thing.
	case tps && strings.EqualFold(step, "Prefill"):
		if run.seqLen == 0 {
			p.warn(line, "prefill throughput without a Sequence Length: no pp_tps row")
			return
		}
		note := fmt.Sprintf("%s: derived, printed prefill throughput %s (batch / latency, one token per sequence) × sequence length %d", tp, fmtNum(v), run.seqLen)
		p.tgiRow(run, line, batch, planner.MetricPP, round4(v*float64(run.seqLen)), unitTPS, note)
	case tps && strings.EqualFold(step, "Decode"):
		p.tgiRow(run, line, batch, planner.MetricTotalOut, v, unitTPS, tp+": decode throughput, all sequences, average")
		p.tgiRow(run, line, batch, planner.MetricTG, round4(v/float64(batch)), unitTPS, fmt.Sprintf("%s: derived, decode throughput %s / batch %d", tp, fmtNum(v), batch))
	default:
		p.warn(line, "TGI step %q not understood; skipped", step)
	}
}

func (p *parse) tgiRow(run *tgiRun, line, batch int, metric planner.Metric, v float64, unit, note string) {
	if !usable(v) {
		p.warn(line, "value %s is not a positive number; skipped", fmtNum(v))
		return
	}
	m := planner.Measurement{
		Engine: "tgi", Quant: run.quant, Devices: run.devices, PromptTokens: run.seqLen, GenTokens: run.decodeLen,
		Concurrency: batch, Metric: metric, Value: v, Unit: unit,
		Scenario: planner.WorkloadBatched, Lengths: planner.LengthsFixed,
	}
	if run.cudaVisible {
		m.Backend = "cuda"
	}
	p.add(draft{line: line, m: m, model: run.model, nativeQuant: run.quant == "", notes: []string{note}})
}
