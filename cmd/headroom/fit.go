package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/headroom-planner/headroom/planner"
	"github.com/spf13/cobra"
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
}

func (f *scenarioFlags) register(c *cobra.Command, withConfig bool) {
	fl := c.Flags()
	fl.StringVarP(&f.model, "model", "m", "", "model: catalog id or name fragment, a .gguf file, a config.json or a model directory")
	fl.StringVarP(&f.hardware, "hardware", "H", "", "hardware id or name fragment (default: this machine, probed)")
	fl.IntVar(&f.devices, "devices", 1, "number of devices (tensor parallel degree)")
	fl.StringVar(&f.root, "root", "", "probe a saved machine tree instead of / when --hardware is not given")
	if !withConfig {
		return
	}
	fl.StringVarP(&f.engine, "engine", "e", "", "engine: vllm, llama.cpp, ollama, sglang, tgi, transformers, trtllm (default: by hardware and format)")
	fl.StringVar(&f.backend, "backend", "", "backend: cuda, rocm, vulkan, metal, sycl, cpu (default: best available)")
	fl.StringVarP(&f.quant, "quant", "q", "", "weight format: bf16, f16, fp8, w8a8-int8, awq-int4, gptq-int4, q8_0, q4_k_m, mxfp4 ... (default: the model's own)")
	fl.StringVar(&f.kvType, "kv-type", "f16", "KV-cache type: f16, bf16, fp8, q8_0, q4_0")
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

// defaultEngine picks an engine when none is given: llama.cpp for GGUF
// formats and for APUs, SoCs and CPUs; vLLM for discrete GPUs.
func defaultEngine(h planner.Hardware, q planner.Quant) string {
	if q.Family == planner.FamilyGGUF {
		return "llama.cpp"
	}
	switch h.Kind {
	case planner.KindAPU, planner.KindSoC, planner.KindCPU:
		if q.Family == planner.FamilyFloat || q.Family == planner.FamilyMXFP4 {
			return "llama.cpp"
		}
	}
	if h.HasBackend(planner.CUDA) || h.HasBackend(planner.ROCm) {
		return "vllm"
	}
	return "llama.cpp"
}

// buildScenario turns flags into a planner.Scenario. machineNote says where
// the hardware came from when it was probed.
func buildScenario(c *planner.Catalog, f *scenarioFlags) (planner.Scenario, string, error) {
	var s planner.Scenario
	if f.model == "" {
		return s, "", withCode(exitUsage, fmt.Errorf("--model is required (try `headroom list models`)"))
	}
	m, err := resolveModel(c, f.model)
	if err != nil {
		return s, "", usageErr(err)
	}
	hw, note, err := resolveHardware(c, f)
	if err != nil {
		return s, "", err
	}
	s.Hardware = hw.Hardware
	s.UsableMemory = hw.usable
	s.HostMemory = hw.host
	s.Model = m
	s.Devices = f.devices
	q, err := quantFor(c, m, f.quant)
	if err != nil {
		return s, "", usageErr(err)
	}
	s.Quant = q
	eng := f.engine
	if eng == "" {
		eng = defaultEngine(hw.Hardware, q)
	}
	if s.Engine, err = c.FindEngine(eng); err != nil {
		return s, "", usageErr(err)
	}
	if s.KV, err = c.FindKVType(f.kvType); err != nil {
		return s, "", usageErr(err)
	}
	if s.KV.ID == "f16" && s.Quant.ID == "bf16" && s.Engine.HasKVType("bf16") {
		s.KV, _ = c.FindKVType("bf16") // "auto" = the model dtype
	}
	s.Backend = planner.Backend(strings.ToLower(f.backend))
	if f.context != "" {
		if s.Context, err = planner.ParseTokens(f.context); err != nil {
			return s, "", withCode(exitUsage, fmt.Errorf("--context: %w", err))
		}
		if s.Context == 0 {
			return s, "", withCode(exitUsage, fmt.Errorf("--context must be positive"))
		}
	}
	if f.totalContext != "" {
		if s.TotalContext, err = planner.ParseTokens(f.totalContext); err != nil {
			return s, "", withCode(exitUsage, fmt.Errorf("--ctx-size: %w", err))
		}
	}
	if f.hostMemory != "" {
		if s.HostMemory, err = planner.ParseBytes(f.hostMemory); err != nil {
			return s, "", withCode(exitUsage, fmt.Errorf("--host-memory: %w", err))
		}
	}
	if f.devices < 1 {
		return s, "", withCode(exitUsage, fmt.Errorf("--devices = %d: use 1 or more", f.devices))
	}
	if f.concurrency < 1 {
		return s, "", withCode(exitUsage, fmt.Errorf("--concurrency = %d: use 1 or more", f.concurrency))
	}
	s.Concurrency = f.concurrency
	s.GPUMemoryUtilization = f.gpuMemUtil
	s.GPULayers = f.gpuLayers
	if f.nCPUMoE < 0 {
		return s, "", withCode(exitUsage, fmt.Errorf("--n-cpu-moe = %d: use 0 (as needed) or a layer count", f.nCPUMoE))
	}
	s.CPUMoELayers = f.nCPUMoE
	s.UnifiedKV = f.kvUnified
	s.EngineVersion = f.engineVersion
	s.Mem = c.Memory
	if err := s.Validate(); err != nil {
		return s, "", usageErr(err)
	}
	return s, note, nil
}

// fitFromFlags loads the catalog, builds the scenario the flags describe
// and fits it: the shared start of fit and flags.
func fitFromFlags(g *globalOptions, f *scenarioFlags) (planner.Scenario, string, planner.FitResult, error) {
	c, err := loadCatalog(g)
	if err != nil {
		return planner.Scenario{}, "", planner.FitResult{}, err
	}
	s, note, err := buildScenario(c, f)
	if err != nil {
		return s, note, planner.FitResult{}, err
	}
	r, err := planner.Fit(s)
	if err != nil {
		return s, note, r, usageErr(err)
	}
	return s, note, r, nil
}

// resolvedHardware is the device to plan for, with probed limits if any.
type resolvedHardware struct {
	planner.Hardware
	usable, host planner.Bytes
}

// probeMachine fills in hardware from the probe (set by probe wiring).
var probeMachine func(c *planner.Catalog, root string) (resolvedHardware, string, error)

func resolveHardware(c *planner.Catalog, f *scenarioFlags) (resolvedHardware, string, error) {
	if f.hardware != "" {
		h, err := c.FindHardware(f.hardware)
		if err != nil {
			return resolvedHardware{}, "", usageErr(err)
		}
		return resolvedHardware{Hardware: h}, "", nil
	}
	if probeMachine == nil {
		return resolvedHardware{}, "", withCode(exitUsage, fmt.Errorf("--hardware is required (try `headroom list hardware`)"))
	}
	return probeMachine(c, f.root)
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
			s, note, r, err := fitFromFlags(g, f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(fitJSON{Scenario: describe(s), Machine: note, Fit: r}); err != nil {
					return err
				}
			} else {
				printFit(out, s, r, note)
			}
			switch r.Verdict {
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

type scenarioJSON struct {
	Model    string  `json:"model"`
	Hardware string  `json:"hardware"`
	Devices  int     `json:"devices"`
	Engine   string  `json:"engine"`
	Quant    string  `json:"quant"`
	KVType   string  `json:"kv_type"`
	GPUUtil  float64 `json:"gpu_memory_utilization,omitempty"`
}

type fitJSON struct {
	Scenario scenarioJSON      `json:"scenario"`
	Machine  string            `json:"machine,omitempty"`
	Fit      planner.FitResult `json:"fit"`
}

func describe(s planner.Scenario) scenarioJSON {
	return scenarioJSON{Model: s.Model.ID, Hardware: s.Hardware.ID, Devices: max(s.Devices, 1), Engine: string(s.Engine.ID),
		Quant: s.Quant.ID, KVType: s.KV.ID, GPUUtil: s.GPUMemoryUtilization}
}

func printFit(w io.Writer, s planner.Scenario, r planner.FitResult, note string) {
	if note != "" {
		fmt.Fprintf(w, "Machine: %s\n", note)
	}
	fmt.Fprintf(w, "%s (%s params) on %d × %s with %s (%s), %s weights, %s KV cache\n",
		s.Model.ID, s.Model.Params, r.Devices, s.Hardware.Name, s.Engine.Name, r.Backend, s.Quant.ID, s.KV.ID)
	fmt.Fprintf(w, "\nVerdict: %s\n", strings.ToUpper(string(r.Verdict)))
	for _, x := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", x)
	}
	for _, x := range r.Advice {
		fmt.Fprintf(w, "  → %s\n", x)
	}
	b := r.Breakdown
	per := ""
	if r.Devices > 1 && !s.Engine.IsGGML() {
		per = " per device"
	}
	fmt.Fprintf(w, "\nMemory%s: %s available to the engine", per, b.Device)
	if b.Budget != b.Device && b.Budget > 0 {
		fmt.Fprintf(w, ", budget %s", b.Budget)
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
