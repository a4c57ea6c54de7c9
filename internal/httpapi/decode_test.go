package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// issuesOf returns the details.issues of a validation_failed answer.
func issuesOf(t *testing.T, r *resp) []licentia.Issue {
	t.Helper()
	var b struct {
		Error struct {
			Code    licentia.Code `json:"code"`
			Details struct {
				Issues []licentia.Issue `json:"issues"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if b.Error.Code != licentia.CodeValidationFailed {
		t.Errorf("code = %q, want validation_failed; body %s", b.Error.Code, r.body)
	}
	return b.Error.Details.Issues
}

// TestBodyNotUTF8: a string or a name that is not valid UTF-8 (bytes that
// are no character, overlong forms, encoded surrogates, a surrogate escape
// without its other half) is refused with 400 at its path on every route,
// rather than stored with U+FFFD in its place.
func TestBodyNotUTF8(t *testing.T) {
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	key := issued.LicenceKey
	before := e.snapshot(t, e.org.ID, issued.Licence.ID)
	lic := `"licence_key":` + jsonString(t, key)
	for _, tt := range []struct {
		name string
		call call
		want licentia.Issue
	}{
		{
			name: "activation, machine_id with ff fe",
			call: call{method: "POST", path: "/v1/activations", body: "{" + lic + ",\"machine_id\":\"m-\xff\xfe\"}"},
			want: licentia.Issue{Path: "/machine_id", Message: "must be valid UTF-8"},
		},
		{
			name: "activation, label with a lone surrogate escape",
			call: call{method: "POST", path: "/v1/activations", body: "{" + lic + `,"machine_id":"m-1","label":"Ada\ud800"}`},
			want: licentia.Issue{Path: "/label", Message: "must be valid UTF-8"},
		},
		{
			name: "activation, licence_key with an overlong slash",
			call: call{method: "POST", path: "/v1/activations", body: "{\"licence_key\":\"" + key + "\xc0\xaf\",\"machine_id\":\"m-1\"}"},
			want: licentia.Issue{Path: "/licence_key", Message: "must be valid UTF-8"},
		},
		{
			name: "status, machine_id with an encoded surrogate",
			call: call{method: "POST", path: "/v1/activations/status", body: "{" + lic + ",\"machine_id\":\"m-\xed\xa0\x80\"}"},
			want: licentia.Issue{Path: "/machine_id", Message: "must be valid UTF-8"},
		},
		{
			name: "issue licence, email with ff",
			call: call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: "{\"product_id\":\"desk-app\",\"email\":\"ada\xff@example.com\"}"},
			want: licentia.Issue{Path: "/email", Message: "must be valid UTF-8"},
		},
		{
			name: "issue licence, email with an unpaired low surrogate",
			call: call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: `{"product_id":"desk-app","email":"ada\udc00@example.com"}`},
			want: licentia.Issue{Path: "/email", Message: "must be valid UTF-8"},
		},
		{
			name: "product name with an encoded surrogate",
			call: call{method: "PATCH", path: "/v1/admin/products/desk-app", key: e.allKey, body: "{\"name\":\"Desk \xed\xa0\x80\"}"},
			want: licentia.Issue{Path: "/name", Message: "must be valid UTF-8"},
		},
		{
			name: "webhook event type in an array",
			call: call{method: "POST", path: "/v1/admin/webhooks", key: e.allKey, body: `{"url":"https://hooks.example/x","event_types":["licence.issued","licence.revoked\ud800"]}`},
			want: licentia.Issue{Path: "/event_types/1", Message: "must be valid UTF-8"},
		},
		{
			name: "a name that is not UTF-8",
			call: call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: "{\"product_id\":\"desk-app\",\"email\":\"ada@example.com\",\"\xfe\":1}"},
			want: licentia.Issue{Path: "", Message: "holds a name that is not valid UTF-8"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.invalid = true
			r := e.send(t, tt.call)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%s %s status = %d, want 400; body %s", tt.call.method, tt.call.path, r.status, r.body)
			}
			if is := issuesOf(t, r); !slices.Contains(is, tt.want) {
				t.Errorf("issues = %v, want one %v", is, tt.want)
			}
		})
	}
	e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
}

// TestBodyTooDeep: 64 KB of brackets, sent without a key to the activation
// route, is refused at the 33rd level; so is a deep body on an
// administration route. Fields the handler then finds missing are issues
// too, as after any body that is not read.
func TestBodyTooDeep(t *testing.T) {
	e := newActEnv(t)
	for _, tt := range []struct {
		name string
		call call
		want licentia.Issue
	}{
		{
			name: "32,768 brackets to /v1/activations",
			call: call{method: "POST", path: "/v1/activations", body: strings.Repeat("[", 32768) + strings.Repeat("]", 32768)},
			want: licentia.Issue{Path: strings.Repeat("/0", 32), Message: "is nested deeper than 32 levels"},
		},
		{
			name: "deep objects to /v1/admin/licences",
			call: call{method: "POST", path: "/v1/admin/licences", key: e.allKey,
				body: `{"product_id":"desk-app","email":"ada@example.com","x":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}"},
			want: licentia.Issue{Path: "/x" + strings.Repeat("/a", 31), Message: "is nested deeper than 32 levels"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.invalid = true
			r := e.send(t, tt.call)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%s %s status = %d, want 400; body %.200s", tt.call.method, tt.call.path, r.status, r.body)
			}
			if is := issuesOf(t, r); len(is) == 0 || is[0] != tt.want {
				t.Errorf("issues = %.300v, want first %v", is, tt.want)
			}
		})
	}
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
