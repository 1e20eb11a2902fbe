package server

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// schemaOptions infer JSON schemas from the Go types the API decodes and
// encodes; Tokens takes a string ("32k") or an integer.
var schemaOptions = &jsonschema.ForOptions{
	IgnoreInvalidTypes: true,
	TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Tokens](): {Types: []string{"string", "integer"}},
	},
}

// schemaFor is T's JSON schema (an open object if it cannot be inferred).
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](schemaOptions)
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	return s
}

// asMap turns a schema into plain JSON values for the OpenAPI document.
func asMap(s *jsonschema.Schema) map[string]any {
	var m map[string]any
	b, err := json.Marshal(s)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return map[string]any{"type": "object"}
	}
	return m
}

// answerSchemas are the schemas of the answers, by the names apiRoutes
// give them, inferred from the types the CLI's --json encodes.
func answerSchemas() map[string]any {
	return map[string]any{
		"Request":     asMap(schemaFor[Request]()),
		"FitJSON":     asMap(schemaFor[app.FitJSON]()),
		"PlanResult":  asMap(schemaFor[planner.PlanResult]()),
		"CompareRows": asMap(schemaFor[[]planner.CompareRow]()),
		"LaunchJSON":  asMap(schemaFor[app.LaunchJSON]()),
		"List": map[string]any{"oneOf": []any{asMap(schemaFor[[]planner.Hardware]()), asMap(schemaFor[[]planner.Model]()),
			asMap(schemaFor[[]planner.Engine]()), asMap(schemaFor[[]planner.Quant]())}},
		"Report":    asMap(schemaFor[planner.Report]()),
		"ProbeJSON": asMap(schemaFor[app.ProbeJSON]()),
	}
}
