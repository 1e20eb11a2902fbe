package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/headroom-planner/headroom/planner"
	"github.com/spf13/cobra"
)

// parseWorkload reads "prompt=1024,gen=256,users=8".
func parseWorkload(s string) (planner.Workload, error) {
	w := planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}
	if s == "" {
		return w, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return w, fmt.Errorf("--workload %q: want key=value pairs like prompt=1024,gen=256,users=8", s)
		}
		switch strings.ToLower(k) {
		case "prompt", "input", "in":
			t, err := planner.ParseTokens(v)
			if err != nil || t <= 0 {
				return w, fmt.Errorf("--workload prompt=%s: want a positive token count", v)
			}
			w.Prompt = t
		case "gen", "output", "out":
			t, err := planner.ParseTokens(v)
			if err != nil || t <= 0 {
				return w, fmt.Errorf("--workload gen=%s: want a positive token count", v)
			}
			w.Gen = t
		case "users", "concurrency", "c":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100000 {
				return w, fmt.Errorf("--workload users=%s: want 1 to 100000", v)
			}
			w.Concurrency = n
		case "rate", "qps", "rps":
			r, err := planner.ParseRate(v)
			if err != nil {
				return w, fmt.Errorf("--workload rate=%s: %v", v, err)
			}
			w.Rate = r
		default:
			return w, fmt.Errorf("--workload: unknown key %q (prompt, gen, users, rate)", k)
		}
	}
	return w, nil
}

// parseSLO reads "ttft=500ms,tpot=50ms" or "tps=20" (tok/s per user).
func parseSLO(s string) (planner.SLO, error) {
	var o planner.SLO
	if s == "" {
		return o, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return o, fmt.Errorf("--slo %q: want ttft=500ms,tpot=50ms or tps=20", s)
		}
		switch strings.ToLower(k) {
		case "ttft", "tpot":
			ms, err := parseMs(v)
			if err != nil {
				return o, fmt.Errorf("--slo %s=%s: %w", k, v, err)
			}
			if k == "ttft" {
				o.TTFT = ms
			} else {
				o.TPOT = ms
			}
		case "tps", "tok/s", "user_tps":
			f, err := strconv.ParseFloat(strings.TrimSuffix(v, "tok/s"), 64)
			if err != nil || f <= 0 || f > 1e6 {
				return o, fmt.Errorf("--slo tps=%s: want a positive rate", v)
			}
			o.MinUserTPS = planner.TokensPerSecond(f)
		default:
			return o, fmt.Errorf("--slo: unknown key %q (ttft, tpot, tps)", k)
		}
	}
	return o, nil
}

func parseMs(v string) (planner.Milliseconds, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v = strings.TrimSuffix(v, "ms")
	case strings.HasSuffix(v, "s"):
		v, mult = strings.TrimSuffix(v, "s"), 1000
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 1e7 {
		return 0, fmt.Errorf("want a positive duration like 500ms or 2s")
	}
	return planner.Milliseconds(f * mult), nil
}

type planOptions struct {
	scen            scenarioFlags
	workload, slo   string
	engines, quants string
	emit, export    string
	docker, jsonOut bool
	top             int
	hostBandwidth   float64
}

func (o *planOptions) request(c *planner.Catalog) (planner.PlanRequest, string, error) {
	var req planner.PlanRequest
	if o.scen.model == "" {
		return req, "", withCode(exitUsage, fmt.Errorf("--model is required"))
	}
	m, err := resolveModel(c, o.scen.model)
	if err != nil {
		return req, "", usageErr(err)
	}
	hw, note, err := resolveHardware(c, &o.scen)
	if err != nil {
		return req, "", err
	}
	w, err := parseWorkload(o.workload)
	if err != nil {
		return req, "", withCode(exitUsage, err)
	}
	slo, err := parseSLO(o.slo)
	if err != nil {
		return req, "", withCode(exitUsage, err)
	}
	if o.scen.devices < 1 || o.scen.devices > 64 {
		return req, "", withCode(exitUsage, fmt.Errorf("--devices = %d: use 1 to 64", o.scen.devices))
	}
	req = planner.PlanRequest{Catalog: c, Hardware: hw.Hardware, Devices: o.scen.devices, Model: m, Workload: w, SLO: slo,
		UsableMemory: hw.usable, HostMemory: hw.host}
	if o.scen.hostMemory != "" {
		if req.HostMemory, err = planner.ParseBytes(o.scen.hostMemory); err != nil || req.HostMemory <= 0 {
			return req, "", withCode(exitUsage, fmt.Errorf("--host-memory %q: want a size like 64GiB", o.scen.hostMemory))
		}
	}
	if b := o.hostBandwidth; b < 0 || b > 10000 || math.IsNaN(b) {
		return req, "", withCode(exitUsage, fmt.Errorf("--host-bandwidth = %g: want GB/s between 1 and 10000", b))
	}
	req.HostBandwidthGBs = o.hostBandwidth
	for _, e := range splitList(o.engines) {
		eng, err := c.FindEngine(e)
		if err != nil {
			return req, "", usageErr(err)
		}
		req.Engines = append(req.Engines, eng.ID)
	}
	for _, q := range splitList(o.quants) {
		qq, err := c.FindQuant(q)
		if err != nil {
			return req, "", usageErr(err)
		}
		req.Quants = append(req.Quants, qq.ID)
	}
	return req, note, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
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
			c, err := loadCatalog(g)
			if err != nil {
				return err
			}
			req, note, err := o.request(c)
			if err != nil {
				return err
			}
			res := planner.Plan(req)
			out := cmd.OutOrStdout()
			if o.jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return err
				}
			} else {
				printPlan(out, req, res, note, o.top)
			}
			best, ok := pickForEmit(res, o.emit)
			if !ok {
				if o.emit != "" {
					return withCode(exitNoFit, fmt.Errorf("no configuration with engine %s fits", o.emit))
				}
				return withCode(exitNoFit, nil)
			}
			if o.emit != "" {
				l, err := planner.LaunchCommand(best, o.docker)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "\nLaunch (%s):\n%s", best.Label(), l)
			}
			if o.export != "" {
				if err := exportPlan(o.export, req, best, o.docker); err != nil {
					return err
				}
			}
			if !best.MeetsSLO {
				return withCode(exitMissSLO, nil)
			}
			return nil
		},
	}
	o.scen.register(cmd, false)
	f := cmd.Flags()
	f.StringVar(&o.workload, "workload", "", "prompt=TOKENS,gen=TOKENS,users=N or rate=REQ/S (default prompt=1024,gen=256,users=1); rate= plans for requests arriving at random instead of N users in a loop")
	f.StringVar(&o.slo, "slo", "", "latency target: ttft=500ms,tpot=50ms or tps=20 (tok/s per user)")
	f.StringVar(&o.engines, "engines", "", "only these engines, comma-separated")
	f.StringVar(&o.quants, "quants", "", "only these weight formats, comma-separated")
	f.StringVar(&o.emit, "emit", "", "print the launch command for the best plan of this engine: vllm, llama.cpp, tgi, sglang, ollama")
	f.BoolVar(&o.docker, "docker", false, "with --emit: the official container image instead of a native command")
	f.StringVar(&o.export, "export", "", "save the best plan as FILE.toml, FILE.json or FILE.sh")
	f.BoolVar(&o.jsonOut, "json", false, "print JSON")
	f.IntVar(&o.top, "top", 10, "rows of the ranking to show")
	f.StringVar(&o.scen.hostMemory, "host-memory", "", "system RAM for weights that do not fit the device, e.g. 64GiB (default: probed, or unknown for a catalog machine)")
	f.Float64Var(&o.hostBandwidth, "host-bandwidth", 0, "system RAM bandwidth in GB/s, which weights kept in RAM are read at (default 60, dual-channel DDR5)")
	return cmd
}

// pickForEmit returns the best candidate, or the best of one engine.
func pickForEmit(res planner.PlanResult, engine string) (planner.Candidate, bool) {
	for _, c := range res.Ranked {
		if engine == "" || string(c.Engine) == engine || (engine == "llama-server" && c.Engine == planner.LlamaCpp) {
			return c, true
		}
	}
	return planner.Candidate{}, false
}

func band(c planner.Candidate, m planner.Metric) string {
	if v, ok := c.ErrorBand[string(m)]; ok {
		return fmt.Sprintf(" ±%.0f%%", v)
	}
	return ""
}

// loadText describes a workload's load: N users in a loop, or a rate.
func loadText(wl planner.Workload) string {
	if wl.Rate > 0 {
		return fmt.Sprintf("%.3g requests/s arriving at random (Poisson)", wl.Rate)
	}
	return planner.Plural(wl.Concurrency, "user")
}

func printPlan(w io.Writer, req planner.PlanRequest, res planner.PlanResult, note string, top int) {
	if note != "" {
		fmt.Fprintf(w, "Machine: %s\n", note)
	}
	wl := req.Workload
	fmt.Fprintf(w, "%s on %d × %s — %s, %d-token prompts, %d generated", req.Model.ID, max(req.Devices, 1), req.Hardware.Name, loadText(wl), wl.Prompt, wl.Gen)
	if req.SLO != (planner.SLO{}) {
		fmt.Fprintf(w, ", SLO %s", req.SLO)
	}
	fmt.Fprintln(w)
	if len(res.Ranked) == 0 {
		fmt.Fprintln(w, "\nNothing fits.")
	} else {
		b := res.Ranked[0]
		if wl.Rate > 0 {
			fmt.Fprintf(w, "\nBest: %s on %s — %s total, %s per request, TTFT %s, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, b.Pred.TotalTPS, b.Pred.DecodeTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, band(b, planner.MetricTG))
			fmt.Fprintf(w, "  %d requests in flight on average, %.0f%% of its capacity (%.3g req/s); allow %d concurrent sequences for bursts\n",
				b.Pred.Concurrency, 100*b.Utilization, b.CapacityReqPerS, b.Concurrency)
		} else {
			fmt.Fprintf(w, "\nBest: %s on %s — %s at %s each (%s total), TTFT %s, TPOT %s  [%s%s]\n",
				b.Label(), b.Backend, planner.Plural(b.Concurrency, "user"), b.Pred.DecodeTPS, b.Pred.TotalTPS, b.Pred.TTFT, b.Pred.TPOT, b.Source, band(b, planner.MetricTG))
		}
		if b.Fit.Verdict == planner.FitsWithOffload && b.Scenario != nil && b.Scenario.Engine.IsGGML() {
			fmt.Fprintf(w, "  layers on the device: %s; %s of weights stream from system RAM\n", b.Fit.LayersText(), b.Fit.OffloadBytes)
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		users := "USERS"
		if wl.Rate > 0 {
			users = "SLOTS"
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
		fmt.Fprintf(w, "\nFigures are %s; typical error (validate MdAPE): decode%s, prefill%s, TTFT%s, TPOT%s.\n", res.Ranked[0].Source,
			band(res.Ranked[0], planner.MetricTG), band(res.Ranked[0], planner.MetricPP), band(res.Ranked[0], planner.MetricTTFT), band(res.Ranked[0], planner.MetricTPOT))
		if wl.Rate > 0 {
			fmt.Fprintln(w, "\nPareto front (capacity vs per-user tok/s at this rate):")
			for _, c := range res.Pareto {
				fmt.Fprintf(w, "  %-34s %7.3g req/s capacity (%2.0f%% used)  %6.1f per user  (%d slots)\n", c.Label(), c.CapacityReqPerS, 100*c.Utilization, float64(c.Pred.DecodeTPS), c.Concurrency)
			}
		} else {
			fmt.Fprintln(w, "\nPareto front (total vs per-user tok/s):")
			for _, c := range res.Pareto {
				fmt.Fprintf(w, "  %-34s %7.0f total  %6.1f per user  (%s)\n", c.Label(), float64(c.Pred.TotalTPS), float64(c.Pred.DecodeTPS), planner.Plural(c.Concurrency, "user"))
			}
		}
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "\nDropped (%d):\n", len(res.Dropped))
		seen := map[string]bool{}
		for _, d := range res.Dropped {
			k := string(d.Engine) + " " + d.Quant + ": " + d.Why
			if seen[k] {
				continue
			}
			seen[k] = true
			fmt.Fprintf(w, "  %s\n", k)
		}
	}
}

// planExport is the saved form of a plan.
type planExport struct {
	Model       string             `toml:"model" json:"model"`
	Hardware    string             `toml:"hardware" json:"hardware"`
	Engine      string             `toml:"engine" json:"engine"`
	Backend     string             `toml:"backend" json:"backend"`
	Quant       string             `toml:"quant" json:"quant"`
	KVType      string             `toml:"kv_type" json:"kv_type"`
	TP          int                `toml:"tensor_parallel" json:"tensor_parallel"`
	Concurrency int                `toml:"concurrency" json:"concurrency"`
	Context     int64              `toml:"context" json:"context"`
	KVTokens    int64              `toml:"kv_tokens" json:"kv_tokens"`
	TTFTms      float64            `toml:"ttft_ms" json:"ttft_ms"`
	TPOTms      float64            `toml:"tpot_ms" json:"tpot_ms"`
	UserTPS     float64            `toml:"tokens_per_s_per_user" json:"tokens_per_s_per_user"`
	TotalTPS    float64            `toml:"tokens_per_s_total" json:"tokens_per_s_total"`
	Source      string             `toml:"source" json:"source"`
	ErrorBand   map[string]float64 `toml:"error_band_pct" json:"error_band_pct"`
	Launch      string             `toml:"launch" json:"launch"`
}

func exportPlan(path string, req planner.PlanRequest, c planner.Candidate, docker bool) error {
	l, err := planner.LaunchCommand(c, docker)
	if err != nil {
		return err
	}
	e := planExport{Model: req.Model.ID, Hardware: req.Hardware.ID, Engine: string(c.Engine), Backend: string(c.Backend), Quant: c.Quant,
		KVType: c.KVType, TP: c.Devices, Concurrency: c.Concurrency, Context: int64(c.Fit.Context), KVTokens: int64(c.Fit.MaxKVTokens),
		TTFTms: float64(c.Pred.TTFT), TPOTms: float64(c.Pred.TPOT), UserTPS: float64(c.Pred.DecodeTPS), TotalTPS: float64(c.Pred.TotalTPS),
		Source: c.Source, ErrorBand: c.ErrorBand, Launch: l.String()}
	var buf bytes.Buffer
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		err = toml.NewEncoder(&buf).Encode(e)
	case ".json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(e)
	case ".sh":
		buf.WriteString("#!/bin/sh\n# Generated by headroom plan\nset -e\n" + l.String())
	default:
		return withCode(exitUsage, fmt.Errorf("--export %s: use a .toml, .json or .sh file", path))
	}
	if err != nil {
		return err
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return err
	}
	if strings.HasSuffix(path, ".sh") {
		return os.Chmod(path, 0o755)
	}
	return nil
}
