package planner

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestPermute(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n <= 40; n++ {
		for trial := 0; trial < 5; trial++ {
			cs := make([]Candidate, n)
			for i := range cs {
				cs[i].Devices = i
			}
			idx := r.Perm(n)
			want := make([]int, n)
			copy(want, idx)
			permute(cs, idx)
			for k := range cs {
				if cs[k].Devices != want[k] {
					t.Fatalf("n=%d: position %d holds %d, want %d", n, k, cs[k].Devices, want[k])
				}
			}
		}
	}
}

// A plan looks the fitted terms up once per termsKey. Scenarios sharing a
// key (here: other KV types and tensor-parallel degrees) must get exactly
// the model newPerfModel builds for each of them.
func TestPlanPerfModelMemoMatches(t *testing.T) {
	p := DefaultPerfParams()
	p.Source = "fitted"
	p.Decode.Terms["multi-device=tensor-parallel"] = -0.2
	p.Decode.Terms["quant=fp8"] = 0.1
	p.Prefill.Terms["multi-device=tensor-parallel"] = -0.3
	p.QueueFactor["vllm"] = 0.7
	p.LayerOverheadUs["cuda"] = 30
	terms := map[termsKey]fittedTerms{}
	for _, tp := range []int{1, 2, 4, 8} {
		for _, kv := range []KVType{{ID: "f16", BytesPerElement: 2}, {ID: "fp8", BytesPerElement: 1}} {
			s := testServer()
			s.Devices, s.KV = tp, kv
			b, err := s.ResolveBackend()
			if err != nil {
				t.Fatal(err)
			}
			s.Backend = b
			got := planPerfModel(s, b, &p, terms)
			want := newPerfModel(s, &p)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("TP%d %s KV: memoized model %+v, want %+v", tp, kv.ID, got, want)
			}
		}
	}
	if len(terms) != 2 {
		t.Errorf("%d memo entries, want 2 (one device, several)", len(terms))
	}
}

func TestDevicesForWeights(t *testing.T) {
	const g = float64(GiB)
	for _, c := range []struct {
		total              float64
		fixed, budg, minKV Bytes
		want               int
	}{
		{10 * g, 2 * GiB, 20 * GiB, 0, 1},           // 12 ≤ 16
		{131.4 * g, 4 * GiB, 72 * GiB, 0, 4},        // 70B BF16 on 80 GB: 65.7+4 > 57.6, 32.9+4 ≤ 57.6
		{626.8 * g, 2 * GiB, 216 * GiB / 10, 0, 42}, // DeepSeek-R1 FP8 on 24 GB cards: 626.8/(17.28−2) = 41.02
		{100 * g, 20 * GiB, 20 * GiB, 0, 16},        // overheads alone exceed the KV-room budget
		// 70B BF16 on 4090s (21.6 GiB budget): no degree leaves a fifth,
		// but 8 leave 2 GiB each, more than a 2048-token sequence's 640 MiB
		// of KV: --devices 8 fits (it had said "even 8 are too small").
		{131.4 * g, 2642 << 20, 216 * GiB / 10, 640 << 20, 8},
	} {
		if got := devicesForWeights(c.total, c.fixed, c.budg, c.minKV); got != c.want {
			t.Errorf("devicesForWeights(%.0f GiB, %s, %s) = %d, want %d", c.total/g, c.fixed, c.budg, got, c.want)
		}
	}
}

// Advice for weights that do not fit names what would fit: the tensor
// parallel degree on a GPU, a bigger machine on an APU, and a higher
// memory utilization only when the gap is small.
func TestAdviceMoreMemory(t *testing.T) {
	s := testServer() // 70B FP8 on a 141 GB Hopper
	s.Quant = Quant{ID: "bf16", Family: FamilyFloat, LinearBPW: 16, EmbedBPW: 16, HeadBPW: 16, Compute: BF16}
	adv := strings.Join(adviceMoreMemory(s, 10*GiB, 131*GiB, 4*GiB, 126*GiB), "\n")
	for _, want := range []string{"10.00 GiB more", "to about 36.84 GiB per device", "--devices 2", "--gpu-memory-utilization"} {
		if !strings.Contains(adv, want) {
			t.Errorf("GPU advice lacks %q:\n%s", want, adv)
		}
	}
	adv = strings.Join(adviceMoreMemory(s, 60*GiB, 131*GiB, 4*GiB, 72*GiB), "\n")
	if strings.Contains(adv, "--gpu-memory-utilization") || !strings.Contains(adv, "--devices 4") {
		t.Errorf("a 60 GiB gap: want 4 devices and no utilization advice:\n%s", adv)
	}
	s.Hardware.Kind = KindAPU
	adv = strings.Join(adviceMoreMemory(s, 60*GiB, 131*GiB, 4*GiB, 72*GiB), "\n")
	if strings.Contains(adv, "--devices") || !strings.Contains(adv, "more memory (this device cannot be paired") {
		t.Errorf("APU advice:\n%s", adv)
	}
}

func TestCandidateLabel(t *testing.T) {
	gg := Scenario{Engine: Engine{ID: "llama.cpp", Policy: "llamacpp"}}
	vl := Scenario{Engine: Engine{ID: "vllm", Policy: "vllm"}}
	for _, c := range []struct {
		c    Candidate
		want string
	}{
		{Candidate{Engine: "vllm", Quant: "awq-int4", KVType: "fp8", Devices: 2, Scenario: &vl}, "vllm awq-int4 (fp8 KV, TP2)"},
		{Candidate{Engine: "llama.cpp", Quant: "q4_k_m", KVType: "f16", Devices: 2, Scenario: &gg}, "llama.cpp q4_k_m (2 devices, layer split)"},
		{Candidate{Engine: "llama.cpp", Quant: "q8_0", KVType: "q8_0", Devices: 1, Scenario: &gg}, "llama.cpp q8_0 (q8_0 KV)"},
		{Candidate{Engine: "vllm", Quant: "bf16", KVType: "bf16", Devices: 1}, "vllm bf16"},
	} {
		if got := c.c.Label(); got != c.want {
			t.Errorf("Label() = %q, want %q", got, c.want)
		}
	}
}

// vLLM, SGLang and TGI run AWQ and GPTQ checkpoints on one Marlin kernel on
// CUDA from compute capability 8.0, so both formats share their features
// there (what AWQ rows teach applies to GPTQ), and stay apart elsewhere.
func TestMarlinInt4SharesFeatures(t *testing.T) {
	awq := Quant{ID: "awq-int4", Family: FamilyAWQ, LinearBPW: 4.25}
	gptq := Quant{ID: "gptq-int4", Family: FamilyGPTQ, LinearBPW: 4.125}
	feats := func(arch, policy string, b Backend, q Quant) string {
		s := Scenario{Hardware: Hardware{Arch: arch, Kind: KindGPU}, Engine: Engine{ID: EngineID(policy), Policy: Policy(policy)}, Quant: q}
		return strings.Join(Features(s, b, true), " ")
	}
	for _, c := range []struct {
		arch, policy string
		b            Backend
		shared       bool
	}{
		{"ampere", "vllm", CUDA, true},
		{"hopper", "sglang", CUDA, true},
		{"ada", "tgi", CUDA, true},
		{"volta", "vllm", CUDA, false},
		{"ampere", "trtllm", CUDA, false},
		{"rdna3.5", "vllm", ROCm, false},
	} {
		a, g := feats(c.arch, c.policy, c.b, awq), feats(c.arch, c.policy, c.b, gptq)
		if (a == g) != c.shared {
			t.Errorf("%s %s on %s: AWQ and GPTQ features shared=%v, want %v\n%s\n%s", c.policy, c.arch, c.b, a == g, c.shared, a, g)
		}
	}
}

func TestLaunchCommandForDroppedCandidate(t *testing.T) {
	_, err := LaunchCommand(Candidate{Engine: "vllm", Quant: "bf16", Why: "does not fit"}, false)
	if err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a dropped candidate's launch command: %v", err)
	}
}
