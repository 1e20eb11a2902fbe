package server

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// route is one REST endpoint: its method and path, what it does, and the
// operation behind it. The OpenAPI document is written from this table.
type route struct {
	Method, Path string
	Summary      string
	// Body is true when the endpoint takes a Request as its JSON body.
	Body bool
	// Response names the OpenAPI schema of a 200 answer.
	Response string
	// Query lists the query parameters (GET).
	Query  []string
	handle func(*Server, context.Context, input) (int, any, error)
}

// input is what a request carries, read before the answer is computed (an
// answer may outlive its handler, which must not read the request after
// it returns).
type input struct {
	body  Request    // the JSON body, for routes with Body
	what  string     // the {what} path value
	query url.Values // the query parameters
}

// apiRoutes are the REST endpoints.
var apiRoutes = []route{
	{Method: "POST", Path: "/api/fit", Summary: "Can I run it? Memory verdict, breakdown and one user's speed (headroom fit --json); 422 when it does not fit", Body: true, Response: "FitJSON", handle: (*Server).fit},
	{Method: "POST", Path: "/api/plan", Summary: "What should I run? Ranked configurations for a workload and SLO (headroom plan --json); 422 when nothing fits", Body: true, Response: "PlanResult", handle: (*Server).plan},
	{Method: "POST", Path: "/api/compare", Summary: "Which hardware? One row per machine of the comma-separated hardware list (headroom compare --json)", Body: true, Response: "CompareRows", handle: (*Server).compare},
	{Method: "POST", Path: "/api/flags", Summary: "The launch command for one configuration (headroom flags); 422 when it does not fit", Body: true, Response: "LaunchJSON", handle: (*Server).flags},
	{Method: "POST", Path: "/api/export", Summary: "The best plan as a file: TOML, JSON or a shell script (headroom plan --export FILE.toml|.json|.sh)", Body: true, Response: "ExportFile", handle: (*Server).export},
	{Method: "GET", Path: "/api/list/{what}", Summary: "The catalog: what is hardware, models, engines or quants (headroom list WHAT --json)", Response: "List", Query: []string{"filter", "vendor", "kind", "min-memory"}, handle: (*Server).list},
	{Method: "GET", Path: "/api/validate", Summary: "Prediction error on the embedded published measurements (headroom validate --json)", Response: "Report", handle: (*Server).validate},
	{Method: "GET", Path: "/api/probe", Summary: "The server's machine: devices, catalog matches, usable memory per engine (headroom probe --json)", Response: "ProbeJSON", handle: (*Server).probe},
	{Method: "GET", Path: "/api/openapi.json", Summary: "This document", Response: "OpenAPI", handle: (*Server).openapi},
}

// routes builds the whole handler: the API, MCP and the page.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string][]route{}
	s.table = apiRoutes
	for _, rt := range s.table {
		byPath[rt.Path] = append(byPath[rt.Path], rt)
	}
	for path, rts := range byPath {
		mux.Handle(path, s.guarded(s.api(rts)))
	}
	mux.Handle("/api/", s.guarded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, withStatus(http.StatusNotFound, fmt.Errorf("no endpoint %s; see /api/openapi.json", r.URL.Path)))
	})))
	mux.Handle("/mcp", s.guarded(s.mcpHandler()))
	mux.Handle("/app/", wasmHandler())
	mux.Handle("/", staticHandler())
	return s.logged(mux)
}

// api dispatches one path's methods, checks the content type of bodies,
// and writes the answer or the error as JSON.
func (s *Server) api(rts []route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rt *route
		var allow []string
		for i := range rts {
			allow = append(allow, rts[i].Method)
			if rts[i].Method == r.Method || (r.Method == http.MethodHead && rts[i].Method == http.MethodGet) {
				rt = &rts[i]
			}
		}
		if rt == nil {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, withStatus(http.StatusMethodNotAllowed, fmt.Errorf("%s %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or "))))
			return
		}
		if rt.Body {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				writeError(w, withStatus(http.StatusUnsupportedMediaType, fmt.Errorf("%s %s: send Content-Type: application/json", r.Method, r.URL.Path)))
				return
			}
		}
		in := input{what: r.PathValue("what"), query: r.URL.Query()}
		if rt.Body {
			var err error
			if in.body, err = DecodeRequest(r.Body); err != nil {
				writeError(w, err)
				return
			}
		}
		res := s.compute(r.Context(), func(ctx context.Context) (int, any, error) { return rt.handle(s, ctx, in) })
		if res.err != nil {
			writeError(w, res.err)
			return
		}
		if f, ok := res.body.(exportFile); ok {
			w.Header().Set("Content-Type", f.contentType)
			w.Header().Set("Content-Disposition", `attachment; filename="`+f.name+`"`)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Write(f.data)
			return
		}
		writeJSON(w, r, res.status, res.body)
	})
}

// encode is the CLI's JSON: two-space indent, a trailing newline.
func encode(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeJSON writes v with status (200 when 0), gzipped when the client
// accepts it and the answer is over 8 KiB (a plan is 0.2–0.7 MB of JSON).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := encode(v)
	if err != nil {
		writeError(w, fmt.Errorf("encode answer: %w", err))
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if len(b) < 8<<10 || !acceptsGzip(r) {
		w.WriteHeader(status)
		w.Write(b)
		return
	}
	h.Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	zw := gzip.NewWriter(w)
	zw.Write(b)
	zw.Close()
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, e := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(e), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// writeError writes err as ErrorJSON with its status (Retry-After on 503).
func writeError(w http.ResponseWriter, err error) {
	st := statusOf(err)
	if st == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	b, _ := encode(errorBody(err))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(st)
	w.Write(b)
}

// model resolves a model reference in the catalog only, unless
// AllowModelFiles (files on this machine) or AllowRemoteModels (the Hub
// and the Ollama registry): the server reads no file and reaches no host a
// client names unless its user allowed it.
func (s *Server) model(ref string) (*planner.Model, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, app.Usagef("model is required (see /api/list/models)")
	}
	if s.cfg.AllowModelFiles || (s.cfg.AllowRemoteModels && !app.LooksLikePath(ref)) {
		rm, err := s.app.ResolveModel(context.Background(), ref, "")
		return &rm.Model, err
	}
	m, err := s.app.Catalog().FindModel(ref)
	if err != nil {
		if app.IsNotFound(err) {
			return nil, err
		}
		return nil, app.Usage(err)
	}
	return &m, nil
}

// fitStatus is the status of a fit answer: 422 when it does not fit (the
// CLI's exit 3), else 200.
func fitStatus(r planner.FitResult) int {
	if r.Verdict == planner.DoesNotFit {
		return http.StatusUnprocessableEntity
	}
	return http.StatusOK
}

// Fit answers a fit request as `headroom fit --json` does.
func (s *Server) Fit(ctx context.Context, q Request) (int, app.FitJSON, error) {
	req, err := q.scenario()
	if err != nil {
		return 0, app.FitJSON{}, err
	}
	if req.ModelValue, err = s.model(q.Model); err != nil {
		return 0, app.FitJSON{}, err
	}
	ans, err := s.app.Fit(ctx, req)
	if err != nil {
		return 0, app.FitJSON{}, err
	}
	return fitStatus(ans.Fit), app.NewFitJSON(ans), nil
}

// Plan answers a plan request as `headroom plan --json` does (422 when
// nothing fits).
func (s *Server) Plan(ctx context.Context, q Request) (int, planner.PlanResult, error) {
	req, err := q.plan()
	if err != nil {
		return 0, planner.PlanResult{}, err
	}
	if req.ModelValue, err = s.model(q.Model); err != nil {
		return 0, planner.PlanResult{}, err
	}
	ans, err := s.app.Plan(ctx, req)
	if err != nil {
		return 0, planner.PlanResult{}, err
	}
	if _, ok := ans.Best(""); !ok {
		return http.StatusUnprocessableEntity, ans.Result, nil
	}
	return http.StatusOK, ans.Result, nil
}

// Compare answers as `headroom compare --json` does.
func (s *Server) Compare(ctx context.Context, q Request) ([]planner.CompareRow, error) {
	req, err := q.compare()
	if err != nil {
		return nil, err
	}
	if req.ModelValue, err = s.model(q.Model); err != nil {
		return nil, err
	}
	ans, err := s.app.Compare(ctx, req)
	if err != nil {
		return nil, err
	}
	return ans.Rows, nil
}

// Flags gives the launch command `headroom flags` prints, as LaunchJSON.
func (s *Server) Flags(ctx context.Context, q Request) (app.LaunchJSON, error) {
	req, err := q.scenario()
	if err != nil {
		return app.LaunchJSON{}, err
	}
	if req.ModelValue, err = s.model(q.Model); err != nil {
		return app.LaunchJSON{}, err
	}
	ans, err := s.app.LaunchFor(ctx, req, app.LaunchRequest{Docker: q.Docker})
	if err != nil {
		return app.LaunchJSON{}, err
	}
	return app.NewLaunchJSON(ans), nil
}

// exportFile is an export's bytes, written as they are (not as JSON).
type exportFile struct {
	name, contentType string
	data              []byte
}

// exportTypes are the export formats and their content types.
var exportTypes = map[string]string{"toml": "application/toml", "json": "application/json", "sh": "text/x-shellscript"}

// Export plans and encodes the best configuration (of engine Emit, when
// given) as `headroom plan --export FILE.FORMAT` writes it.
func (s *Server) Export(ctx context.Context, q Request) (exportFile, error) {
	format := strings.TrimPrefix(strings.ToLower(q.Format), ".")
	ct, ok := exportTypes[format]
	if !ok {
		return exportFile{}, app.Usagef("format %q: use toml, json or sh", q.Format)
	}
	req, err := q.plan()
	if err != nil {
		return exportFile{}, err
	}
	if req.ModelValue, err = s.model(q.Model); err != nil {
		return exportFile{}, err
	}
	var emit planner.EngineID
	if q.Emit != "" {
		if emit, err = s.app.EngineID(q.Emit); err != nil {
			return exportFile{}, fmt.Errorf("emit: %w", err)
		}
	}
	ans, err := s.app.Plan(ctx, req)
	if err != nil {
		return exportFile{}, err
	}
	best, ok := ans.Best(emit)
	if !ok {
		return exportFile{}, fmt.Errorf("no configuration fits; nothing to export: %w", app.ErrNoFit)
	}
	l, err := s.app.Launch(ctx, best, app.LaunchRequest{Docker: q.Docker, Release: ans.Release(best.Engine), Users: app.LaunchUsers(best, ans.Request.Workload), Model: ans.Model})
	if err != nil {
		return exportFile{}, err
	}
	e, err := app.NewExport(best, l)
	if err != nil {
		return exportFile{}, err
	}
	data, err := e.Encode("." + format)
	if err != nil {
		return exportFile{}, err
	}
	return exportFile{name: "headroom-plan." + format, contentType: ct, data: data}, nil
}

// ListQuery is what to list and how to filter it (headroom list's flags).
type ListQuery struct {
	What      string `json:"what" jsonschema:"hardware, models, engines or quants"`
	Filter    string `json:"filter,omitempty" jsonschema:"substring of id or name"`
	Vendor    string `json:"vendor,omitempty" jsonschema:"hardware vendor: nvidia, amd, apple, intel"`
	Kind      string `json:"kind,omitempty" jsonschema:"hardware kind: gpu, apu, soc, cpu"`
	MinMemory string `json:"min-memory,omitempty" jsonschema:"hardware with at least this much memory, e.g. 64GiB"`
}

// List lists the catalog as `headroom list WHAT --json` does.
func (s *Server) List(q ListQuery) (any, error) {
	f := app.ListFilter{Text: q.Filter, Vendor: q.Vendor, Kind: q.Kind}
	if q.MinMemory != "" {
		var err error
		if f.MinMemory, err = app.ParseSize(q.MinMemory); err != nil {
			return nil, fmt.Errorf("min-memory: %w", err)
		}
	}
	switch q.What {
	case "hardware":
		return s.app.Hardware(f), nil
	case "models":
		return s.app.Models(f), nil
	case "engines":
		return s.app.Engines(f), nil
	case "quants":
		return s.app.Quants(f), nil
	}
	return nil, withStatus(http.StatusNotFound, app.Usagef("list %q: want hardware, models, engines or quants", q.What))
}

// Probe probes the server's machine as `headroom probe --json` does.
func (s *Server) Probe(ctx context.Context) (app.ProbeJSON, error) {
	m, devs, err := s.app.ProbeReport(ctx)
	if err != nil {
		return app.ProbeJSON{}, err
	}
	return app.NewProbeJSON(m, devs), nil
}

func (s *Server) fit(ctx context.Context, in input) (int, any, error) { return s.Fit(ctx, in.body) }

func (s *Server) plan(ctx context.Context, in input) (int, any, error) { return s.Plan(ctx, in.body) }

func (s *Server) compare(ctx context.Context, in input) (int, any, error) {
	rows, err := s.Compare(ctx, in.body)
	return 0, rows, err
}

func (s *Server) flags(ctx context.Context, in input) (int, any, error) {
	l, err := s.Flags(ctx, in.body)
	return 0, l, err
}

func (s *Server) export(ctx context.Context, in input) (int, any, error) {
	f, err := s.Export(ctx, in.body)
	return 0, f, err
}

func (s *Server) list(_ context.Context, in input) (int, any, error) {
	v := in.query
	for k := range v {
		switch k {
		case "filter", "vendor", "kind", "min-memory":
		default:
			return 0, nil, app.Usagef("list: unknown query parameter %q (filter, vendor, kind, min-memory)", k)
		}
	}
	rows, err := s.List(ListQuery{What: in.what, Filter: v.Get("filter"), Vendor: v.Get("vendor"), Kind: v.Get("kind"), MinMemory: v.Get("min-memory")})
	return 0, rows, err
}

func (s *Server) validate(context.Context, input) (int, any, error) {
	ms, err := app.LoadMeasurements("")
	if err != nil {
		return 0, nil, err
	}
	return 0, s.app.Validate(ms), nil
}

func (s *Server) probe(ctx context.Context, _ input) (int, any, error) {
	p, err := s.Probe(ctx)
	return 0, p, err
}

func (s *Server) openapi(context.Context, input) (int, any, error) {
	return 0, openAPI(s.table), nil
}
