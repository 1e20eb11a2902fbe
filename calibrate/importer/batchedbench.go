package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// llama-batched-bench (tools/batched-bench/batched-bench.cpp) decodes B
// sequences in lock-step: it prefills B prompts of PP tokens, then
// generates TG tokens for all B at once, and prints one row per (PP, TG,
// B) as a markdown table, or with --output-format jsonl one JSON object
// per row:
//
//	main: n_kv_max = 270336, n_batch = 2048, n_ubatch = 2048, flash_attn = 1, is_pp_shared = 0, ...
//	|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |
//	|   512 |     32 |    8 |   4352 |    1.433 |  2858.30 |    1.033 |   247.75 |    2.466 |  1764.57 |
//
//	{"n_kv_max": 2048, ..., "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.1, "speed_pp": 1186.6, "t_tg": 3.0, "speed_tg": 41.5, "t": 3.1, "speed": 80.3}
//
// S_PP is the prompt tokens of all B sequences over the prefill time
// (pl·pp/t_pp) and S_TG the generated tokens of all B over the generation
// time (pl·tg/t_tg): rows of scenario batched with concurrency B, pp_tps
// and total_out_tps. With -pps (is_pp_shared) the B sequences share one
// prompt and S_PP is that one prompt's prefill plus copying it, which is
// no schema metric: those pp rows are left out with a warning.

// bbRecord is one llama-batched-bench row, from either format.
type bbRecord struct {
	line       int
	pp, tg, pl int
	speedPP    float64
	speedTG    float64
	ppOK, tgOK bool
}

// bbSettings is what the "main: n_kv_max = …" line (or a JSONL object's
// leading keys) and the log around the table say about the run.
type bbSettings struct {
	shared    bool
	ngl       string
	notes     []string
	modelFile string
	device    string
	devices   int
	backend   string
	build     string
	commit    string
}

// bbHeaderIndex maps a llama-batched-bench table header to column
// indexes; ok is false for other tables.
func bbHeaderIndex(cells []string) (map[string]int, bool) {
	idx := map[string]int{}
	for i, c := range cells {
		idx[strings.ToLower(strings.Join(strings.Fields(c), " "))] = i
	}
	for _, k := range []string{"pp", "tg", "b", "s_pp t/s", "s_tg t/s"} {
		if _, ok := idx[k]; !ok {
			return nil, false
		}
	}
	return idx, true
}

func hasBatchedBenchTable(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if cells, ok := mdCells(line); ok {
			if _, ok := bbHeaderIndex(cells); ok {
				return true
			}
		}
	}
	return false
}

var (
	// bbMainLineRE is batched-bench's settings line, "main: n_kv_max = …".
	bbMainLineRE = regexp.MustCompile(`n_kv_max\s*=\s*\d+`)
	// bbSettingRE reads one "key = value" of it.
	bbSettingRE = regexp.MustCompile(`(\w+)\s*=\s*(-?\w+)`)
	// commonBuildRE is the "build: 7948 (b828e18c7) with …" line that
	// common_init logs first (the number before the commit, unlike
	// llama-bench's trailing "build: b828e18c7 (7948)").
	commonBuildRE = regexp.MustCompile(`^\s*build:\s*(\d+)\s*\(([0-9a-fA-F]+)\)`)
	// loaderFileRE is llama_model_loader's "loaded meta data … from PATH".
	loaderFileRE = regexp.MustCompile(`llama_model_loader: loaded meta data .* from (\S+)`)
)

// bbApply records the run settings of one "key = value" pair.
func (s *bbSettings) apply(k, v string) {
	switch k {
	case "is_pp_shared":
		s.shared = v != "0" && v != "false"
	case "n_gpu_layers":
		s.ngl = v
		s.notes = append(s.notes, "ngl "+v)
	case "flash_attn", "n_batch", "n_ubatch":
		s.notes = append(s.notes, strings.TrimPrefix(k, "n_")+" "+v)
	}
}

// bbPreambleBefore reads the lines above a table up to the previous
// table: the settings line, the command line (-m), the loader's file, the
// devices and the build.
func (p *parse) bbPreambleBefore(header int) bbSettings {
	var s bbSettings
	lb := p.lbPreambleBefore(header) // device lines, as llama-bench prints them
	s.device, s.devices = lb.device, lb.devices
	for i := header - 1; i >= 0 && i >= header-400; i-- {
		line := p.lines[i]
		if _, ok := mdCells(line); ok {
			break
		}
		switch {
		case bbMainLineRE.MatchString(line) && s.notes == nil:
			for _, m := range bbSettingRE.FindAllStringSubmatch(line, -1) {
				s.apply(m[1], m[2])
			}
		case strings.Contains(line, "llama-batched-bench") && s.modelFile == "":
			s.modelFile = commandModel(line, "llama-batched-bench")
		case s.modelFile == "" && loaderFileRE.MatchString(line):
			s.modelFile = loaderFileRE.FindStringSubmatch(line)[1]
		case s.build == "" && commonBuildRE.MatchString(line):
			m := commonBuildRE.FindStringSubmatch(line)
			s.build, s.commit = "b"+m[1], m[2]
		}
		if s.backend == "" {
			s.backend = backendFromLog(line)
		}
	}
	return s
}

// backendFromLog names the backend a ggml log line comes from
// ("ggml_cuda_init: found 1 CUDA devices", "ggml_metal_init", "ggml_vulkan:").
func backendFromLog(line string) string {
	for _, b := range []struct{ key, id string }{
		{"ggml_cuda", "cuda"}, {"ggml_hip", "rocm"}, {"ggml_metal", "metal"}, {"ggml_vulkan", "vulkan"}, {"ggml_sycl", "sycl"},
	} {
		if strings.Contains(line, b.key) {
			return b.id
		}
	}
	return ""
}

// commandModel is the -m/--model argument of a command line that runs bin.
func commandModel(line, bin string) string {
	f := strings.Fields(line)
	for i, t := range f {
		if !strings.Contains(t, bin) {
			continue
		}
		for j := i + 1; j+1 < len(f); j++ {
			if f[j] == "-m" || f[j] == "--model" {
				return f[j+1]
			}
		}
		return ""
	}
	return ""
}

// parseBatchedBenchMarkdown reads llama-batched-bench's markdown tables.
func parseBatchedBenchMarkdown(p *parse) error {
	for i := 0; i < len(p.lines); i++ {
		cells, ok := mdCells(p.lines[i])
		if !ok {
			continue
		}
		idx, ok := bbHeaderIndex(cells)
		if !ok {
			continue
		}
		set := p.bbPreambleBefore(i)
		end := p.mdTableEnd(i)
		p.mdTableRows(i, end, len(cells), "llama-batched-bench", func(line int, row []string) {
			rec := bbRecord{line: line}
			var okPP, okTG, okB bool
			rec.pp, okPP = wholeCell(row[idx["pp"]])
			rec.tg, okTG = wholeCell(row[idx["tg"]])
			rec.pl, okB = wholeCell(row[idx["b"]])
			if !okPP || !okTG || !okB {
				p.warn(line, "llama-batched-bench row %q: PP, TG and B must be whole numbers; skipped", strings.Join(row, " | "))
				return
			}
			rec.speedPP, rec.ppOK = parseNumber(row[idx["s_pp t/s"]])
			rec.speedTG, rec.tgOK = parseNumber(row[idx["s_tg t/s"]])
			p.addBatchedBench(rec, set)
		})
		i = end - 1
	}
	return nil
}

// wholeCell reads a table cell that holds only a whole number ("512");
// "12x" or "1e3" is not one.
func wholeCell(c string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if err != nil || n < 0 || n > 1e9 {
		return 0, false
	}
	return n, true
}

// parseBatchedBenchJSONL reads `llama-batched-bench --output-format
// jsonl`: one object per row, each with the run's settings.
func parseBatchedBenchJSONL(p *parse) error {
	objs, lines := p.decodeLines()
	for i, f := range objs {
		var set bbSettings
		for _, k := range []string{"flash_attn", "n_batch", "n_ubatch", "is_pp_shared", "n_gpu_layers"} {
			if v := f.str(k); v != "" {
				set.apply(k, v)
			}
		}
		rec := bbRecord{line: lines[i], pp: f.count("pp"), tg: f.count("tg"), pl: f.count("pl")}
		rec.speedPP, rec.ppOK = f.num("speed_pp")
		rec.speedTG, rec.tgOK = f.num("speed_tg")
		p.addBatchedBench(rec, set)
	}
	return nil
}

// addBatchedBench turns one row into its pp_tps and total_out_tps rows.
func (p *parse) addBatchedBench(r bbRecord, set bbSettings) {
	if r.pl < 1 {
		p.warn(r.line, "llama-batched-bench row with B = %d sequences skipped", r.pl)
		return
	}
	if set.ngl == "0" && set.backend != "" && set.backend != "cpu" {
		p.warn(r.line, "llama-batched-bench with n_gpu_layers 0 keeps the weights in system memory: the rows measure the CPU path more than the %s device", set.backend)
	}
	base := planner.Measurement{
		Engine: "llama.cpp", EngineVersion: set.build, Backend: set.backend, Devices: set.devices,
		PromptTokens: r.pp, GenTokens: r.tg, Concurrency: r.pl, Unit: unitTPS,
		Scenario: planner.WorkloadBatched, Lengths: planner.LengthsFixed,
	}
	if base.Backend == "cpu" {
		base.Devices = 1
	}
	test := fmt.Sprintf("llama-batched-bench PP %d, TG %d, B %d", r.pp, r.tg, r.pl)
	notes := append([]string(nil), set.notes...)
	if set.commit != "" {
		notes = append(notes, "commit "+set.commit)
	}
	add := func(metric planner.Metric, v float64, what string) {
		m := base
		m.Metric, m.Value = metric, v
		p.add(draft{line: r.line, m: m, model: set.modelFile, hardware: set.device, weakEngine: true,
			notes: append([]string{test + ": " + what}, notes...)})
	}
	switch {
	case r.pp == 0:
	case set.shared:
		p.warn(r.line, "%s: with a shared prompt (-pps) S_PP is one prompt's prefill and its copies, not a schema metric; pp row left out", test)
	case !r.ppOK || !usable(r.speedPP):
		p.warn(r.line, "%s: S_PP is not a positive number; pp row skipped", test)
	default:
		add(planner.MetricPP, r.speedPP, "S_PP, prompt tokens of all "+strconv.Itoa(r.pl)+" sequences per second of prefill")
	}
	switch {
	case r.tg == 0:
	case !r.tgOK || !usable(r.speedTG):
		p.warn(r.line, "%s: S_TG is not a positive number; generation row skipped", test)
	default:
		add(planner.MetricTotalOut, r.speedTG, "S_TG, generated tokens of all "+strconv.Itoa(r.pl)+" sequences per second of generation")
	}
}
