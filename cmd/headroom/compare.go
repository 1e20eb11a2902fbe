package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/headroom-planner/headroom/planner"
	"github.com/spf13/cobra"
)

func newCompareCmd(g *globalOptions) *cobra.Command {
	o := &planOptions{}
	var hwList string
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Which hardware? The same plan on several machines, per dollar and per watt",
		Example: `  headroom compare -m meta-llama/Llama-3.1-8B-Instruct --hardware rtx-4090,rtx-5090,amd-ryzen-ai-max-395,apple-m4-max-40c --workload users=8 --slo tps=20
  headroom compare -m meta-llama/Llama-3.3-70B-Instruct --hardware 2xnvidia-rtx-3090,nvidia-rtx-pro-6000-blackwell,nvidia-dgx-spark`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := loadCatalog(g)
			if err != nil {
				return err
			}
			if hwList == "" {
				return withCode(exitUsage, fmt.Errorf("--hardware takes a comma-separated list, e.g. rtx-4090,2xrtx-3090,amd-ryzen-ai-max-395"))
			}
			var machines []planner.Hardware
			var devs []int
			for _, item := range splitList(hwList) {
				n := 1
				if i := strings.Index(strings.ToLower(item), "x"); i > 0 {
					if v, err := strconv.Atoi(item[:i]); err == nil {
						n, item = v, item[i+1:]
					}
				}
				if item == "this" || item == "." {
					// This machine, as probed.
					rh, note, err := probedHardware(c, "")
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "headroom: %s\n", note)
					machines, devs = append(machines, rh.Hardware), append(devs, n)
					continue
				}
				h, err := c.FindHardware(item)
				if err != nil {
					return usageErr(err)
				}
				machines, devs = append(machines, h), append(devs, n)
			}
			o.scen.hardware, o.scen.devices = "", devs[0] // probed unless a catalog machine is listed
			for _, h := range machines {
				if _, err := c.FindHardware(h.ID); err == nil {
					o.scen.hardware = h.ID
					break
				}
			}
			req, _, err := o.request(c)
			if err != nil {
				return err
			}
			rows := planner.Compare(req, machines, devs)
			out := cmd.OutOrStdout()
			if o.jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			fmt.Fprintf(out, "%s — %s, %d-token prompts, %d generated\n\n", req.Model.ID, loadText(req.Workload), req.Workload.Prompt, req.Workload.Gen)
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HARDWARE\tFITS\tBEST\t1-USER TOK/S\tTTFT\tTOTAL TOK/S\tUSERS\tTOK/S PER $1K\tTOK/S PER W\tNOTE")
			for _, r := range rows {
				name := r.ID
				if r.Devices > 1 {
					name = fmt.Sprintf("%d× %s", r.Devices, r.ID)
				}
				if !r.Fits {
					fmt.Fprintf(tw, "%s\tno\t-\t-\t-\t-\t-\t-\t-\t%s\n", name, r.Why)
					continue
				}
				fmt.Fprintf(tw, "%s\tyes\t%s\t%.1f\t%s\t%.0f\t%d\t%s\t%s\t%s\n", name, r.Best, float64(r.SingleUserTPS), r.TTFT,
					float64(r.TotalTPS), r.MaxUsers, perUnit(r.PerDollar, r.PriceUSD), perUnit(r.PerWatt, r.Watts), r.Why)
			}
			tw.Flush()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.scen.model, "model", "m", "", "model: catalog id, a .gguf file, a config.json or a model directory")
	f.StringVarP(&hwList, "hardware", "H", "", "machines to compare, comma-separated; NxID for N devices (e.g. 2xnvidia-rtx-3090); \"this\" is this machine, probed")
	f.StringVar(&o.workload, "workload", "", "prompt=TOKENS,gen=TOKENS,users=N")
	f.StringVar(&o.slo, "slo", "", "ttft=500ms,tpot=50ms or tps=20")
	f.StringVar(&o.engines, "engines", "", "only these engines")
	f.StringVar(&o.quants, "quants", "", "only these weight formats")
	f.BoolVar(&o.jsonOut, "json", false, "print JSON")
	return cmd
}

func perUnit(v, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
