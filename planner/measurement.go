package planner

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

// Measurement is one row of the measurement schema
// (hardware,devices,engine,backend,engine_version,model,quant,kv_type,
// prompt_tokens,gen_tokens,concurrency,context_depth,metric,value,unit,
// source,notes). Zero PromptTokens/GenTokens mean "not stated";
// Concurrency 0 means 1.
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
}

// MeasurementHeader is the CSV header of the schema, in order.
var MeasurementHeader = []string{"hardware", "devices", "engine", "backend", "engine_version", "model", "quant", "kv_type", "prompt_tokens", "gen_tokens", "concurrency", "context_depth", "metric", "value", "unit", "source", "notes"}
