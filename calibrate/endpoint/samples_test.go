package endpoint

import (
	"testing"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

func TestDecodeSample(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// req generates gen tokens from first to last (ms from t0) with server
	// decode timing over serverMS (0: none).
	req := func(gen, first, last, serverMS int) Request {
		r := Request{GenTokens: planner.Tokens(gen), PromptTokens: 70, TTFT: time.Duration(first) * time.Millisecond,
			Elapsed: time.Duration(last+1) * time.Millisecond, decodeFrom: at(first), decodeTo: at(last)}
		if gen > 1 {
			r.TPOT = time.Duration(last-first) * time.Millisecond / time.Duration(gen-1)
		}
		if serverMS > 0 {
			r.ServerDecodeTokens, r.ServerDecode = planner.Tokens(gen), time.Duration(serverMS)*time.Millisecond
		}
		return r
	}
	tests := []struct {
		name        string
		rounds      [][]Request
		wantRate    float64 // tok/s, ±0.1%
		wantSource  string
		wantTotal   float64
		wantOverlap int
	}{
		{
			name:     "server timings",
			rounds:   [][]Request{{req(11, 10, 110, 50), req(11, 10, 110, 50)}},
			wantRate: 220, wantSource: SourceServer, wantTotal: 22 / 0.111, wantOverlap: 2,
		},
		{
			name: "an end-of-sequence request does not force client timing",
			// The second request ended after one token: nothing to time.
			rounds:   [][]Request{{req(11, 10, 110, 50), req(1, 10, 10, 0)}},
			wantRate: 220, wantSource: SourceServer, wantTotal: 12 / 0.111, wantOverlap: 1,
		},
		{
			name:     "one timed request without server timing: client",
			rounds:   [][]Request{{req(11, 10, 110, 50), req(11, 10, 210, 0)}},
			wantRate: (100 + 50) / 2.0, wantSource: SourceClient, wantTotal: 22 / 0.211, wantOverlap: 2,
		},
		{
			name:     "queued requests do not overlap",
			rounds:   [][]Request{{req(11, 10, 110, 0), req(11, 120, 220, 0)}},
			wantRate: 100, wantSource: SourceClient, wantTotal: 22 / 0.221, wantOverlap: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decodeSample(2, tc.rounds)
			if !within(float64(d.Rate), tc.wantRate, 0.001) || d.RateSource != tc.wantSource {
				t.Errorf("rate %v from %q, want %v from %q", float64(d.Rate), d.RateSource, tc.wantRate, tc.wantSource)
			}
			if !within(float64(d.TotalRate), tc.wantTotal, 0.001) {
				t.Errorf("total %v, want %v", float64(d.TotalRate), tc.wantTotal)
			}
			if d.Overlap != tc.wantOverlap {
				t.Errorf("overlap %d, want %d", d.Overlap, tc.wantOverlap)
			}
		})
	}
}

func TestPrefillSample(t *testing.T) {
	reqs := []Request{
		{PromptTokens: 100, TTFT: 20 * time.Millisecond, ServerPrefillTokens: 100, ServerPrefill: 10 * time.Millisecond},
		{PromptTokens: 102, TTFT: 30 * time.Millisecond, ServerPrefillTokens: 102, ServerPrefill: 12 * time.Millisecond},
	}
	p := prefillSample(96, reqs)
	// Median of 10000 and 8500 tok/s; median of the counts the server gave.
	if p.RateSource != SourceServer || !within(float64(p.Rate), 9250, 0.001) || p.PromptTokens != 101 || p.TTFT != 25*time.Millisecond {
		t.Errorf("got %+v", p)
	}
	reqs[1].ServerPrefill = 0
	p = prefillSample(96, reqs)
	// Client: 100/0.020 = 5000 and 102/0.030 = 3400.
	if p.RateSource != SourceClient || !within(float64(p.Rate), 4200, 0.001) {
		t.Errorf("without server timing on every request: rate %v from %q, want 4200 from client", p.Rate, p.RateSource)
	}
	p = prefillSample(96, []Request{{TTFT: 48 * time.Millisecond}})
	if p.PromptTokens != 96 || !within(float64(p.Rate), 2000, 0.001) {
		t.Errorf("without server counts the target stands in: %+v", p)
	}
}
