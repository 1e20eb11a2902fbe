package planner

import (
	"math/rand"
	"reflect"
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
			for k, i := range idx {
				want[k] = i
			}
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
