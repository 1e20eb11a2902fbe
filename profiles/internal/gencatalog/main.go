// Command gencatalog made the first version of the catalog's hardware.toml
// and models.toml from the fact sheets in profiles/sources/*.csv, adding
// the fields the planner needs beyond them (architecture, compute
// capability, memory model, GPU-visible memory, interconnect, MLP kind,
// sliding-window layers, MLA geometry) by the rules below, each tagged [D]
// (derived) in the entry's notes.
//
// The TOML files are the source of truth from then on; re-run this only to
// re-import changed fact sheets, and review the diff:
//
//	go run ./profiles/internal/gencatalog -src profiles/sources -out profiles/catalog
//
// With -configs it instead regenerates models-hf.toml, and only that file,
// from the config.json copies under profiles/sources/configs (each with a
// SOURCE file naming where it was read); that file is never edited by hand,
// and TestModelsHFUpToDate fails when it drifts from the copies:
//
//	go run ./profiles/internal/gencatalog -configs profiles/sources/configs -out profiles/catalog
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/headroom-planner/headroom/planner"
)

func main() {
	src := flag.String("src", "profiles/sources", "directory with hardware.csv and models.csv")
	out := flag.String("out", "profiles/catalog", "output directory")
	configs := flag.String("configs", "", "regenerate only models-hf.toml from the config.json copies in this directory")
	flag.Parse()
	if *configs != "" {
		if err := writeModelsHF(*configs, *out); err != nil {
			log.Fatal(err)
		}
		return
	}
	hw, err := hardware(filepath.Join(*src, "hardware.csv"))
	if err != nil {
		log.Fatal(err)
	}
	ms, err := models(filepath.Join(*src, "models.csv"))
	if err != nil {
		log.Fatal(err)
	}
	write(filepath.Join(*out, "hardware.toml"), "hardware", hw)
	write(filepath.Join(*out, "models.toml"), "model", ms)
}

// writeModelsHF regenerates outDir/models-hf.toml from the copies in dir.
func writeModelsHF(dir, outDir string) error {
	hand, err := handModelIDs(outDir)
	if err != nil {
		return err
	}
	data, err := generateConfigModels(dir, hand)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, "models-hf.toml"), data, 0o644)
}

func write(path, key string, v any) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "# Generated from profiles/sources by profiles/internal/gencatalog, then maintained by hand.\n# Provenance tags in notes: [spec] datasheet, [V] verified, [D] derived, [U] unverified, [seed] seed document.\n\n")
	if err := toml.NewEncoder(f).Encode(map[string]any{key: v}); err != nil {
		log.Fatal(err)
	}
}

func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out, nil
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v
}

type archRule struct {
	re       *regexp.Regexp
	arch, cc string
}

// Architecture and CUDA compute capability by device id (NVIDIA CUDA GPUs
// table, developer.nvidia.com/cuda-gpus; AMD LLVM gfx targets) [D].
var archRules = []archRule{
	{regexp.MustCompile(`v100`), "volta", "7.0"},
	{regexp.MustCompile(`nvidia-t4`), "turing", "7.5"},
	{regexp.MustCompile(`a100`), "ampere", "8.0"},
	{regexp.MustCompile(`jetson-agx-orin`), "ampere", "8.7"},
	{regexp.MustCompile(`a10g|a40|rtx-30|rtx-a6000`), "ampere", "8.6"},
	{regexp.MustCompile(`nvidia-l4$|l40s|rtx-40|-ada`), "ada", "8.9"},
	{regexp.MustCompile(`h100|h200`), "hopper", "9.0"},
	{regexp.MustCompile(`b200`), "blackwell", "10.0"},
	{regexp.MustCompile(`dgx-spark`), "blackwell", "12.1"},
	{regexp.MustCompile(`rtx-50|blackwell`), "blackwell", "12.0"},
	{regexp.MustCompile(`mi250`), "cdna2", "gfx90a"},
	{regexp.MustCompile(`mi300|mi325`), "cdna3", "gfx942"},
	{regexp.MustCompile(`rx-7900`), "rdna3", "gfx1100"},
	{regexp.MustCompile(`rx-9070|r9700`), "rdna4", "gfx1201"},
	{regexp.MustCompile(`ryzen-ai-max`), "rdna3.5", "gfx1151"},
	{regexp.MustCompile(`ryzen-ai-5`), "rdna3.5", "gfx1152"},
	{regexp.MustCompile(`arc-a`), "xe-hpg", ""},
	{regexp.MustCompile(`arc-b`), "xe2", ""},
	{regexp.MustCompile(`apple-(m\d)`), "apple", ""},
	{regexp.MustCompile(`^cpu-`), "cpu", ""},
}

// Device-to-device links, achievable GB/s per direction [U: NVLink 3/4/5
// datasheet figures halved for one direction; PCIe 4/5 x16 achievable].
func interconnect(id, kind string) planner.Interconnect {
	switch {
	case strings.Contains(id, "sxm4") || strings.Contains(id, "a100-sxm"):
		return planner.Interconnect{Kind: "nvlink3", GBs: 300}
	case strings.Contains(id, "sxm5") || strings.Contains(id, "h200") || strings.Contains(id, "h100-nvl"):
		return planner.Interconnect{Kind: "nvlink4", GBs: 450}
	case strings.Contains(id, "b200"):
		return planner.Interconnect{Kind: "nvlink5", GBs: 900}
	case strings.Contains(id, "mi300") || strings.Contains(id, "mi325") || strings.Contains(id, "mi250"):
		return planner.Interconnect{Kind: "xgmi", GBs: 64 * 7 / 2}
	case kind != "gpu":
		return planner.Interconnect{Kind: "none"}
	case strings.Contains(id, "rtx-50") || strings.Contains(id, "blackwell") || strings.Contains(id, "rx-9070") || strings.Contains(id, "r9700"):
		return planner.Interconnect{Kind: "pcie5", GBs: 50}
	}
	return planner.Interconnect{Kind: "pcie4", GBs: 25}
}

func hardware(path string) ([]planner.Hardware, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []planner.Hardware
	for _, r := range rows {
		id := r["id"]
		h := planner.Hardware{
			ID: id, Name: r["name"], Vendor: r["vendor"], Kind: planner.DeviceKind(r["kind"]),
			Memory:       planner.Bytes(num(r["memory_gib"]) * float64(planner.GiB)),
			MemoryType:   r["memory_type"],
			BandwidthGBs: num(r["mem_bandwidth_gbs"]),
			TDPWatts:     num(r["tdp_w"]), PriceUSD: num(r["price_usd"]),
			Notes: r["notes"], Source: r["source"],
			TFLOPS: map[planner.Precision]float64{},
		}
		for p, c := range map[planner.Precision]string{planner.FP16: "fp16_tflops", planner.BF16: "bf16_tflops", planner.FP8: "fp8_tflops", planner.INT8: "int8_tops", planner.FP32: "fp32_tflops"} {
			if v := num(r[c]); v > 0 {
				h.TFLOPS[p] = v
			}
		}
		if h.Kind == planner.KindAPU {
			// AMD APU int8 figures in the fact sheet are the NPU's, not
			// the iGPU's: the GPU path has no int8 tensor rate.
			delete(h.TFLOPS, planner.INT8)
		}
		for _, b := range strings.Split(r["backends"], "|") {
			if b = strings.TrimSpace(b); b != "" {
				h.Backends = append(h.Backends, planner.Backend(b))
			}
		}
		if len(h.Backends) == 0 {
			h.Backends = defaultBackends(h)
		}
		for _, ar := range archRules {
			if m := ar.re.FindStringSubmatch(id); m != nil {
				h.Arch, h.Compute = ar.arch, ar.cc
				if ar.arch == "apple" && len(m) > 1 {
					h.Arch = "apple-" + m[1]
				}
				break
			}
		}
		switch h.Kind {
		case planner.KindGPU:
			h.MemoryModel = planner.MemDiscrete
		case planner.KindAPU:
			h.MemoryModel = planner.MemAPU
			// Typical Linux LLM set-up: GTT raised to ~94% of RAM
			// (amdgpu.gttsize / ttm.pages_limit), e.g. 120 GiB of 128
			// [seed 002: "120GiB GTT"]; the probe reads the real value.
			h.GPUMemory = h.Memory * 15 / 16
			h.Notes += "; gpu_memory [D]: GTT ceiling typical of LLM set-ups (seed 002: 120 GiB of 128 GiB); probe reads the real one"
		case planner.KindSoC:
			h.MemoryModel = planner.MemUnified
			// Apple: recommendedMaxWorkingSetSize ≈ 75% of RAM [U, llmfit
			// PR #754]; NVIDIA SoCs: RAM minus ~6% for the OS [U].
			if h.Vendor == "Apple" {
				h.GPUMemory = h.Memory * 3 / 4
			} else {
				h.GPUMemory = h.Memory * 15 / 16
			}
			h.Notes += "; gpu_memory [D/U]: default GPU working-set limit"
		case planner.KindCPU:
			h.MemoryModel = planner.MemHost
		}
		h.Interconnect = interconnect(id, r["kind"])
		out = append(out, h)
	}
	return out, nil
}

func defaultBackends(h planner.Hardware) []planner.Backend {
	switch h.Vendor {
	case "NVIDIA":
		return []planner.Backend{planner.CUDA, planner.Vulkan, planner.CPU}
	case "AMD":
		if h.Kind == planner.KindCPU {
			return []planner.Backend{planner.CPU}
		}
		return []planner.Backend{planner.ROCm, planner.Vulkan, planner.CPU}
	case "Apple":
		return []planner.Backend{planner.Metal, planner.CPU}
	case "Intel":
		if h.Kind == planner.KindCPU {
			return []planner.Backend{planner.CPU}
		}
		return []planner.Backend{planner.SYCL, planner.Vulkan, planner.CPU}
	}
	return []planner.Backend{planner.CPU}
}

var nativeRe = regexp.MustCompile(`native dtype (\w+)`)

// GELU (non-gated, 2-matrix) MLPs [V model cards / configs, see notes].
var plainMLP = map[string]bool{"starcoder2": true, "bloom": true, "mpt": true, "falcon": true, "gpt2": true}

func models(path string) ([]planner.Model, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []planner.Model
	for _, r := range rows {
		m := planner.Model{
			ID: r["id"], Name: r["name"], Arch: strings.Fields(r["arch"])[0],
			Params:       planner.Params(num(r["params_b"]) * 1e9),
			ActiveParams: planner.Params(num(r["active_params_b"]) * 1e9),
			Layers:       int(num(r["layers"])), Hidden: int(num(r["hidden"])), FFN: int(num(r["ffn"])),
			Heads: int(num(r["heads"])), KVHeads: int(num(r["kv_heads"])), HeadDim: int(num(r["head_dim"])),
			Vocab: int(num(r["vocab"])), Experts: int(num(r["experts"])), TopK: int(num(r["experts_per_token"])),
			SlidingWindow:  int(num(r["sliding_window"])),
			MaxContext:     planner.Tokens(num(r["max_context"])),
			TiedEmbeddings: r["tied_embeddings"] == "true",
			Notes:          r["notes"], Source: r["source"],
		}
		m.GatedMLP = !plainMLP[m.Arch]
		if mm := nativeRe.FindStringSubmatch(m.Notes); mm != nil {
			m.NativeDType = mm[1]
		}
		slidingLayers(&m)
		if strings.Contains(m.Notes, "MLA") {
			m.MLA = &planner.MLA{KVLoraRank: 512, RopeDim: 64}
		}
		out = append(out, m)
	}
	return out, nil
}

// slidingLayers counts the layers using the local window, per architecture
// (modeling.md §2.3): Mistral v0.1 / StarCoder2 all layers, Gemma-3 5 of
// every 6, gpt-oss every other, Llama-4 3 of 4 (chunked local). A window at
// or beyond the model's context is no window (Phi-3 262144).
func slidingLayers(m *planner.Model) {
	if m.SlidingWindow <= 0 || planner.Tokens(m.SlidingWindow) >= m.MaxContext {
		m.SlidingWindow = 0
		return
	}
	switch m.Arch {
	case "gemma3":
		m.SlidingLayers = m.Layers - m.Layers/6
	case "gpt_oss":
		m.SlidingLayers = m.Layers / 2
	case "llama4":
		m.SlidingLayers = m.Layers * 3 / 4
	default:
		m.SlidingLayers = m.Layers
	}
	m.Notes += fmt.Sprintf("; sliding_layers %d [D] from the architecture's pattern", m.SlidingLayers)
}
