package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTool is one MCP tool: its name, description and the operation,
// which returns the same value (encoded the same way) as the REST API.
type mcpTool struct {
	name, desc string
	run        func(s *Server, ctx context.Context, q Request) (int, any, error)
}

// mcpTools are the tools that take a Request (list and probe are added
// apart: their inputs differ).
var mcpTools = []mcpTool{
	{"fit", "Can I run it? Memory verdict (fits, fits with limits, fits with offload, does not fit), breakdown and one user's speed for one model on one machine. Same JSON as POST /api/fit.",
		func(s *Server, ctx context.Context, q Request) (int, any, error) { return s.Fit(ctx, q) }},
	{"plan", "What should I run? Ranks engine × weight format × KV type × concurrency × tensor parallelism for a workload and latency target. Same JSON as POST /api/plan.",
		func(s *Server, ctx context.Context, q Request) (int, any, error) { return s.Plan(ctx, q) }},
	{"compare", "Which hardware? The model's best configuration on each machine of a comma-separated hardware list, per dollar and per watt. Same JSON as POST /api/compare.",
		func(s *Server, ctx context.Context, q Request) (int, any, error) {
			rows, err := s.Compare(ctx, q)
			return 0, rows, err
		}},
	{"flags", "The exact launch command (vLLM, llama.cpp, SGLang, TGI, Ollama) for one configuration. Same JSON as POST /api/flags.",
		func(s *Server, ctx context.Context, q Request) (int, any, error) {
			l, err := s.Flags(ctx, q)
			return 0, l, err
		}},
}

// mcpServer builds the MCP server with every tool.
func (s *Server) mcpServer() *mcp.Server {
	ms := mcp.NewServer(&mcp.Implementation{Name: "headroom", Version: "1"}, nil)
	in := schemaFor[Request]() // context and ctx-size: a string or an integer
	for _, t := range mcpTools {
		mcp.AddTool(ms, &mcp.Tool{Name: t.name, Description: t.desc, InputSchema: in}, func(ctx context.Context, _ *mcp.CallToolRequest, q Request) (*mcp.CallToolResult, any, error) {
			return s.toolResult(ctx, func(ctx context.Context) (int, any, error) { return t.run(s, ctx, q) }), nil, nil
		})
	}
	mcp.AddTool(ms, &mcp.Tool{Name: "list", Description: "The catalog: hardware, models, engines or quants, filtered. Same JSON as GET /api/list/{what}."},
		func(ctx context.Context, _ *mcp.CallToolRequest, q ListQuery) (*mcp.CallToolResult, any, error) {
			return s.toolResult(ctx, func(context.Context) (int, any, error) {
				rows, err := s.List(q)
				return 0, rows, err
			}), nil, nil
		})
	mcp.AddTool(ms, &mcp.Tool{Name: "probe", Description: "The machine the server runs on: devices, catalog matches and usable memory per engine. Same JSON as GET /api/probe."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return s.toolResult(ctx, func(ctx context.Context) (int, any, error) {
				p, err := s.Probe(ctx)
				return 0, p, err
			}), nil, nil
		})
	return ms
}

// toolResult computes an answer under the server's limits and returns it
// as the API's JSON text; an error is the API's error JSON with IsError.
func (s *Server) toolResult(ctx context.Context, fn func(context.Context) (int, any, error)) *mcp.CallToolResult {
	res := s.compute(ctx, fn)
	v, isErr := res.body, false
	if res.err != nil {
		v, isErr = errorBody(res.err), true
	}
	b, err := encode(v)
	if err != nil {
		b, isErr = []byte(err.Error()), true
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, IsError: isErr}
}

// mcpHandler serves MCP over streamable HTTP, stateless (no sessions to
// keep, no long-lived streams) with JSON responses.
func (s *Server) mcpHandler() http.Handler {
	ms := s.mcpServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.cfg.MaxBody})
}
