package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/cli"
)

// bearerTransport sends every request with a bearer credential.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeMCP: serve answers the MCP server at /mcp beside the API and the
// console. Without a credential it answers 401 with the challenge naming
// the protected resource metadata under LICENTIA_BASE_URL; with the token
// `licentia assistant token` prints, the SDK's client lists and calls the
// tools, acting as the member.
func TestServeMCP(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	h.vars["LICENTIA_BASE_URL"] = "https://licences.acme.example"
	h.org(t, "acme", "indie")
	token, _ := h.ok(t, "assistant", "token", "--org", "acme", "--email", "owner@acme.example")["access_token"].(string)
	var logs bytes.Buffer
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, &logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	t.Cleanup(func() { app.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	endpoint := "http://" + app.Addr() + "/mcp"
	poll(t, "the service answers /healthz", func() bool {
		resp, err := http.Get("http://" + app.Addr() + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `Bearer resource_metadata="https://licences.acme.example/.well-known/oauth-protected-resource"`
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("POST /mcp without a credential = %d, WWW-Authenticate %q; want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "licentia-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearerTransport{token}, Timeout: 10 * time.Second}}, nil)
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if len(names) != 34 || !slices.Contains(names, "remove_member") || !slices.Contains(names, "reissue_licence") ||
		!slices.Contains(names, "send_licence_key") || !slices.Contains(names, "list_licences") || !slices.Contains(names, "export_licences") ||
		!slices.Contains(names, "release_held_order") || !slices.Contains(names, "list_product_features") ||
		slices.Contains(names, "save_product_feature") || slices.Contains(names, "delete_product_feature") {
		t.Errorf("an owner's tools = %v, want all 34 an assistant may hold (no feature writes)", names)
	}
	got, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_organization", Arguments: map[string]any{}})
	if err != nil || got.IsError {
		t.Fatalf("get_organization = %+v, %v", got, err)
	}
	org, _ := got.StructuredContent.(map[string]any)["organization"].(map[string]any)
	if org["slug"] != "acme" {
		t.Errorf("get_organization = %v", got.StructuredContent)
	}
	if strings.Contains(logs.String(), token) {
		t.Error("the log holds the access token")
	}
}
