package endpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// serverInfo is what detection learned about the server.
type serverInfo struct {
	Engine   planner.EngineID
	Version  string
	Model    string
	Quant    string // lower-case quantization when the server says (Ollama)
	Context  int    // tokens one request may span; 0 when unknown
	Parallel int    // requests the server runs at once when it says; 0 when unknown
	Notes    []string
}

// probeTimeout bounds each detection request.
const probeTimeout = 5 * time.Second

// detect identifies the engine and model, asking each engine's own
// endpoint in turn: Ollama's /api/version, llama-server's /props, TGI's
// /info, then OpenAI's /v1/models (whose owned_by names vLLM and SGLang).
// A refused connection stops detection at once.
func (c *client) detect(ctx context.Context, opt Options) (serverInfo, error) {
	info := serverInfo{Engine: opt.Engine, Model: opt.Model}
	probes := []struct {
		engine planner.EngineID
		fn     func(context.Context, *serverInfo) (bool, error)
	}{
		{planner.Ollama, c.probeOllama},
		{planner.LlamaCpp, c.probeLlamaCpp},
		{planner.TGI, c.probeTGI},
	}
	for _, p := range probes {
		if opt.Engine != "" && opt.Engine != p.engine && !(p.engine == planner.LlamaCpp && opt.Engine == planner.IKLlamaCpp) {
			continue
		}
		ok, err := p.fn(ctx, &info)
		if err != nil && (fatalProbe(err) || opt.Engine != "") {
			return info, err
		}
		if ok {
			info.Engine = cmp.Or(opt.Engine, p.engine)
			return info, c.finishDetect(ctx, &info)
		}
	}
	if err := c.probeOpenAI(ctx, &info); err != nil {
		return info, err
	}
	return info, c.finishDetect(ctx, &info)
}

// fatalProbe reports whether a failed probe means the server cannot be
// reached at all (as opposed to "not this engine").
func fatalProbe(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.Canceled) ||
		errors.Is(err, errBudget) || errors.Is(err, ErrRequestTimeout)
}

// finishDetect picks the model when none was named.
func (c *client) finishDetect(ctx context.Context, info *serverInfo) error {
	if info.Model != "" {
		return nil
	}
	err := c.probeOpenAI(ctx, info)
	if info.Model == "" && (info.Engine == planner.LlamaCpp || info.Engine == planner.IKLlamaCpp || info.Engine == planner.TGI) {
		info.Model = "default" // their native APIs serve the one loaded model
		return nil
	}
	if err != nil {
		return err
	}
	if info.Model == "" {
		return &StepError{Step: "detect", Method: "GET", URL: c.endpointURL("/v1/models"), Err: errors.New("the server lists no model; name one with --model")}
	}
	return nil
}

// probeOllama reads /api/version, then the model list (/api/tags) and the
// model's num_ctx and quantization (/api/show).
func (c *client) probeOllama(ctx context.Context, info *serverInfo) (bool, error) {
	var v struct {
		Version *string `json:"version"`
	}
	if err := c.getJSON(ctx, "detect", "/api/version", nil, probeTimeout, &v); err != nil || v.Version == nil {
		return false, err
	}
	info.Version = *v.Version
	if info.Model == "" {
		var tags struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if err := c.getJSON(ctx, "detect", "/api/tags", nil, probeTimeout, &tags); err != nil {
			return true, err
		}
		if len(tags.Models) == 0 {
			return true, &StepError{Step: "detect", Method: "GET", URL: c.endpointURL("/api/tags"), Err: errors.New("ollama has no model; create or pull one first")}
		}
		info.Model = tags.Models[0].Name
	}
	return true, c.ollamaShow(ctx, info)
}

// ollamaShow reads num_ctx from the model's parameters (Ollama's default is
// 2048 in v0.6) capped by the trained context, and the quantization.
func (c *client) ollamaShow(ctx context.Context, info *serverInfo) error {
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
		Details    struct {
			QuantizationLevel string `json:"quantization_level"`
		} `json:"details"`
	}
	if err := c.getJSON(ctx, "detect", "/api/show", map[string]string{"model": info.Model}, probeTimeout, &show); err != nil {
		return err
	}
	info.Quant = strings.ToLower(show.Details.QuantizationLevel)
	info.Context = 2048
	if n := ollamaNumCtx(show.Parameters); n > 0 {
		info.Context = n
	} else {
		info.Notes = append(info.Notes, "ollama model sets no num_ctx; assumed the default 2048")
	}
	for k, v := range show.ModelInfo {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && f > 0 && int(f) < info.Context {
			info.Context = int(f)
		}
	}
	return nil
}

// ollamaNumCtx finds "num_ctx N" in /api/show's parameters text.
func ollamaNumCtx(params string) int {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// probeLlamaCpp reads llama-server's /props: the per-slot context and the
// number of slots (requests it decodes at once).
func (c *client) probeLlamaCpp(ctx context.Context, info *serverInfo) (bool, error) {
	var p struct {
		Settings *struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		TotalSlots int    `json:"total_slots"`
		BuildInfo  string `json:"build_info"`
		ModelPath  string `json:"model_path"`
	}
	if err := c.getJSON(ctx, "detect", "/props", nil, probeTimeout, &p); err != nil || p.Settings == nil {
		return false, err
	}
	info.Context, info.Parallel, info.Version = p.Settings.NCtx, p.TotalSlots, p.BuildInfo
	if info.Model == "" && p.ModelPath != "" {
		info.Model = filepath.Base(p.ModelPath)
	}
	return true, nil
}

// probeTGI reads TGI's /info: model, version and limits.
func (c *client) probeTGI(ctx context.Context, info *serverInfo) (bool, error) {
	var p struct {
		ModelID               *string `json:"model_id"`
		Version               string  `json:"version"`
		MaxTotalTokens        int     `json:"max_total_tokens"`
		MaxConcurrentRequests int     `json:"max_concurrent_requests"`
	}
	if err := c.getJSON(ctx, "detect", "/info", nil, probeTimeout, &p); err != nil || p.ModelID == nil {
		return false, err
	}
	info.Version, info.Context, info.Parallel = p.Version, p.MaxTotalTokens, p.MaxConcurrentRequests
	if info.Model == "" {
		info.Model = *p.ModelID
	}
	return true, nil
}

// probeOpenAI reads /v1/models: the first model, its max_model_len (vLLM)
// and owned_by, which names vLLM, SGLang and llama-server.
func (c *client) probeOpenAI(ctx context.Context, info *serverInfo) error {
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, "detect", "/v1/models", nil, probeTimeout, &list); err != nil {
		return fmt.Errorf("no OpenAI-compatible server found: %w", err)
	}
	if len(list.Data) == 0 {
		return nil
	}
	m := list.Data[0]
	for _, d := range list.Data {
		if d.ID == info.Model {
			m = d
		}
	}
	if info.Engine == "" {
		switch strings.ToLower(m.OwnedBy) {
		case "vllm":
			info.Engine = planner.VLLM
		case "sglang":
			info.Engine = planner.SGLang
		case "llamacpp":
			info.Engine = planner.LlamaCpp
		}
	}
	if info.Model == "" {
		info.Model = m.ID
	}
	if m.MaxModelLen > 0 && info.Context == 0 {
		info.Context = m.MaxModelLen
	}
	if info.Version == "" && info.Engine == planner.VLLM {
		var v struct {
			Version string `json:"version"`
		}
		if c.getJSON(ctx, "detect", "/version", nil, probeTimeout, &v) == nil {
			info.Version = v.Version
		}
	}
	return nil
}
