package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
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
			if hwList == "" {
				return app.Usagef("--hardware takes a comma-separated list, e.g. rtx-4090,2xrtx-3090,amd-ryzen-ai-max-395")
			}
			specs, err := app.ParseMachineList(hwList)
			if err != nil {
				return fmt.Errorf("--%w", err)
			}
			w, err := app.ParseWorkload(o.workload)
			if err != nil {
				return fmt.Errorf("--%w", err)
			}
			slo, err := app.ParseSLO(o.slo)
			if err != nil {
				return fmt.Errorf("--%w", err)
			}
			a, err := g.open("")
			if err != nil {
				return err
			}
			ans, err := a.Compare(context.Background(), app.CompareRequest{Model: o.scen.model, Machines: specs, Workload: w, SLO: slo,
				Engines: app.SplitList(o.engines), Quants: app.SplitList(o.quants), EngineVersion: o.scen.engineVersion})
			if err != nil {
				return err
			}
			for _, n := range ans.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "headroom: %s\n", n)
			}
			req, rows := ans.Request, ans.Rows
			out := cmd.OutOrStdout()
			if o.jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			fmt.Fprintf(out, "%s — %s, %d-token prompts, %d generated\n\n", req.Model.ID, loadText(req.Workload), req.Workload.Prompt, req.Workload.Gen)
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			users := "USERS"
			switch wl := req.Workload; {
			case wl.Rate > 0:
				users = "SLOTS"
			case wl.RunsAtOnce():
				users = "AT ONCE"
			}
			fmt.Fprintln(tw, "HARDWARE\tVERDICT\tBEST\t1-USER TOK/S\tTTFT\tTOTAL TOK/S\t"+users+"\tTOK/S PER $1K\tTOK/S PER W\tNOTE")
			for _, r := range rows {
				name := r.ID
				if r.Devices > 1 {
					name = fmt.Sprintf("%d× %s", r.Devices, r.ID)
				}
				if !r.Fits {
					fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n", name, r.Verdict, r.Why)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%.0f\t%d\t%s\t%s\t%s\n", name, r.Verdict, r.Best, float64(r.SingleUserTPS), r.TTFT,
					float64(r.TotalTPS), r.MaxUsers, perUnit(r.PerDollar, r.PriceUSD), perUnit(r.PerWatt, r.Watts), r.Why)
			}
			tw.Flush()
			// One line for the machines whose figures are fitted (a
			// calibrated one's band may be narrower: --json has each).
			for _, r := range rows {
				if t := r.ErrorBandText(); t != "" && r.Source == "fitted" {
					fmt.Fprintf(out, "\nFitted figures: %s.\n", t)
					break
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.scen.model, "model", "m", "", "model: catalog id, a .gguf file, a config.json or a model directory")
	f.StringVarP(&hwList, "hardware", "H", "", "machines to compare, comma-separated; NxID for N devices (e.g. 2xnvidia-rtx-3090); \"this\" is this machine, probed")
	f.StringVar(&o.workload, "workload", "", "prompt=TOKENS,gen=TOKENS and one of users=N, burst=N, rate=REQ/S or offline, as plan takes it")
	f.StringVar(&o.scen.engineVersion, "engine-version", "", "the engine releases the predictions follow: vllm=0.6.0,llama.cpp=b4000, or one release for the single --engines engine (default: each engine's newest)")
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
