package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/internal/atomicfile"
	"github.com/headroom-planner/headroom/planner"
)

func newRefitCmd(g *globalOptions) *cobra.Command {
	var data, out string
	var cv, hold, foldReq bool
	var ridge, inter, srcw float64
	cmd := &cobra.Command{
		Use:   "refit [FILE.csv | --data FILE.csv]",
		Short: "Refit the performance and memory model on measurements (reproducible; writes fitted.toml)",
		Long: `refit fits the planner's efficiencies with gonum on a measurement CSV (default:
the embedded published measurements) and writes them, with the date, the data
and the fit quality, to a TOML profile. Rebuild to embed the result:

  go run ./cmd/headroom refit --out profiles/catalog/fitted.toml --cv`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := measurementFile(args, data)
			if err != nil {
				return err
			}
			if !(ridge > 0) || math.IsInf(ridge, 0) {
				return withCode(exitUsage, fmt.Errorf("--ridge %g: want a finite penalty above 0", ridge))
			}
			if !(srcw >= 0 && srcw <= 1) {
				return withCode(exitUsage, fmt.Errorf("--source-weight %g: want an exponent from 0 (rows alike) to 1 (sources alike)", srcw))
			}
			if !(inter > 0) || math.IsInf(inter, 0) {
				return withCode(exitUsage, fmt.Errorf("--interaction-ridge %g: want a finite factor above 0 (1 = the same penalty as main effects)", inter))
			}
			a, err := g.open("")
			if err != nil {
				return err
			}
			ms, err := loadMeasurements(cmd, data)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			r := a.Refit(ms, app.RefitOptions{Ridge: ridge, InteractionRidge: inter, SourceWeight: srcw, CV: cv, HoldOverheads: hold, FoldRequestOverheads: foldReq, Date: time.Now().UTC().Format("2006-01-02")})
			fmt.Fprintf(w, "memory: vLLM activation factor %.2f, reserve %s (kv_tokens MdAPE %.1f%%, %d rows)\n", r.Memory.VLLMActivationFactor, r.Memory.VLLMReserve, r.KVReport.MdAPE, r.KVReport.Rows)
			fmt.Fprintf(w, "in-sample: %s\n", r.InSample.Describe())
			for _, x := range []*planner.CrossValidation{r.CV, r.SourceCV} {
				if x != nil {
					printCV(w, *x)
				}
			}
			if out == "" {
				return nil
			}
			encoded, err := r.EncodeFitted()
			if err != nil {
				return err
			}
			if err := writeFile(out, encoded, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "measurement CSV (default: embedded published measurements)")
	cmd.Flags().StringVar(&out, "out", "", "write the fitted profile here (e.g. profiles/catalog/fitted.toml)")
	cmd.Flags().BoolVar(&cv, "cv", false, "also run leave-one-hardware-out cross-validation (slower)")
	cmd.Flags().BoolVar(&hold, "hold-overheads", false, "keep the current profile's host overheads (per layer, sequence, request) and fit only the efficiencies: judges a model change apart from the overhead search")
	cmd.Flags().BoolVar(&foldReq, "cv-fold-request-overheads", false, "with --cv, search the front end's cost per request again in every fold instead of holding the full fit's (stricter: that cost is learned mostly from one source)")
	cmd.Flags().Float64Var(&ridge, "ridge", planner.DefaultRidge, "L2 penalty of the effect terms (chosen by leave-one-hardware-out validation)")
	cmd.Flags().Float64Var(&srcw, "source-weight", 0, "weigh each row by (its source's rows)^-W in the efficiency fit: 0 = rows alike, 1 = sources alike (docs/predictions.md has the measurements)")
	cmd.Flags().Float64Var(&inter, "interaction-ridge", planner.DefaultInteractionRidge, "multiply the penalty of interaction terms (arch*engine, engine*backend, …) by this; 1 = the same penalty as main effects (docs/predictions.md has the measurements)")
	return cmd
}

// loadMeasurements reads --data (or the embedded measurements), warning
// about the rows it skipped.
func loadMeasurements(cmd *cobra.Command, path string) (app.Measurements, error) {
	ms, err := app.LoadMeasurements(path)
	if err != nil {
		return ms, fmt.Errorf("--data: %w", err)
	}
	for _, e := range ms.Skipped {
		fmt.Fprintf(cmd.ErrOrStderr(), "headroom: warning: skipped %v\n", e)
	}
	return ms, nil
}

// writeFile writes data to path atomically (internal/atomicfile: a temp
// file in the same directory, fsync, rename; an existing file keeps its
// mode). The directory must exist: a typo in a path must not create
// directories, least of all as root. A new file gets mode.
func writeFile(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return app.Usagef("writing %s: directory %s does not exist", path, dir)
	}
	_, err := os.Stat(path)
	isNew := errors.Is(err, os.ErrNotExist)
	if err := atomicfile.WriteFile(path, data); err != nil {
		return err
	}
	if isNew && mode != 0o644 {
		return os.Chmod(path, mode)
	}
	return nil
}

// printCV prints a cross-validation: MdAPE per metric, per workload
// scenario, and the rows predicted worst when held out.
func printCV(w io.Writer, x planner.CrossValidation) {
	s := ""
	for _, m := range planner.Metrics {
		if rep, ok := x.Metrics[m]; ok {
			s += fmt.Sprintf("%s MdAPE %s%% (%d/%d); ", m, rep.MdAPEText(), rep.Predicted, rep.Rows)
		}
	}
	fmt.Fprintf(w, "leave-one-%s-out (%d folds): %s\n", x.By, x.Folds, s)
	within := ""
	for _, m := range planner.Metrics {
		if v, ok := x.WithinGroup[m]; ok {
			within += fmt.Sprintf(" %s %.1f%%", m, v)
		}
	}
	if within != "" {
		fmt.Fprintf(w, "  within each %s (its own median error taken out):%s\n", x.By, within)
	}
	if c := x.Calibrated; c != nil {
		line := ""
		for _, m := range planner.Metrics {
			if rep, ok := c.Metrics[m]; ok {
				line += fmt.Sprintf(" %s %s%% (uncalibrated %s%%)", m, rep.MdAPEText(), c.Plain[m].MdAPEText())
			}
		}
		fmt.Fprintf(w, "  each held-out setup calibrated on its first run (%d setups, %d refused; first runs not scored):%s\n", c.Setups, c.Refused, line)
	}
	scen := make([]string, 0, len(x.ByScenario))
	for k := range x.ByScenario {
		scen = append(scen, k)
	}
	sort.Strings(scen)
	for _, k := range scen {
		line := ""
		for _, m := range planner.Metrics {
			if rep, ok := x.ByScenario[k][m]; ok {
				line += fmt.Sprintf(" %s %s%% (%d/%d)", m, rep.MdAPEText(), rep.Predicted, rep.Rows)
			}
		}
		fmt.Fprintf(w, "  %-9s%s\n", k, line)
	}
	for _, m := range planner.Metrics {
		for _, row := range x.Worst[m] {
			fmt.Fprintf(w, "  held out, worst %-13s %+7.0f%%  %s %s %s c=%d\n", m, row.Signed, row.Row.Hardware, row.Row.Engine, row.Row.Model, row.Row.Concurrency)
		}
	}
}
