package endpoint

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// Samples are the measurements of one calibration run. A Samples value
// returned without error is complete: every step it lists ran to the end;
// the steps dropped to keep within the budget are named in Notes.
type Samples struct {
	URL           string           `json:"url"` // base URL, without user information
	Engine        planner.EngineID `json:"engine"`
	EngineVersion string           `json:"engine_version,omitempty"`
	Model         string           `json:"model"`
	Quant         string           `json:"quant,omitempty"` // as the server reports it, lower case
	API           API              `json:"api"`
	// ContextLength is the per-request context the server allows, when it
	// says (0: unknown); prompt lengths were capped to fit it.
	ContextLength planner.Tokens `json:"context_length,omitempty"`
	// ServerParallel is the number of requests the server ran at once: its
	// stated limit, or the most decode streams seen overlapping when a
	// sweep showed it queueing. 0: no limit seen.
	ServerParallel int             `json:"server_parallel,omitempty"`
	Started        time.Time       `json:"started"`
	Elapsed        time.Duration   `json:"elapsed_ns"`
	Budget         time.Duration   `json:"budget_ns"`
	Prefill        []PrefillSample `json:"prefill"`
	Decode         []DecodeSample  `json:"decode"`
	Notes          []string        `json:"notes,omitempty"`
}

// Request is the measurement of one streamed request.
type Request struct {
	// PromptTokens and GenTokens are the server's counts (usage,
	// prompt_eval_count, timings, details); PromptTokens is 0 when the
	// server did not report it, GenTokens then counts streamed chunks.
	PromptTokens planner.Tokens `json:"prompt_tokens"`
	GenTokens    planner.Tokens `json:"gen_tokens"`
	// Start is when the request was sent, from the start of its round.
	Start time.Duration `json:"start_ns"`
	// TTFT is send → first generated token, on the client.
	TTFT time.Duration `json:"ttft_ns"`
	// TPOT is (last token − first token)/(GenTokens − 1), on the client;
	// 0 with fewer than two tokens.
	TPOT time.Duration `json:"tpot_ns"`
	// ITL is the median gap between streamed chunks.
	ITL     time.Duration `json:"itl_ns"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Server timings, when the API reports them (Ollama, llama-server):
	// prompt processing and decode time and the tokens they cover.
	ServerPrefillTokens planner.Tokens `json:"server_prefill_tokens,omitempty"`
	ServerPrefill       time.Duration  `json:"server_prefill_ns,omitempty"`
	ServerDecodeTokens  planner.Tokens `json:"server_decode_tokens,omitempty"`
	ServerDecode        time.Duration  `json:"server_decode_ns,omitempty"`

	decodeFrom, decodeTo time.Time // first and last token, for overlap
}

// Rate sources of a sample.
const (
	SourceServer = "server" // the engine's own timings
	SourceClient = "client" // times seen by the client
)

// PrefillSample is the prefill speed at one prompt length: requests of
// Target tokens that generate one token, run one at a time.
type PrefillSample struct {
	Target planner.Tokens `json:"target_tokens"`
	// PromptTokens is the median prompt length the server reported (the
	// target when it reported none; see Notes).
	PromptTokens planner.Tokens `json:"prompt_tokens"`
	TTFT         time.Duration  `json:"ttft_ns"` // median, client
	// Rate is the median prompt tokens per second: from the server's
	// prompt time when it reports one (RateSource "server"), else prompt
	// tokens / TTFT ("client", which includes the first decode step and
	// the network).
	Rate       planner.TokensPerSecond `json:"rate_tps"`
	RateSource string                  `json:"rate_source"`
	Requests   []Request               `json:"requests"`
}

// DecodeSample is the decode speed at one concurrency: Concurrency requests
// sent together, each generating up to GenTokens tokens, for a few rounds.
type DecodeSample struct {
	Concurrency  int            `json:"concurrency"`
	PromptTokens planner.Tokens `json:"prompt_tokens"` // median, server count when given
	GenTokens    planner.Tokens `json:"gen_tokens"`    // median generated per request
	TTFT         time.Duration  `json:"ttft_ns"`       // median, client
	TPOT         time.Duration  `json:"tpot_ns"`       // median, client
	ITL          time.Duration  `json:"itl_ns"`        // median, client
	// Rate is the median decode tokens per second of one request (server
	// eval timings when reported, else 1/TPOT).
	Rate       planner.TokensPerSecond `json:"rate_tps"`
	RateSource string                  `json:"rate_source"`
	// TotalRate is all generated tokens of a round over its wall time
	// (first send to last token), median over rounds.
	TotalRate planner.TokensPerSecond `json:"total_rate_tps"`
	// Overlap is the most requests seen decoding at the same moment.
	Overlap  int       `json:"overlap"`
	Requests []Request `json:"requests"`
}

// Measurements turns the samples into rows of the measurement schema
// (benchmarks/README.md): pp_tps and ttft_ms per prompt length; tg_tps,
// total_out_tps, tpot_ms, itl_ms and ttft_ms per concurrency. Empty model
// or engine mean the ones the run detected. Source is "calibrate
// endpoint"; notes say where and how each figure was measured.
func (s Samples) Measurements(hw, model, engine string) []planner.Measurement {
	if model == "" {
		model = s.Model
	}
	if engine == "" {
		engine = string(s.Engine)
	}
	base := planner.Measurement{
		Hardware: hw, Devices: 1, Engine: engine, EngineVersion: s.EngineVersion,
		Model: model, Quant: s.Quant, Source: "calibrate endpoint",
	}
	where := fmt.Sprintf("measured %s against %s %s", s.Started.UTC().Format("2006-01-02"), s.URL, s.API.path())
	var rows []planner.Measurement
	row := func(m planner.Measurement, metric planner.Metric, v float64, unit, note string) {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		m.Metric, m.Value, m.Unit, m.Notes = metric, v, unit, where+"; "+note
		rows = append(rows, m)
	}
	for _, p := range s.Prefill {
		m := base
		m.PromptTokens, m.GenTokens, m.Concurrency = int(p.PromptTokens), 1, 1
		row(m, planner.MetricPP, float64(p.Rate), "tok/s", "rate from "+p.RateSource+" timings")
		row(m, planner.MetricTTFT, ms(p.TTFT), "ms", "client time to first token")
	}
	for _, d := range s.Decode {
		m := base
		m.PromptTokens, m.GenTokens, m.Concurrency = int(d.PromptTokens), int(d.GenTokens), d.Concurrency
		row(m, planner.MetricTG, float64(d.Rate), "tok/s", "rate per request from "+d.RateSource+" timings")
		row(m, planner.MetricTotalOut, float64(d.TotalRate), "tok/s", "all requests' tokens over the round's wall time")
		row(m, planner.MetricTPOT, ms(d.TPOT), "ms", "client time per output token")
		row(m, planner.MetricITL, ms(d.ITL), "ms", "client median inter-chunk latency")
		row(m, planner.MetricTTFT, ms(d.TTFT), "ms", fmt.Sprintf("client time to first token with %d requests at once", d.Concurrency))
	}
	return rows
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// prefillSample summarises the requests of one prefill step.
func prefillSample(target planner.Tokens, reqs []Request) PrefillSample {
	p := PrefillSample{Target: target, Requests: reqs, RateSource: SourceServer}
	var prompts []float64
	var ttfts []time.Duration
	var server, client []float64
	for _, r := range reqs {
		n := r.PromptTokens
		if n == 0 {
			n = target
		}
		prompts = append(prompts, float64(n))
		ttfts = append(ttfts, r.TTFT)
		if r.ServerPrefill > 0 && r.ServerPrefillTokens > 0 {
			server = append(server, float64(r.ServerPrefillTokens)/r.ServerPrefill.Seconds())
		}
		if r.TTFT > 0 {
			client = append(client, float64(n)/r.TTFT.Seconds())
		}
	}
	p.PromptTokens = planner.Tokens(math.Round(medianF(prompts)))
	p.TTFT = median(ttfts)
	rates := server
	if len(server) < len(reqs) {
		rates, p.RateSource = client, SourceClient
	}
	p.Rate = planner.TokensPerSecond(medianF(rates))
	return p
}

// decodeSample summarises the rounds of one decode step.
func decodeSample(conc int, rounds [][]Request) DecodeSample {
	d := DecodeSample{Concurrency: conc, RateSource: SourceServer}
	var prompts, gens, server, client, totals []float64
	var ttfts, tpots, itls []time.Duration
	timed := 0 // requests long enough to time decoding (two tokens or more)
	for _, round := range rounds {
		var wall time.Duration
		var sum float64
		for _, r := range round {
			d.Requests = append(d.Requests, r)
			prompts = append(prompts, float64(r.PromptTokens))
			gens = append(gens, float64(r.GenTokens))
			ttfts, itls = append(ttfts, r.TTFT), append(itls, r.ITL)
			sum += float64(r.GenTokens)
			wall = max(wall, r.Start+r.Elapsed)
			if r.GenTokens > 1 {
				timed++
			}
			if r.TPOT > 0 {
				tpots = append(tpots, r.TPOT)
				client = append(client, 1/r.TPOT.Seconds())
			}
			if r.ServerDecode > 0 && r.ServerDecodeTokens > 1 {
				server = append(server, float64(r.ServerDecodeTokens)/r.ServerDecode.Seconds())
			}
		}
		if wall > 0 {
			totals = append(totals, sum/wall.Seconds())
		}
		d.Overlap = max(d.Overlap, overlap(round))
	}
	d.PromptTokens = planner.Tokens(math.Round(medianF(prompts)))
	d.GenTokens = planner.Tokens(math.Round(medianF(gens)))
	d.TTFT, d.TPOT, d.ITL = median(ttfts), median(tpots), median(itls)
	// Server timings when every request that decoded at least two tokens
	// has them (a request ended at once by end-of-sequence times nothing).
	rates := server
	if len(server) == 0 || len(server) < timed {
		rates, d.RateSource = client, SourceClient
	}
	d.Rate = planner.TokensPerSecond(medianF(rates))
	d.TotalRate = planner.TokensPerSecond(medianF(totals))
	return d
}

// overlap is the most requests of a round decoding at the same moment
// (between their first and last token).
func overlap(round []Request) int {
	type edge struct {
		t     time.Time
		delta int
	}
	var edges []edge
	for _, r := range round {
		if r.decodeFrom.IsZero() || !r.decodeTo.After(r.decodeFrom) {
			continue
		}
		edges = append(edges, edge{r.decodeFrom, 1}, edge{r.decodeTo, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t.Equal(edges[j].t) {
			return edges[i].delta < edges[j].delta // ends before starts
		}
		return edges[i].t.Before(edges[j].t)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Table formats the samples for a terminal: one line per step.
func (s Samples) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s (%s", s.Model, s.URL, s.Engine)
	if s.EngineVersion != "" {
		fmt.Fprintf(&b, " %s", s.EngineVersion)
	}
	fmt.Fprintf(&b, ", %s), %.1fs of a %.0fs budget\n", s.API.path(), s.Elapsed.Seconds(), s.Budget.Seconds())
	fmt.Fprintf(&b, "%-10s %6s %6s %5s %12s %12s %10s %10s  %s\n", "step", "prompt", "gen", "conc", "tok/s", "total tok/s", "ttft ms", "tpot ms", "source")
	for _, p := range s.Prefill {
		fmt.Fprintf(&b, "%-10s %6d %6d %5d %12.1f %12s %10.1f %10s  %s\n", "prefill", p.PromptTokens, 1, 1, float64(p.Rate), "-", ms(p.TTFT), "-", p.RateSource)
	}
	for _, d := range s.Decode {
		fmt.Fprintf(&b, "%-10s %6d %6d %5d %12.1f %12.1f %10.1f %10.2f  %s\n", "decode", d.PromptTokens, d.GenTokens, d.Concurrency, float64(d.Rate), float64(d.TotalRate), ms(d.TTFT), ms(d.TPOT), d.RateSource)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
