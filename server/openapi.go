package server

import (
	"reflect"
	"strings"
)

// openAPI is the OpenAPI 3.0 document served at /api/openapi.json,
// written from the route table (every route is documented, every documented
// path is routed) and Request's fields (every body key is described).
func openAPI(rts []route) map[string]any {
	paths := map[string]any{}
	for _, rt := range rts {
		item, _ := paths[rt.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		item[strings.ToLower(rt.Method)] = operation(rt)
	}
	paths["/mcp"] = map[string]any{"post": map[string]any{
		"summary":     "MCP (Model Context Protocol) over streamable HTTP, JSON-RPC 2.0: tools fit, plan, compare, flags, list, probe, validate",
		"operationId": "mcp",
		"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
		"responses":   map[string]any{"200": map[string]any{"description": "JSON-RPC response"}},
	}}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "Headroom", "version": "1",
			"description": "Capacity planning for serving LLMs. Each answer is the JSON `headroom ... --json` prints. Body keys are the CLI's long flag names. Status mirrors the CLI's exit code: 200 answer, 422 does not fit, 400 bad input, 404 unknown id (suggestions), 413 body too large, 503 busy (Retry-After)."},
		"servers":    []any{map[string]any{"url": "/"}},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas(), "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"security":   []any{map[string]any{"bearer": []any{}}},
	}
}

// operation documents one route.
func operation(rt route) map[string]any {
	op := map[string]any{
		"summary":     rt.Summary,
		"operationId": operationID(rt),
		"responses": map[string]any{
			"200": map[string]any{"description": "the answer", "content": jsonContent(ref(rt.Response))},
			"400": errResponse("bad input"),
			"401": errResponse("missing or wrong token (when the server has one)"),
			"404": errResponse("unknown catalog id, with the closest matches as suggestions"),
			"405": errResponse("wrong method"),
			"503": errResponse("busy or out of time; retry after Retry-After seconds"),
		},
	}
	if rt.Body {
		op["requestBody"] = map[string]any{"required": true, "content": jsonContent(ref("Request"))}
		r := op["responses"].(map[string]any)
		r["413"] = errResponse("request body over the limit")
		r["415"] = errResponse("body is not application/json")
		r["422"] = map[string]any{"description": "the configuration cannot run: the answer (fit, plan) or an error (flags)", "content": jsonContent(map[string]any{})}
	}
	var params []any
	if strings.Contains(rt.Path, "{what}") {
		params = append(params, map[string]any{"name": "what", "in": "path", "required": true,
			"schema": map[string]any{"type": "string", "enum": []string{"hardware", "models", "engines", "quants"}}})
	}
	for _, q := range rt.Query {
		params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": "string"}})
	}
	if params != nil {
		op["parameters"] = params
	}
	return op
}

// operationID is the route's last path word ("list" for /api/list/{what}).
func operationID(rt route) string {
	parts := strings.Split(strings.Trim(rt.Path, "/"), "/")
	id := parts[len(parts)-1]
	if strings.HasPrefix(id, "{") {
		id = parts[len(parts)-2]
	}
	return strings.TrimSuffix(id, ".json")
}

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func errResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
}

// schemas are the components: Request from its struct tags, the error,
// and the answers (objects described by the CLI's JSON).
func schemas() map[string]any {
	answer := func(desc string) map[string]any { return map[string]any{"type": "object", "description": desc} }
	return map[string]any{
		"Request": requestSchema(),
		"Error": map[string]any{"type": "object", "required": []string{"error"}, "properties": map[string]any{
			"error":       map[string]any{"type": "string"},
			"suggestions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}},
		"FitJSON":     answer("headroom fit --json: scenario, fit (verdict, breakdown, limits), speed"),
		"PlanResult":  answer("headroom plan --json: ranked, pareto, dropped, notes"),
		"CompareRows": map[string]any{"type": "array", "items": answer("one machine: verdict, best configuration, speeds, per dollar and per watt")},
		"LaunchJSON": map[string]any{"type": "object", "properties": map[string]any{
			"command": map[string]any{"type": "string"}, "launch": map[string]any{"type": "object"}, "hint": map[string]any{"type": "string"}}},
		"List":       map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		"Report":     answer("headroom validate --json: error per metric"),
		"ProbeJSON":  answer("headroom probe --json: machine and matches"),
		"OpenAPI":    answer("this document"),
		"ExportFile": map[string]any{"type": "string", "description": "the file's bytes (Content-Type application/toml, application/json or text/x-shellscript)"},
	}
}

// requestSchema describes Request from its json and jsonschema tags.
func requestSchema() map[string]any {
	props := map[string]any{}
	t := reflect.TypeFor[Request]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := map[string]any{"description": f.Tag.Get("jsonschema")}
		switch f.Type.Kind() {
		case reflect.Int:
			p["type"] = "integer"
		case reflect.Float64:
			p["type"] = "number"
		case reflect.Bool:
			p["type"] = "boolean"
		default:
			p["type"] = "string"
		}
		props[name] = p
	}
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}
