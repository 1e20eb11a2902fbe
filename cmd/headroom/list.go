package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

func newListCmd(g *globalOptions) *cobra.Command {
	var filter, vendor, kind string
	var minMem string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:       "list hardware|models|engines|quants",
		Short:     "List the catalog: hardware, models, engines, quantizations",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"hardware", "models", "engines", "quants"},
		Example:   "  headroom list hardware --vendor amd --min-memory 64GiB\n  headroom list models --filter llama",
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.open("")
			if err != nil {
				return err
			}
			f := app.ListFilter{Text: filter, Vendor: vendor, Kind: kind}
			if minMem != "" {
				if f.MinMemory, err = app.ParseSize(minMem); err != nil {
					return fmt.Errorf("--min-memory: %w", err)
				}
			}
			var rows any
			var table strings.Builder
			w := tabwriter.NewWriter(&table, 2, 4, 2, ' ', 0)
			switch args[0] {
			case "hardware":
				hs := a.Hardware(f)
				rows = hs
				fmt.Fprintln(w, "ID\tNAME\tKIND\tMEMORY\tGB/s\tFP16 TF\tBACKENDS\tPRICE")
				for _, h := range hs {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.0f\t%.0f\t%v\t%s\n", h.ID, h.Name, h.Kind, h.Memory, h.BandwidthGBs, h.TFLOPS[planner.FP16], h.Backends, price(h.PriceUSD))
				}
			case "models":
				ms := a.Models(f)
				rows = ms
				fmt.Fprintln(w, "ID\tPARAMS\tACTIVE\tLAYERS\tKV HEADS\tCONTEXT\tDTYPE")
				for _, m := range ms {
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", m.ID, m.Params, m.ActiveParams, m.Layers, m.KVHeads, m.MaxContext, m.NativeDType)
				}
			case "engines":
				es := a.Engines(f)
				rows = es
				fmt.Fprintln(w, "ID\tNAME\tVERSION\tBACKENDS\tKV TYPES")
				for _, e := range es {
					fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%v\n", e.ID, e.Name, e.Version, e.Backends, e.KVTypes)
				}
			case "quants":
				qs := a.Quants(f)
				rows = qs
				fmt.Fprintln(w, "ID\tFAMILY\tBITS/WEIGHT\tCOMPUTE\tNAME")
				for _, q := range qs {
					fmt.Fprintf(w, "%s\t%s\t%.4g\t%s\t%s\n", q.ID, q.Family, q.LinearBPW, q.Compute, q.Name)
				}
			default:
				return app.Usagef("list what? %q is not one of hardware, models, engines, quants", args[0])
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), table.String())
			return err
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "substring of id or name")
	cmd.Flags().StringVar(&vendor, "vendor", "", "hardware vendor (nvidia, amd, apple, intel)")
	cmd.Flags().StringVar(&kind, "kind", "", "hardware kind: gpu, apu, soc, cpu")
	cmd.Flags().StringVar(&minMem, "min-memory", "", "hardware with at least this much memory")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}

func price(p float64) string {
	if p <= 0 {
		return "-"
	}
	return fmt.Sprintf("$%.0f", p)
}
