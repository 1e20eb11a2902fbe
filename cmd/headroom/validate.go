package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

func newValidateCmd(g *globalOptions) *cobra.Command {
	var data string
	var jsonOut, rows bool
	cmd := &cobra.Command{
		Use:   "validate [FILE.csv | --data FILE.csv]",
		Short: "Predict every row of a measurement file and report the error per metric",
		Long: `validate predicts each row of a CSV in the measurement schema
(hardware,devices,engine,backend,engine_version,model,quant,kv_type,prompt_tokens,
gen_tokens,concurrency,context_depth,metric,value,unit,source,notes, and the
workload columns scenario,request_rate,num_prompts,lengths,statistic) and
reports, per metric: rows, rows predicted, MdAPE, P90 absolute percentage error
and the signed median error (bias), the worst rows, and breakdowns by engine,
hardware kind, workload scenario and source. The file is the argument or
--data; without one it scores the embedded published measurements.

A row's workload comes from its columns only, never from notes or source:
scenario is single, batched, closed (concurrency clients in a loop), burst
(concurrency prompts sent at once), rate (request_rate req/s at random),
offline (the largest batch) or capacity (kv_tokens); statistic is mean or
median; lengths is fixed or variable. A file written before these columns
existed still reads: a blank scenario is inferred from request_rate,
concurrency and the metric (single, batched, closed or rate). 'headroom
calibrate import' writes rows with every column filled from a tool's output.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := measurementFile(args, data)
			if err != nil {
				return err
			}
			a, err := g.open("")
			if err != nil {
				return err
			}
			ms, err := loadMeasurements(cmd, data)
			if err != nil {
				return err
			}
			rep := a.Validate(ms)
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printReport(cmd.OutOrStdout(), rep, rows, len(ms.Skipped))
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "CSV file in the measurement schema (default: the embedded published measurements)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON: {\"metrics\": {\"<metric>\": {\"rows\", \"predicted\", \"mdape\", \"p90\", \"bias\"}}, ...}")
	cmd.Flags().BoolVar(&rows, "rows", false, "also print every row with its prediction")
	return cmd
}

func printReport(w io.Writer, rep planner.Report, rows bool, skipped int) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\trows\tpredicted\tMdAPE %\tP90 %\tbias %\t")
	for _, m := range planner.Metrics {
		r, ok := rep.Metrics[m]
		if !ok {
			continue
		}
		if r.Predicted == 0 {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t-\t-\t\n", m, r.Rows, r.Predicted, r.MdAPEText())
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%+.1f\t\n", m, r.Rows, r.Predicted, r.MdAPE, r.P90, r.Bias)
	}
	tw.Flush()
	if skipped > 0 {
		fmt.Fprintf(w, "(%d malformed rows skipped)\n", skipped)
	}
	for _, grp := range []struct {
		title string
		m     map[string]map[planner.Metric]planner.MetricReport
	}{{"by engine", rep.ByEngine}, {"by hardware kind", rep.ByKind}, {"by workload scenario", rep.ByScenario}, {"by source", rep.BySource}} {
		fmt.Fprintf(w, "\nMdAPE %% %s (predicted/rows):\n", grp.title)
		keys := make([]string, 0, len(grp.m))
		for k := range grp.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t", k)
			for _, m := range planner.Metrics {
				if r, ok := grp.m[k][m]; ok && r.Predicted > 0 {
					fmt.Fprintf(tw, "%s %.0f%% (%d/%d)\t", m, r.MdAPE, r.Predicted, r.Rows)
				} else if ok {
					fmt.Fprintf(tw, "%s - (0/%d)\t", m, r.Rows)
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if len(rep.Unpredicted) > 0 {
		fmt.Fprintln(w, "\nRows not predicted:")
		for why, n := range rep.Unpredicted {
			fmt.Fprintf(w, "  %3d  %s\n", n, cell(why))
		}
	}
	if len(rep.Beyond) > 0 {
		fmt.Fprintf(w, "\nRows beyond what their own columns allow physically (%d, kept in every figure above): at the device's peak\n"+
			"bandwidth and compute, the bytes and FLOPs the catalog gives the row's model and formats cannot reach the value.\n"+
			"The run had something its columns do not say (a smaller weight or KV format, speculative decoding, another\n"+
			"device), or the catalog's bytes for that format are too high:\n", len(rep.Beyond))
		for _, r := range rep.Beyond {
			fmt.Fprintf(w, "  %-13s meas %-9.4g %s  %s %s %s %s %s p%d g%d c%d\n", r.Row.Metric, r.Row.Value, r.Beyond,
				cell(r.Row.Hardware), cell(r.Row.Engine), cell(r.Row.Model), cell(r.Row.Quant), cell(r.Row.KVType), r.Row.PromptTokens, r.Row.GenTokens, r.Row.Concurrency)
		}
	}
	fmt.Fprintln(w, "\nWorst rows:")
	for _, m := range planner.Metrics {
		for _, r := range rep.Worst[m] {
			fmt.Fprintf(w, "  %-13s %+7.0f%%  pred %-9.4g meas %-9.4g %s %s %s %s c=%d\n", m, r.Signed, r.Predicted, r.Row.Value,
				cell(r.Row.Hardware), cell(r.Row.Engine), cell(r.Row.Model), cell(r.Row.Quant), max(r.Row.Concurrency, 1))
		}
	}
	if rows {
		fmt.Fprintln(w, "\nAll rows:")
		for _, r := range rep.Results {
			fmt.Fprintf(w, "  %-13s pred %-10.4g meas %-10.4g %+6.0f%% %s|%s|%s|%s|p%d g%d c%d d%d %s\n", r.Row.Metric, r.Predicted, r.Row.Value, r.Signed,
				cell(r.Row.Hardware), cell(r.Row.Engine), cell(r.Row.Model), cell(r.Row.Quant), r.Row.PromptTokens, r.Row.GenTokens, r.Row.Concurrency, r.Row.ContextDepth, cell(r.Err))
		}
	}
}

// cell is a CSV cell as printed: control characters (terminal escapes in
// a user's file) removed and length capped.
func cell(s string) string { return textsafe.Printable(s, 200) }

// measurementFile is the measurement CSV validate or refit reads: the
// argument, or --data (data); two different ones are a usage error.
func measurementFile(args []string, data string) (string, error) {
	if len(args) == 0 {
		return data, nil
	}
	if data != "" && data != args[0] {
		return "", withCode(exitUsage, fmt.Errorf("two measurement files, %q and --data %q: give one", args[0], data))
	}
	return args[0], nil
}
