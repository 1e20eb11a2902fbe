package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of a workload a user may ask for: no engine serves more tokens
// per request than the longest context in the catalog (Llama 4 Scout's
// 10M is the outlier; 2M covers every other) nor more requests at once
// than these; a figure beyond them is a typo, and an error says so rather
// than capping it silently.
const (
	// MaxWorkloadTokens bounds prompt + depth + gen of one request.
	MaxWorkloadTokens Tokens = 2 << 20
	// MaxWorkloadRequests bounds users= and burst=.
	MaxWorkloadRequests = 100_000
)

// ErrWorkload is wrapped by every ParseWorkload error.
var ErrWorkload = errors.New("invalid workload")

// ParseWorkload reads a workload such as
//
//	prompt=1024,gen=256,users=8     8 clients in a closed loop
//	prompt=1k,gen=128,burst=1000    1000 prompts sent at once
//	prompt=300,gen=300,rate=2.5     open-loop arrivals, 2.5 requests/s (or 90/min)
//	prompt=2k,gen=512,offline       a max-throughput batch run
//	prompt=512,gen=128              one request at a time
//
// with optional depth=N (tokens already cached) and lengths=fixed|variable.
// Token counts take k (×1024) and M suffixes. users, burst, rate and
// offline name the arrival pattern; at most one may be given (users=4
// with rate=2 is contradictory: a rate run has no client count). Values
// outside MaxWorkloadTokens and MaxWorkloadRequests are errors, never
// capped. prompt and gen are required.
func ParseWorkload(s string) (Workload, error) {
	w := Workload{Kind: WorkloadSingle, Concurrency: 1}
	var pattern string // the key that set the arrival pattern
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, hasVal := strings.Cut(part, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		if seen[key] {
			return Workload{}, fmt.Errorf("%w: %s given twice", ErrWorkload, key)
		}
		seen[key] = true
		if isPatternKey(key) {
			if pattern != "" {
				return Workload{}, fmt.Errorf("%w: %s and %s contradict each other (give one of users=N, burst=N, rate=R or offline)", ErrWorkload, pattern, key)
			}
			pattern = key
		}
		if key != "offline" && !hasVal {
			return Workload{}, fmt.Errorf("%w: %q needs a value (%s=...)", ErrWorkload, key, key)
		}
		if err := setWorkloadKey(&w, key, val); err != nil {
			return Workload{}, fmt.Errorf("%w: %s", ErrWorkload, err)
		}
	}
	if !seen["prompt"] || !seen["gen"] {
		return Workload{}, fmt.Errorf("%w: prompt=N and gen=N are required", ErrWorkload)
	}
	if w.Gen == 0 {
		return Workload{}, fmt.Errorf("%w: gen must be at least 1 token", ErrWorkload)
	}
	if tot := w.Prompt + w.Gen + w.Depth; tot > MaxWorkloadTokens {
		return Workload{}, fmt.Errorf("%w: prompt+depth+gen = %d tokens is above %d", ErrWorkload, tot, MaxWorkloadTokens)
	}
	return w, nil
}

// isPatternKey reports whether key sets the arrival pattern.
func isPatternKey(key string) bool {
	switch key {
	case "users", "burst", "rate", "offline":
		return true
	}
	return false
}

// setWorkloadKey applies one key=value of ParseWorkload.
func setWorkloadKey(w *Workload, key, val string) error {
	switch key {
	case "prompt", "gen", "depth":
		t, err := ParseTokens(val)
		if err != nil {
			return err
		}
		if t > MaxWorkloadTokens {
			return fmt.Errorf("%s=%s is above %d tokens", key, val, MaxWorkloadTokens)
		}
		switch key {
		case "prompt":
			w.Prompt = t
		case "gen":
			w.Gen = t
		default:
			w.Depth = t
		}
	case "users", "burst":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > MaxWorkloadRequests {
			return fmt.Errorf("%s=%s: want a whole number from 1 to %d", key, val, MaxWorkloadRequests)
		}
		w.Concurrency = n
		w.Serving = n > 1
		w.Kind = WorkloadClosed
		if n == 1 {
			w.Kind = WorkloadSingle
		}
		if key == "burst" {
			w.Kind, w.Burst, w.Serving = WorkloadBurst, n, true
		}
	case "rate":
		r, err := ParseRate(val)
		if err != nil {
			return fmt.Errorf("rate=%s: %v", val, err)
		}
		w.Kind, w.Rate, w.Serving, w.Saturate = WorkloadRate, r, true, true
	case "offline":
		if val != "" {
			return fmt.Errorf("offline takes no value")
		}
		w.Kind, w.Serving, w.Saturate = WorkloadOffline, true, true
	case "lengths":
		l, err := ParseLengths(val)
		if err != nil || l == "" {
			return fmt.Errorf("lengths=%s: want fixed or variable", val)
		}
		w.VariableLengths = l == LengthsVariable
	default:
		return fmt.Errorf("unknown key %q (want prompt, gen, depth, lengths and one of users, burst, rate, offline)", key)
	}
	return nil
}

// Offline reports whether w is an offline batch run: the largest batch
// the engine takes, with no arrival rate.
func (w Workload) Offline() bool { return w.Rate == 0 && (w.Kind == WorkloadOffline || w.Saturate) }

// RunsAtOnce reports whether w is a fixed set of prompts that the engine
// runs some number at a time, a burst or an offline batch: its count is
// of sequences at once, not users in a loop, and a prompt that waits for
// a slot is no limit (its TTFT carries the wait).
func (w Workload) RunsAtOnce() bool { return w.Burst > 1 || w.Offline() }

// Alone is w as one request on an idle server: the same prompt, output,
// cached depth and lengths, with no other users, arrival rate, burst or
// batch. It is what "one user" means beside a workload of any arrival
// pattern (compare's single-user column).
func (w Workload) Alone() Workload {
	return Workload{Prompt: w.Prompt, Gen: w.Gen, Depth: w.Depth, Concurrency: 1,
		VariableLengths: w.VariableLengths, Kind: WorkloadSingle, Median: w.Median}
}

// Pattern is how a plan's requests arrive, as its answer states it
// (PlanResult.Workload), so that a front end labels the figures by the
// workload the planner parsed rather than by parsing the text again.
type Pattern struct {
	// Kind is closed (users in a loop; one user is closed at 1), rate,
	// burst or offline.
	Kind   WorkloadKind `json:"kind"`
	Prompt Tokens       `json:"prompt_tokens"`
	Gen    Tokens       `json:"gen_tokens"`
	Users  int          `json:"users,omitempty"` // closed: clients in the loop
	Rate   float64      `json:"rate,omitempty"`  // rate: requests/s arriving at random
	Burst  int          `json:"burst,omitempty"` // burst: prompts sent at once
}

// Pattern is w's arrival pattern (Pattern).
func (w Workload) Pattern() Pattern {
	p := Pattern{Kind: WorkloadClosed, Prompt: w.Prompt, Gen: w.Gen}
	switch {
	case w.Burst > 1:
		p.Kind, p.Burst = WorkloadBurst, w.Burst
	case w.Rate > 0:
		p.Kind, p.Rate = WorkloadRate, w.Rate
	case w.Offline():
		p.Kind = WorkloadOffline
	default:
		p.Users = max(w.Concurrency, 1)
	}
	return p
}
