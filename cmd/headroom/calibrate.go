package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/planner"
)

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

func newCalibrateListCmd(g *globalOptions) *cobra.Command {
	var jsonOut bool
	return &cobra.Command{
		Use:   "list",
		Short: "List saved calibrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open("")
			if err != nil {
				return err
			}
			ps, errs := a.Calibrations()
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
				dec := fmt.Sprintf("%.3f", t.DecodeEff)
				if t.DecodeScale > 0 {
					// An imported calibration scales the fitted efficiency.
					dec = fmt.Sprintf("fit ×%.3f", t.DecodeScale)
					if n := len(t.ModelDecodeScale); n > 0 {
						dec += fmt.Sprintf(" (own ×k for %s)", planner.Plural(n, "model"))
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.2f\t%.1f\t%.3f\n", p.Key, p.Age(time.Now()).Round(time.Minute), p.Source,
					dec, t.PrefillEff, t.StepOverheadMs, t.BandwidthGBs, t.TFLOPS)
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
			a, err := g.open("")
			if err != nil {
				return err
			}
			ps, _ := a.Calibrations()
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
			a, err := g.open("")
			if err != nil {
				return err
			}
			key, err := a.RemoveCalibration(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", key)
			return nil
		},
	}
}
