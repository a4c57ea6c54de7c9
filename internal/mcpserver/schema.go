package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// document is the API's OpenAPI document, read for what a request struct
// cannot say: each field's description, enum, format and pattern, and each
// operation's summary.
type document struct {
	raw map[string]any
}

func parseDocument(b []byte) (*document, error) {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	return &document{raw: raw}, nil
}

// version is the document's info.version, the service's API version.
func (d *document) version() string {
	info, _ := d.raw["info"].(map[string]any)
	v, _ := info["version"].(string)
	return v
}

// operation returns the operation of method on path, and the parameters of
// the path and the operation together, each resolved.
func (d *document) operation(method, path string) (op map[string]any, params []map[string]any, err error) {
	paths, _ := d.raw["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ = item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, nil, fmt.Errorf("the OpenAPI document has no %s %s", method, path)
	}
	for _, list := range []any{item["parameters"], op["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			if m, ok := d.resolve(p).(map[string]any); ok {
				params = append(params, m)
			}
		}
	}
	return op, params, nil
}

// bodySchema is the resolved JSON schema of op's request body, or nil.
func (d *document) bodySchema(op map[string]any) map[string]any {
	rb, _ := d.resolve(op["requestBody"]).(map[string]any)
	content, _ := rb["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	s, _ := d.resolve(media["schema"]).(map[string]any)
	return s
}

// resolve returns v with every $ref replaced by what it names and every
// allOf merged into the schema holding it, so that a tool's schema stands
// alone and reads simply: clients show it to people and models, and some
// handle neither references nor allOf.
func (d *document) resolve(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if ref, ok := v["$ref"].(string); ok {
			if target, ok := d.lookup(ref).(map[string]any); ok {
				maps.Copy(out, d.resolve(target).(map[string]any))
			}
		}
		if all, ok := v["allOf"].([]any); ok {
			for _, part := range all {
				if m, ok := d.resolve(part).(map[string]any); ok {
					for k, x := range m {
						if _, set := out[k]; !set {
							out[k] = x
						}
					}
				}
			}
		}
		// The schema's own keywords win over what it refers to: a property's
		// description says more than its type's.
		for k, x := range v {
			if k != "$ref" && k != "allOf" {
				out[k] = d.resolve(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = d.resolve(x)
		}
		return out
	}
	return v
}

// lookup returns what a local reference ("#/components/schemas/Id") names.
func (d *document) lookup(ref string) any {
	var cur any = d.raw
	for part := range strings.SplitSeq(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(part)]
	}
	return cur
}

// inputSchema is a tool's input schema: an object of the route's path ids,
// named as the tool names them, and of the fields of its request struct,
// required as the struct requires them, with nothing else allowed. The
// request struct says which fields there are, which are required and
// nullable and an integer's range, as the operation checks them; the
// document adds how each is described.
func (d *document) inputSchema(t *tool) (map[string]any, string, error) {
	op, params, err := d.operation(t.method, t.path)
	if err != nil {
		return nil, "", err
	}
	props := map[string]any{}
	required := []string{}
	param := func(in, name string) map[string]any {
		for _, p := range params {
			if p["in"] == in && p["name"] == name {
				s, _ := p["schema"].(map[string]any)
				s = maps.Clone(s)
				if desc, ok := p["description"].(string); ok {
					s["description"] = desc
				}
				return s
			}
		}
		return nil
	}
	for _, a := range t.args {
		s := param("path", a.param)
		if s == nil {
			return nil, "", fmt.Errorf("%s: the document has no path parameter %s", t.name, a.param)
		}
		props[a.arg] = s
		required = append(required, a.arg)
	}
	for _, name := range t.query {
		s := param("query", name)
		if s == nil {
			return nil, "", fmt.Errorf("%s: the document has no query parameter %s", t.name, name)
		}
		props[name] = s
	}
	if t.in != nil {
		body := d.bodySchema(op)
		bodyProps, _ := body["properties"].(map[string]any)
		for _, f := range licentia.InputFields(reflect.TypeOf(t.in)) {
			var s map[string]any
			if f.Query {
				s = param("query", f.Name)
			} else if m, ok := bodyProps[f.Name].(map[string]any); ok {
				s = maps.Clone(m)
			}
			if s == nil {
				return nil, "", fmt.Errorf("%s: the document does not describe %s", t.name, f.Path)
			}
			if _, taken := props[f.Name]; taken {
				return nil, "", fmt.Errorf("%s: the field %s has the name of a path id", t.name, f.Name)
			}
			fieldFacts(s, f)
			props[f.Name] = s
			if f.Required {
				required = append(required, f.Name)
			}
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	return schema, describe(op), nil
}

// fieldFacts sets in s what the request struct states of f: its JSON type,
// null where it reads as not given, an integer's range.
func fieldFacts(s map[string]any, f licentia.InputField) {
	var typ string
	switch {
	case f.IsTimeField():
		typ = "string"
	case f.Query && f.Type.Elem().Kind() == reflect.Int64:
		typ = "integer"
	case f.Query:
		typ = "string"
	case f.Type.Kind() == reflect.Slice:
		typ = "array"
	default:
		switch f.Type.Elem().Kind() {
		case reflect.String:
			typ = "string"
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int64:
			typ = "integer"
		}
	}
	if f.Nullable {
		s["type"] = []any{typ, "null"}
	} else {
		s["type"] = typ
	}
	if f.HasRange {
		s["minimum"], s["maximum"] = f.Min, f.Max
	}
}

// describe is a tool's description: the operation's summary and what the
// document says of it.
func describe(op map[string]any) string {
	summary, _ := op["summary"].(string)
	desc, _ := op["description"].(string)
	scope, _ := op["x-licentia-scope"].(string)
	out := summary
	if desc != "" {
		out += "\n\n" + desc
	}
	if scope != "" {
		out += "\n\nScope: " + scope + "."
	}
	return out
}
