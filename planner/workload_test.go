package planner

import (
	"errors"
	"strings"
	"testing"
)

func TestParseWorkload(t *testing.T) {
	cases := []struct {
		name, in string
		want     Workload
	}{
		{"closed", "prompt=1024,gen=256,users=8", Workload{Kind: WorkloadClosed, Prompt: 1024, Gen: 256, Concurrency: 8, Serving: true}},
		{"single", "prompt=512, gen=128", Workload{Kind: WorkloadSingle, Prompt: 512, Gen: 128, Concurrency: 1}},
		{"one user", "prompt=512,gen=128,users=1", Workload{Kind: WorkloadSingle, Prompt: 512, Gen: 128, Concurrency: 1}},
		{"burst", "prompt=1k,gen=128,burst=1000", Workload{Kind: WorkloadBurst, Prompt: 1024, Gen: 128, Concurrency: 1000, Burst: 1000, Serving: true}},
		{"rate", "prompt=300,gen=300,rate=90/min,lengths=variable", Workload{Kind: WorkloadRate, Prompt: 300, Gen: 300, Concurrency: 1, Rate: 1.5, Serving: true, Saturate: true, VariableLengths: true}},
		{"offline", "offline,prompt=2k,gen=512,depth=4k", Workload{Kind: WorkloadOffline, Prompt: 2048, Gen: 512, Depth: 4096, Concurrency: 1, Serving: true, Saturate: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseWorkload(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseWorkloadRejects(t *testing.T) {
	cases := []struct{ name, in, says string }{
		{"rate and users", "prompt=1,gen=1,rate=2,users=4", "contradict"},
		{"burst and offline", "prompt=1,gen=1,burst=10,offline", "contradict"},
		{"gen far too long", "prompt=1,gen=10M", "above"},
		{"sum too long", "prompt=2M,gen=200k", "above"},
		{"no gen", "prompt=100,users=2", "required"},
		{"zero gen", "prompt=100,gen=0", "at least 1"},
		{"zero users", "prompt=1,gen=1,users=0", "whole number"},
		{"too many users", "prompt=1,gen=1,users=1000000", "whole number"},
		{"negative rate", "prompt=1,gen=1,rate=-2", "rate"},
		{"unknown key", "prompt=1,gen=1,clients=3", "unknown key"},
		{"twice", "prompt=1,prompt=2,gen=1", "twice"},
		{"offline value", "prompt=1,gen=1,offline=yes", "no value"},
		{"no value", "prompt,gen=1", "needs a value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseWorkload(c.in)
			if !errors.Is(err, ErrWorkload) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("ParseWorkload(%q) = %v, want an ErrWorkload saying %q", c.in, err, c.says)
			}
		})
	}
}

func FuzzParseWorkload(f *testing.F) {
	for _, s := range []string{"prompt=1024,gen=256,users=8", "prompt=1k,gen=128,burst=1000", "prompt=300,gen=300,rate=2.5", "offline,prompt=2k,gen=512", "prompt=,gen=1e400", "rate=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWorkload(s)
		if err != nil {
			return
		}
		if w.Gen < 1 || w.Prompt+w.Gen+w.Depth > MaxWorkloadTokens || w.Concurrency < 1 || w.Concurrency > MaxWorkloadRequests || w.Rate < 0 {
			t.Fatalf("ParseWorkload(%q) accepted %+v", s, w)
		}
		if w.Kind == WorkloadRate && w.Concurrency != 1 {
			t.Fatalf("rate workload with users: %+v", w)
		}
	})
}

// Which parsed workloads count sequences at once (a burst, an offline
// batch) rather than users in a loop or slots at a rate.
func TestWorkloadRunsAtOnce(t *testing.T) {
	for _, c := range []struct {
		in              string
		offline, atOnce bool
	}{
		{"prompt=1,gen=1,users=8", false, false},
		{"prompt=1,gen=1,users=1", false, false},
		{"prompt=1,gen=1,rate=2", false, false},
		{"prompt=1,gen=1,burst=500", false, true},
		{"prompt=1,gen=1,burst=1", false, false},
		{"prompt=1,gen=1,offline", true, true},
	} {
		w, err := ParseWorkload(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if w.Offline() != c.offline || w.RunsAtOnce() != c.atOnce {
			t.Errorf("%s: offline %v, at once %v; want %v, %v", c.in, w.Offline(), w.RunsAtOnce(), c.offline, c.atOnce)
		}
	}
	if got := (Prediction{ReqPerS: 20}).Makespan(500); got != 25000 {
		t.Errorf("500 requests at 20/s take %v, want 25 s", got)
	}
	if got := (Prediction{}).Makespan(500); got != 0 {
		t.Errorf("no completion rate: makespan %v, want 0 (unknown)", got)
	}
}

// A plan answer states the pattern it planned for, so front ends label
// its figures without parsing the workload text again.
func TestWorkloadPattern(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pattern
	}{
		{"prompt=1k,gen=256", Pattern{Kind: WorkloadClosed, Prompt: 1024, Gen: 256, Users: 1}},
		{"prompt=512,gen=64,users=8", Pattern{Kind: WorkloadClosed, Prompt: 512, Gen: 64, Users: 8}},
		{"prompt=1k,gen=128,rate=2.5", Pattern{Kind: WorkloadRate, Prompt: 1024, Gen: 128, Rate: 2.5}},
		{"prompt=1k,gen=128,burst=500", Pattern{Kind: WorkloadBurst, Prompt: 1024, Gen: 128, Burst: 500}},
		{"prompt=1k,gen=128,offline", Pattern{Kind: WorkloadOffline, Prompt: 1024, Gen: 128}},
	} {
		w, err := ParseWorkload(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := w.Pattern(); got != tc.want {
			t.Errorf("%s: pattern %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
