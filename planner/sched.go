package planner

import (
	"math"
	"sort"
)

// This file is the scheduler side of the speed model: how a continuously
// batching engine admits requests (running-sequence cap, KV pool, per-step
// token budget with chunked prefill) and what that does to a burst of
// prompts sent at once. The step times come from perfModel (perf.go).

// schedLimits are the engine's batching limits for one scenario.
type schedLimits struct {
	maxSeqs int // running sequences (vLLM max_num_seqs, SGLang max_running_requests, TRT-LLM max_batch_size)
	budget  int // prompt tokens per step (vLLM max_num_batched_tokens, SGLang chunked_prefill_size, TRT-LLM max_num_tokens)
}

// limitsFor are the engine's batching limits for a scenario: its rules'
// schedLimits (rules_*.go, with their sources), or one sequence for an
// engine without rules. A GGML server runs as many sequences at once as
// it has slots, and a scenario's concurrency is the slots its launch
// command gives it (llama-server -np, OLLAMA_NUM_PARALLEL: launchIn.conc);
// the rules' 4 is what a server left on auto runs. Capped at its rules'
// 4, a burst of 100 prompts planned for llama.cpp ran 4 at a time while
// the KV cache was sized for all 100 (-c 153600 over -np 4).
func limitsFor(s Scenario) schedLimits {
	r, ok := rulesFor(s.Engine.Policy)
	if !ok {
		return schedLimits{maxSeqs: 1, budget: 1 << 20}
	}
	l := r.schedLimits(s)
	if s.Engine.IsGGML() && s.Concurrency > 0 {
		l.maxSeqs = s.Concurrency
	}
	return l
}

// residentContext is the mean context a running request holds in the KV
// pool under continuous batching: its depth and prompt, and on average
// half its generation, since requests in a steady stream are spread over
// their decode (PagedAttention allocates blocks as tokens are generated,
// vLLM's block manager; the scheduler admits on current usage).
func residentContext(w Workload) Tokens {
	return w.Depth + w.Prompt + Tokens(genTokens(w)/2)
}

// kvSequences is how many requests of ctx resident tokens the KV pool
// holds at once (Fit's MaxConcurrencyAtContext), at most limit.
func kvSequences(s Scenario, ctx Tokens, limit int) int {
	s.Context = max(ctx, 1)
	s.Concurrency = limit
	r, err := Fit(s)
	if err != nil || r.MaxConcurrencyAtContext <= 0 {
		return 1
	}
	return min(limit, r.MaxConcurrencyAtContext)
}

// admissionCap is the most requests the engine runs at once for a
// workload: its sequence cap, or what the KV pool holds, whichever binds.
func admissionCap(s Scenario, w Workload) int {
	return max(kvSequences(s, residentContext(w), limitsFor(s).maxSeqs), 1)
}

// chunkedPrefillMs is the time to prefill b prompts of n tokens at
// depth d in steps of at most budget tokens: each step pays the fixed
// step cost and at least one read of the weights; the linear layers'
// FLOPs scale with all b·n tokens and attention with each sequence's n²
// (prefillBatchWith's terms, split into steps).
func (pm perfModel) chunkedPrefillMs(n Tokens, b, budget int) float64 {
	if n <= 0 || b <= 0 {
		return 0
	}
	tot := float64(n) * float64(b)
	steps := math.Ceil(tot / float64(max(budget, 1)))
	chunk := math.Min(float64(max(budget, 1)), tot)
	read := pm.wt.bytes(pm.s.Model, int(chunk)) / (pm.bw * pm.effD) * 1000
	return steps*pm.ovh + math.Max(steps*read, pm.batchPrefillCompute(n, b)) + allReduceMs(pm.s, tot)
}

// predictBurst predicts N = w.Burst prompts sent at once with no rate
// limit and no concurrency cap (`vllm bench serve --request-rate inf`).
// The engine admits up to admissionCap; the rest wait for slots. Each
// wave prefills its prompts in budget-sized chunks, request j of b
// getting its first token after (j+1)/b of the wave's prefill, and the
// requests that already have one decode a token in each of the remaining
// prefill steps where the engine mixes them (chunked prefill rides with
// decodes; a prefill-first engine pauses them, mixedSteps); then the wave
// decodes at its batch. The engine loop's work of admitting the wave's
// requests (admitOverheadMs) lengthens its prefill, as it runs between
// the same steps. Slots free, on average, when the wave's requests
// finish, which starts the next wave. TTFT includes the wait for a slot,
// and request i reaches the engine no sooner than i front-end admissions
// (requestOverheadMs) after the burst.
// Mean or median per w.Median.
func predictBurst(pm perfModel, w Workload) Prediction {
	pm = pm.forWorkload(w)
	n := max(w.Burst, 1)
	capN := min(admissionCap(pm.s, w), n)
	w.Concurrency = capN
	lim := limitsFor(pm.s)
	gen := genTokens(w)
	ctx := float64(w.Depth) + float64(w.Prompt) + gen/2
	ttft := make([]float64, 0, n)
	tpot := make([]float64, 0, n)
	var e2eSum, end, start float64
	for done := 0; done < n; {
		b := min(capN, n-done)
		pre := pm.chunkedPrefillMs(w.Prompt, b, lim.budget) + float64(b)*pm.admitOvh
		steps := math.Ceil(float64(w.Prompt) * float64(b) / float64(max(lim.budget, 1)))
		step, _ := pm.decodeStep(b, ctx)
		var finishSum float64
		for j := 0; j < b; j++ {
			// The front end hands requests over one at a time.
			first := math.Max(start+pre*float64(j+1)/float64(b), float64(done+j+1)*pm.reqOvh)
			// Tokens decoded during the prefill steps still to come: one
			// per step where the engine mixes prefill chunks into decode
			// steps; none where it runs waiting prefills first
			// (mixedSteps: SGLang, vLLM V0 without chunking, TGI 2), so a
			// request that has its first token waits out the wave's
			// remaining prefill.
			during := 0.0
			if pm.mixed {
				during = math.Min(steps*float64(b-1-j)/float64(b), gen-1)
			}
			last := math.Max(start+pre+(gen-1-during)*step, first+(gen-1)*step)
			ttft = append(ttft, first)
			if gen > 1 {
				tpot = append(tpot, (last-first)/(gen-1))
			}
			e2eSum += last
			finishSum += last
			end = math.Max(end, last)
		}
		start = finishSum / float64(b)
		done += b
	}
	return burstPrediction(pm, w, ttft, tpot, e2eSum/float64(n), end, n)
}

// burstPrediction assembles a burst's figures from its requests' TTFTs
// and TPOTs (ms), mean end-to-end time and makespan.
func burstPrediction(pm perfModel, w Workload, ttft, tpot []float64, e2e, makespan float64, n int) Prediction {
	gen := genTokens(w)
	stat := meanOf
	if w.Median {
		stat = medianOf
	}
	t1 := stat(ttft)
	tp := stat(tpot)
	if len(tpot) == 0 {
		tp, _ = pm.decodeStep(1, float64(w.Prompt))
	}
	step, bound := pm.decodeStep(w.Concurrency, float64(w.Prompt)+gen/2)
	return Prediction{
		PrefillTPS:  TokensPerSecond(math.Max(float64(w.Prompt), 1) / pm.prefill(math.Max(float64(w.Prompt), 1), float64(w.Depth)) * 1000),
		DecodeTPS:   TokensPerSecond(1000 / tp),
		RequestTPS:  TokensPerSecond(gen / e2e * 1000),
		TotalTPS:    TokensPerSecond(float64(n) * gen / makespan * 1000),
		TTFT:        Milliseconds(t1),
		TPOT:        Milliseconds(tp),
		StepMs:      Milliseconds(step),
		ReqPerS:     float64(n) / makespan * 1000,
		Bound:       bound,
		DecodeEff:   pm.effD,
		PrefillEff:  pm.effP,
		Source:      pm.source,
		Concurrency: w.Concurrency,
	}
}

// meanOf is the arithmetic mean of xs (0 for none).
func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// medianOf is the median of xs (0 for none); xs is reordered.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	h := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[h]
	}
	return (xs[h-1] + xs[h]) / 2
}
