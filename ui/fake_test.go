package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// fakeCatalog is a small catalog: three devices, two models, three weight
// formats, three KV types and two engines, with real figures.
func fakeCatalog() *planner.Catalog {
	return &planner.Catalog{
		Hardware: []planner.Hardware{
			{ID: "nvidia-rtx-4090", Name: "NVIDIA GeForce RTX 4090", Vendor: "NVIDIA", Kind: planner.KindGPU,
				Memory: 24 * planner.GiB, MemoryModel: planner.MemDiscrete, BandwidthGBs: 1008, TDPWatts: 450, PriceUSD: 1599,
				TFLOPS:   map[planner.Precision]float64{planner.FP16: 330.3, planner.BF16: 165.2, planner.FP8: 660.6, planner.INT8: 660.6},
				Backends: []planner.Backend{planner.CUDA, planner.Vulkan}, Arch: "ada", Compute: "8.9"},
			{ID: "nvidia-rtx-3060", Name: "NVIDIA GeForce RTX 3060 12GB", Vendor: "NVIDIA", Kind: planner.KindGPU,
				Memory: 12 * planner.GiB, MemoryModel: planner.MemDiscrete, BandwidthGBs: 360, TDPWatts: 170, PriceUSD: 329,
				TFLOPS:   map[planner.Precision]float64{planner.FP16: 51, planner.BF16: 51},
				Backends: []planner.Backend{planner.CUDA, planner.Vulkan}, Arch: "ampere", Compute: "8.6"},
			{ID: "amd-ryzen-ai-max-395", Name: "AMD Ryzen AI Max+ 395 (128 GB)", Vendor: "AMD", Kind: planner.KindAPU,
				Memory: 128 * planner.GiB, GPUMemory: 96 * planner.GiB, MemoryModel: planner.MemAPU, BandwidthGBs: 256, TDPWatts: 120,
				TFLOPS:   map[planner.Precision]float64{planner.FP16: 59.4},
				Backends: []planner.Backend{planner.ROCm, planner.Vulkan}, Arch: "rdna3.5"},
		},
		Models: []planner.Model{
			{ID: "meta-llama/Llama-3.1-8B-Instruct", Name: "Llama 3.1 8B Instruct", Arch: "llama",
				Params: 8_030_000_000, ActiveParams: 8_030_000_000, Layers: 32, Hidden: 4096, FFN: 14336,
				Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256, GatedMLP: true, MaxContext: 131072, NativeDType: "bfloat16"},
			{ID: "meta-llama/Llama-3.1-70B-Instruct", Name: "Llama 3.1 70B Instruct", Arch: "llama",
				Params: 70_550_000_000, ActiveParams: 70_550_000_000, Layers: 80, Hidden: 8192, FFN: 28672,
				Heads: 64, KVHeads: 8, HeadDim: 128, Vocab: 128256, GatedMLP: true, MaxContext: 131072, NativeDType: "bfloat16"},
		},
		Quants: []planner.Quant{
			{ID: "bf16", Name: "BF16", Family: planner.FamilyFloat, LinearBPW: 16, EmbedBPW: 16, HeadBPW: 16, Compute: planner.BF16},
			{ID: "awq-int4", Name: "AWQ 4-bit", Family: planner.FamilyAWQ, LinearBPW: 4.156, EmbedBPW: 16, HeadBPW: 16, Compute: planner.FP16, EngineFlag: "awq_marlin"},
			{ID: "q4_k_m", Name: "GGUF Q4_K_M", Family: planner.FamilyGGUF, LinearBPW: 4.8, EmbedBPW: 4.5, HeadBPW: 6.5625, Compute: planner.FP16, GGUFType: "Q4_K"},
		},
		KVTypes: []planner.KVType{
			{ID: "f16", BytesPerElement: 2},
			{ID: "bf16", BytesPerElement: 2},
			{ID: "q8_0", BytesPerElement: 34.0 / 32, NeedsFlashAttention: true},
		},
		Engines: []planner.Engine{
			{ID: planner.VLLM, Name: "vLLM", Version: "0.11", Policy: "vllm",
				Backends: []planner.Backend{planner.CUDA, planner.ROCm},
				Formats: map[planner.Backend][]planner.QuantFamily{
					planner.CUDA: {planner.FamilyFloat, planner.FamilyAWQ},
					planner.ROCm: {planner.FamilyFloat, planner.FamilyAWQ},
				},
				KVTypes: []string{"f16", "bf16"}, GPUMemoryUtilization: 0.9, BlockSize: 16, MaxSeqs: 256},
			{ID: planner.LlamaCpp, Name: "llama-server", Version: "b6327", Policy: "llamacpp",
				Backends: []planner.Backend{planner.CUDA, planner.ROCm, planner.Vulkan, planner.CPU},
				Formats: map[planner.Backend][]planner.QuantFamily{
					planner.CUDA:   {planner.FamilyGGUF, planner.FamilyFloat},
					planner.ROCm:   {planner.FamilyGGUF, planner.FamilyFloat},
					planner.Vulkan: {planner.FamilyGGUF, planner.FamilyFloat},
					planner.CPU:    {planner.FamilyGGUF, planner.FamilyFloat},
				},
				KVTypes: []string{"f16", "bf16", "q8_0"}, MaxSeqs: 1},
		},
	}
}

// fakeService implements Service over fakeCatalog with planner.Fit and
// planner.Predict, so that outputs really follow inputs.
type fakeService struct {
	cat *planner.Catalog

	machineErr error
	// hold, when set, makes calibrations wait for it (or for cancel).
	hold chan struct{}

	mu       sync.Mutex
	exported []string
	calls    atomic.Int64
}

func newFakeService() *fakeService { return &fakeService{cat: fakeCatalog()} }

func (f *fakeService) Catalog() *planner.Catalog { return f.cat }

func (f *fakeService) Machine(ctx context.Context) (MachineView, error) {
	f.calls.Add(1)
	if f.machineErr != nil {
		return MachineView{}, f.machineErr
	}
	return MachineView{
		Name: "Example Workstation", CPU: "AMD Ryzen 9 7950X (16 cores)", Kernel: "6.14.0-29-generic",
		Memory: MemoryUse{Kind: MemSystem, Total: 64 * planner.GiB, Used: 21 * planner.GiB, UsedKnown: true},
		Devices: []DeviceView{{
			Name: "NVIDIA GeForce RTX 4090", Vendor: "NVIDIA", Kind: planner.KindGPU,
			Memory:  []MemoryUse{{Kind: MemVRAM, Total: 24 * planner.GiB, Used: 1536 * planner.MiB, UsedKnown: true, Note: "nvidia-smi"}},
			Profile: "nvidia-rtx-4090", ProfileName: "NVIDIA GeForce RTX 4090", MatchedBy: "pci id",
		}},
		Hardware: "nvidia-rtx-4090", HardwareName: "NVIDIA GeForce RTX 4090",
		Warnings: []string{"SMBIOS memory devices not readable without root: installed RAM is an estimate"},
		Calibration: CalibrationStatus{Calibrated: true, When: testNow.Add(-72 * time.Hour), Source: "host",
			Detail: "decode at 81% of peak bandwidth"},
	}, nil
}

func (f *fakeService) Scenario(in ScenarioInput) (planner.Scenario, error) {
	f.calls.Add(1)
	var s planner.Scenario
	if in.Model.Layers == 0 {
		return s, errors.New("no model chosen")
	}
	hw := in.Hardware
	if hw == "" {
		hw = "nvidia-rtx-4090"
	}
	h, err := f.cat.FindHardware(hw)
	if err != nil {
		return s, err
	}
	qid := in.Quant
	if qid == "" {
		qid = in.Model.FileQuant
	}
	eid := in.Engine
	if eid == "" {
		eid = "vllm"
		if strings.HasPrefix(qid, "q") || h.Kind == planner.KindAPU {
			eid = "llama.cpp"
		}
	}
	e, err := f.cat.FindEngine(eid)
	if err != nil {
		return s, err
	}
	if qid == "" {
		qid = "bf16"
		if e.IsGGML() {
			qid = "q4_k_m"
		}
	}
	q, err := f.cat.FindQuant(qid)
	if err != nil {
		return s, err
	}
	kid := in.KV
	if kid == "" {
		kid = "f16"
	}
	kv, err := f.cat.FindKVType(kid)
	if err != nil {
		return s, err
	}
	s = planner.Scenario{Hardware: h, Devices: max(in.Devices, 1), Engine: e, Model: in.Model, Quant: q, KV: kv,
		Context: in.Context, Concurrency: max(in.Users, 1)}
	return s, s.Validate()
}

func (f *fakeService) Fit(s planner.Scenario) (planner.FitResult, error) {
	f.calls.Add(1)
	return planner.Fit(s)
}

func (f *fakeService) Predict(s planner.Scenario, w planner.Workload) planner.Prediction {
	f.calls.Add(1)
	return planner.Predict(s, w, nil)
}

func (f *fakeService) Curve(s planner.Scenario, w planner.Workload, cs []int) []planner.Prediction {
	f.calls.Add(1)
	out := make([]planner.Prediction, len(cs))
	for i, c := range cs {
		w.Concurrency = c
		w.Serving = c > 1
		out[i] = planner.Predict(s, w, nil)
	}
	return out
}

// Plan sweeps engine × format × {1, users} and ranks rows that fit and
// meet the target first, then by total throughput.
func (f *fakeService) Plan(in PlanInput) (PlanView, error) {
	f.calls.Add(1)
	var v PlanView
	var rows []PlanRow
	for _, e := range f.cat.Engines {
		if in.Scenario.Engine != "" && in.Scenario.Engine != string(e.ID) {
			continue
		}
		for _, q := range f.cat.Quants {
			if in.Scenario.Quant != "" && in.Scenario.Quant != q.ID {
				continue
			}
			for _, users := range []int{1, in.Workload.Concurrency} {
				si := in.Scenario
				si.Engine, si.Quant, si.Users = string(e.ID), q.ID, users
				si.Context = in.Workload.Prompt + in.Workload.Gen
				s, err := f.Scenario(si)
				if err != nil {
					continue
				}
				v.Hardware = s.Hardware.Name
				rows = append(rows, f.planRow(s, in, users))
			}
		}
	}
	if v.Hardware == "" {
		v.Hardware = "this machine"
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Fits != b.Fits {
			return a.Fits
		}
		if a.MeetsSLO != b.MeetsSLO {
			return a.MeetsSLO
		}
		return a.Total > b.Total
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
	v.Rows = rows
	return v, nil
}

func (f *fakeService) planRow(s planner.Scenario, in PlanInput, users int) PlanRow {
	w := in.Workload
	w.Concurrency, w.Serving = users, users > 1
	r := PlanRow{Engine: s.Engine.Name, Quant: s.Quant.ID, KV: s.KV.ID, Concurrency: users, Context: s.Context,
		Scenario: s, Workload: w, Source: "prior", ErrorBand: 25}
	fr, err := planner.Fit(s)
	if err != nil || fr.Verdict == planner.DoesNotFit {
		r.WhyNot = "does not fit"
		if len(fr.Reasons) > 0 {
			r.WhyNot = fr.Reasons[0]
		}
		return r
	}
	p := planner.Predict(s, w, nil)
	r.Fits = true
	r.TTFT, r.TPOT, r.PerUser, r.Total = p.TTFT, p.TPOT, p.DecodeTPS, p.TotalTPS
	var why []string
	if in.MaxTTFT > 0 && p.TTFT > in.MaxTTFT {
		why = append(why, fmt.Sprintf("TTFT %s over the %s target", ms(p.TTFT), ms(in.MaxTTFT)))
	}
	if in.MaxTPOT > 0 && p.TPOT > in.MaxTPOT {
		why = append(why, fmt.Sprintf("TPOT %s over the %s target", ms(p.TPOT), ms(in.MaxTPOT)))
	}
	r.MeetsSLO = len(why) == 0
	r.WhyNot = strings.Join(why, "; ")
	r.Launch = fmt.Sprintf("%s --model %s --quant %s --ctx %d --users %d", s.Engine.ID, s.Model.ID, s.Quant.ID, s.Context, users)
	return r
}

func (f *fakeService) Compare(in CompareInput) ([]CompareRow, error) {
	f.calls.Add(1)
	if in.Model.Layers == 0 {
		return nil, errors.New("no model chosen")
	}
	var out []CompareRow
	for _, id := range in.Hardware {
		users := max(in.Workload.Concurrency, 1)
		s, err := f.Scenario(ScenarioInput{Model: in.Model, Hardware: id, Engine: in.Engine, Quant: in.Quant,
			Context: in.Workload.Prompt + in.Workload.Gen, Users: users})
		row := CompareRow{Hardware: id, Verdict: planner.DoesNotFit}
		if err != nil {
			row.Note = err.Error()
			out = append(out, row)
			continue
		}
		h := s.Hardware
		row.Name, row.Memory, row.BandwidthGBs, row.PriceUSD, row.Watts = h.Name, h.Memory, h.BandwidthGBs, h.PriceUSD, h.TDPWatts
		row.Config = string(s.Engine.ID) + " " + s.Quant.ID
		fr, err := planner.Fit(s)
		if err != nil || fr.Verdict == planner.DoesNotFit {
			row.Note = "does not fit"
			out = append(out, row)
			continue
		}
		row.Verdict = fr.Verdict
		w := in.Workload
		w.Concurrency, w.Serving = 1, false
		row.SingleUser = planner.Predict(s, w, nil).DecodeTPS
		row.Users = min(users, max(fr.MaxConcurrencyAtContext, 1))
		w.Concurrency, w.Serving = row.Users, row.Users > 1
		p := planner.Predict(s, w, nil)
		row.Total, row.TTFT, row.Source = p.TotalTPS, p.TTFT, p.Source
		if h.PriceUSD > 0 {
			row.PerKiloUSD = float64(p.TotalTPS) / h.PriceUSD * 1000
		}
		if h.TDPWatts > 0 {
			row.PerWatt = float64(p.TotalTPS) / h.TDPWatts
		}
		out = append(out, row)
	}
	return out, nil
}

// calibrate reports five steps, waiting on hold (when set) before the
// last, and stops when ctx is cancelled.
func (f *fakeService) calibrate(ctx context.Context, target string, progress Progress) (CalibrationView, error) {
	steps := []string{"memory bandwidth", "fp16 matmul", "int8 matmul", "decode", "prefill"}
	for i, st := range steps {
		progress(float64(i)/float64(len(steps)), "Measuring "+st+"…")
		if i == len(steps)-1 && f.hold != nil {
			select {
			case <-f.hold:
			case <-ctx.Done():
			}
		}
		if err := ctx.Err(); err != nil {
			return CalibrationView{}, fmt.Errorf("calibration: %w", err)
		}
	}
	progress(1, "Fitting")
	return CalibrationView{
		Target: target, When: testNow,
		Params: []Param{
			{Name: "decode efficiency", Value: "0.81", Note: "achieved ÷ peak bandwidth"},
			{Name: "prefill efficiency", Value: "0.52", Note: "achieved ÷ peak FLOP/s"},
		},
		Points: []CalibrationPoint{
			{Label: "tg c=1", Metric: "tg_tps", Predicted: 120, Measured: 131},
			{Label: "tg c=8", Metric: "total_out_tps", Predicted: 820, Measured: 760},
			{Label: "pp 512", Metric: "pp_tps", Predicted: 9000, Measured: 10400},
		},
		MdAPE: 8.4,
		Notes: []string{"saved to calibration.toml"},
	}, nil
}

func (f *fakeService) CalibrateHost(ctx context.Context, progress Progress) (CalibrationView, error) {
	f.calls.Add(1)
	return f.calibrate(ctx, "host", progress)
}

func (f *fakeService) CalibrateEndpoint(ctx context.Context, url string, progress Progress) (CalibrationView, error) {
	f.calls.Add(1)
	if strings.Contains(url, "refused") {
		return CalibrationView{}, fmt.Errorf("detect %s: connection refused", url)
	}
	return f.calibrate(ctx, url, progress)
}

func (f *fakeService) CalibrateImport(ctx context.Context, path string, progress Progress) (CalibrationView, error) {
	f.calls.Add(1)
	if strings.Contains(path, "missing") {
		return CalibrationView{}, fmt.Errorf("open %s: no such file or directory", path)
	}
	return f.calibrate(ctx, path, progress)
}

func (f *fakeService) OpenModelFile(path string) (planner.Model, error) {
	f.calls.Add(1)
	if strings.Contains(path, "missing") {
		return planner.Model{}, fmt.Errorf("open %s: no such file or directory", path)
	}
	m := f.cat.Models[0]
	m.ID = "local/" + strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".gguf")
	m.FileQuant = "q4_k_m"
	return m, nil
}

func (f *fakeService) Export(r PlanRow, format string) ([]byte, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.exported = append(f.exported, format)
	f.mu.Unlock()
	switch format {
	case "json":
		return json.MarshalIndent(map[string]any{"engine": r.Engine, "quant": r.Quant, "users": r.Concurrency, "command": r.Launch}, "", "  ")
	case "toml":
		return fmt.Appendf(nil, "engine = %q\nquant = %q\nusers = %d\ncommand = %q\n", r.Engine, r.Quant, r.Concurrency, r.Launch), nil
	case "sh":
		return fmt.Appendf(nil, "#!/bin/sh\nexec %s\n", r.Launch), nil
	}
	return nil, fmt.Errorf("unknown format %q", format)
}

// Verify that fakeService is a Service.
var _ Service = (*fakeService)(nil)
