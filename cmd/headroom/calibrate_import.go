package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/calibrate/importer"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// calibrateImportFlags are the flags of `calibrate import`, read once into
// importer.Context.
type calibrateImportFlags struct {
	hardware, model, engine, engineVersion string
	quant, kvType, backend, source, format string
	devices                                int
	csvOut                                 string
	jsonOut                                bool
	save, force                            bool
	root                                   string
}

func newCalibrateImportCmd(g *globalOptions) *cobra.Command {
	var f calibrateImportFlags
	cmd := &cobra.Command{
		Use:   "import FILE [--hardware ID] [--model ID] [--engine E] [--quant Q] [--backend B] [--devices N] [--csv OUT.csv] [--save [--force]] [--json]",
		Short: "Turn benchmark outputs you already have into measurement rows",
		Long: `import reads a benchmark output and prints its results as rows of Headroom's
measurement schema, the rows 'validate --data' scores and calibration fits.

It reads, detecting the format from the content:
  llama-bench        markdown (the default output, with the command line and
                     build line around it), -o csv, -o json, -o jsonl
  llama-batched-bench  the table (and --output-format jsonl): S_PP and S_TG
                     of B sequences in lock-step, as batched rows
  vllm bench serve   the console output (benchmark_serving.py too), and the
                     JSON of --save-result / --append-result
  happy_vllm         benchmark_llm_serving model cards
  TGI                text-generation-benchmark tables

A file may hold several runs and several formats (notes with vllm bench serve
logs and llama-bench tables). Benchmark outputs seldom say which device they
ran on, and name models loosely: --hardware and --model set them for every
row; --engine, --engine-version, --quant, --kv-type, --backend and --devices
fill only what the file does not state. Every guess and every gap is printed
as a warning that names the flag to pass.

--csv writes the rows in the schema of the published measurements
(atomically: a temporary file, then a rename). Rows must name a catalog
device and model for that; import says which flag is missing.

--save calibrates Headroom to the rows: for each setup (device, engine,
backend) it saves a calibration that moves the fitted decode efficiency by
the factor the setup's decode-side rows (tg, TPOT, ITL, output throughput)
imply, so plans on that setup, for every model and format, start from what
you measured; where the rows ran several models, each also gets its own
factor. Prefill is left to the fit (one model's prompt speed does not
carry to others). Rows that name no device (and no --hardware) are taken as
this machine's. It prints each row measured against the calibrated
prediction and the error bands plans on a calibrated setup carry;
'calibrate list' shows it and 'calibrate remove' forgets it.`,
		Example: `  headroom calibrate import llama-bench.md --hardware amd-ryzen-ai-max-395
  llama-bench -o json -m model.gguf > bench.json && headroom calibrate import bench.json --hardware rtx-4090
  headroom calibrate import serve.log --hardware h100-sxm --engine-version 0.10.1 --csv mine.csv
  headroom validate --data mine.csv
  headroom calibrate import result.json --hardware h100-sxm --save`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.catalog()
			if err != nil {
				return err
			}
			ctx, err := f.context(c)
			if err != nil {
				return withCode(exitUsage, err)
			}
			return runCalibrateImport(cmd, g, args[0], ctx, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.hardware, "hardware", "", "device the benchmark ran on: catalog id or name (one device; see --devices)")
	fl.StringVar(&f.model, "model", "", "model of every row: catalog id or name (default: what the file names)")
	fl.StringVar(&f.engine, "engine", "", "engine where the file does not say: vllm, llama.cpp, ik_llama.cpp, tgi, sglang, ollama ...")
	fl.StringVar(&f.engineVersion, "engine-version", "", "engine version where the file does not say (b6327, 0.10.1 ...)")
	fl.StringVar(&f.quant, "quant", "", "weight format where the file does not say (q4_k_m, f16, awq-int4 ...)")
	fl.StringVar(&f.kvType, "kv-type", "", "KV-cache type where the file does not say (default f16 or the model's dtype)")
	fl.StringVar(&f.backend, "backend", "", "backend where the file does not say: cuda, rocm, vulkan, metal, sycl, cpu")
	fl.BoolVar(&f.save, "save", false, "calibrate to the rows: save one calibration per device, engine and backend (decode efficiency scaled by what the rows imply)")
	fl.BoolVar(&f.force, "force", false, "with --save, replace a clean calibration with a flagged one")
	fl.StringVar(&f.root, "root", "", "with --save, probe a saved machine tree instead of / for rows that name no device (default: this machine)")
	fl.IntVar(&f.devices, "devices", 0, "number of devices where the file does not say (default 1)")
	fl.StringVar(&f.source, "source", "", "source column of the rows (default: the file's name)")
	fl.StringVar(&f.format, "format", "", "read the file as this format instead of detecting it: "+importFormatNames())
	fl.StringVar(&f.csvOut, "csv", "", "write the rows to this CSV file in the measurement schema")
	fl.BoolVar(&f.jsonOut, "json", false, "print the rows and warnings as JSON")
	return cmd
}

func importFormatNames() string {
	names := make([]string, len(importer.Formats))
	for i, f := range importer.Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// context resolves the flags against the catalog into importer.Context.
func (f calibrateImportFlags) context(c *planner.Catalog) (importer.Context, error) {
	ctx := importer.Context{
		EngineVersion: f.engineVersion, KVType: f.kvType, Devices: f.devices,
		Source: f.source, Catalog: c,
	}
	if f.devices < 0 {
		return ctx, fmt.Errorf("--devices %d: want a positive count", f.devices)
	}
	if f.hardware != "" {
		h, err := c.FindHardware(f.hardware)
		if err != nil {
			return ctx, fmt.Errorf("--hardware: %w", err)
		}
		ctx.Hardware = h.ID
	}
	if f.model != "" {
		m, err := c.FindModel(f.model)
		if err != nil {
			return ctx, fmt.Errorf("--model: %w", err)
		}
		ctx.Model = m.ID
	}
	if f.quant != "" {
		q, err := c.FindQuant(f.quant)
		if err != nil {
			return ctx, fmt.Errorf("--quant: %w", err)
		}
		ctx.Quant = q.ID
	}
	if f.engine != "" {
		ctx.Engine = f.engine
		if e, err := c.FindEngine(f.engine); err == nil {
			ctx.Engine = string(e.ID)
		} else if !strings.EqualFold(f.engine, "llama-server") {
			return ctx, fmt.Errorf("--engine: %w", err)
		}
	}
	if f.backend != "" {
		b := planner.Backend(strings.ToLower(f.backend))
		switch b {
		case planner.CUDA, planner.ROCm, planner.Vulkan, planner.Metal, planner.SYCL, planner.CPU:
			ctx.Backend = string(b)
		default:
			return ctx, fmt.Errorf("--backend %q: want cuda, rocm, vulkan, metal, sycl or cpu", f.backend)
		}
	}
	if f.format != "" {
		format, err := importer.ParseFormat(f.format)
		if err != nil {
			return ctx, fmt.Errorf("--format: %w", err)
		}
		ctx.Format = format
	}
	return ctx, nil
}

// runCalibrateImport imports one file ("-" reads stdin), prints the rows
// and warnings, and writes --csv.
func runCalibrateImport(cmd *cobra.Command, g *globalOptions, path string, ctx importer.Context, f calibrateImportFlags) error {
	var res importer.Result
	var err error
	name := "stdin"
	if path == "-" {
		res, err = importer.Import(cmd.InOrStdin(), name, ctx)
	} else {
		name = path
		res, err = importer.ImportFile(path, ctx)
	}
	stderr := cmd.ErrOrStderr()
	if !f.jsonOut {
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "headroom: warning: %s\n", w)
		}
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		if err := printImportJSON(out, name, res); err != nil {
			return err
		}
	} else {
		printImportTable(out, res)
	}
	if f.csvOut != "" {
		if err := writeImportCSV(f.csvOut, res.Rows); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "headroom: wrote %d rows to %s\n", len(res.Rows), f.csvOut)
	}
	if !f.save {
		return nil
	}
	return saveImportCalibrations(cmd, g, name, res.Rows, f)
}

// saveImportCalibrations fits and saves the calibrations of --save and
// prints each setup's factor, rows and the save's outcome on stderr (stdout
// keeps the rows, or the JSON).
func saveImportCalibrations(cmd *cobra.Command, g *globalOptions, name string, rows []planner.Measurement, f calibrateImportFlags) error {
	stderr := cmd.ErrOrStderr()
	a, err := g.open(f.root)
	if err != nil {
		return err
	}
	o, err := a.CalibrateFromRows(cmd.Context(), rows, name, f.force)
	if err != nil {
		return err
	}
	if o.Note != "" {
		fmt.Fprintf(stderr, "headroom: %s; --hardware names another\n", o.Note)
	}
	for _, si := range o.Setups {
		p := si.Profile
		fmt.Fprintf(stderr, "headroom: calibration %s: fitted decode efficiency ×%.3f from %d rows", p.Key, p.Terms.DecodeScale, p.Fit.DecodePoints)
		if si.Unreached > 0 {
			fmt.Fprintf(stderr, " (%d more left out: the model cannot predict them, or past the first %d)", si.Unreached, planner.MaxCalibrationRows)
		}
		fmt.Fprintln(stderr)
		for _, id := range slices.Sorted(maps.Keys(p.Terms.ModelDecodeScale)) {
			fmt.Fprintf(stderr, "  %s: its own factor ×%.3f\n", id, p.Terms.ModelDecodeScale[id])
		}
		tw := tabwriter.NewWriter(stderr, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  metric\trow\tmeasured\tcalibrated prediction\t")
		for _, r := range p.Fit.Residuals {
			fmt.Fprintf(tw, "  %s\t%s\t%.4g\t%.4g (%+.0f%%)\t\n", r.Metric, r.Label, r.Measured, r.Predicted, (r.Predicted/r.Measured-1)*100)
		}
		tw.Flush()
		fmt.Fprint(stderr, si.Comparison.String())
		if si.Err == nil {
			fmt.Fprintf(stderr, "headroom: saved %s\n", si.Path)
		}
	}
	if bs := a.CalibratedBands(); o.Saved() && len(bs) > 0 {
		fmt.Fprint(stderr, "headroom: plans on a calibrated setup carry the error bands measured on setups calibrated on one run (held out by source):")
		for _, b := range bs {
			fmt.Fprintf(stderr, " %s ±%.0f%% (uncalibrated ±%.0f%%)", b.Metric.Title(), b.Calibrated, b.Fitted)
		}
		fmt.Fprintln(stderr, "; a workload whose own band is narrower (closed loops' TPOT) keeps it")
	}
	// A setup not saved fails the command, after the others are saved.
	return o.Err()
}

// importJSON is the --json output.
type importJSON struct {
	File     string            `json:"file"`
	Formats  []importer.Format `json:"formats"`
	Rows     []importRowJSON   `json:"rows"`
	Warnings []string          `json:"warnings"`
}

type importRowJSON struct {
	Line int `json:"line"`
	planner.Measurement
}

func printImportJSON(w io.Writer, name string, res importer.Result) error {
	doc := importJSON{File: name, Formats: res.Formats, Warnings: []string{}}
	for i, m := range res.Rows {
		doc.Rows = append(doc.Rows, importRowJSON{Line: res.Lines[i], Measurement: m})
	}
	for _, wn := range res.Warnings {
		doc.Warnings = append(doc.Warnings, wn.String())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// printImportTable prints one line per row: where it came from, the metric
// and value, and the conditions.
func printImportTable(w io.Writer, res importer.Result) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "line\tmetric\tvalue\tunit\tmodel\tquant\tengine\tbackend\thardware\tprompt\tgen\tconc\tdepth")
	for i, m := range res.Rows {
		engine := m.Engine
		if m.EngineVersion != "" {
			engine += " " + m.EngineVersion
		}
		hw := importCell(m.Hardware)
		if m.Devices > 1 {
			hw = fmt.Sprintf("%d× %s", m.Devices, hw)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", res.Lines[i], m.Metric,
			importValue(m.Value), m.Unit, importCell(m.Model), importCell(m.Quant), importCell(engine), importCell(m.Backend), hw,
			importCount(m.PromptTokens), importCount(m.GenTokens), importCount(m.Concurrency), m.ContextDepth)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d rows from %s\n", len(res.Rows), importFormatList(res.Formats))
}

func importFormatList(fs []importer.Format) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, " + ")
}

func importCell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func importCount(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// importValue prints a value with at most 4 decimals.
func importValue(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// writeImportCSV writes rows in the measurement schema, refusing rows that
// `validate` could not place (no catalog device or model).
func writeImportCSV(path string, rows []planner.Measurement) error {
	var noHW, noModel int
	for _, m := range rows {
		if m.Hardware == "" {
			noHW++
		}
		if m.Model == "" {
			noModel++
		}
	}
	switch {
	case noHW > 0:
		return withCode(exitUsage, fmt.Errorf("--csv: %d of %d rows name no device: pass --hardware", noHW, len(rows)))
	case noModel > 0:
		return withCode(exitUsage, fmt.Errorf("--csv: %d of %d rows name no model: pass --model", noModel, len(rows)))
	}
	var buf bytes.Buffer
	if err := measurements.Write(&buf, rows); err != nil {
		return fmt.Errorf("--csv %s: %w", path, err)
	}
	return writeFile(path, buf.Bytes(), 0o644)
}
