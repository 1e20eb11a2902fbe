package planner_test

import (
	"math"
	"testing"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles/measurements"
)

// The physical bound of a row under its own columns, worked by hand from
// the catalog's device and model facts.
func TestRowBound(t *testing.T) {
	c := catalog(t)
	h100 := "nvidia-h100-sxm5-80gb"
	llama8 := "meta-llama/Llama-3.1-8B-Instruct"
	// Llama-3.1-8B's KV: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes
	// = 131072 bytes a token; an H100 SXM reads 3350 GB/s.
	kv := 32 * 8 * 128 * 2 * 2.0
	cases := []struct {
		name     string
		m        planner.Measurement
		want     float64 // the bound; 0 = none
		tol      float64 // relative
		floor    bool
		breached bool
	}{
		{"TensorRT-LLM offline 20000/2000 with an f16 KV: the KV read per output token caps it below the published 1351 tok/s",
			planner.Measurement{Hardware: h100, Devices: 1, Engine: "trtllm", Model: llama8, Quant: "fp8", KVType: "f16", PromptTokens: 20000, GenTokens: 2000,
				Metric: planner.MetricTotalOut, Value: 1351, Scenario: planner.WorkloadOffline},
			3350e9 / ((20000 + 1999.0/2) * kv), 0.01, false, true},
		{"the same run with an FP8 KV cache has room for it",
			planner.Measurement{Hardware: h100, Devices: 1, Engine: "trtllm", Model: llama8, Quant: "fp8", KVType: "fp8", PromptTokens: 20000, GenTokens: 2000,
				Metric: planner.MetricTotalOut, Value: 1351, Scenario: planner.WorkloadOffline},
			2 * 3350e9 / ((20000 + 1999.0/2) * kv), 0.01, false, false},
		{"single-stream decode: one read of about 16 GB of BF16 weights a token",
			planner.Measurement{Hardware: h100, Devices: 1, Engine: "vllm", Model: llama8, Quant: "bf16", Metric: planner.MetricTG, Value: 150, Scenario: planner.WorkloadSingle},
			3350e9 / 15.0e9, 0.08, false, false},
		{"TPOT cannot beat one read of the weights",
			planner.Measurement{Hardware: h100, Devices: 1, Engine: "vllm", Model: llama8, Quant: "bf16", Metric: planner.MetricTPOT, Value: 2, Scenario: planner.WorkloadClosed, Concurrency: 4},
			15.0e9 / 3350e9 * 1000, 0.08, true, true},
		{"no lengths, no bound on a serving run's output",
			planner.Measurement{Hardware: h100, Devices: 1, Engine: "vllm", Model: llama8, Quant: "bf16", Metric: planner.MetricTotalOut, Value: 1e9, Scenario: planner.WorkloadRate, RequestRate: 4},
			0, 0, false, false},
		{"an unknown device bounds nothing",
			planner.Measurement{Hardware: "no-such-gpu", Devices: 1, Engine: "vllm", Model: llama8, Quant: "bf16", Metric: planner.MetricTG, Value: 1e9},
			0, 0, false, false},
	}
	for _, tc := range cases {
		b, ok := planner.RowBound(c, tc.m)
		if tc.want == 0 {
			if ok {
				t.Errorf("%s: bound %v, want none", tc.name, b)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no bound", tc.name)
			continue
		}
		if math.Abs(b.Value/tc.want-1) > tc.tol || b.Floor != tc.floor {
			t.Errorf("%s: %v, want %.4g (floor %v) within %.0f%%", tc.name, b, tc.want, tc.floor, tc.tol*100)
		}
		if got := b.Breached(tc.m.Value); got != tc.breached {
			t.Errorf("%s: breached %v at %g, want %v (%v)", tc.name, got, tc.m.Value, tc.breached, b)
		}
	}
}

// No prediction of a published row lies beyond the physical bound of the
// row's own columns: a refit that needed an efficiency above the device's
// peak would show here first. Validate lists the published rows that do
// lie beyond theirs, and keeps them in every figure.
func TestPredictionsWithinPhysicalBounds(t *testing.T) {
	c := catalog(t)
	rows, _, err := measurements.LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	bounded := 0
	for _, m := range rows {
		b, ok := planner.RowBound(c, m)
		if !ok {
			continue
		}
		bounded++
		v, err := planner.PredictMeasurement(c, m, c.Perf)
		if err != nil {
			continue
		}
		if b.Breached(v) {
			t.Errorf("%s %s %s %s %s p%d g%d c%d: predicted %.4g, %v", m.Metric, m.Hardware, m.Engine, m.Model, m.Quant,
				m.PromptTokens, m.GenTokens, m.Concurrency, v, b)
		}
	}
	if bounded < len(rows)/2 {
		t.Errorf("only %d of %d rows have a physical bound", bounded, len(rows))
	}
	t.Logf("%d of %d rows bounded", bounded, len(rows))
}
