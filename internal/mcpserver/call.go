package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// handler calls t's route in-process as the request's caller: the same
// credential, from the same client address, under the /mcp request's id.
// The API then applies every rule it applies to any client, the assistant
// guard-rails included (web.ForAssistant), counts the call in the
// caller's admin limit for that route and audits it as the member or key.
func (s *Server) handler(rq *request, t *tool) mcp.ToolHandler {
	bodyNames, queryNames := t.names()
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]json.RawMessage
		if raw := req.Params.Arguments; len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil || args == nil {
				var is licentia.Issues
				is.Add("", "the arguments must be a JSON object")
				return refusal(rq.id, is.Err()), nil
			}
		}
		target, body, err := t.request(args, bodyNames, queryNames)
		if err != nil {
			return refusal(rq.id, err), nil
		}
		hr, err := http.NewRequestWithContext(web.ForAssistant(ctx), t.method, target, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hr.RemoteAddr = net.JoinHostPort(rq.addr, "0")
		hr.Header.Set("Authorization", rq.authorization)
		hr.Header.Set("X-Request-Id", rq.id)
		if body != nil {
			hr.Header.Set("Content-Type", "application/json")
		}
		a := &answer{header: http.Header{}}
		if t.csv {
			a.maxLines = maxCSVRows + 1 // and the header row
		}
		s.api.ServeHTTP(a, hr)
		return a.result(), nil
	}
}

// names are the body and query names t's route reads: its request struct's
// json and query fields, and its other query parameters.
func (t *tool) names() (body, query []string) {
	query = slices.Clone(t.query)
	if t.in == nil {
		return nil, query
	}
	for _, f := range licentia.InputFields(reflect.TypeOf(t.in)) {
		if f.Query {
			query = append(query, f.Name)
		} else {
			body = append(body, f.Name)
		}
	}
	return body, query
}

// request maps a call's arguments onto t's route: the path ids into the
// path, the rest into the body when the route reads one, else into the
// query string. An argument the route does not know is sent all the same,
// so that the API refuses it as it refuses any unknown field or parameter.
// Only a missing path id, which a path cannot carry, is refused here, as
// the API would word it.
func (t *tool) request(args map[string]json.RawMessage, bodyNames, queryNames []string) (target string, body []byte, err error) {
	path := t.path
	var is licentia.Issues
	for _, a := range t.args {
		raw, ok := args[a.arg]
		var v string
		switch {
		case !ok || string(raw) == "null":
			is.Add("path."+a.param, "is required")
		case json.Unmarshal(raw, &v) != nil:
			is.Add("path."+a.param, "must be a string")
		case v == "":
			is.Add("path."+a.param, "is required")
		}
		path = strings.Replace(path, "{"+a.param+"}", url.PathEscape(v), 1)
	}
	if err := is.Err(); err != nil {
		return "", nil, err
	}
	rest := map[string]json.RawMessage{}
	for name, raw := range args {
		if !slices.ContainsFunc(t.args, func(a pathArg) bool { return a.arg == name }) {
			rest[name] = raw
		}
	}
	q := url.Values{}
	if len(bodyNames) > 0 {
		body, err = json.Marshal(rest)
		if err != nil {
			return "", nil, err
		}
	} else {
		for name, raw := range rest {
			q.Set(name, queryValue(raw))
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path, body, nil
}

// queryValue is a query parameter's value: a string as it is, any other
// JSON value as written, for the API to judge.
func queryValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// maxCSVRows is the most rows a CSV tool gives: a tool result is read
// whole by the assistant, so a bigger export is cut and says so.
const maxCSVRows = 10_000

// errCut ends a CSV answer once it holds maxCSVRows rows: the route's
// export stops at its next write.
var errCut = errors.New("mcpserver: the CSV answer is cut")

// answer records the API's answer to a tool call.
type answer struct {
	header http.Header
	status int
	body   bytes.Buffer
	// maxLines, when set, keeps a CSV answer to that many lines; lines
	// counts those complete, quoted tells a line break in a quoted cell
	// from a line end, and cut is set once more came.
	maxLines, lines int
	quoted, cut     bool
}

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *answer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	if a.maxLines == 0 || a.status != http.StatusOK {
		return a.body.Write(b)
	}
	for i, c := range b {
		if a.lines == a.maxLines {
			a.cut = true
			a.body.Write(b[:i])
			return i, errCut
		}
		switch {
		case c == '"':
			a.quoted = !a.quoted
		case c == '\n' && !a.quoted:
			a.lines++
		}
	}
	return a.body.Write(b)
}

// result is the tool result of the API's answer: its body as the
// structured content, and as text for clients that read only text; a
// refusal is a tool error carrying the API's error object. A route that
// answers no body (204) gives a text saying so.
func (a *answer) result() *mcp.CallToolResult {
	if a.maxLines > 0 && a.status == http.StatusOK {
		text := a.body.String()
		if a.cut {
			text += fmt.Sprintf("\nCut at %d rows: more licences match. Narrow the filters (issued_before, issued_after, product_id, state) to export the rest.\n", a.maxLines-1)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	body := bytes.TrimSpace(a.body.Bytes())
	if len(body) == 0 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Done: " + http.StatusText(a.status) + "."}},
			IsError: a.status >= 400}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
		IsError:           a.status >= 400,
	}
}

// errorBody is the API's error object.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code      licentia.Code  `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details,omitempty"`
	RequestID string         `json:"request_id"`
}

func errorJSON(id string, err error) []byte {
	e := errAs(err)
	b, _ := json.Marshal(errorBody{Error: errorObject{Code: e.Code, Message: e.Message, Details: e.Details, RequestID: id}})
	return b
}

// refusal is a tool error for a call refused before it reached the API,
// shaped as the API shapes its own.
func refusal(id string, err error) *mcp.CallToolResult {
	b := errorJSON(id, err)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b), IsError: true}
}

// writeError writes the API's error envelope for a refusal of /mcp itself.
func writeError(w http.ResponseWriter, id string, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(web.Status(errAs(err).Code))
	w.Write(append(errorJSON(id, err), '\n'))
}
