package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// DefaultWorkload is the workload when none is given: 1024-token prompts,
// 256 generated tokens, one user.
var DefaultWorkload = planner.Workload{Prompt: 1024, Gen: 256, Concurrency: 1}

// ParseWorkload reads a workload as planner.ParseWorkload does
// ("prompt=1024,gen=256,users=8", "burst=1000", "rate=2" or "90/min",
// "offline"; depth=N, lengths=fixed|variable), with the prompt and output
// lengths of DefaultWorkload where the string leaves them out. Errors
// (contradictions such as users with rate, a key given twice, values out
// of range) are usage errors.
func ParseWorkload(s string) (planner.Workload, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultWorkload, nil
	}
	has := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, _, _ := strings.Cut(strings.TrimSpace(kv), "=")
		has[strings.ToLower(strings.TrimSpace(k))] = true
	}
	full := s
	if !has["gen"] && !has["output"] && !has["out"] {
		full = fmt.Sprintf("gen=%d,", DefaultWorkload.Gen) + full
	}
	if !has["prompt"] && !has["input"] && !has["in"] {
		full = fmt.Sprintf("prompt=%d,", DefaultWorkload.Prompt) + full
	}
	w, err := planner.ParseWorkload(full)
	if err != nil {
		return w, Usagef("workload %q: %w", s, err)
	}
	if w.Concurrency < 1 {
		w.Concurrency = 1
	}
	return w, nil
}

// ParseSLO reads a latency target: "ttft=500ms,tpot=50ms" or "tps=20"
// (tokens/s per user).
func ParseSLO(s string) (planner.SLO, error) {
	var o planner.SLO
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return o, Usagef("slo %q: want ttft=500ms,tpot=50ms or tps=20", s)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "ttft", "tpot":
			ms, err := ParseDuration(v)
			if err != nil {
				return o, Usagef("slo %s=%s: %w", k, v, err)
			}
			if strings.EqualFold(strings.TrimSpace(k), "ttft") {
				o.TTFT = ms
			} else {
				o.TPOT = ms
			}
		case "tps", "tok/s", "user_tps":
			f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "tok/s"), 64)
			if err != nil || !(f > 0 && f <= 1e6) {
				return o, Usagef("slo tps=%s: want a positive rate up to 1e6", v)
			}
			o.MinUserTPS = planner.TokensPerSecond(f)
		default:
			return o, Usagef("slo: unknown key %q (ttft, tpot, tps)", k)
		}
	}
	return o, nil
}

// ParseDuration reads a latency: "500ms", "2s" or a bare number of
// milliseconds. Zero, negative, NaN and infinite values are refused, as are
// values above 10⁷ ms. The CLI and the desktop app both read targets with
// it, so "2s" means the same in both.
func ParseDuration(v string) (planner.Milliseconds, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v = strings.TrimSpace(strings.TrimSuffix(v, "ms"))
	case strings.HasSuffix(v, "s"):
		v, mult = strings.TrimSpace(strings.TrimSuffix(v, "s")), 1000
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || f*mult > 1e7 {
		return 0, fmt.Errorf("want a positive duration like 500ms or 2s")
	}
	return planner.Milliseconds(f * mult), nil
}

// ParseSize reads a memory size that must carry a unit ("64GiB", "64 GB",
// "512MiB"): a bare "64" is refused rather than read as 64 bytes.
func ParseSize(v string) (planner.Bytes, error) {
	t := strings.TrimSpace(v)
	if t == "" {
		return 0, Usagef("size %q: want a size like 64GiB", v)
	}
	if last := t[len(t)-1]; last >= '0' && last <= '9' {
		return 0, Usagef("size %q has no unit: write %sGiB (or GB, MiB)", v, t)
	}
	b, err := planner.ParseBytes(t)
	if err != nil || b <= 0 {
		return 0, Usagef("size %q: want a positive size like 64GiB", v)
	}
	return b, nil
}

// MachineSpec is one machine of a comparison: Count devices of a catalog
// entry, or the probed machine (This).
type MachineSpec struct {
	Hardware string
	Count    int
	This     bool
}

// ParseMachineList reads a comma-separated list of machines: catalog ids
// or name fragments, "NxID" for N devices, and "this" (or ".") for the
// probed machine. An empty list or an empty item is refused.
func ParseMachineList(s string) ([]MachineSpec, error) {
	var out []MachineSpec
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, Usagef("hardware list %q has an empty item; want e.g. rtx-4090,2xrtx-3090,this", s)
		}
		spec := MachineSpec{Hardware: item, Count: 1}
		if i := strings.IndexByte(strings.ToLower(item), 'x'); i > 0 {
			if n, err := strconv.Atoi(item[:i]); err == nil {
				if n < 1 || n > 64 {
					return nil, Usagef("hardware %q: use 1 to 64 devices", item)
				}
				spec.Count, spec.Hardware = n, strings.TrimSpace(item[i+1:])
			}
		}
		if spec.Hardware == "this" || spec.Hardware == "." {
			spec.Hardware, spec.This = "", true
		}
		if spec.Hardware == "" && !spec.This {
			return nil, Usagef("hardware %q names no device", item)
		}
		out = append(out, spec)
	}
	if len(out) == 0 {
		return nil, Usagef("no hardware to compare; want e.g. rtx-4090,2xrtx-3090,this")
	}
	return out, nil
}

// SplitList splits a comma-separated list (--engines, --quants), dropping
// empty items and surrounding spaces.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
