package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
			c, err := g.catalog()
			if err != nil {
				return err
			}
			var minB planner.Bytes
			if minMem != "" {
				if minB, err = planner.ParseBytes(minMem); err != nil {
					return withCode(exitUsage, fmt.Errorf("--min-memory: %w", err))
				}
			}
			match := func(s ...string) bool {
				if filter == "" {
					return true
				}
				for _, x := range s {
					if strings.Contains(strings.ToLower(x), strings.ToLower(filter)) {
						return true
					}
				}
				return false
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			defer w.Flush()
			var rows []any
			switch args[0] {
			case "hardware":
				fmt.Fprintln(w, "ID\tNAME\tKIND\tMEMORY\tGB/s\tFP16 TF\tBACKENDS\tPRICE")
				for _, h := range c.Hardware {
					if !match(h.ID, h.Name) || (vendor != "" && !h.IsVendor(vendor)) || (kind != "" && string(h.Kind) != kind) || h.Memory < minB {
						continue
					}
					rows = append(rows, h)
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.0f\t%.0f\t%v\t%s\n", h.ID, h.Name, h.Kind, h.Memory, h.BandwidthGBs, h.TFLOPS[planner.FP16], h.Backends, price(h.PriceUSD))
				}
			case "models":
				fmt.Fprintln(w, "ID\tPARAMS\tACTIVE\tLAYERS\tKV HEADS\tCONTEXT\tDTYPE")
				for _, m := range c.Models {
					if !match(m.ID, m.Name, m.Arch) {
						continue
					}
					rows = append(rows, m)
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", m.ID, m.Params, m.ActiveParams, m.Layers, m.KVHeads, m.MaxContext, m.NativeDType)
				}
			case "engines":
				fmt.Fprintln(w, "ID\tNAME\tVERSION\tBACKENDS\tKV TYPES")
				for _, e := range c.Engines {
					if !match(string(e.ID), e.Name) {
						continue
					}
					rows = append(rows, e)
					fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%v\n", e.ID, e.Name, e.Version, e.Backends, e.KVTypes)
				}
			case "quants":
				fmt.Fprintln(w, "ID\tFAMILY\tBITS/WEIGHT\tCOMPUTE\tNAME")
				for _, q := range c.Quants {
					if !match(q.ID, q.Name, string(q.Family)) {
						continue
					}
					rows = append(rows, q)
					fmt.Fprintf(w, "%s\t%s\t%.4g\t%s\t%s\n", q.ID, q.Family, q.LinearBPW, q.Compute, q.Name)
				}
			default:
				return withCode(exitUsage, fmt.Errorf("list what? %q is not one of hardware, models, engines, quants", args[0]))
			}
			if jsonOut {
				w = tabwriter.NewWriter(new(strings.Builder), 0, 0, 0, ' ', 0)
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			return nil
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
