package planner_test

import (
	"errors"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestParseRelease(t *testing.T) {
	for _, c := range []struct {
		in   string
		want planner.Release
		err  bool
	}{
		{"0.11.0", planner.Release{Major: 0, Minor: 11, Patch: 0}, false},
		{"v0.6.5", planner.Release{Minor: 6, Patch: 5}, false},
		{"b6500", planner.Release{Build: 6500}, false},
		{"B4000", planner.Release{Build: 4000}, false},
		{"0.6.3.post1", planner.Release{Minor: 6, Patch: 3}, false},
		{"3.3.5-rocm", planner.Release{Major: 3, Minor: 3, Patch: 5}, false},
		{"0.5", planner.Release{Minor: 5}, false},
		{"0.5.4rc1", planner.Release{Minor: 5, Patch: 4}, false},
		{"", planner.Release{}, false},
		{"latest", planner.Release{}, false},
		{"b", planner.Release{}, true},
		{"b0", planner.Release{}, true},
		{"11", planner.Release{}, true},
		{"x.y", planner.Release{}, true},
		{"2025-08 source build", planner.Release{}, true},
		{"0.99999999.1", planner.Release{}, true},
	} {
		got, err := planner.ParseRelease(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, planner.ErrBadRelease) {
			t.Errorf("ParseRelease(%q): %v does not wrap ErrBadRelease", c.in, err)
		}
	}
	order := []string{"0.6.0", "0.6.5", "0.10.1", "0.11.0", ""}
	for i := 1; i < len(order); i++ {
		a, b := planner.MustRelease(order[i-1]), planner.MustRelease(order[i])
		if a.Compare(b) >= 0 || b.Compare(a) <= 0 || !b.AtLeast(a) {
			t.Errorf("%s should sort before %s", a, b)
		}
	}
}

func FuzzParseRelease(f *testing.F) {
	for _, s := range []string{"0.11.0", "v0.6.5", "b6500", "0.6.3.post1", "", "b", "1.2.3.4.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := planner.ParseRelease(s)
		if err != nil {
			return
		}
		back, err := planner.ParseRelease(r.String())
		if r.IsNewest() {
			return
		}
		if err != nil || back != r {
			t.Fatalf("%q → %v → %q → %v, %v", s, r, r.String(), back, err)
		}
	})
}

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]planner.EngineID{
		"vllm": planner.VLLM, "llama-server": planner.LlamaCpp, " LLAMA.CPP ": planner.LlamaCpp, "llamacpp": planner.LlamaCpp,
		"ik_llama.cpp": planner.IKLlamaCpp, "Ollama": planner.Ollama, "text-generation-inference": planner.TGI,
		"TensorRT-LLM": planner.TRTLLM, "trtllm-serve": planner.TRTLLM, "sglang": planner.SGLang, "transformers": planner.Transformers,
	} {
		got, err := planner.ParseEngine(in)
		if err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
		if p, ok := planner.PolicyOf(got); !ok || !p.Valid() {
			t.Errorf("%s has no policy", got)
		}
	}
	if _, err := planner.ParseEngine("foo"); !errors.Is(err, planner.ErrUnknownEngine) {
		t.Errorf("ParseEngine(foo): %v", err)
	}
}

// Every catalog engine has a known policy, the one ParseEngine's table
// gives its id.
func TestCatalogEnginePolicies(t *testing.T) {
	for _, e := range catalog(t).Engines {
		id, err := planner.ParseEngine(string(e.ID))
		p, _ := planner.PolicyOf(id)
		if err != nil || !e.Policy.Valid() || p != e.Policy {
			t.Errorf("engine %s: policy %q, alias table %q (%v)", e.ID, e.Policy, p, err)
		}
	}
}

// Every release names its source and how it was checked; a table read at
// the tag records each option's line.
func TestReleaseTablesCiteSources(t *testing.T) {
	for _, id := range []planner.EngineID{planner.VLLM, planner.LlamaCpp, planner.IKLlamaCpp, planner.Ollama, planner.SGLang, planner.TGI, planner.TRTLLM} {
		rels := planner.Releases(id)
		if len(rels) == 0 {
			t.Errorf("%s: no releases", id)
		}
		for _, r := range rels {
			if r.Source == "" || r.Checked == "" || r.Name == "" || len(r.Flags) == 0 {
				t.Errorf("%s %s: source %q, checked %q, name %q, %d flags", id, r.Release, r.Source, r.Checked, r.Name, len(r.Flags))
			}
			for f, spec := range r.Flags {
				if r.Checked == planner.CheckedAtTag && spec.Line <= 0 {
					t.Errorf("%s: %s has no line in %s", r.Name, f, r.Source)
				}
			}
		}
	}
	if _, err := planner.ReleaseFor(planner.VLLM, planner.MustRelease("0.5.0")); err == nil {
		t.Error("vLLM 0.5.0: older than every table, want an error")
	}
	if r, err := planner.ReleaseFor(planner.LlamaCpp, planner.MustRelease("b6400")); err != nil || r.Release != planner.MustRelease("b6000") {
		t.Errorf("b6400 → %v, %v; want the b6000 rules", r.Release, err)
	}
}

// The catalog finds engines by every alias ParseEngine knows.
func TestFindEngineByAlias(t *testing.T) {
	c := catalog(t)
	for q, want := range map[string]planner.EngineID{"text-generation-launcher": planner.TGI, "TensorRT-LLM": planner.TRTLLM,
		"llama-server": planner.LlamaCpp, "Text Generation Inference": planner.TGI, "ik_llama": planner.IKLlamaCpp} {
		if e, err := c.FindEngine(q); err != nil || e.ID != want {
			t.Errorf("FindEngine(%q) = %s, %v; want %s", q, e.ID, err, want)
		}
	}
	if _, err := c.FindEngine("foo"); err == nil {
		t.Error("FindEngine(foo): no error")
	}
}
