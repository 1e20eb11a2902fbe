package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// Request is the JSON body of fit, plan, compare and flags. Every key is
// the CLI flag's long name (`--kv-type` is "kv-type"); values are written
// as on the command line ("context": "32k", "workload":
// "prompt=1024,gen=256,users=8"). Zero values mean the CLI's defaults.
// Keys an endpoint does not use are ignored; unknown keys are refused.
type Request struct {
	Model         string  `json:"model,omitempty" jsonschema:"model catalog id or name fragment, e.g. meta-llama/Llama-3.1-8B-Instruct"`
	Hardware      string  `json:"hardware,omitempty" jsonschema:"hardware catalog id or name fragment (compare: a comma-separated list, NxID for N devices, this for the server's machine); empty = the server's machine, probed"`
	Devices       int     `json:"devices,omitempty" jsonschema:"number of devices (tensor parallel degree), 1 to 64"`
	Nodes         int     `json:"nodes,omitempty" jsonschema:"plan: machines one replica may span (pipeline parallel, llama.cpp RPC), 1 to 64"`
	NodeLink      string  `json:"node-link,omitempty" jsonschema:"plan: network between nodes: ib400, ib200, roce400, roce200, eth100, eth25, eth10"`
	Engine        string  `json:"engine,omitempty" jsonschema:"engine: vllm, llama.cpp, ollama, sglang, tgi, transformers, trtllm"`
	Backend       string  `json:"backend,omitempty" jsonschema:"backend: cuda, rocm, vulkan, metal, sycl, cpu"`
	Quant         string  `json:"quant,omitempty" jsonschema:"weight format, e.g. bf16, fp8, awq-int4, q4_k_m"`
	KVType        string  `json:"kv-type,omitempty" jsonschema:"KV-cache type: f16, bf16, fp8, q8_0, q4_0"`
	EngineVersion string  `json:"engine-version,omitempty" jsonschema:"engine release the rules and predictions follow (fit: that engine's; plan, compare: vllm=0.6.0,llama.cpp=b4000, or one release for emit or the single engine in engines)"`
	Context       Tokens  `json:"context,omitempty" jsonschema:"context per sequence, e.g. 8192 or 32k (default: the largest that fits)"`
	CtxSize       Tokens  `json:"ctx-size,omitempty" jsonschema:"llama.cpp -c total KV cells"`
	Concurrency   int     `json:"concurrency,omitempty" jsonschema:"concurrent sequences (users)"`
	Users         int     `json:"users,omitempty" jsonschema:"the same as concurrency"`
	GPUMemUtil    float64 `json:"gpu-memory-utilization,omitempty" jsonschema:"vLLM --gpu-memory-utilization, 0 to 1"`
	GPULayers     int     `json:"gpu-layers,omitempty" jsonschema:"llama.cpp -ngl"`
	NCPUMoE       int     `json:"n-cpu-moe,omitempty" jsonschema:"llama.cpp --n-cpu-moe"`
	KVUnified     bool    `json:"kv-unified,omitempty" jsonschema:"llama-server --kv-unified"`
	HostMemory    string  `json:"host-memory,omitempty" jsonschema:"system RAM for offload, e.g. 64GiB"`
	HostBandwidth float64 `json:"host-bandwidth,omitempty" jsonschema:"system RAM bandwidth in GB/s"`
	Workload      string  `json:"workload,omitempty" jsonschema:"plan/compare: prompt=TOKENS,gen=TOKENS,users=N or rate=REQ/S"`
	SLO           string  `json:"slo,omitempty" jsonschema:"plan/compare: ttft=500ms,tpot=50ms or tps=20"`
	Engines       string  `json:"engines,omitempty" jsonschema:"plan/compare: only these engines, comma-separated"`
	Quants        string  `json:"quants,omitempty" jsonschema:"plan/compare: only these weight formats, comma-separated"`
	Docker        bool    `json:"docker,omitempty" jsonschema:"flags, export: the official container image instead of a native command"`
	Emit          string  `json:"emit,omitempty" jsonschema:"export: the best plan of this engine (default: the best of any)"`
	Format        string  `json:"format,omitempty" jsonschema:"export: toml, json or sh (plan --export FILE.toml|.json|.sh)"`
}

// Tokens is a token count written as on the command line: a JSON string
// ("32k", "8192") or a JSON number (8192).
type Tokens string

// UnmarshalJSON accepts a string or a non-negative integer; null, as for
// every other key, leaves it unset.
func (t *Tokens) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Tokens(s)
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 63)
	if err != nil {
		return fmt.Errorf("want a token count like 8192 or \"32k\", got %.40s", b)
	}
	*t = Tokens(strconv.FormatUint(n, 10))
	return nil
}

// DecodeRequest reads one JSON object into a Request: unknown keys,
// trailing data and wrong types are usage errors; a body over the
// http.MaxBytesReader limit is a 413.
func DecodeRequest(r io.Reader) (Request, error) {
	var req Request
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, decodeError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return req, decodeError(err)
	}
	return req, nil
}

// decodeError classifies a JSON decoding error.
func decodeError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return withStatus(413, err)
	}
	if errors.Is(err, io.EOF) {
		return app.Usagef("request body: empty; want a JSON object like {\"model\": \"...\", \"hardware\": \"...\"}")
	}
	return app.Usagef("request body: %w", err)
}

// users is the concurrency asked, by either name.
func (q Request) users() (int, error) {
	if q.Users != 0 && q.Concurrency != 0 && q.Users != q.Concurrency {
		return 0, app.Usagef("users = %d and concurrency = %d: give one", q.Users, q.Concurrency)
	}
	return max(q.Users, q.Concurrency), nil
}

// tokens parses an optional token count named name.
func tokens(name string, t Tokens) (planner.Tokens, error) {
	if t == "" {
		return 0, nil
	}
	n, err := planner.ParseTokens(string(t))
	if err != nil {
		return 0, app.Usagef("%s: %w", name, err)
	}
	if n <= 0 {
		return 0, app.Usagef("%s must be positive", name)
	}
	return n, nil
}

// scenario is the request as app's ScenarioRequest, checked as the CLI
// checks its flags. The model is left to the server to resolve.
func (q Request) scenario() (app.ScenarioRequest, error) {
	n, err := q.users()
	if err != nil {
		return app.ScenarioRequest{}, err
	}
	req := app.ScenarioRequest{Model: q.Model, Hardware: q.Hardware, Devices: q.Devices, Engine: q.Engine,
		Backend: strings.ToLower(q.Backend), Quant: q.Quant, KVType: q.KVType, EngineVersion: q.EngineVersion,
		Concurrency: n, GPUMemoryUtilization: q.GPUMemUtil, GPULayers: q.GPULayers, CPUMoELayers: q.NCPUMoE,
		UnifiedKV: q.KVUnified}
	if q.Devices < 0 || n < 0 || q.GPULayers < 0 || q.NCPUMoE < 0 {
		return req, app.Usagef("devices, concurrency, gpu-layers and n-cpu-moe must not be negative")
	}
	if req.Context, err = tokens("context", q.Context); err != nil {
		return req, err
	}
	if req.TotalContext, err = tokens("ctx-size", q.CtxSize); err != nil {
		return req, err
	}
	if q.HostMemory != "" {
		if req.HostMemory, err = app.ParseSize(q.HostMemory); err != nil {
			return req, fmt.Errorf("host-memory: %w", err)
		}
	}
	return req, nil
}

// plan is the request as app's PlanRequest.
func (q Request) plan() (app.PlanRequest, error) {
	req := app.PlanRequest{Model: q.Model, Hardware: q.Hardware, Devices: q.Devices, Nodes: q.Nodes, NodeLink: q.NodeLink,
		Engines: app.SplitList(q.Engines), Quants: app.SplitList(q.Quants), HostBandwidthGBs: q.HostBandwidth,
		EngineVersion: q.EngineVersion, ForEngine: q.Emit}
	if q.Devices < 0 || q.Devices > 64 {
		return req, app.Usagef("devices = %d: use 1 to 64", q.Devices)
	}
	if q.Nodes < 0 || q.Nodes > 64 {
		return req, app.Usagef("nodes = %d: use 1 to 64", q.Nodes)
	}
	var err error
	if req.Workload, err = app.ParseWorkload(q.Workload); err != nil {
		return req, err
	}
	if req.SLO, err = app.ParseSLO(q.SLO); err != nil {
		return req, err
	}
	if q.HostMemory != "" {
		if req.HostMemory, err = app.ParseSize(q.HostMemory); err != nil {
			return req, fmt.Errorf("host-memory: %w", err)
		}
	}
	if b := q.HostBandwidth; b < 0 || b > 10000 || math.IsNaN(b) {
		return req, app.Usagef("host-bandwidth = %g: want GB/s between 1 and 10000", b)
	}
	return req, nil
}

// compare is the request as app's CompareRequest (hardware is a list).
func (q Request) compare() (app.CompareRequest, error) {
	req := app.CompareRequest{Model: q.Model, Engines: app.SplitList(q.Engines), Quants: app.SplitList(q.Quants), EngineVersion: q.EngineVersion}
	if strings.TrimSpace(q.Hardware) == "" {
		return req, app.Usagef("hardware takes a comma-separated list, e.g. rtx-4090,2xrtx-3090,amd-ryzen-ai-max-395")
	}
	var err error
	if req.Machines, err = app.ParseMachineList(q.Hardware); err != nil {
		return req, err
	}
	if req.Workload, err = app.ParseWorkload(q.Workload); err != nil {
		return req, err
	}
	if req.SLO, err = app.ParseSLO(q.SLO); err != nil {
		return req, err
	}
	return req, nil
}
