package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/licentia"
)

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// CallRoute calls the administration route method path the way a tool
// calls its own, with authorization as the caller's credential: for tests
// of the routes no tool offers, which must refuse an assistant all the
// same. Each path parameter is an argument of its own name; in is the
// route's request struct, or nil.
func (s *Server) CallRoute(ctx context.Context, authorization, method, path string, in any, args map[string]any) (*mcp.CallToolResult, error) {
	t := &tool{name: "route", method: method, path: path, in: in}
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		t.args = append(t.args, pathArg{m[1], m[1]})
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	rq := &request{authorization: authorization, addr: "192.0.2.1", id: licentia.NewID()}
	return s.handler(rq, t)(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: t.name, Arguments: raw}})
}
