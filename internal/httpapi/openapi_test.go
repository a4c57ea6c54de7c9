package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

func TestOpenAPIDocumentValid(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		t.Fatalf("LoadFromData() error = %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("Validate() error = %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(doc.Info.Version) {
		t.Errorf("info.version = %q, want MAJOR.MINOR.PATCH", doc.Info.Version)
	}
	if doc.Webhooks == nil {
		t.Errorf("webhooks section missing; later issues document the outgoing webhooks there")
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := newTestEnv(t)
	r := e.do(t, "GET", "/v1/openapi.json", "", nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json status = %d, want 200", r.status)
	}
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if !bytes.Equal(r.body, httpapi.OpenAPI) {
		t.Errorf("GET /v1/openapi.json is not the embedded document")
	}
}

// contractStatuses is the contract's table of codes and statuses, with
// request_timeout (408), which docs/errors.md adds for a body that misses
// the read deadline.
var contractStatuses = map[licentia.Code]int{
	licentia.CodeValidationFailed:          400,
	licentia.CodeUnauthorized:              401,
	licentia.CodePlanLimitReached:          402,
	licentia.CodeForbidden:                 403,
	licentia.CodeInsufficientScope:         403,
	licentia.CodeInsufficientRole:          403,
	licentia.CodeLicenceRevoked:            403,
	licentia.CodeLicenceExpired:            403,
	licentia.CodeNotFound:                  404,
	licentia.CodeLicenceNotFound:           404,
	licentia.CodeProductNotFound:           404,
	licentia.CodePublicKeyNotFound:         404,
	licentia.CodeIntegrationNotFound:       404,
	licentia.CodeMappingNotFound:           404,
	licentia.CodeWebhookEndpointNotFound:   404,
	licentia.CodeWebhookDeliveryNotFound:   404,
	licentia.CodeMemberNotFound:            404,
	licentia.CodeInvitationNotFound:        404,
	licentia.CodePurchaseNotFound:          404,
	licentia.CodeMethodNotAllowed:          405,
	licentia.CodeConflict:                  409,
	licentia.CodeLicenceAnonymised:         409,
	licentia.CodeProductReserved:           409,
	licentia.CodeInvitationNotPending:      409,
	licentia.CodeSeatLimitReached:          409,
	licentia.CodeActivationRequired:        409, // decisions.md, floating use
	licentia.CodeConcurrencyLimitReached:   409, // decisions.md, floating use
	licentia.CodeLeaseNotFound:             404, // decisions.md, floating use
	licentia.CodeIdempotencyKeyInUse:       409, // decisions.md, beyond the contract
	licentia.CodeIdempotencyKeyReused:      422,
	licentia.CodePayloadTooLarge:           413,
	licentia.CodeRequestTimeout:            408,
	licentia.CodeLicenceKeyInvalid:         422,
	licentia.CodeLicenceWrongProduct:       422,
	licentia.CodeProviderTokenInvalid:      422,
	licentia.CodeWebhookSignatureInvalid:   400,
	licentia.CodeRateLimited:               429,
	licentia.CodeInternal:                  500,
	licentia.CodeProviderUnavailable:       502,
	licentia.CodeProductUnavailable:        503,
	licentia.CodeSigningKeysNotConfigured:  503,
	licentia.CodeIntegrationsNotConfigured: 503,
	licentia.CodeWebhooksNotConfigured:     503,
	licentia.CodeServiceUnavailable:        503,
}

// TestCodes holds every contract code to its status and to the document's
// Error code enum.
func TestCodes(t *testing.T) {
	var codes []string
	for _, c := range licentia.Codes {
		want, ok := contractStatuses[c]
		if !ok {
			t.Errorf("code %q: no contract status in this test; add it from the contract's tables", c)
		}
		if got := web.Status(c); got != want {
			t.Errorf("Status(%q) = %d, want %d", c, got, want)
		}
		codes = append(codes, string(c))
	}
	var enum []string
	for _, v := range apiDocument(t).doc.Components.Schemas["ErrorCode"].Value.Enum {
		enum = append(enum, v.(string))
	}
	slices.Sort(codes)
	slices.Sort(enum)
	if diff := cmp.Diff(codes, enum); diff != "" {
		t.Errorf("ErrorCode enum differs from licentia.Codes (-Codes +enum):\n%s", diff)
	}
	if len(slices.Compact(slices.Clone(codes))) != len(codes) {
		t.Errorf("licentia.Codes lists a code twice")
	}
}

// TestRouteTable holds routes.go, openapi.json and this package's adminRoutes
// and publicRoutes to the same routes and scopes: an activation route is
// registered with s.public and has no scope and no security in the document;
// a purchase lookup route with s.lookup, tagged purchases.
func TestRouteTable(t *testing.T) {
	code := routesInCode(t)
	doc := apiDocument(t).doc

	var inCode, inDoc []string
	for pattern := range code {
		inCode = append(inCode, pattern)
	}
	docScopes := map[string]string{}
	var docPublic, docLookup []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			pattern := method + " " + path
			inDoc = append(inDoc, pattern)
			if s, ok := op.Extensions["x-licentia-scope"].(string); ok {
				docScopes[pattern] = s
			}
			if slices.Contains(op.Tags, "activation") {
				docPublic = append(docPublic, pattern)
			}
			if slices.Contains(op.Tags, "purchases") {
				docLookup = append(docLookup, pattern)
			}
		}
	}
	slices.Sort(inCode)
	slices.Sort(inDoc)
	if diff := cmp.Diff(inCode, inDoc); diff != "" {
		t.Errorf("routes.go and openapi.json differ (-routes.go +openapi.json):\n%s", diff)
	}

	tableScopes := map[string]string{}
	codeScopes := map[string]string{}
	for _, rt := range adminRoutes {
		tableScopes[rt.String()] = string(rt.scope)
		codeScopes[rt.String()] = scopeConstant(rt.scope)
	}
	var codePublic, tablePublic, codeLookup []string
	for _, rt := range publicRoutes {
		tablePublic = append(tablePublic, rt.String())
	}
	for pattern, constant := range code {
		if constant == publicRoute {
			codePublic = append(codePublic, pattern)
			continue
		}
		if constant == lookupRoute {
			codeLookup = append(codeLookup, pattern)
			continue
		}
		if constant == "" {
			continue // an operator route
		}
		if got := codeScopes[pattern]; got != constant {
			t.Errorf("routes.go: %s needs %s, adminRoutes says %s", pattern, constant, got)
		}
	}
	if diff := cmp.Diff(tableScopes, docScopes); diff != "" {
		t.Errorf("x-licentia-scope differs from adminRoutes (-adminRoutes +openapi.json):\n%s", diff)
	}
	for _, list := range [][]string{codePublic, tablePublic, docPublic, codeLookup, docLookup} {
		slices.Sort(list)
	}
	if diff := cmp.Diff(codePublic, tablePublic); diff != "" {
		t.Errorf("s.public routes differ from publicRoutes (-routes.go +publicRoutes):\n%s", diff)
	}
	if diff := cmp.Diff(codePublic, docPublic); diff != "" {
		t.Errorf("s.public routes differ from the document's activation tag (-routes.go +openapi.json):\n%s", diff)
	}
	if diff := cmp.Diff(codeLookup, docLookup); diff != "" {
		t.Errorf("s.lookup routes differ from the document's purchases tag (-routes.go +openapi.json):\n%s", diff)
	}
}

// publicRoute and lookupRoute mark an activation route and a purchase
// lookup route in routesInCode's answer.
const (
	publicRoute = "(public)"
	lookupRoute = "(lookup)"
)

// routesInCode reads routes.go and returns each registered pattern with the
// name of its scope constant ("" for an operator route, publicRoute for an
// activation route).
func routesInCode(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "routes.go", nil, 0)
	if err != nil {
		t.Fatalf("parse routes.go: %v", err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "handle" && sel.Sel.Name != "operator" && sel.Sel.Name != "public" &&
			sel.Sel.Name != "lookup" && sel.Sel.Name != "provider" {
			return true
		}
		lit, ok := c.Args[0].(*ast.BasicLit)
		if !ok {
			t.Errorf("routes.go: a route pattern is not a literal")
			return true
		}
		pattern, _ := strconv.Unquote(lit.Value)
		out[pattern] = ""
		switch sel.Sel.Name {
		case "handle":
			if s, ok := c.Args[1].(*ast.SelectorExpr); ok {
				out[pattern] = s.Sel.Name
			}
		case "public":
			out[pattern] = publicRoute
		case "lookup":
			out[pattern] = lookupRoute
		}
		return true
	})
	return out
}

// scopeConstant returns the Go name of a scope: organization:read is
// ScopeOrganizationRead.
func scopeConstant(s licentia.Scope) string {
	name := "Scope"
	for part := range strings.SplitSeq(string(s), ":") {
		name += strings.ToUpper(part[:1]) + part[1:]
	}
	return name
}

// TestDocumentConventions checks what every operation of openapi.json must
// say: the x-request-id parameter, the headers of every answer, the statuses
// every administration and activation route can answer, and closed answer
// objects.
func TestDocumentConventions(t *testing.T) {
	doc := apiDocument(t).doc
	adminStatuses := []string{"400", "401", "403", "404", "413", "429", "500"}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", name)
			}
			if p := op.Parameters.GetByInAndName("header", "x-request-id"); p == nil {
				t.Errorf("%s: no x-request-id header parameter", name)
			}
			_, isAdmin := op.Extensions["x-licentia-scope"]
			limit := "admin"
			switch {
			case slices.Contains(op.Tags, "purchases"):
				limit = "lookup"
			case !isAdmin:
				limit = "public"
			}
			for status, ref := range op.Responses.Map() {
				checkResponse(t, name+" "+status, status, ref.Value, limit, dailyCapRoutes[name])
			}
			if !isAdmin {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s: an operator or activation route must say security: []", name)
				}
				want, ok := publicStatuses[name]
				switch {
				case ok:
					checkPublicOperation(t, name, op, want, limit)
				case slices.Contains(op.Tags, "activation"), slices.Contains(op.Tags, "purchases"):
					t.Errorf("%s: an activation or lookup route publicStatuses does not list", name)
				}
				continue
			}
			for _, status := range adminStatuses {
				if op.Responses.Value(status) == nil {
					t.Errorf("%s: no %s answer", name, status)
				}
			}
			if strings.HasPrefix(path, "/v1/admin/integrations") && op.Responses.Value("503") == nil {
				t.Errorf("%s: no 503 integrations_not_configured answer", name)
			}
		}
	}
	for name, ref := range doc.Components.Schemas {
		checkClosed(t, "components.schemas."+name, ref.Value, map[*openapi3.Schema]bool{})
	}
}

// dailyCapRoutes also answer 429 for a daily cap, whose answer carries no
// Retry-After header of any kind (contract: Products), so there
// Retry-After-admin is documented but not required. Invitations have such
// limits too (decisions: Team and roles).
var dailyCapRoutes = map[string]bool{"POST /v1/admin/products": true, "POST /v1/admin/invitations": true,
	"POST /v1/admin/licences/{id}/send-key": true}

// publicStatuses are the statuses each activation route answers, from the
// contract's activation table: status signs (503) but refuses nothing (no
// 403 or 409), and deactivate signs nothing. Each reads a body, so each may
// answer 408 when the body misses the read deadline (docs/errors.md).
var publicStatuses = map[string][]string{
	"POST /v1/activations":            {"200", "201", "400", "403", "404", "408", "409", "413", "422", "429", "500", "503"},
	"POST /v1/activations/offline":    {"200", "201", "400", "403", "404", "408", "409", "413", "422", "429", "500", "503"},
	"POST /v1/activations/status":     {"200", "400", "404", "408", "413", "422", "429", "500", "503"},
	"POST /v1/leases":                 {"200", "201", "400", "403", "404", "408", "409", "413", "422", "429", "500", "503"},
	"POST /v1/leases/renew":           {"200", "400", "403", "404", "408", "413", "422", "429", "500", "503"},
	"POST /v1/leases/release":         {"200", "400", "404", "408", "413", "422", "429", "500"},
	"POST /v1/activations/deactivate": {"200", "400", "404", "408", "413", "422", "429", "500"},
	// The lookup signs the keys it shows (503); only the POST reads a body
	// that may miss the read deadline (408).
	"GET /v1/purchases/lookup":  {"200", "400", "404", "413", "429", "500", "503"},
	"POST /v1/purchases/lookup": {"200", "400", "404", "408", "413", "429", "500", "503"},
}

// checkPublicOperation holds an activation or lookup route to its statuses
// and to its rate limit's headers (public or lookup) on every answer, never
// the admin ones.
func checkPublicOperation(t *testing.T, name string, op *openapi3.Operation, want []string, limit string) {
	t.Helper()
	var got []string
	for status, ref := range op.Responses.Map() {
		got = append(got, status)
		for _, h := range []string{"X-RateLimit-Limit-" + limit, "X-RateLimit-Remaining-" + limit, "X-RateLimit-Reset-" + limit} {
			if _, ok := ref.Value.Headers[h]; !ok {
				t.Errorf("%s %s: header %s not documented", name, status, h)
			}
		}
		for h := range ref.Value.Headers {
			if strings.HasSuffix(h, "-admin") || limit == "lookup" && strings.HasSuffix(h, "-public") {
				t.Errorf("%s %s: documents another limit's header %s", name, status, h)
			}
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: statuses differ from the activation table (-want +got):\n%s", name, diff)
	}
	tag := "activation"
	if limit == "lookup" {
		tag = "purchases"
	}
	if !slices.Equal(op.Tags, []string{tag}) {
		t.Errorf("%s: tags = %v, want [%s]", name, op.Tags, tag)
	}
}

// checkResponse holds an answer to the headers every answer carries, and a
// 429 to the Retry-After-<limit> of its rate limit.
// csvAnswers are the answers that are a CSV file, not JSON.
var csvAnswers = map[string]bool{"GET /v1/admin/licences/export 200": true}

func checkResponse(t *testing.T, name, status string, r *openapi3.Response, limit string, dailyCap bool) {
	t.Helper()
	for _, h := range []string{"X-Request-Id", "Cache-Control"} {
		if ref, ok := r.Headers[h]; !ok || !ref.Value.Required {
			t.Errorf("%s: header %s not documented as required", name, h)
		}
	}
	if status == "429" {
		retry := "Retry-After-" + limit
		ref, ok := r.Headers[retry]
		switch {
		case !ok:
			t.Errorf("%s: header %s not documented", name, retry)
		case ref.Value.Required == dailyCap:
			t.Errorf("%s: header %s required = %v, want %v", name, retry, ref.Value.Required, !dailyCap)
		}
	}
	for ct := range r.Content {
		if ct != "application/json" && !(csvAnswers[name] && ct == "text/csv; charset=utf-8") {
			t.Errorf("%s: content type %q, want application/json", name, ct)
		}
	}
}

// checkClosed fails when an object schema with properties allows others: an
// answer that gains a field must gain it in the document too.
func checkClosed(t *testing.T, name string, s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
	t.Helper()
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if s.Type.Is("object") && len(s.Properties) > 0 {
		if ap := s.AdditionalProperties.Has; ap == nil || *ap {
			t.Errorf("%s: additionalProperties is not false", name)
		}
	}
	for p, ref := range s.Properties {
		checkClosed(t, name+"."+p, ref.Value, seen)
	}
	if s.Items != nil {
		checkClosed(t, name+"[]", s.Items.Value, seen)
	}
}

// TestValidatorCatchesDrift makes sure the harness would notice an answer
// that drifts from the document: each change to a real answer must fail.
func TestValidatorCatchesDrift(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	c := call{method: "GET", path: "/v1/admin/organization", key: key}
	good := e.send(t, c)
	d := apiDocument(t)

	edit := func(f func(org map[string]any)) []byte {
		var v map[string]map[string]any
		if err := json.Unmarshal(good.body, &v); err != nil {
			t.Fatal(err)
		}
		f(v["organization"])
		b, _ := json.Marshal(v)
		return b
	}
	withHeader := func(name, value string) http.Header {
		h := good.header.Clone()
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}
	errorBody := `{"error":{"code":"%s","message":"m","request_id":"` + good.header.Get("X-Request-Id") + `"%s}}`
	for _, tt := range []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"extra field", 200, good.header, string(edit(func(o map[string]any) { o["billing"] = "x" }))},
		{"missing field", 200, good.header, string(edit(func(o map[string]any) { delete(o, "slug") }))},
		{"id not a uuid", 200, good.header, string(edit(func(o map[string]any) { o["id"] = "org_1" }))},
		{"time without milliseconds", 200, good.header, string(edit(func(o map[string]any) { o["created_at"] = "2026-03-02T09:00:00Z" }))},
		{"unknown plan", 200, good.header, string(edit(func(o map[string]any) { o["plan"] = "Free" }))},
		{"limit as a string", 200, good.header, string(edit(func(o map[string]any) { o["team_places"].(map[string]any)["limit"] = "1" }))},
		{"no Cache-Control", 200, withHeader("Cache-Control", ""), string(good.body)},
		{"Cache-Control not no-store", 200, withHeader("Cache-Control", "max-age=60"), string(good.body)},
		{"no X-Request-Id", 200, withHeader("X-Request-Id", ""), string(good.body)},
		{"undocumented status", 418, good.header, string(good.body)},
		{"unknown code", 401, good.header, fmt.Sprintf(errorBody, "bad_key", "")},
		{"code of another status", 401, good.header, fmt.Sprintf(errorBody, "forbidden", "")},
		{"details where none are sent", 401, good.header, fmt.Sprintf(errorBody, "unauthorized", `,"details":{}`)},
		{"insufficient_scope without missing", 403, good.header, fmt.Sprintf(errorBody, "insufficient_scope", "")},
		{"missing names no scope", 403, good.header, fmt.Sprintf(errorBody, "insufficient_scope", `,"details":{"missing":["members"]}`)},
		{"validation_failed without issues", 400, good.header, fmt.Sprintf(errorBody, "validation_failed", `,"details":{"issues":[]}`)},
		{"429 without Retry-After-admin", 429, good.header, fmt.Sprintf(errorBody, "rate_limited", "")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &resp{status: tt.status, header: tt.header, body: []byte(tt.body)}
			if errs := exchangeErrors(t.Context(), d, e.request(t, c, nil), r, false); len(errs) == 0 {
				t.Errorf("exchangeErrors() = none, want a mismatch for %s", tt.body)
			}
		})
	}
}

// TestOpenAPINoRepeatedKeys: no object of the document names a key twice.
// A JSON reader keeps only the last of two, so a repeated schema name
// silently replaces the other's schema (two routes once both defined
// ReleasedAnswer).
func TestOpenAPINoRepeatedKeys(t *testing.T) {
	dec := json.NewDecoder(bytes.NewReader(httpapi.OpenAPI))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	path := func() int { return len(stack) }
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.key {
				if top.keys[v] {
					t.Errorf("key %q repeated in one object (depth %d)", v, path())
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
