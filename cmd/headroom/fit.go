package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
	"github.com/headroom-planner/headroom/profiles/hub"
)

// scenarioFlags are the flags shared by fit, plan and compare.
type scenarioFlags struct {
	model, hardware, engine, backend, quant, kvType, engineVersion string
	context, totalContext                                          string
	devices, concurrency, gpuLayers                                int
	gpuMemUtil                                                     float64
	hostMemory                                                     string
	kvUnified                                                      bool
	nCPUMoE                                                        int
	root                                                           string
	free                                                           bool
}

func (f *scenarioFlags) register(c *cobra.Command, withConfig bool) {
	fl := c.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "model: catalog id or name fragment, a .gguf file, a config.json or a model directory")
	fl.StringVarP(&f.hardware, "hardware", "H", "", "hardware id or name fragment (default: this machine, probed)")
	fl.IntVar(&f.devices, "devices", 1, "number of devices (tensor parallel degree)")
	fl.StringVar(&f.root, "root", "", "probe a saved machine tree instead of / when --hardware is not given")
	fl.BoolVar(&f.free, "free", false, "plan against the memory free now on the probed device (what other processes hold is taken out)")
	if !withConfig {
		return
	}
	fl.StringVarP(&f.engine, "engine", "e", "", "engine: vllm, llama.cpp, ollama, sglang, tgi, transformers, trtllm (default: by hardware and format)")
	fl.StringVar(&f.backend, "backend", "", "backend: cuda, rocm, vulkan, metal, sycl, cpu (default: best available)")
	fl.StringVarP(&f.quant, "quant", "q", "", "weight format: bf16, f16, fp8, w8a8-int8, awq-int4, gptq-int4, q8_0, q4_k_m, mxfp4 ... (default: the model's own)")
	fl.StringVar(&f.kvType, "kv-type", "", "KV-cache type: f16, bf16, fp8, q8_0, q4_0 (default: the weights' 16-bit type, bf16 where the engine keeps it)")
	fl.StringVarP(&f.context, "context", "c", "", "context per sequence, e.g. 8192 or 32k (default: the largest that fits)")
	fl.StringVar(&f.totalContext, "ctx-size", "", "llama.cpp -c total KV cells (default: context × concurrency)")
	fl.IntVarP(&f.concurrency, "concurrency", "n", 1, "concurrent sequences (vLLM --max-num-seqs, llama-server -np)")
	fl.Float64Var(&f.gpuMemUtil, "gpu-memory-utilization", 0, "vLLM --gpu-memory-utilization / SGLang --mem-fraction-static (default: engine's)")
	fl.IntVar(&f.gpuLayers, "gpu-layers", 0, "llama.cpp -ngl (default: as many as fit)")
	fl.IntVar(&f.nCPUMoE, "n-cpu-moe", 0, "llama.cpp --n-cpu-moe: keep the experts of the first N layers of an MoE in system RAM (default: as many as needed)")
	fl.BoolVar(&f.kvUnified, "kv-unified", false, "llama-server --kv-unified (one KV pool shared by all slots)")
	fl.StringVar(&f.hostMemory, "host-memory", "", "system RAM available for offload, e.g. 64GiB (default: probed or unknown)")
	fl.StringVar(&f.engineVersion, "engine-version", "", "engine release the rules should follow (default: current)")
}

// request turns the flags into the application layer's request: sizes
// and token counts parsed, everything else as given.
func (f *scenarioFlags) request() (app.ScenarioRequest, error) {
	req := app.ScenarioRequest{Model: f.model, Hardware: f.hardware, Devices: f.devices, Engine: f.engine,
		Backend: strings.ToLower(f.backend), Quant: f.quant, KVType: f.kvType, EngineVersion: f.engineVersion,
		Concurrency: f.concurrency, GPUMemoryUtilization: f.gpuMemUtil, GPULayers: f.gpuLayers, CPUMoELayers: f.nCPUMoE,
		UnifiedKV: f.kvUnified, Free: f.free}
	if f.model == "" {
		return req, app.Usagef("--model is required (try `headroom list models`)")
	}
	if _, err := planner.ParseRelease(f.engineVersion); err != nil {
		return req, app.Usagef("--engine-version: %w", err)
	}
	if f.devices < 1 {
		return req, app.Usagef("--devices = %d: use 1 or more", f.devices)
	}
	if f.concurrency < 1 {
		return req, app.Usagef("--concurrency = %d: use 1 or more", f.concurrency)
	}
	if f.gpuLayers < 0 {
		return req, app.Usagef("--gpu-layers = %d: use 0 (as many as fit) or a layer count", f.gpuLayers)
	}
	if f.nCPUMoE < 0 {
		return req, app.Usagef("--n-cpu-moe = %d: use 0 (as needed) or a layer count", f.nCPUMoE)
	}
	var err error
	if f.context != "" {
		if req.Context, err = planner.ParseTokens(f.context); err != nil {
			return req, app.Usagef("--context: %w", err)
		}
		if req.Context == 0 {
			return req, app.Usagef("--context must be positive")
		}
	}
	if f.totalContext != "" {
		if req.TotalContext, err = planner.ParseTokens(f.totalContext); err != nil {
			return req, app.Usagef("--ctx-size: %w", err)
		}
	}
	if f.hostMemory != "" {
		if req.HostMemory, err = app.ParseSize(f.hostMemory); err != nil {
			return req, fmt.Errorf("--host-memory: %w", err)
		}
	}
	return req, nil
}

// fitFromFlags opens the application layer and fits the configuration the
// flags describe: the shared start of fit and flags.
func fitFromFlags(g *globalOptions, f *scenarioFlags) (app.FitAnswer, error) {
	req, err := f.request()
	if err != nil {
		return app.FitAnswer{}, err
	}
	a, err := g.open(f.root)
	if err != nil {
		return app.FitAnswer{}, err
	}
	return a.Fit(context.Background(), req)
}

func newFitCmd(g *globalOptions) *cobra.Command {
	f := &scenarioFlags{}
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "fit",
		Short: "Can I run it? Memory verdict, breakdown and limits for one configuration",
		Example: `  headroom fit --model meta-llama/Llama-3.1-8B-Instruct --hardware nvidia-rtx-4090
  headroom fit -m Llama-2-7b-chat-hf -H amd-ryzen-ai-max-395 -e vllm --gpu-memory-utilization 0.75
  headroom fit -m ./model.gguf -H "rtx 3090" -e llama.cpp -c 8k -n 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ans, err := fitFromFlags(g, f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(app.NewFitJSON(ans)); err != nil {
					return err
				}
			} else {
				printFit(out, ans)
			}
			switch ans.Fit.Verdict {
			case planner.DoesNotFit:
				return withCode(exitNoFit, nil)
			case planner.FitsWithOffload:
				return withCode(exitOffload, nil)
			}
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}

func printFit(w io.Writer, ans app.FitAnswer) {
	s, r := ans.Scenario, ans.Fit
	if note := ans.Machine.Note; note != "" {
		fmt.Fprintf(w, "Machine: %s\n", note)
	}
	if r := ans.Remote; r != nil {
		fmt.Fprintf(w, "Model: %s\n", remoteLine(r))
	}
	fmt.Fprintf(w, "%s (%s params) on %d × %s with %s (%s), %s weights, %s KV cache\n",
		s.Model.ID, s.Model.Params, r.Devices, s.Hardware.Name, s.Engine.Name, r.Backend, s.Quant.ID, s.KV.ID)
	if ans.Automatic != "" {
		fmt.Fprintf(w, "%s\n", ans.Automatic)
	}
	fmt.Fprintf(w, "\nVerdict: %s\n", strings.ToUpper(string(r.Verdict)))
	for _, x := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", x)
	}
	for _, x := range ans.Limits {
		fmt.Fprintf(w, "  - %s\n", x)
	}
	for _, x := range r.Advice {
		fmt.Fprintf(w, "  → %s\n", x)
	}
	if fr := ans.Free; fr != nil {
		if fr.Known {
			fmt.Fprintf(w, "  - free now: %s for %s; other processes hold %s (%s)\n", fr.Free, s.Engine.Label(), fr.Held, fr.Source)
		} else {
			fmt.Fprintf(w, "  - free now: the probe cannot see what other processes use on this device; planned against %s\n", fr.Free)
		}
	}
	if adv := ans.Setup; adv != nil {
		printSetup(w, *adv)
	}
	if r.Verdict.Runs() && ans.Speed.DecodeTPS > 0 {
		sp := ans.Speed
		fmt.Fprintf(w, "\nSpeed, one user (512-token prompt): %s decode, TTFT %s, prefill %s  [%s]\n", sp.DecodeTPS, sp.TTFT, sp.PrefillTPS, sp.Source)
	}
	b := r.Breakdown
	per := ""
	if r.Devices > 1 && !s.Engine.IsGGML() {
		per = " per device"
	}
	fmt.Fprintf(w, "\nMemory%s: %s available to the engine", per, b.Device)
	if b.Budget != b.Device && b.Budget > 0 {
		fmt.Fprintf(w, ", budget %s (the engine's share: %s)", b.Budget, budgetRule(s))
	}
	fmt.Fprintln(w)
	rows := []struct {
		name string
		v    planner.Bytes
	}{
		{"weights", b.Weights}, {"KV cache", b.KVCache}, {"activations", b.Activations},
		{"compute buffer", b.ComputeBuffer}, {"CUDA graphs", b.CUDAGraphs}, {"runtime", b.Runtime}, {"free", b.Free},
	}
	for _, row := range rows {
		if row.v == 0 && row.name != "free" {
			continue
		}
		fmt.Fprintf(w, "  %-15s %11s  %s\n", row.name, row.v, bar(row.v, b.Device))
	}
	if b.HostWeights+b.HostKV+b.HostBuffers > 0 {
		fmt.Fprintf(w, "  system RAM: weights %s, KV %s, buffers %s\n", b.HostWeights, b.HostKV, b.HostBuffers)
	}
	fmt.Fprintf(w, "\nWeights: %s in all.  KV cache: %s per token", r.WeightBytes, r.KVBytesPerToken)
	if r.Devices > 1 && !s.Engine.IsGGML() {
		fmt.Fprint(w, " per device")
	}
	fmt.Fprintf(w, ", pool %d tokens\n", r.MaxKVTokens)
	if s.Engine.IsGGML() {
		fmt.Fprintf(w, "Layers on the device: %s\n", r.LayersText())
	}
	fmt.Fprintf(w, "Context per sequence: %d tokens × %d concurrent\n", r.Context, r.Concurrency)
	fmt.Fprintf(w, "  longest context with %s: %d tokens\n", planner.Plural(r.Concurrency, "sequence"), r.MaxContextAtConcurrency)
	fmt.Fprintf(w, "  most sequences at %d tokens: %d\n", r.Context, r.MaxConcurrencyAtContext)
	for _, a := range r.Assumptions {
		fmt.Fprintf(w, "Assumption: %s\n", a)
	}
}

// bar draws a proportion of total as a text bar of up to 30 cells.
func bar(v, total planner.Bytes) string {
	if total <= 0 || v <= 0 {
		return ""
	}
	n := int(30 * float64(v) / float64(total))
	if n > 30 {
		n = 30
	}
	return strings.Repeat("█", n)
}

// budgetRule says where an engine's memory budget comes from.
func budgetRule(s planner.Scenario) string {
	if u := s.GPUMemoryUtilization; u > 0 {
		return fmt.Sprintf("--gpu-memory-utilization %.2f", u)
	}
	switch {
	case s.Engine.GPUMemoryUtilization > 0:
		return fmt.Sprintf("%s's default utilization %.2f of device memory", s.Engine.Label(), s.Engine.GPUMemoryUtilization)
	case s.Engine.WiggleRoom > 0:
		return fmt.Sprintf("%s keeps %.0f%% aside", s.Engine.Label(), 100*(1-s.Engine.WiggleRoom))
	}
	return s.Engine.Label() + "'s rule"
}

// remoteLine says where a model read from the Hub or Ollama came from.
func remoteLine(r *hub.Result) string {
	line := r.Repo
	if r.Commit != "" {
		line += "@" + r.Commit[:min(len(r.Commit), 12)]
	}
	line += fmt.Sprintf(", %s in %s; read %s of headers", r.WeightBytes, planner.Plural(len(r.Files), "file"), planner.Bytes(r.BytesRead))
	if r.FromCache {
		line += " (from the cache)"
	}
	for _, n := range r.Notes {
		line += "; " + n
	}
	return line
}

// printSetup prints the settings that would let a configuration fit this
// APU or Mac.
func printSetup(w io.Writer, adv probe.Advice) {
	if !adv.Possible {
		fmt.Fprintf(w, "\nSetup: even set up for it, %s can allocate at most %s here (needs %s). %s\n", adv.Policy, adv.Max, adv.Need, adv.Note)
		return
	}
	fmt.Fprintf(w, "\nSetup: this machine can give %s %s (it gets %s now); to fit %s:\n", adv.Policy, adv.Max, adv.Have, adv.Need)
	for _, st := range adv.Settings {
		fmt.Fprintf(w, "  %s = %s: %s\n", st.Name, st.Value, st.How)
	}
	if adv.Note != "" {
		fmt.Fprintf(w, "  (%s)\n", adv.Note)
	}
}
