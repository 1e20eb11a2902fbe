package planner

import (
	"errors"
	"testing"
)

// Every policy has typed rules, and the rules say what each engine is:
// which ones have a server to launch, whose image starts it, which make
// FP8 from BF16 while loading.
func TestEveryPolicyHasRules(t *testing.T) {
	for _, p := range Policies {
		r, ok := rulesFor(p)
		if !ok {
			t.Fatalf("policy %s has no rules", p)
		}
		if l := r.schedLimits(testServer()); l.maxSeqs < 1 || l.budget < 1 {
			t.Errorf("%s: limits %+v", p, l)
		}
		if o := r.stepOverheadMs(CUDA, ""); !(o > 0 && o < 100) {
			t.Errorf("%s: step overhead %g ms", p, o)
		}
		if p == PolicyTransformers {
			if _, _, err := r.command(&launchIn{s: Scenario{Engine: Engine{Policy: p}}}, &Launch{}); !errors.Is(err, ErrNoServer) {
				t.Errorf("%s: command error %v, want ErrNoServer", p, err)
			}
		}
	}
	if _, ok := rulesFor("mlx"); ok {
		t.Error("an unknown policy has rules")
	}
	for p, want := range map[Policy]bool{PolicyVLLM: true, PolicyTGI: true, PolicyLlamaCpp: true, PolicyOllama: true, PolicySGLang: false, PolicyTRTLLM: false} {
		if imageEntrypoint(p) != want {
			t.Errorf("%s: image entrypoint %v, want %v", p, !want, want)
		}
	}
	for p, want := range map[Policy]bool{PolicyVLLM: true, PolicySGLang: true, PolicyTGI: true, PolicyTRTLLM: false, PolicyLlamaCpp: false} {
		if quantizesOnLoad(p, FamilyFP8) != want {
			t.Errorf("%s: FP8 on load %v, want %v", p, !want, want)
		}
	}
	if quantizesOnLoad(PolicySGLang, FamilyBNB) || !quantizesOnLoad(PolicyTGI, FamilyBNB) {
		t.Error("bitsandbytes on load: TGI and vLLM only")
	}
}

// The interaction penalty applies to features that name two or more
// factors, not to main effects, and is off by default.
func TestInteractionPenalty(t *testing.T) {
	o := FitOptions{Ridge: 12, InteractionRidge: 4}
	for f, want := range map[string]float64{"arch*engine=ada*vllm": 48, "engine*backend*mem=vllm*cuda*hbm": 48, "engine=vllm": 12, "release=vllm@0.11": 12, "ggml-era=2025": 12} {
		if got := o.penalty(f); got != want {
			t.Errorf("penalty(%s) = %g, want %g", f, got, want)
		}
	}
	if got := (FitOptions{Ridge: 12}).penalty("arch*engine=ada*vllm"); got != 12 {
		t.Errorf("default interaction penalty %g, want the ridge", got)
	}
}

// A serving engine's per-step cost follows its release: vLLM before its
// V1 engine (0.8) and SGLang before its overlap scheduler (0.4) pay a few
// ms of Python per step, later releases about one; unstated is the newest.
func TestStepOverheadFollowsRelease(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		v    string
		want float64
	}{
		{PolicyVLLM, "0.4.3", 3}, {PolicyVLLM, "0.7.1", 3}, {PolicyVLLM, "0.8.2", 1}, {PolicyVLLM, "v0.11.0", 1}, {PolicyVLLM, "", 1},
		{PolicySGLang, "0.3.0", 3}, {PolicySGLang, "v0.5.4.post1", 1}, {PolicySGLang, "", 1},
		{PolicyTRTLLM, "v1.2.0rc1", 1}, {PolicyTGI, "2.0.0", 4},
	} {
		r, _ := rulesFor(c.p)
		if got := r.stepOverheadMs(CUDA, c.v); got != c.want {
			t.Errorf("%s %q: step overhead %g ms, want %g", c.p, c.v, got, c.want)
		}
	}
}
