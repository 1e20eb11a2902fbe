package server

import (
	"strings"
)

// openAPI is the OpenAPI 3.1 document served at /api/openapi.json, written
// from the route table (every route is documented, every documented path
// is routed) and the JSON schemas (2020-12) of the Go types of requests and
// answers.
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
		"openapi": "3.1.0",
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

// schemas are the components: the request and the answers (inferred from
// their Go types, see schema.go), the error, the export file and this
// document.
func schemas() map[string]any {
	m := answerSchemas()
	m["Error"] = map[string]any{"type": "object", "required": []string{"error"}, "properties": map[string]any{
		"error":       map[string]any{"type": "string"},
		"suggestions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	}}
	m["ExportFile"] = map[string]any{"type": "string", "description": "the file's bytes (Content-Type application/toml, application/json or text/x-shellscript)"}
	m["OpenAPI"] = map[string]any{"type": "object", "description": "this document"}
	return m
}
