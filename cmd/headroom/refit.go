package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
	"github.com/spf13/cobra"
)

func newRefitCmd(g *globalOptions) *cobra.Command {
	var data, out string
	var cv bool
	var ridge float64
	cmd := &cobra.Command{
		Use:   "refit",
		Short: "Refit the performance and memory model on measurements (reproducible; writes fitted.toml)",
		Long: `refit fits the planner's efficiencies with gonum on a measurement CSV (default:
the embedded published measurements) and writes them, with the date, the data
and the fit quality, to a TOML profile. Rebuild to embed the result:

  go run ./cmd/headroom refit --out profiles/catalog/fitted.toml --cv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadCatalog(g)
			if err != nil {
				return err
			}
			rows, name, err := readMeasurements(data)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			mem, kvRep := planner.FitMemory(c, rows)
			c.Memory = &mem
			fmt.Fprintf(w, "memory: vLLM activation factor %.2f, reserve %s (kv_tokens MdAPE %.1f%%, %d rows)\n", mem.VLLMActivationFactor, mem.VLLMReserve, kvRep.MdAPE, kvRep.Rows)
			opt := planner.FitOptions{Ridge: ridge}
			p := planner.FitPerfWithOverheads(c, rows, opt)
			rep := planner.Validate(c, rows, &p)
			p.ErrorBand = map[string]float64{}
			for m, r := range rep.Metrics {
				p.ErrorBand[string(m)] = round1(r.MdAPE)
			}
			p.Fitted = fmt.Sprintf("%s on %s (%d rows), ridge %g; in-sample: %s", time.Now().UTC().Format("2006-01-02"), name, len(rows), opt.Ridge, rep.Describe())
			fmt.Fprintf(w, "in-sample: %s\n", rep.Describe())
			if cv {
				x := planner.LeaveOneHardwareOut(c, rows, opt, p)
				s := ""
				for _, m := range planner.Metrics {
					if r, ok := x.Metrics[m]; ok {
						s += fmt.Sprintf("%s MdAPE %.1f%% (%d/%d); ", m, r.MdAPE, r.Predicted, r.Rows)
						p.ErrorBand[string(m)] = round1(max(p.ErrorBand[string(m)], r.MdAPE))
					}
				}
				fmt.Fprintf(w, "leave-one-hardware-out (%d folds): %s\n", x.Folds, s)
				for _, m := range planner.Metrics {
					for _, r := range x.Worst[m] {
						fmt.Fprintf(w, "  held out, worst %-13s %+7.0f%%  %s %s %s c=%d\n", m, r.Signed, r.Row.Hardware, r.Row.Engine, r.Row.Model, r.Row.Concurrency)
					}
				}
				p.Fitted += "; leave-one-hardware-out: " + s
			}
			if out == "" {
				return nil
			}
			var buf bytes.Buffer
			buf.WriteString("# Fitted by `headroom refit` (see the README). Do not edit by hand; refit instead.\n\n")
			if err := toml.NewEncoder(&buf).Encode(map[string]any{"memory": mem, "perf": p}); err != nil {
				return err
			}
			if err := writeAtomic(out, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "measurement CSV (default: embedded published measurements)")
	cmd.Flags().StringVar(&out, "out", "", "write the fitted profile here (e.g. profiles/catalog/fitted.toml)")
	cmd.Flags().BoolVar(&cv, "cv", false, "also run leave-one-hardware-out cross-validation (slower)")
	cmd.Flags().Float64Var(&ridge, "ridge", planner.DefaultRidge, "L2 penalty of the effect terms (chosen by leave-one-hardware-out validation)")
	return cmd
}

func round1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }

func readMeasurements(path string) ([]planner.Measurement, string, error) {
	if path == "" {
		rows, _, err := measurements.LoadPublished()
		return rows, "published measurements.csv", err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", withCode(exitUsage, fmt.Errorf("--data: %w", err))
	}
	defer f.Close()
	rows, bad, err := measurements.Read(f, path)
	for _, e := range bad {
		fmt.Fprintf(os.Stderr, "headroom: warning: skipped %v\n", e)
	}
	return rows, filepath.Base(path), err
}

// writeAtomic writes data to path via a temporary file in the same
// directory and a rename, so readers never see a partial file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".headroom-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
