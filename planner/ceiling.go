package planner

import (
	"fmt"
	"math"
)

// This file bounds what a measurement row can physically be under its
// own columns, whatever the engine: no efficiency, no fitted term, only
// the device's peak bandwidth and compute and the bytes and FLOPs the
// model must move for the row's tokens. A row beyond its bound was run
// with something its columns do not say (a smaller weight or KV format,
// speculative decoding, another device, a mislabelled metric); validate
// reports it, and it stays in every figure: rows are facts, the bound
// only says which of them the model cannot reach without a column more.

// ceilingSlack absorbs the catalog's rounding (format bits per weight,
// peak rates) before a row is called beyond its bound.
const ceilingSlack = 1.05

// PhysicalBound is a row's physical limit: the most its metric can be
// (a rate: tokens/s, tokens) or, with Floor, the least (a time).
type PhysicalBound struct {
	Value float64 `json:"value"`
	Floor bool    `json:"floor,omitempty"`
	// Why says which resource binds and the arithmetic behind it.
	Why string `json:"why"`
}

// Breached reports whether v lies beyond the bound by more than the
// catalog's rounding.
func (b PhysicalBound) Breached(v float64) bool {
	if !(b.Value > 0) || !(v > 0) {
		return false
	}
	if b.Floor {
		return v*ceilingSlack < b.Value
	}
	return v > b.Value*ceilingSlack
}

// String says the bound and why, for reports.
func (b PhysicalBound) String() string {
	side := "at most"
	if b.Floor {
		side = "at least"
	}
	return fmt.Sprintf("%s %.4g (%s)", side, b.Value, b.Why)
}

// RowBound is the physical limit of a measurement row under its stated
// columns (PhysicalBound), or false where the row's metric, lengths or
// catalog entries give none.
func RowBound(c *Catalog, m Measurement) (PhysicalBound, bool) {
	s, err := ScenarioFor(c, m)
	if err != nil || s.Hardware.Bandwidth() <= 0 {
		return PhysicalBound{}, false
	}
	d := float64(s.devices())
	bw := s.Hardware.Bandwidth() * d
	peak := 0.0
	if s.Hardware.Kind != KindCPU {
		// A CPU's listed rates leave out its integer dot products
		// (VNNI), which quantized GGUF prefill runs on: no compute bound.
		peak = maxPeak(s.Hardware) * d
	}
	w1 := minStepBytes(s)
	flops := prefillFLOPsPerToken(s.Model)
	kvb := fullKVBytesPerToken(s)
	depth := float64(m.ContextDepth)
	switch m.Metric {
	case MetricTG:
		// Each decode step reads the weights once and the sequence's KV
		// (modeling.md §3.1), so one sequence gets at most one token per
		// such read at the devices' summed peak bandwidth.
		bytes := w1 + depth*kvb
		return PhysicalBound{Value: bw / bytes, Why: fmt.Sprintf("%s of weights and KV per token at %.0f GB/s", Bytes(bytes), bw/1e9)}, true
	case MetricTPOT, MetricITL:
		return PhysicalBound{Value: w1 / bw * 1000, Floor: true, Why: fmt.Sprintf("one read of %s of weights per step at %.0f GB/s", Bytes(w1), bw/1e9)}, true
	case MetricPP:
		if peak <= 0 {
			return PhysicalBound{}, false
		}
		return PhysicalBound{Value: peak / flops, Why: fmt.Sprintf("%.3g GFLOP per prompt token at %.0f TFLOPS", flops/1e9, peak/1e12)}, true
	case MetricTTFT:
		if peak <= 0 || m.PromptTokens <= 0 {
			return PhysicalBound{}, false
		}
		return PhysicalBound{Value: float64(m.PromptTokens) * flops / peak * 1000, Floor: true, Why: fmt.Sprintf("%d prompt tokens at %.3g GFLOP each, %.0f TFLOPS", m.PromptTokens, flops/1e9, peak/1e12)}, true
	case MetricTotalOut:
		return outputBound(m, WorkloadKindOf(m).Serving(), bw, peak, flops, kvb, depth)
	case MetricKV:
		per := float64(KVBytesPerToken(s.Model, s.KV, s.devices()))
		if per <= 0 {
			return PhysicalBound{}, false
		}
		return PhysicalBound{Value: float64(s.Hardware.Memory) / per, Why: fmt.Sprintf("%s per device at %s per token", s.Hardware.Memory, Bytes(per))}, true
	}
	return PhysicalBound{}, false
}

// outputBound bounds a run's output tokens/s, whatever its batch: every
// output token reads its sequence's KV, on average prompt + (gen−1)/2
// tokens of it over the request's decode, so the devices' bandwidth over
// those bytes caps the rate even at a batch that makes the weights' read
// free; and every output token costs the model's FLOPs, as does every
// prompt token where the rate is over the run's wall time (a serving run;
// llama-batched-bench's S_TG counts the decode alone).
func outputBound(m Measurement, serving bool, bw, peak, flops, kvb, depth float64) (PhysicalBound, bool) {
	if m.GenTokens <= 0 || m.PromptTokens <= 0 {
		return PhysicalBound{}, false
	}
	p, g := float64(m.PromptTokens)+depth, float64(m.GenTokens)
	b := PhysicalBound{Value: math.Inf(1)}
	if kvb > 0 {
		per := (p + (g-1)/2) * kvb
		b = PhysicalBound{Value: bw / per, Why: fmt.Sprintf("%s of KV read per output token at %.0f GB/s", Bytes(per), bw/1e9)}
	}
	if peak > 0 {
		tokens, why := g, "per output token"
		if serving {
			tokens, why = p+g, fmt.Sprintf("per token for %.0f+%.0f tokens a request", p, g)
		}
		if v := peak * g / (tokens * flops); v < b.Value {
			b = PhysicalBound{Value: v, Why: fmt.Sprintf("%.3g GFLOP %s at %.0f TFLOPS", flops/1e9, why, peak/1e12)}
		}
	}
	return b, !math.IsInf(b.Value, 0)
}

// maxPeak is the device's highest dense tensor rate in FLOP/s over every
// precision it lists: no format computes faster, so it only loosens a
// bound.
func maxPeak(h Hardware) float64 {
	p := 0.0
	for _, v := range h.TFLOPS {
		p = math.Max(p, v)
	}
	return p * 1e12
}

// minStepBytes is the least a decode step reads in all: the streamed
// weights and the experts one token routes to, over every device
// (newWeightTraffic, per device, times the devices sharing a step).
func minStepBytes(s Scenario) float64 {
	return newWeightTraffic(s).bytes(s.Model, 1) * float64(speedDevices(s))
}

// prefillFLOPsPerToken is the least a prompt token costs: two FLOPs per
// active parameter outside the embedding and output head (the head runs
// for the last token only; attention's n² share is left out).
func prefillFLOPsPerToken(m Model) float64 {
	return 2 * math.Max(float64(m.active()-m.EmbeddingParams()), 1)
}

// fullKVBytesPerToken is the KV one cached token adds in the layers that
// attend to the whole context, over every device: sliding-window and
// recurrent layers read a bounded state, so leaving them out keeps the
// bound a bound.
func fullKVBytesPerToken(s Scenario) float64 {
	return KVBytesPerTokenLayer(s.Model, s.KV, 1) * float64(s.Model.fullLayers())
}
