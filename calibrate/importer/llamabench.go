package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// lbRecord is one llama-bench result, whatever format it came in
// (tools/llama-bench/README.md: build_commit, build_number, model_filename,
// model_type, backends, gpu_info, n_prompt, n_gen, n_depth, avg_ts,
// stddev_ts, type_k, n_gpu_layers, flash_attn ...).
type lbRecord struct {
	line      int
	build     string // engine_version, "b6327"
	commit    string
	modelFile string // GGUF path, when the output names it
	modelType string // "llama 7B Q4_K - Medium"
	backends  string // "ROCm", "CUDA", "Metal,BLAS"
	device    string // gpu_info, cpu_info or the "Device 0:" line
	devices   int
	nPrompt   int
	nGen      int
	nDepth    int
	avgTS     float64
	stdTS     string // as printed, "" when not given
	typeK     string
	ngl       string
	settings  []string // "fa 1", "n_ubatch 2048", "env ROCBLAS_USE_HIPBLASLT=1"
}

// testName formats the test as llama-bench prints it.
func (r lbRecord) testName() string {
	var s string
	switch {
	case r.nPrompt > 0 && r.nGen > 0:
		s = fmt.Sprintf("pp%d+tg%d", r.nPrompt, r.nGen)
	case r.nPrompt > 0:
		s = fmt.Sprintf("pp%d", r.nPrompt)
	default:
		s = fmt.Sprintf("tg%d", r.nGen)
	}
	if r.nDepth > 0 {
		s += fmt.Sprintf(" @ d%d", r.nDepth)
	}
	return s
}

// addLlamaBench turns one llama-bench result into a draft row: ppN is
// pp_tps with prompt_tokens N, tgN is tg_tps with gen_tokens N, one
// sequence, context_depth from "@ dD".
func (p *parse) addLlamaBench(r lbRecord) {
	var metric planner.Metric
	switch {
	case r.nPrompt > 0 && r.nGen > 0:
		p.warn(r.line, "llama-bench test %s skipped: a combined prompt+generation rate is not a schema metric", r.testName())
		return
	case r.nPrompt > 0:
		metric = planner.MetricPP
	case r.nGen > 0:
		metric = planner.MetricTG
	default:
		p.warn(r.line, "llama-bench result without prompt or generated tokens skipped")
		return
	}
	if !usable(r.avgTS) {
		p.warn(r.line, "llama-bench %s: t/s %s is not a positive number; skipped", r.testName(), fmtNum(r.avgTS))
		return
	}
	backend := backendFromList(r.backends)
	devices := r.devices
	if backend == "cpu" {
		devices = 1
	}
	notes := []string{"llama-bench " + r.testName()}
	if r.stdTS != "" {
		notes[0] += " ± " + r.stdTS
	}
	if r.modelType != "" {
		notes = append(notes, "model type "+r.modelType)
	}
	if r.ngl != "" {
		notes = append(notes, "ngl "+r.ngl)
		if n, err := strconv.Atoi(r.ngl); err == nil && n == 0 && backend != "cpu" {
			p.warn(r.line, "llama-bench with ngl 0 keeps the weights in system memory: the row measures the CPU path more than the %s device", backend)
		}
	}
	notes = append(notes, r.settings...)
	if r.commit != "" {
		notes = append(notes, "commit "+r.commit)
	}
	m := planner.Measurement{
		Engine: "llama.cpp", EngineVersion: r.build, Backend: backend, Devices: devices,
		Quant: quantFromModelType(r.modelType), KVType: normQuant(r.typeK),
		Concurrency: 1, ContextDepth: r.nDepth, Metric: metric, Value: r.avgTS, Unit: unitTPS,
		Scenario: planner.WorkloadSingle, Lengths: planner.LengthsFixed,
	}
	if metric == planner.MetricPP {
		m.PromptTokens = r.nPrompt
	} else {
		m.GenTokens = r.nGen
	}
	p.add(draft{line: r.line, m: m, model: r.modelFile, modelDesc: r.modelType, hardware: r.device, weakEngine: true, notes: notes})
}

// mdCells splits a markdown table row into trimmed cells; ok is false for a
// line that is not a table row.
func mdCells(line string) ([]string, bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "|") {
		return nil, false
	}
	s = strings.TrimPrefix(s, "|")
	s = strings.TrimSuffix(s, "|")
	cells := strings.Split(s, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells, true
}

var separatorCellRE = regexp.MustCompile(`^:?-+:?$`)

// isSeparatorRow says whether cells are a markdown header separator.
func isSeparatorRow(cells []string) bool {
	for _, c := range cells {
		if !separatorCellRE.MatchString(c) {
			return false
		}
	}
	return len(cells) > 0
}

// mdTableEnd is the index of the first line after the markdown table
// whose header is line index h.
func (p *parse) mdTableEnd(h int) int {
	end := h + 1
	for end < len(p.lines) {
		if _, ok := mdCells(p.lines[end]); !ok {
			break
		}
		end++
	}
	return end
}

// mdTableRows calls row with the 1-based line and cells of every data row
// of the markdown table whose header (of width cols) is line index h, up
// to end: separator rows are skipped, and a row of another width is
// warned about as tool's and skipped.
func (p *parse) mdTableRows(h, end, cols int, tool string, row func(line int, cells []string)) {
	for j := h + 1; j < end; j++ {
		cells, _ := mdCells(p.lines[j])
		if isSeparatorRow(cells) {
			continue
		}
		if len(cells) != cols {
			p.warn(j+1, "%s row has %d cells, the header %d; skipped", tool, len(cells), cols)
			continue
		}
		row(j+1, cells)
	}
}

// lbHeaderIndex maps a llama-bench table header to column indexes; ok is
// false for other tables.
func lbHeaderIndex(cells []string) (map[string]int, bool) {
	idx := map[string]int{}
	for i, c := range cells {
		idx[strings.ToLower(c)] = i
	}
	_, hasTest := idx["test"]
	_, hasTS := idx["t/s"]
	return idx, hasTest && hasTS
}

func hasLlamaBenchTable(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if cells, ok := mdCells(line); ok {
			if _, ok := lbHeaderIndex(cells); ok {
				return true
			}
		}
	}
	return false
}

// lbTestRE reads one part of a test name: "pp512", "tg 128".
var lbTestRE = regexp.MustCompile(`^(pp|tg)\s*(\d+)$`)

// parseLBTest reads llama-bench test names: "pp512", "tg128", "pp 512"
// (older builds), "pp512 @ d4096", "pp512+tg128".
func parseLBTest(s string) (nPrompt, nGen, nDepth int, ok bool) {
	left, right, hasDepth := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "@")
	if hasDepth {
		d := strings.TrimSpace(right)
		if !strings.HasPrefix(d, "d") {
			return 0, 0, 0, false
		}
		if nDepth, ok = parseCount(strings.TrimSpace(d[1:])); !ok {
			return 0, 0, 0, false
		}
	}
	for _, part := range strings.Split(left, "+") {
		m := lbTestRE.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			return 0, 0, 0, false
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n > 1e9 {
			return 0, 0, 0, false
		}
		if m[1] == "pp" {
			nPrompt = n
		} else {
			nGen = n
		}
	}
	return nPrompt, nGen, nDepth, true
}

// lbPreamble is what the lines before a markdown table say: the command
// line, the devices found, the device name.
type lbPreamble struct {
	modelFile string
	settings  []string
	device    string
	devices   int
}

var (
	foundDevicesRE = regexp.MustCompile(`found (\d+) (\w+) devices?`)
	deviceLineRE   = regexp.MustCompile(`^\s*Device \d+: ([^,]+)(?:, (gfx\w+))?`)
	vulkanDeviceRE = regexp.MustCompile(`ggml_vulkan: \d+ = ([^(|]+)`)
	envAssignRE    = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	buildLineRE    = regexp.MustCompile(`^\s*build:\s*([0-9a-fA-F]+)\s*\((\d+)\)`)
)

// lbPreambleBefore reads up to 30 lines before a table header, stopping at
// the previous table or build line.
func (p *parse) lbPreambleBefore(header int) lbPreamble {
	var pre lbPreamble
	deviceLines := 0
	for i := header - 1; i >= 0 && i >= header-30; i-- {
		line := p.lines[i]
		if _, ok := mdCells(line); ok || buildLineRE.MatchString(line) {
			break
		}
		if m := foundDevicesRE.FindStringSubmatch(line); m != nil && pre.devices == 0 {
			pre.devices, _ = strconv.Atoi(m[1])
		}
		if m := deviceLineRE.FindStringSubmatch(line); m != nil {
			deviceLines++
			pre.device = strings.TrimSpace(m[1])
			if m[2] != "" {
				pre.device += " " + m[2]
			}
		} else if m := vulkanDeviceRE.FindStringSubmatch(line); m != nil {
			deviceLines++
			pre.device = strings.TrimSpace(m[1])
		}
		if strings.Contains(line, "llama-bench") && pre.modelFile == "" && pre.settings == nil {
			pre.modelFile, pre.settings = parseLBCommand(line)
			if strings.Contains(pre.modelFile, ",") {
				p.warn(i+1, "llama-bench ran several models (%s): pass --model per file", pre.modelFile)
				pre.modelFile = ""
			}
		}
	}
	if pre.devices == 0 {
		pre.devices = deviceLines
	}
	return pre
}

// parseLBCommand reads a llama-bench command line: the -m/--model file and
// the other flags and environment assignments, for notes.
func parseLBCommand(line string) (model string, settings []string) {
	f := strings.Fields(line)
	bin := -1
	for i, t := range f {
		if strings.Contains(t, "llama-bench") {
			bin = i
			break
		}
	}
	if bin < 0 {
		return "", nil
	}
	for _, t := range f[:bin] {
		if envAssignRE.MatchString(t) {
			settings = append(settings, "env "+t)
		}
	}
	var flags []string
	for i := bin + 1; i < len(f); i++ {
		t := f[i]
		if (t == "-m" || t == "--model") && i+1 < len(f) {
			model = f[i+1]
			i++
			continue
		}
		if strings.HasPrefix(t, "-o") || t == "--output" {
			if t == "-o" || t == "--output" {
				i++
			}
			continue
		}
		flags = append(flags, t)
	}
	if len(flags) > 0 {
		settings = append([]string{"llama-bench " + strings.Join(flags, " ")}, settings...)
	}
	return model, settings
}

// lbBuildAfter finds the "build: <commit> (<number>)" line that llama-bench
// prints after a table.
func (p *parse) lbBuildAfter(end int) (build, commit string) {
	for i := end; i < len(p.lines) && i < end+6; i++ {
		if m := buildLineRE.FindStringSubmatch(p.lines[i]); m != nil {
			return "b" + m[2], m[1]
		}
		if _, ok := mdCells(p.lines[i]); ok {
			break
		}
	}
	return "", ""
}

// lbBaseColumns are the markdown columns that are not settings.
var lbBaseColumns = map[string]bool{"model": true, "size": true, "params": true, "backend": true, "test": true, "t/s": true, "ngl": true, "type_k": true}

// parseLlamaBenchMarkdown reads llama-bench's markdown tables.
func parseLlamaBenchMarkdown(p *parse) error {
	for i := 0; i < len(p.lines); i++ {
		cells, ok := mdCells(p.lines[i])
		if !ok {
			continue
		}
		idx, ok := lbHeaderIndex(cells)
		if !ok {
			continue
		}
		pre := p.lbPreambleBefore(i)
		end := p.mdTableEnd(i)
		build, commit := p.lbBuildAfter(end)
		p.mdTableRows(i, end, len(cells), "llama-bench", func(line int, row []string) {
			p.lbMarkdownRow(line, cells, idx, row, pre, build, commit)
		})
		i = end - 1
	}
	return nil
}

func (p *parse) lbMarkdownRow(line int, header []string, idx map[string]int, row []string, pre lbPreamble, build, commit string) {
	get := func(k string) string {
		if i, ok := idx[k]; ok {
			return row[i]
		}
		return ""
	}
	nP, nG, nD, ok := parseLBTest(get("test"))
	if !ok {
		p.warn(line, "llama-bench test %q not understood; skipped", get("test"))
		return
	}
	avg, ok := parseNumber(get("t/s"))
	nums := numberRE.FindAllString(get("t/s"), -1)
	if !ok || len(nums) == 0 {
		p.warn(line, "llama-bench t/s %q is not a number; skipped", get("t/s"))
		return
	}
	rec := lbRecord{
		line: line, build: build, commit: commit, modelFile: pre.modelFile,
		modelType: get("model"), backends: get("backend"), device: pre.device, devices: pre.devices,
		nPrompt: nP, nGen: nG, nDepth: nD, typeK: get("type_k"), ngl: get("ngl"),
	}
	rec.avgTS = avg
	if len(nums) > 1 && strings.Contains(get("t/s"), "±") {
		rec.stdTS = nums[len(nums)-1]
	}
	for i, h := range header {
		if k := strings.ToLower(h); !lbBaseColumns[k] && row[i] != "" {
			rec.settings = append(rec.settings, k+" "+row[i])
		}
	}
	if sz := get("size"); sz != "" {
		rec.settings = append(rec.settings, "size "+sz)
	}
	rec.settings = append(rec.settings, pre.settings...)
	p.addLlamaBench(rec)
}
