package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/headroom-planner/headroom/calibrate"
	"github.com/headroom-planner/headroom/calibrate/host"
	"github.com/headroom-planner/headroom/planner"
	"github.com/spf13/cobra"
)

// calibrationDir is where calibration profiles live: --calibrations, or
// $XDG_CONFIG_HOME/headroom/calibrations.
func calibrationDir(g *globalOptions) string {
	if g.calibrationDir != "" {
		return g.calibrationDir
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "headroom", "calibrations")
}

// applyCalibrations installs this machine's profiles into the catalog's
// performance parameters.
func applyCalibrations(g *globalOptions, c *planner.Catalog) {
	dir := calibrationDir(g)
	if dir == "" {
		return
	}
	ps, errs := calibrate.Load(dir)
	for _, e := range errs {
		fmt.Fprintf(os.Stderr, "headroom: warning: %v\n", e)
	}
	if len(ps) > 0 {
		perf := *c.Perf
		perf.Calibrations = map[string]planner.Calibrated{}
		calibrate.Apply(&perf, ps)
		c.Perf = &perf
	}
}

func newCalibrateCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure this machine or a running engine and fit its efficiencies (used by fit, plan and compare)",
		Long: `calibrate makes predictions true for this machine. Profiles are saved as TOML in
` + "`$XDG_CONFIG_HOME/headroom/calibrations`" + ` (or --calibrations DIR), keyed by
hardware × engine × backend; figures that use one are labelled "calibrated".`,
	}
	cmd.AddCommand(newCalibrateHostCmd(g), newCalibrateEndpointCmd(g), newCalibrateImportCmd(g),
		newCalibrateListCmd(g), newCalibrateShowCmd(g), newCalibrateRemoveCmd(g))
	return cmd
}

// hostProfiles turns a host benchmark into calibration profiles for CPU
// inference with llama.cpp and Ollama on this machine (calibrate.HostTerms).
func hostProfiles(hw string, res host.Result) []calibrate.Profile {
	terms := calibrate.HostTerms(res)
	now := time.Now().UTC()
	var out []calibrate.Profile
	for _, e := range []planner.EngineID{planner.LlamaCpp, planner.Ollama} {
		r := res
		out = append(out, calibrate.Profile{Hardware: hw, Engine: string(e), Backend: string(planner.CPU),
			Key: planner.CalibrationKey(hw, e, planner.CPU), Created: now, Source: "calibrate host", Terms: terms, Host: &r})
	}
	return out
}

// saveHostCalibration saves host profiles for the probed CPU.
func saveHostCalibration(g *globalOptions, res host.Result) ([]string, error) {
	c, err := loadCatalog(g)
	if err != nil {
		return nil, err
	}
	hw := "generic-cpu"
	if r, _, err := probedHardware(c, ""); err == nil && r.Kind == planner.KindCPU {
		hw = r.ID
	}
	var paths []string
	for _, p := range hostProfiles(hw, res) {
		path, err := calibrate.Save(calibrationDir(g), p)
		if err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func newCalibrateListCmd(g *globalOptions) *cobra.Command {
	var jsonOut bool
	return &cobra.Command{
		Use:   "list",
		Short: "List saved calibrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, errs := calibrate.Load(calibrationDir(g))
			for _, e := range errs {
				fmt.Fprintf(cmd.ErrOrStderr(), "headroom: warning: %v\n", e)
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(ps)
			}
			if len(ps) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "No calibrations in %s. Run `headroom calibrate host` or `headroom calibrate endpoint --url URL`.\n", calibrationDir(g))
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tAGE\tSOURCE\tDECODE η\tPREFILL η\tSTEP ms\tGB/s\tTFLOP/s")
			for _, p := range ps {
				t := p.Terms
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.2f\t%.1f\t%.3f\n", p.Key, p.Age(time.Now()).Round(time.Minute), p.Source,
					t.DecodeEff, t.PrefillEff, t.StepOverheadMs, t.BandwidthGBs, t.TFLOPS)
			}
			return tw.Flush()
		},
	}
}

func newCalibrateShowCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "show KEY",
		Short: "Show one calibration (terms, fit quality, residuals)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, _ := calibrate.Load(calibrationDir(g))
			for _, p := range ps {
				if p.Key == args[0] {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(p)
				}
			}
			return withCode(exitUsage, fmt.Errorf("no calibration %q in %s (see `headroom calibrate list`)", args[0], calibrationDir(g)))
		},
	}
}

func newCalibrateRemoveCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "remove KEY",
		Short: "Delete a calibration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := calibrate.Remove(calibrationDir(g), args[0])
			if err != nil {
				return withCode(exitUsage, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", key)
			return nil
		},
	}
}
