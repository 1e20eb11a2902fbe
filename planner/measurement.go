package planner

import (
	"fmt"
	"strings"
)

// Metric names a measured or predicted quantity (benchmarks/README.md).
type Metric string

// Metrics of the measurement schema.
const (
	MetricPP       Metric = "pp_tps"        // prefill tokens/s (aggregate over sequences)
	MetricTG       Metric = "tg_tps"        // decode tokens/s of one request
	MetricTotalOut Metric = "total_out_tps" // decode tokens/s of all requests
	MetricTTFT     Metric = "ttft_ms"
	MetricTPOT     Metric = "tpot_ms"
	MetricITL      Metric = "itl_ms"
	MetricKV       Metric = "kv_tokens"
	MetricReqPerS  Metric = "req_per_s"
)

// Metrics lists every metric in report order.
var Metrics = []Metric{MetricTG, MetricPP, MetricTotalOut, MetricTTFT, MetricTPOT, MetricITL, MetricKV, MetricReqPerS}

// Title is the metric as a screen names it ("decode", "TPOT"); a metric
// outside the schema is its own name.
func (m Metric) Title() string {
	switch m {
	case MetricPP:
		return "prefill"
	case MetricTG:
		return "decode"
	case MetricTotalOut:
		return "output throughput"
	case MetricTTFT:
		return "TTFT"
	case MetricTPOT:
		return "TPOT"
	case MetricITL:
		return "ITL"
	case MetricKV:
		return "KV capacity"
	case MetricReqPerS:
		return "requests/s"
	}
	return string(m)
}

// WorkloadKind is the workload a measured run applied (the schema's
// `scenario` column, benchmarks/README.md). The zero value means the row
// does not say; WorkloadKindOf then infers it from the other columns.
type WorkloadKind string

// Scenario kinds of the measurement schema.
const (
	// WorkloadSingle is one request or stream at a time (llama-bench ppN/tgN,
	// sweep-bench, `--max-concurrency 1`).
	WorkloadSingle WorkloadKind = "single"
	// WorkloadBatched is B sequences in lock-step with no arrivals
	// (llama-batched-bench, TGI's benchmark batch sizes).
	WorkloadBatched WorkloadKind = "batched"
	// WorkloadClosed is N clients, each sending its next request when its
	// last one ends (`vllm bench serve --max-concurrency N`).
	WorkloadClosed WorkloadKind = "closed"
	// WorkloadBurst is N prompts sent at once with no rate limit and no
	// concurrency cap (`vllm bench serve --request-rate inf`).
	WorkloadBurst WorkloadKind = "burst"
	// WorkloadRate is open-loop Poisson arrivals at RequestRate requests/s.
	WorkloadRate WorkloadKind = "rate"
	// WorkloadOffline is a max-throughput run fed every request
	// (trtllm-bench, `vllm bench throughput`, MLPerf Offline).
	WorkloadOffline WorkloadKind = "offline"
	// WorkloadCapacity is a KV-capacity figure.
	WorkloadCapacity WorkloadKind = "capacity"
)

// WorkloadKinds lists every kind in report order.
var WorkloadKinds = []WorkloadKind{WorkloadSingle, WorkloadBatched, WorkloadClosed, WorkloadBurst, WorkloadRate, WorkloadOffline, WorkloadCapacity}

// ParseWorkloadKind reads a `scenario` cell; blank is the zero kind.
func ParseWorkloadKind(s string) (WorkloadKind, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", nil
	}
	for _, k := range WorkloadKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown scenario %q (want one of single, batched, closed, burst, rate, offline, capacity)", s)
}

// Plural names the runs of a kind in a sentence ("closed loops of users").
func (k WorkloadKind) Plural() string {
	switch k {
	case WorkloadSingle:
		return "single streams"
	case WorkloadBatched:
		return "batched benchmarks"
	case WorkloadClosed:
		return "closed loops of users"
	case WorkloadBurst:
		return "bursts of prompts sent at once"
	case WorkloadRate:
		return "requests arriving at a rate"
	case WorkloadOffline:
		return "offline batch runs"
	case WorkloadCapacity:
		return "KV capacity figures"
	}
	return string(k)
}

// Serving reports whether requests of this kind arrive at a continuously
// batching server (their prefills interleave with others' decodes).
func (k WorkloadKind) Serving() bool {
	return k == WorkloadClosed || k == WorkloadBurst || k == WorkloadRate || k == WorkloadOffline
}

// Lengths says whether every request of a run had the stated lengths.
type Lengths string

// Lengths values of the schema; the zero value means unstated (fixed).
const (
	LengthsFixed    Lengths = "fixed"
	LengthsVariable Lengths = "variable"
)

// ParseLengths reads a `lengths` cell; blank is the zero value.
func ParseLengths(s string) (Lengths, error) {
	switch l := Lengths(strings.ToLower(strings.TrimSpace(s))); l {
	case "", LengthsFixed, LengthsVariable:
		return l, nil
	}
	return "", fmt.Errorf("unknown lengths %q (want fixed or variable)", s)
}

// Statistic is which statistic of a per-request figure a row reports.
type Statistic string

// Statistics of the schema; the zero value means unstated or a run
// aggregate.
const (
	StatMean   Statistic = "mean"
	StatMedian Statistic = "median"
	StatP90    Statistic = "p90"
	StatP99    Statistic = "p99"
)

// ParseStatistic reads a `statistic` cell; blank is the zero value.
func ParseStatistic(s string) (Statistic, error) {
	switch st := Statistic(strings.ToLower(strings.TrimSpace(s))); st {
	case "", StatMean, StatMedian, StatP90, StatP99:
		return st, nil
	}
	return "", fmt.Errorf("unknown statistic %q (want mean, median, p90 or p99)", s)
}

// Measurement is one row of the measurement schema
// (hardware,devices,engine,backend,engine_version,model,quant,kv_type,
// prompt_tokens,gen_tokens,concurrency,context_depth,metric,value,unit,
// source,notes,scenario,request_rate,num_prompts,lengths,statistic).
// Zero PromptTokens/GenTokens mean "not stated"; Concurrency 0 means 1
// (or "none" for rate and offline runs). Notes and Source are the human
// record: nothing that predicts a row reads them.
type Measurement struct {
	Hardware      string  `json:"hardware"`
	Devices       int     `json:"devices"`
	Engine        string  `json:"engine"`
	Backend       string  `json:"backend"`
	EngineVersion string  `json:"engine_version"`
	Model         string  `json:"model"`
	Quant         string  `json:"quant"`
	KVType        string  `json:"kv_type"`
	PromptTokens  int     `json:"prompt_tokens,omitempty"`
	GenTokens     int     `json:"gen_tokens,omitempty"`
	Concurrency   int     `json:"concurrency,omitempty"`
	ContextDepth  int     `json:"context_depth"`
	Metric        Metric  `json:"metric"`
	Value         float64 `json:"value"`
	Unit          string  `json:"unit"`
	Source        string  `json:"source"`
	Notes         string  `json:"notes,omitempty"`
	// Scenario is the workload the run applied; blank: inferred
	// (WorkloadKindOf).
	Scenario WorkloadKind `json:"scenario,omitempty"`
	// RequestRate is the offered load of a rate run, requests/s.
	RequestRate float64 `json:"request_rate,omitempty"`
	// NumPrompts is the number of requests in the run, when stated.
	NumPrompts int `json:"num_prompts,omitempty"`
	// Lengths says whether request lengths were fixed or varied (then
	// PromptTokens and GenTokens are means).
	Lengths Lengths `json:"lengths,omitempty"`
	// Statistic is mean, median, p90 or p99 for per-request figures.
	Statistic Statistic `json:"statistic,omitempty"`
}

// MeasurementHeader is the CSV header of the schema, in order.
var MeasurementHeader = []string{"hardware", "devices", "engine", "backend", "engine_version", "model", "quant", "kv_type", "prompt_tokens", "gen_tokens", "concurrency", "context_depth", "metric", "value", "unit", "source", "notes", "scenario", "request_rate", "num_prompts", "lengths", "statistic"}

// WorkloadKindOf is the row's scenario: its column, or, for rows written
// before the column existed, what the other columns imply (a kv_tokens
// row is capacity; a rate stated is rate; concurrency above one with a
// prompt is closed, without one batched; else single).
func WorkloadKindOf(m Measurement) WorkloadKind {
	switch {
	case m.Scenario != "":
		return m.Scenario
	case m.Metric == MetricKV:
		return WorkloadCapacity
	case m.RequestRate > 0:
		return WorkloadRate
	case m.Concurrency > 1 && m.PromptTokens > 0 && m.Metric != MetricPP:
		return WorkloadClosed
	case m.Concurrency > 1:
		return WorkloadBatched
	}
	return WorkloadSingle
}
