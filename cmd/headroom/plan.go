package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

type planOptions struct {
	scen            scenarioFlags
	workload, slo   string
	engines, quants string
	emit, export    string
	docker, jsonOut bool
	checkpoint      string
	top             int
	hostBandwidth   float64
	nodes           int
	nodeLink        string
	k8s             k8sOptions
	gpuHourUSD      float64
}

// request turns the flags into the application layer's plan request.
func (o *planOptions) request() (app.PlanRequest, error) {
	req := app.PlanRequest{Model: o.scen.model, Hardware: o.scen.hardware, Devices: o.scen.devices,
		Engines: app.SplitList(o.engines), Quants: app.SplitList(o.quants), HostBandwidthGBs: o.hostBandwidth, Free: o.scen.free,
		Nodes: o.nodes, NodeLink: o.nodeLink, DeviceHourUSD: o.gpuHourUSD, EngineVersion: o.scen.engineVersion, ForEngine: o.emit}
	if o.scen.model == "" {
		return req, app.Usagef("--model is required")
	}
	if o.scen.devices < 1 || o.scen.devices > 64 {
		return req, app.Usagef("--devices = %d: use 1 to 64", o.scen.devices)
	}
	var err error
	if req.Workload, err = app.ParseWorkload(o.workload); err != nil {
		return req, fmt.Errorf("--%w", err)
	}
	if req.SLO, err = app.ParseSLO(o.slo); err != nil {
		return req, fmt.Errorf("--%w", err)
	}
	if o.scen.hostMemory != "" {
		if req.HostMemory, err = app.ParseSize(o.scen.hostMemory); err != nil {
			return req, fmt.Errorf("--host-memory: %w", err)
		}
	}
	if b := o.hostBandwidth; b < 0 || b > 10000 || math.IsNaN(b) {
		return req, app.Usagef("--host-bandwidth = %g: want GB/s between 1 and 10000", b)
	}
	return req, nil
}

func newPlanCmd(g *globalOptions) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "What should I run? Rank engine × quantization × KV type × concurrency × TP for a workload and SLO",
		Example: `  headroom plan -m meta-llama/Llama-3.1-8B-Instruct -H nvidia-rtx-4090 --workload prompt=1024,gen=256,users=16 --slo ttft=1s,tpot=50ms
  headroom plan -m Llama-2-7b-chat-hf -H amd-ryzen-ai-max-395 --emit llama.cpp
  headroom plan -m meta-llama/Llama-3.3-70B-Instruct -H h100-sxm --devices 4 --emit vllm --docker`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPlan(cmd, g, o)
		},
	}
	o.scen.register(cmd, false)
	f := cmd.Flags()
	f.StringVar(&o.workload, "workload", "", "prompt=TOKENS,gen=TOKENS and one of users=N, burst=N, rate=REQ/S or offline (default prompt=1024,gen=256,users=1); rate= plans for requests arriving at random, burst= for N prompts sent at once, offline for the largest batch, instead of N users in a loop")
	f.StringVar(&o.slo, "slo", "", "latency target: ttft=500ms,tpot=50ms or tps=20 (tok/s per user)")
	f.StringVar(&o.engines, "engines", "", "only these engines, comma-separated")
	f.StringVar(&o.quants, "quants", "", "only these weight formats, comma-separated")
	f.StringVar(&o.emit, "emit", "", "print the launch command for the best plan of this engine: vllm, llama.cpp, tgi, sglang, ollama")
	f.BoolVar(&o.docker, "docker", false, "with --emit: the official container image instead of a native command")
	f.StringVar(&o.export, "export", "", "save the best plan as FILE.toml, FILE.json or FILE.sh")
	f.StringVar(&o.scen.engineVersion, "engine-version", "", "the engine release the predictions and the command follow: vllm=0.6.0,llama.cpp=b4000, or one release for the --emit or --engines engine (default: each engine's newest)")
	f.StringVar(&o.checkpoint, "checkpoint", "", "with --emit/--export: the checkpoint to load (a Hub repo or a file), or auto to search the Hub for one in the planned format")
	f.BoolVar(&o.jsonOut, "json", false, "print JSON")
	f.IntVar(&o.top, "top", 10, "rows of the ranking to show")
	f.StringVar(&o.scen.hostMemory, "host-memory", "", "system RAM for weights that do not fit the device, e.g. 64GiB (default: probed, or unknown for a catalog machine)")
	f.Float64Var(&o.hostBandwidth, "host-bandwidth", 0, "system RAM bandwidth in GB/s, which weights kept in RAM are read at (default 60, dual-channel DDR5)")
	o.k8s.register(f)
	f.Float64Var(&o.gpuHourUSD, "gpu-hour-usd", 0, "price of one device-hour in US$ for the plan's cost (default: the catalog's cloud list price, where it has one)")
	f.IntVar(&o.nodes, "nodes", 1, "machines one replica may span (tensor parallel inside each, pipeline parallel across); or --hardware NODESxDEVICESxID")
	f.StringVar(&o.nodeLink, "node-link", "", "network between nodes: ib400, ib200, roce400, roce200, eth100, eth25, eth10 (default ib400 for datacenter GPUs, eth10 otherwise; assumed)")
	return cmd
}

// runPlan plans, prints, and emits or exports the best configuration.
func runPlan(cmd *cobra.Command, g *globalOptions, o *planOptions) error {
	if o.top < 1 {
		return app.Usagef("--top = %d: show at least 1 row", o.top)
	}
	req, err := o.request()
	if err != nil {
		return err
	}
	a, err := g.open(o.scen.root)
	if err != nil {
		return err
	}
	var emit planner.EngineID
	if o.emit != "" {
		if emit, err = a.EngineID(o.emit); err != nil {
			return fmt.Errorf("--emit: %w", err)
		}
	}
	ans, err := a.Plan(context.Background(), req)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ans.Result); err != nil {
			return err
		}
	} else {
		printPlan(out, ans.Request, ans.Result, ans.Machine.Note, o.top)
	}
	short := ans.Shortfall()
	if short != "" && !o.jsonOut {
		fmt.Fprintf(out, "\nWarning: %s.\n", short)
	}
	best, ok := ans.Best(emit)
	if !ok {
		if o.emit != "" {
			return withCode(exitNoFit, fmt.Errorf("no configuration with engine %s fits", emit))
		}
		return withCode(exitNoFit, nil)
	}
	lreq := app.LaunchRequest{Docker: o.docker, Release: ans.Release(best.Engine), Users: app.LaunchUsers(best, ans.Request.Workload),
		Model: ans.Model, Ref: o.scen.model, Checkpoint: o.checkpoint}
	if o.k8s.dir != "" {
		if err := o.k8s.export(context.Background(), a, best, lreq, out); err != nil {
			return err
		}
	}
	if o.emit != "" || o.export != "" {
		l, err := a.Launch(context.Background(), best, lreq)
		if err != nil {
			return err
		}
		if o.emit != "" {
			fmt.Fprintf(out, "\nLaunch (%s, #%d of the ranking):\n%s", best.Label(), ans.Rank(best), l)
		}
		if o.export != "" {
			if err := exportPlan(o.export, best, l); err != nil {
				return err
			}
		}
	}
	// A rate one server cannot carry is answered when replicas of the best
	// configuration carry it within the SLO.
	served := best.MeetsSLO || best.Fleet != nil && best.Fleet.Replicas > 1 && best.Fleet.MeetsSLO
	if !served || short != "" {
		return withCode(exitMissSLO, nil)
	}
	return nil
}

// throughputBand is the band of a plan whose lead figure is its total
// output throughput (a rate, a burst, an offline run): that metric's
// where the profile has it, decode's otherwise.
func throughputBand(c planner.Candidate) string {
	if b := band(c, planner.MetricTotalOut); b != "" {
		return b
	}
	return band(c, planner.MetricTG)
}

func band(c planner.Candidate, m planner.Metric) string {
	if v, ok := c.ErrorBand[string(m)]; ok {
		return fmt.Sprintf(" ±%.0f%%", v)
	}
	return ""
}

// loadText describes a workload's load: N users in a loop, or a rate.
func loadText(wl planner.Workload) string {
	switch {
	case wl.Rate > 0:
		return fmt.Sprintf("%.3g requests/s arriving at random (Poisson)", wl.Rate)
	case wl.Kind == planner.WorkloadOffline || wl.Saturate:
		return "an offline batch run (as many sequences at once as the engine takes)"
	case wl.Burst > 1:
		return fmt.Sprintf("%d prompts sent at once (the engine admits what fits, the rest wait)", wl.Burst)
	}
	return planner.Plural(wl.Concurrency, "user")
}

// releasesText lists the engine releases a plan predicted with, sorted
// ("llama.cpp b4000, vllm 0.6.0"); "" when every engine is at its newest.
func releasesText(r map[planner.EngineID]string) string {
	var parts []string
	for id, v := range r {
		parts = append(parts, string(id)+" "+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func printPlan(w io.Writer, req planner.PlanRequest, res planner.PlanResult, note string, top int) {
	if note != "" {
		fmt.Fprintf(w, "Machine: %s\n", note)
	}
	wl := req.Workload
	fmt.Fprintf(w, "%s on %s — %s, %d-token prompts, %d generated", req.Model.ID, shapeText(req), loadText(wl), wl.Prompt, wl.Gen)
	if req.SLO != (planner.SLO{}) {
		fmt.Fprintf(w, ", SLO %s", req.SLO)
	}
	fmt.Fprintln(w)
	if rel := releasesText(req.Releases); rel != "" {
		fmt.Fprintf(w, "Releases: %s; other engines at their newest\n", rel)
	}
	if len(res.Ranked) == 0 {
		fmt.Fprintln(w, "\nNothing fits.")
	} else {
		b := res.Ranked[0]
		if wl.Rate > 0 && b.Utilization >= 1 && b.CapacityReqPerS > 0 {
			// One replica cannot keep up: its figures are its full batch,
			// and every request also waits for the queue ahead of it.
			fmt.Fprintf(w, "\nBest: %s on %s — %s total (its capacity), %s per request, TTFT %s plus the queue's wait, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, b.Pred.TotalTPS, b.Pred.DecodeTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, throughputBand(b))
			fmt.Fprintf(w, "  cannot keep up alone: %.3g req/s is %.0f%% of its capacity (%.3g req/s), so the queue grows by %.3g requests a second; figures are its full batch of %d sequences\n",
				wl.Rate, 100*b.Utilization, b.CapacityReqPerS, wl.Rate-b.CapacityReqPerS, b.Concurrency)
			printFleet(w, b)
		} else if wl.Rate > 0 {
			fmt.Fprintf(w, "\nBest: %s on %s — %s total, %s per request, TTFT %s, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, b.Pred.TotalTPS, b.Pred.DecodeTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, throughputBand(b))
			fmt.Fprintf(w, "  %d requests in flight on average, %.0f%% of its capacity (%.3g req/s); allow %d concurrent sequences for bursts\n",
				b.Pred.Concurrency, 100*b.Utilization, b.CapacityReqPerS, b.Concurrency)
			printFleet(w, b)
		} else if wl.Burst > 1 {
			// A burst: what matters is when the last prompt is answered
			// and how long the first token waits, queue included.
			fmt.Fprintf(w, "\nBest: %s on %s — all %d prompts answered in %s (%s total), mean TTFT %s with the wait, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, wl.Burst, b.Pred.Makespan(wl.Burst), b.Pred.TotalTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, throughputBand(b))
			fmt.Fprintf(w, "  runs %d at once", b.Concurrency)
			if b.Concurrency < wl.Burst {
				fmt.Fprintf(w, " (what its KV cache and sequence cap admit); the other %d wait for a slot", wl.Burst-b.Concurrency)
			}
			fmt.Fprintln(w)
		} else if wl.Offline() {
			fmt.Fprintf(w, "\nBest: %s on %s — %s total at %s at once (its largest batch), TTFT %s, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, b.Pred.TotalTPS, planner.Plural(b.Concurrency, "sequence"), b.Pred.TTFT, b.Pred.TPOT, b.Source, throughputBand(b))
		} else {
			fmt.Fprintf(w, "\nBest: %s on %s — %s at %s each (%s total), TTFT %s, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, planner.Plural(b.Concurrency, "user"), b.Pred.DecodeTPS, b.Pred.TotalTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, band(b, planner.MetricTG))
		}
		if b.Fit.Verdict == planner.FitsWithOffload && b.Scenario != nil && b.Scenario.Engine.IsGGML() {
			fmt.Fprintf(w, "  layers on the device: %s; %s of weights stream from system RAM\n", b.Fit.LayersText(), b.Fit.OffloadBytes)
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		users := "USERS"
		switch {
		case wl.Rate > 0:
			users = "SLOTS"
		case wl.RunsAtOnce():
			users = "AT ONCE"
		}
		fmt.Fprintln(tw, "\n#\tCONFIG\t"+users+"\tTTFT\tTPOT\tTOK/S/USER\tTOTAL TOK/S\tKV POOL\tSLO\tWHY NOT FIRST")
		for i, c := range res.Ranked {
			if i >= top {
				break
			}
			slo := "ok"
			if !c.MeetsSLO {
				slo = "miss"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%.1f\t%.0f\t%d\t%s\t%s\n", i+1, c.Label(), c.Concurrency, c.Pred.TTFT, c.Pred.TPOT,
				float64(c.Pred.DecodeTPS), float64(c.Pred.TotalTPS), c.Fit.MaxKVTokens, slo, c.Why)
		}
		tw.Flush()
		if t := res.ErrorBandText(); t != "" {
			fmt.Fprintf(w, "\nFigures are %s; %s.\n", res.Ranked[0].Source, t)
		}
		if wl.Rate > 0 {
			fmt.Fprintln(w, "\nPareto front (capacity vs per-user tok/s at this rate):")
			for _, c := range res.Pareto {
				fmt.Fprintf(w, "  %-34s %7.3g req/s capacity (%2.0f%% used)  %6.1f per user  (%d slots)\n", c.Label(), c.CapacityReqPerS, 100*c.Utilization, float64(c.Pred.DecodeTPS), c.Concurrency)
			}
		} else {
			fmt.Fprintln(w, "\nPareto front (total vs per-user tok/s):")
			for _, c := range res.Pareto {
				at := planner.Plural(c.Concurrency, "user")
				if wl.RunsAtOnce() {
					at = fmt.Sprintf("%d at once", c.Concurrency)
				}
				fmt.Fprintf(w, "  %-34s %7.0f total  %6.1f per user  (%s)\n", c.Label(), float64(c.Pred.TotalTPS), float64(c.Pred.DecodeTPS), at)
			}
		}
	}
	printCost(w, res.Cost)
	if len(res.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if len(res.Dropped) > 0 {
		// Configurations differing only in KV type or users drop for the
		// same reason: one line each, counted.
		type line struct {
			text string
			n    int
		}
		var lines []line
		at := map[string]int{}
		for _, d := range res.Dropped {
			k := string(d.Engine) + " " + d.Quant + ": " + d.Why
			if i, ok := at[k]; ok {
				lines[i].n++
				continue
			}
			at[k] = len(lines)
			lines = append(lines, line{k, 1})
		}
		fmt.Fprintf(w, "\nDropped: %s, for %s:\n", planner.Plural(len(res.Dropped), "configuration"), planner.Plural(len(lines), "reason"))
		for _, l := range lines {
			if l.n > 1 {
				fmt.Fprintf(w, "  %s (%d configurations)\n", l.text, l.n)
			} else {
				fmt.Fprintf(w, "  %s\n", l.text)
			}
		}
	}
}

// exportPlan saves a configuration as app.Export encodes it, by the file's
// extension: .toml, .json or .sh (executable).
func exportPlan(path string, c planner.Candidate, l planner.Launch) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".toml" && ext != ".json" && ext != ".sh" {
		return app.Usagef("--export %s: use a .toml, .json or .sh file", path)
	}
	e, err := app.NewExport(c, l)
	if err != nil {
		return err
	}
	data, err := e.Encode(ext)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if ext == ".sh" {
		mode = 0o755
	}
	return writeFile(path, data, mode)
}
