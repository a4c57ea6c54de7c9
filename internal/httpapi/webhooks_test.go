package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// endpointView is the endpoint object of an answer.
type endpointView struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	EventTypes     []string `json:"event_types"`
	Description    string   `json:"description"`
	Enabled        bool     `json:"enabled"`
	DisabledReason *string  `json:"disabled_reason"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
}

type endpointAnswer struct {
	Endpoint endpointView `json:"webhook_endpoint"`
}

// endpointSecretAnswer is the answer to an add or a rotate-secret.
type endpointSecretAnswer struct {
	Endpoint endpointView `json:"webhook_endpoint"`
	Secret   string       `json:"secret"`
}

// deliveryView is the delivery object of an answer.
type deliveryView struct {
	ID             string  `json:"id"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastAttemptAt  *string `json:"last_attempt_at"`
	NextAttemptAt  *string `json:"next_attempt_at"`
	LastStatusCode *int    `json:"last_status_code"`
	FailureReason  *string `json:"failure_reason"`
	CreatedAt      string  `json:"created_at"`
}

type deliveriesAnswer struct {
	Deliveries []deliveryView `json:"deliveries"`
	NextCursor *string        `json:"next_cursor"`
}

// hooksPath is the path of the endpoint list, or of endpoint id followed by
// more path segments.
func hooksPath(id string, more ...string) string {
	p := "/v1/admin/webhooks"
	if id != "" {
		p += "/" + id
	}
	for _, m := range more {
		p += "/" + m
	}
	return p
}

// retryPath is the path of a delivery's retry.
func retryPath(endpointID, deliveryID string) string {
	return hooksPath(endpointID, "deliveries", deliveryID, "retry")
}

// endpointBody is an add body for url subscribed to types.
func endpointBody(url string, types ...licentia.EventType) map[string]any {
	return map[string]any{"url": url, "event_types": types}
}

// hookURL is an endpoint URL on the env's receiver.
func hookURL(path string) string { return "https://" + receiverHost + path }

// addEndpoint adds an endpoint with key and wants 201.
func (e *testEnv) addEndpoint(t *testing.T, key string, body any) endpointSecretAnswer {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: key, body: body}, wantStatus: http.StatusCreated})
	return decodeStrict[endpointSecretAnswer](t, r.body)
}

// getEndpoint reads an endpoint with key and wants 200.
func (e *testEnv) getEndpoint(t *testing.T, key, id string) endpointView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: hooksPath(id), key: key}, wantStatus: http.StatusOK})
	return decodeStrict[endpointAnswer](t, r.body).Endpoint
}

// patchEndpoint changes an endpoint with key and wants 200.
func (e *testEnv) patchEndpoint(t *testing.T, key, id string, body any) endpointView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "PATCH", path: hooksPath(id), key: key, body: body}, wantStatus: http.StatusOK})
	return decodeStrict[endpointAnswer](t, r.body).Endpoint
}

// listDeliveries reads a page of an endpoint's deliveries; query is
// already encoded.
func (e *testEnv) listDeliveries(t *testing.T, key, id, query string) deliveriesAnswer {
	t.Helper()
	p := hooksPath(id, "deliveries")
	if query != "" {
		p += "?" + query
	}
	r := e.run(t, scenario{call: call{method: "GET", path: p, key: key}, wantStatus: http.StatusOK})
	return decodeStrict[deliveriesAnswer](t, r.body)
}

// delivery reads one delivery through the list of its endpoint.
func (e *testEnv) delivery(t *testing.T, key, endpointID, id string) deliveryView {
	t.Helper()
	for cursor := ""; ; {
		page := e.listDeliveries(t, key, endpointID, cursor)
		for _, d := range page.Deliveries {
			if d.ID == id {
				return d
			}
		}
		if page.NextCursor == nil {
			t.Fatalf("delivery %s not listed on endpoint %s", id, endpointID)
		}
		cursor = q("cursor", *page.NextCursor)
	}
}

// injectDeliveries writes an event of orgID and n deliveries of it to the
// endpoint straight into the store, created at createdAt(i), and returns
// them as stored.
func (e *testEnv) injectDeliveries(t *testing.T, orgID, endpointID string, n int, createdAt func(i int) time.Time) []licentia.Delivery {
	t.Helper()
	now := e.clock.Now().UTC().Truncate(time.Millisecond)
	ev := &licentia.Event{ID: "evt_" + strings.ReplaceAll(licentia.NewID(), "-", ""), OrgID: orgID, Type: licentia.EventLicenceIssued, At: now,
		Body: []byte(`{"type":"licence.issued","timestamp":"` + licentia.FormatTime(now) + `","data":{}}`)}
	ds := make([]licentia.Delivery, n)
	for i := range ds {
		at := createdAt(i).UTC().Truncate(time.Millisecond)
		ds[i] = licentia.Delivery{ID: licentia.NewID(), OrgID: orgID, EndpointID: endpointID, EventID: ev.ID,
			EventType: ev.Type, Status: licentia.DeliveryPending, NextAttemptAt: &at, CreatedAt: at}
	}
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		if err := tx.InsertEvent(t.Context(), ev); err != nil {
			return err
		}
		return tx.CreateDeliveries(t.Context(), ds)
	})
	if err != nil {
		t.Fatalf("inject deliveries: %v", err)
	}
	return ds
}

// webhookAudit returns an organization's webhook audit entries, oldest first.
func webhookAudit(t *testing.T, e *testEnv, orgID string) []auditLine {
	t.Helper()
	entries, err := e.store.OrganizationAudit(t.Context(), orgID)
	if err != nil {
		t.Fatalf("OrganizationAudit() error = %v", err)
	}
	out := []auditLine{}
	for _, a := range entries {
		if !strings.HasPrefix(a.Action, "webhook_") {
			continue
		}
		l := auditLine{Action: a.Action, Actor: a.Actor, At: licentia.FormatTime(a.At)}
		if err := json.Unmarshal(a.Data, &l.Data); err != nil {
			t.Fatalf("audit data %s: %v", a.Data, err)
		}
		out = append(out, l)
	}
	return out
}

// adminKey is a new key holding scopes.
func adminKey(scopes ...licentia.Scope) admin.NewAPIKey {
	return admin.NewAPIKey{Name: "hooks", Scopes: scopes}
}

// wantSecret fails unless secret is whsec_ and the base64 of 32 bytes.
func wantSecret(t *testing.T, secret string) {
	t.Helper()
	raw, ok := strings.CutPrefix(secret, "whsec_")
	b, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(b) != 32 {
		t.Errorf("secret %q, want whsec_ and the base64 of 32 bytes", secret)
	}
}

// TestWebhookEndpointLifecycle: add, list, read, change, turn off and on,
// replace the secret, remove; each answer as the contract shapes it, each
// change with its audit entry, and the secret only where it is shown once.
func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key, rec := e.newKey(t, e.org.ID, adminKey(licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite))
	actor := licentia.APIKeyActor(rec.ID)

	added := e.addEndpoint(t, key, map[string]any{
		"url":         "https://Hooks.Example.COM.:443/licentia?src=x",
		"event_types": []string{"licence.issued", "licence.revoked", "licence.issued"},
	})
	wantSecret(t, added.Secret)
	id := added.Endpoint.ID
	if !uuidRE.MatchString(id) {
		t.Errorf("id = %q, want a lower-case UUID", id)
	}
	want := endpointView{ID: id, URL: "https://hooks.example.com/licentia?src=x", EventTypes: []string{"licence.issued", "licence.revoked"},
		Description: "", Enabled: true, CreatedAt: at(0), UpdatedAt: at(0)}
	if diff := cmp.Diff(want, added.Endpoint); diff != "" {
		t.Errorf("added endpoint mismatch (-want +got):\n%s", diff)
	}

	noSecret := []string{added.Secret, "whsec_", `"secret"`}
	r := e.run(t, scenario{call: call{method: "GET", path: hooksPath(""), key: key}, wantStatus: http.StatusOK, notWant: noSecret})
	if diff := cmp.Diff([]endpointView{want}, decodeStrict[struct {
		Endpoints []endpointView `json:"webhook_endpoints"`
	}](t, r.body).Endpoints); diff != "" {
		t.Errorf("list mismatch (-want +got):\n%s", diff)
	}
	r = e.run(t, scenario{call: call{method: "GET", path: hooksPath(strings.ToUpper(id)), key: key}, wantStatus: http.StatusOK, notWant: noSecret})
	if diff := cmp.Diff(want, decodeStrict[endpointAnswer](t, r.body).Endpoint); diff != "" {
		t.Errorf("read mismatch (-want +got):\n%s", diff)
	}

	e.clock.Advance(time.Minute)
	changed := e.patchEndpoint(t, key, id, map[string]any{"description": "CRM sync", "event_types": []string{"activation.created"},
		"url": "https://crm.example.com/in"})
	want.Description, want.EventTypes, want.URL, want.UpdatedAt = "CRM sync", []string{"activation.created"}, "https://crm.example.com/in", at(time.Minute)
	if diff := cmp.Diff(want, changed); diff != "" {
		t.Errorf("patched endpoint mismatch (-want +got):\n%s", diff)
	}

	e.clock.Advance(time.Minute)
	off := e.patchEndpoint(t, key, id, map[string]any{"enabled": false})
	want.Enabled, want.DisabledReason, want.UpdatedAt = false, ptr("disabled_by_maker"), at(2*time.Minute)
	if diff := cmp.Diff(want, off); diff != "" {
		t.Errorf("turned-off endpoint mismatch (-want +got):\n%s", diff)
	}
	e.clock.Advance(time.Minute)
	on := e.patchEndpoint(t, key, id, map[string]any{"enabled": true})
	want.Enabled, want.DisabledReason, want.UpdatedAt = true, nil, at(3*time.Minute)
	if diff := cmp.Diff(want, on); diff != "" {
		t.Errorf("turned-on endpoint mismatch (-want +got):\n%s", diff)
	}
	// A change that changes nothing writes nothing.
	e.clock.Advance(time.Minute)
	same := e.patchEndpoint(t, key, id, map[string]any{"enabled": true, "description": "CRM sync", "url": "https://CRM.example.com/in"})
	if diff := cmp.Diff(want, same); diff != "" {
		t.Errorf("patch that changes nothing mismatch (-want +got):\n%s", diff)
	}

	r = e.run(t, scenario{call: call{method: "POST", path: hooksPath(id, "rotate-secret"), key: key}, wantStatus: http.StatusOK})
	rotated := decodeStrict[endpointSecretAnswer](t, r.body)
	wantSecret(t, rotated.Secret)
	if rotated.Secret == added.Secret {
		t.Errorf("rotate-secret answered the old secret")
	}
	if diff := cmp.Diff(want, rotated.Endpoint); diff != "" {
		t.Errorf("rotated endpoint mismatch (-want +got):\n%s", diff)
	}
	e.run(t, scenario{call: call{method: "GET", path: hooksPath(id), key: key}, wantStatus: http.StatusOK,
		notWant: []string{added.Secret, rotated.Secret, "whsec_"}})

	e.run(t, scenario{call: call{method: "DELETE", path: hooksPath(id), key: key}, wantStatus: http.StatusNoContent})
	e.run(t, scenario{call: call{method: "GET", path: hooksPath(id), key: key}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeWebhookEndpointNotFound})
	e.run(t, scenario{call: call{method: "DELETE", path: hooksPath(id), key: key}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeWebhookEndpointNotFound})
	e.run(t, scenario{call: call{method: "GET", path: hooksPath(""), key: key}, wantStatus: http.StatusOK, wantBody: `{"webhook_endpoints":[]}`})

	wantAudit := []auditLine{
		{Action: "webhook_endpoint.created", Actor: actor, At: at(0), Data: map[string]any{"webhook_endpoint_id": id,
			"url": "https://hooks.example.com/licentia?src=x", "event_types": []any{"licence.issued", "licence.revoked"}, "enabled": true}},
		{Action: "webhook_endpoint.updated", Actor: actor, At: at(time.Minute), Data: map[string]any{"webhook_endpoint_id": id,
			"url": "https://crm.example.com/in", "event_types": []any{"activation.created"}, "description": "CRM sync"}},
		{Action: "webhook_endpoint.updated", Actor: actor, At: at(2 * time.Minute), Data: map[string]any{"webhook_endpoint_id": id, "enabled": false}},
		{Action: "webhook_endpoint.updated", Actor: actor, At: at(3 * time.Minute), Data: map[string]any{"webhook_endpoint_id": id, "enabled": true}},
		{Action: "webhook_endpoint.secret_rotated", Actor: actor, At: at(4 * time.Minute), Data: map[string]any{"webhook_endpoint_id": id}},
		{Action: "webhook_endpoint.deleted", Actor: actor, At: at(4 * time.Minute), Data: map[string]any{"webhook_endpoint_id": id}},
	}
	if diff := cmp.Diff(wantAudit, webhookAudit(t, e, e.org.ID)); diff != "" {
		t.Errorf("audit mismatch (-want +got):\n%s", diff)
	}
	if logs := e.logs.String(); strings.Contains(logs, added.Secret) || strings.Contains(logs, rotated.Secret) || strings.Contains(logs, "whsec_") {
		t.Errorf("logs hold a webhook secret:\n%s", logs)
	}
}

// TestWebhookRoutesWithTheirScope: each route succeeds with a key holding
// only its own scope.
func TestWebhookRoutesWithTheirScope(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	read := e.key(t, e.org.ID, licentia.ScopeWebhooksRead)
	write := e.key(t, e.org.ID, licentia.ScopeWebhooksWrite)
	id := e.addEndpoint(t, write, endpointBody(hookURL("/a"), licentia.EventLicenceIssued)).Endpoint.ID
	d := e.injectDeliveries(t, e.org.ID, id, 1, func(int) time.Time { return e.clock.Now() })[0]
	for _, tt := range []scenario{
		{call: call{method: "GET", path: hooksPath(""), key: read}, wantStatus: http.StatusOK},
		{call: call{method: "GET", path: hooksPath(id), key: read}, wantStatus: http.StatusOK},
		{call: call{method: "GET", path: hooksPath(id, "deliveries"), key: read}, wantStatus: http.StatusOK},
		{call: call{method: "PATCH", path: hooksPath(id), key: write, body: map[string]any{"description": "x"}}, wantStatus: http.StatusOK},
		{call: call{method: "POST", path: hooksPath(id, "rotate-secret"), key: write}, wantStatus: http.StatusOK},
		{call: call{method: "POST", path: hooksPath(id, "rotate-secret"), key: write, body: "{}"}, wantStatus: http.StatusOK},
		{call: call{method: "POST", path: retryPath(id, d.ID), key: write}, wantStatus: http.StatusAccepted},
		{call: call{method: "DELETE", path: hooksPath(id), key: write}, wantStatus: http.StatusNoContent},
		{call: call{method: "POST", path: hooksPath(""), key: read, body: endpointBody(hookURL("/b"), licentia.EventLicenceIssued)},
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"webhooks:write"}}},
		{call: call{method: "GET", path: hooksPath(""), key: write},
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"webhooks:read"}}},
	} {
		t.Run(tt.call.method+" "+tt.call.path, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestWebhookIsolation: another organization's endpoint, and a delivery
// that is not the endpoint's, answer exactly like missing ones, and
// nothing of theirs changes.
func TestWebhookIsolation(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	mine := e.addEndpoint(t, key, endpointBody(hookURL("/mine"), licentia.EventLicenceIssued)).Endpoint
	mine2 := e.addEndpoint(t, key, endpointBody(hookURL("/mine2"), licentia.EventLicenceIssued)).Endpoint
	myDelivery := e.injectDeliveries(t, e.org.ID, mine.ID, 1, func(int) time.Time { return e.clock.Now() })[0]
	mine2Delivery := e.injectDeliveries(t, e.org.ID, mine2.ID, 1, func(int) time.Time { return e.clock.Now() })[0]

	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	otherKey := e.key(t, other.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	theirs := e.addEndpoint(t, otherKey, endpointBody(hookURL("/theirs"), licentia.EventLicenceIssued)).Endpoint
	theirDelivery := e.injectDeliveries(t, other.ID, theirs.ID, 1, func(int) time.Time { return e.clock.Now() })[0]

	r := e.run(t, scenario{call: call{method: "GET", path: hooksPath(""), key: key}, wantStatus: http.StatusOK})
	var listed []string
	for _, ep := range decodeStrict[struct {
		Endpoints []endpointView `json:"webhook_endpoints"`
	}](t, r.body).Endpoints {
		listed = append(listed, ep.ID)
	}
	slices.Sort(listed)
	if want := []string{mine.ID, mine2.ID}; !slices.Equal(listed, slices.Sorted(slices.Values(want))) {
		t.Errorf("list = %v, want only the caller's %v", listed, want)
	}

	// message returns the message of a 404 with code, so the answers to
	// another organization's ids can be held to the answers to missing ones.
	message := func(t *testing.T, c call, code licentia.Code) string {
		t.Helper()
		return e.run(t, scenario{call: c, wantStatus: http.StatusNotFound, wantCode: code}).apiError(t).Message
	}
	for _, tt := range []struct {
		name          string
		theirs, ghost call
		code          licentia.Code
	}{
		{"read", call{method: "GET", path: hooksPath(theirs.ID)}, call{method: "GET", path: hooksPath(someID)}, licentia.CodeWebhookEndpointNotFound},
		{"change", call{method: "PATCH", path: hooksPath(theirs.ID), body: map[string]any{"enabled": false}},
			call{method: "PATCH", path: hooksPath(someID), body: map[string]any{"enabled": false}}, licentia.CodeWebhookEndpointNotFound},
		{"remove", call{method: "DELETE", path: hooksPath(theirs.ID)}, call{method: "DELETE", path: hooksPath(someID)}, licentia.CodeWebhookEndpointNotFound},
		{"rotate", call{method: "POST", path: hooksPath(theirs.ID, "rotate-secret")}, call{method: "POST", path: hooksPath(someID, "rotate-secret")}, licentia.CodeWebhookEndpointNotFound},
		{"deliveries", call{method: "GET", path: hooksPath(theirs.ID, "deliveries")}, call{method: "GET", path: hooksPath(someID, "deliveries")}, licentia.CodeWebhookEndpointNotFound},
		{"retry on their endpoint", call{method: "POST", path: retryPath(theirs.ID, theirDelivery.ID)}, call{method: "POST", path: retryPath(someID, otherID)}, licentia.CodeWebhookEndpointNotFound},
		{"retry of their delivery", call{method: "POST", path: retryPath(mine.ID, theirDelivery.ID)}, call{method: "POST", path: retryPath(mine.ID, otherID)}, licentia.CodeWebhookDeliveryNotFound},
		{"retry of another endpoint's delivery", call{method: "POST", path: retryPath(mine.ID, mine2Delivery.ID)}, call{method: "POST", path: retryPath(mine.ID, otherID)}, licentia.CodeWebhookDeliveryNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.theirs.key, tt.ghost.key = key, key
			if got, want := message(t, tt.theirs, tt.code), message(t, tt.ghost, tt.code); got != want {
				t.Errorf("another organization's id answers %q, a missing one %q", got, want)
			}
		})
	}
	if got := e.getEndpoint(t, otherKey, theirs.ID); !cmp.Equal(got, theirs) {
		t.Errorf("their endpoint changed: %+v, was %+v", got, theirs)
	}
	if got := e.listDeliveries(t, otherKey, theirs.ID, ""); len(got.Deliveries) != 1 || got.Deliveries[0].Status != "pending" || *got.Deliveries[0].NextAttemptAt != at(0) {
		t.Errorf("their delivery changed: %+v", got.Deliveries)
	}
	if got := webhookAudit(t, e, other.ID); len(got) != 1 {
		t.Errorf("their audit log has %d webhook entries, want only their add", len(got))
	}
	if d := e.delivery(t, key, mine.ID, myDelivery.ID); d.Status != "pending" {
		t.Errorf("own delivery = %+v", d)
	}
}

// TestWebhookURLRules: a URL breaking a rule is refused on save, on add and
// on change, with one issue at /url (the rules' own table covers every
// notation); accepted URLs are stored normalised.
func TestWebhookURLRules(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	id := e.addEndpoint(t, key, endpointBody(hookURL("/keep"), licentia.EventLicenceIssued)).Endpoint.ID
	long := "https://hooks.example.com/" + strings.Repeat("a", 2049-len("https://hooks.example.com/"))
	for _, tt := range []struct {
		name, url, message string
		invalid            bool // the document refuses it too
	}{
		{"http", "http://hooks.example.com/x", "must use https", false},
		{"port 8443", "https://hooks.example.com:8443/x", "must use port 443", false},
		{"user info", "https://user:pass@hooks.example.com/x", "must not contain a user name or password", false},
		{"fragment", "https://hooks.example.com/x#part", "must not contain a fragment", false},
		{"IPv4", "https://127.0.0.1/x", "must not be an IP address", false},
		{"hex IPv4", "https://0x7f.1/x", "must not be an IP address", false},
		{"IPv6", "https://[::1]/x", "must not be an IP address", false},
		{"localhost", "https://localhost/x", "must have a public host name, not a name without a dot", false},
		{"single label", "https://intranet/x", "must have a public host name, not a name without a dot", false},
		{"under .internal", "https://hooks.corp.internal/x", "must have a public host name, not one under .internal", false},
		{"under .local", "https://printer.local/x", "must have a public host name, not one under .local", false},
		{"under .home.arpa", "https://nas.home.arpa/x", "must have a public host name, not one under .home.arpa", false},
		{"service host", "https://licentia.example.org/x", "must not be the service's own host or a name under it", false},
		{"under the service host", "https://hooks.LICENTIA.example.org./x", "must not be the service's own host or a name under it", false},
		{"2049 characters", long, "must be at most 2048 characters", true},
		{"empty", "", "must not be empty", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := issues("/url", tt.message)
			e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: key, body: endpointBody(tt.url, licentia.EventLicenceIssued), invalid: tt.invalid},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: want})
			e.run(t, scenario{call: call{method: "PATCH", path: hooksPath(id), key: key, body: map[string]any{"url": tt.url}, invalid: tt.invalid},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: want})
		})
	}
	if got := e.getEndpoint(t, key, id).URL; got != hookURL("/keep") {
		t.Errorf("url after refused changes = %q, want it unchanged", got)
	}
	if got := webhookAudit(t, e, e.org.ID); len(got) != 1 {
		t.Errorf("%d webhook audit entries, want only the add", len(got))
	}
	for _, tt := range []struct{ in, want string }{
		{"https://Hooks.Example.COM./x", "https://hooks.example.com/x"},
		{"https://hooks.example.com:443/a?b=c", "https://hooks.example.com/a?b=c"},
		{"https://bücher.example/x", "https://xn--bcher-kva.example/x"},
		{"https://hooks.example.com/" + strings.Repeat("a", 2048-len("https://hooks.example.com/")), ""},
	} {
		got := e.patchEndpoint(t, key, id, map[string]any{"url": tt.in}).URL
		if tt.want == "" {
			tt.want = tt.in
		}
		if got != tt.want {
			t.Errorf("PATCH url %q stored %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWebhookBodyRules: event_types and description on add and change,
// and the problems of a body reported all at once.
func TestWebhookBodyRules(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	id := e.addEndpoint(t, key, endpointBody(hookURL("/keep"), licentia.EventLicenceIssued)).Endpoint.ID
	url := hookURL("/x")
	descRule := "must be at most 500 characters without control characters"
	for _, tt := range []struct {
		name    string
		body    any
		invalid bool
		issues  map[string]any
	}{
		{"no event types", map[string]any{"url": url, "event_types": []string{}}, true, issues("/event_types", "must name at least one event type")},
		{"unknown event type", map[string]any{"url": url, "event_types": []string{"licence.issued", "licence.created"}}, true,
			issues("/event_types/1", "must be one of the event types")},
		{"event types null", map[string]any{"url": url, "event_types": nil}, true, issues("/event_types", "must be an array of strings")},
		{"event types a string", map[string]any{"url": url, "event_types": "licence.issued"}, true, issues("/event_types", "must be an array of strings")},
		{"description of 501", map[string]any{"url": url, "event_types": []string{"licence.issued"}, "description": strings.Repeat("d", 501)}, true,
			issues("/description", descRule)},
		{"description with a control character", map[string]any{"url": url, "event_types": []string{"licence.issued"}, "description": "a\tb"}, false,
			issues("/description", descRule)},
		{"enabled a string", map[string]any{"url": url, "event_types": []string{"licence.issued"}, "enabled": "yes"}, true, issues("/enabled", "must be a boolean")},
		{"missing url and event types", map[string]any{}, true, issues("/url", "is required", "/event_types", "is required")},
		{"unknown field", map[string]any{"url": url, "event_types": []string{"licence.issued"}, "secret": "whsec_x"}, true, issues("/secret", "unknown field")},
		{"not an object", "[]", true, issues("", "the body must be a JSON object", "/url", "is required", "/event_types", "is required")},
		{"every problem at once", map[string]any{"url": "http://x", "event_types": []string{}, "description": strings.Repeat("d", 501)}, true,
			issues("/url", "must use https", "/event_types", "must name at least one event type", "/description", descRule)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: key, body: tt.body, invalid: tt.invalid},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.issues})
		})
	}
	for _, tt := range []struct {
		name    string
		body    any
		invalid bool
		issues  map[string]any
	}{
		{"empty object", map[string]any{}, true, issues("", "give at least one of url, event_types, description, enabled")},
		{"no body", nil, true, issues("", "give at least one of url, event_types, description, enabled")},
		{"no event types", map[string]any{"event_types": []string{}}, true, issues("/event_types", "must name at least one event type")},
		{"description of 501", map[string]any{"description": strings.Repeat("é", 501)}, true, issues("/description", descRule)},
		{"enabled null", map[string]any{"enabled": nil}, true, issues("/enabled", "must be a boolean")},
	} {
		t.Run("PATCH "+tt.name, func(t *testing.T) {
			e.run(t, scenario{call: call{method: "PATCH", path: hooksPath(id), key: key, body: tt.body, invalid: tt.invalid},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.issues})
		})
	}

	added := e.addEndpoint(t, key, map[string]any{"url": url, "description": strings.Repeat("é", 500), "enabled": false,
		"event_types": []string{"activation.deactivated", "licence.issued", "activation.deactivated", "licence.issued"}}).Endpoint
	if diff := cmp.Diff([]string{"activation.deactivated", "licence.issued"}, added.EventTypes); diff != "" {
		t.Errorf("duplicate event types not collapsed (-want +got):\n%s", diff)
	}
	if !cmp.Equal(added.DisabledReason, ptr("disabled_by_maker")) || added.Enabled {
		t.Errorf("added turned off: enabled %v, disabled_reason %v; want false, disabled_by_maker", added.Enabled, added.DisabledReason)
	}
	every := make([]string, len(licentia.EventTypes))
	for i, typ := range licentia.EventTypes {
		every[i] = string(typ)
	}
	got := e.patchEndpoint(t, key, id, map[string]any{"event_types": append(every, every...)})
	if diff := cmp.Diff(every, got.EventTypes); diff != "" {
		t.Errorf("PATCH event_types (-want +got):\n%s", diff)
	}
}

// TestWebhookBodySize: a body of 65,536 bytes is read, one byte more
// answers 413 before anything else, on every webhook route.
func TestWebhookBodySize(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	add := `{"url":"https://hooks.example.com/x","event_types":["licence.issued"]}`
	id := e.addEndpoint(t, key, paddedBody(add, 65536)).Endpoint.ID
	e.patchEndpoint(t, key, id, paddedBody(`{"description":"big"}`, 65536))
	for _, rt := range adminRoutes {
		if rt.scope != licentia.ScopeWebhooksRead && rt.scope != licentia.ScopeWebhooksWrite {
			continue
		}
		t.Run(rt.String(), func(t *testing.T) {
			e.run(t, scenario{call: call{method: rt.method, path: strings.Replace(rt.path(), someID, id, 1), key: key, body: paddedBody(`{"x":1}`, 65537), invalid: true},
				wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
		})
	}
	if n := len(webhookAudit(t, e, e.org.ID)); n != 2 {
		t.Errorf("%d webhook audit entries, want the add and the change", n)
	}
}

// TestWebhookPlanLimit: the free plan allows one endpoint, turned-off ones
// included; past it, 402 with nothing written. Two racing adds for the
// last place: exactly one wins.
func TestWebhookPlanLimit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	free := e.createOrg(t, "freebie", licentia.PlanFree)
	key := e.key(t, free.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	first := e.addEndpoint(t, key, endpointBody(hookURL("/1"), licentia.EventLicenceIssued)).Endpoint
	e.patchEndpoint(t, key, first.ID, map[string]any{"enabled": false})
	limit := map[string]any{"plan": "free", "resource": "webhook_endpoints", "limit": float64(1), "count": float64(1)}
	e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: key, body: endpointBody(hookURL("/2"), licentia.EventLicenceIssued)},
		wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached, wantDetails: limit})
	// 400 comes before 402.
	e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: key, body: endpointBody("http://x", licentia.EventLicenceIssued)},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/url", "must use https")})
	r := e.run(t, scenario{call: call{method: "GET", path: hooksPath(""), key: key}, wantStatus: http.StatusOK})
	if n := strings.Count(string(r.body), `"id"`); n != 1 {
		t.Errorf("%d endpoints after a refused add, want 1", n)
	}
	if n := len(webhookAudit(t, e, free.ID)); n != 2 {
		t.Errorf("%d webhook audit entries, want the add and the change only", n)
	}

	e.run(t, scenario{call: call{method: "DELETE", path: hooksPath(first.ID), key: key}, wantStatus: http.StatusNoContent})
	answers := e.concurrently(t, 8, func(i int) call {
		return call{method: "POST", path: hooksPath(""), key: key, body: endpointBody(hookURL("/race"), licentia.EventLicenceIssued)}
	})
	var won int
	for _, a := range answers {
		switch a.status {
		case http.StatusCreated:
			won++
		case http.StatusPaymentRequired:
		default:
			t.Errorf("racing add status = %d, want 201 or 402; body %s", a.status, a.body)
		}
	}
	if won != 1 {
		t.Errorf("%d racing adds won the last place, want exactly 1", won)
	}
}

// TestWebhookDeliveriesList: newest first, 100 a page, next_cursor through
// deliveries sharing a millisecond, null on the last page.
func TestWebhookDeliveriesList(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	id := e.addEndpoint(t, key, endpointBody(hookURL("/list"), licentia.EventLicenceIssued)).Endpoint.ID
	other := e.addEndpoint(t, key, endpointBody(hookURL("/other"), licentia.EventLicenceIssued)).Endpoint.ID
	e.run(t, scenario{call: call{method: "GET", path: hooksPath(id, "deliveries"), key: key}, wantStatus: http.StatusOK,
		wantBody: `{"deliveries":[],"next_cursor":null}`})

	// Three deliveries to a millisecond, so pages end inside a tie.
	ds := e.injectDeliveries(t, e.org.ID, id, 205, func(i int) time.Time { return start.Add(time.Duration(i/3) * time.Millisecond) })
	otherDs := e.injectDeliveries(t, e.org.ID, other, 3, func(int) time.Time { return start.Add(time.Hour) })
	slices.SortFunc(ds, func(a, b licentia.Delivery) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	var want []string
	for _, d := range ds {
		want = append(want, d.ID)
	}

	var got []string
	var sizes []int
	for cursor := ""; ; {
		page := e.listDeliveries(t, key, id, cursor)
		sizes = append(sizes, len(page.Deliveries))
		for _, d := range page.Deliveries {
			got = append(got, d.ID)
		}
		if page.NextCursor == nil {
			break
		}
		if last := page.Deliveries[len(page.Deliveries)-1].ID; *page.NextCursor != last {
			t.Errorf("next_cursor = %s, want the page's last delivery %s", *page.NextCursor, last)
		}
		cursor = q("cursor", *page.NextCursor)
	}
	if diff := cmp.Diff([]int{100, 100, 5}, sizes); diff != "" {
		t.Errorf("page sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries not newest first, each once (-want +got):\n%s", diff)
	}

	first := e.listDeliveries(t, key, id, "").Deliveries[0]
	wantFirst := deliveryView{ID: ds[0].ID, EventID: ds[0].EventID, EventType: "licence.issued", Status: "pending", Attempts: 0,
		NextAttemptAt: ptr(licentia.FormatTime(ds[0].CreatedAt)), CreatedAt: licentia.FormatTime(ds[0].CreatedAt)}
	if diff := cmp.Diff(wantFirst, first); diff != "" {
		t.Errorf("delivery object mismatch (-want +got):\n%s", diff)
	}

	cursorIssue := issues("query.cursor", "is not a cursor of this endpoint's deliveries")
	for _, tt := range []scenario{
		{name: "not a UUID", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=abc", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: cursorIssue},
		{name: "empty", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: cursorIssue},
		{name: "unknown delivery", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=" + someID, key: key},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: cursorIssue},
		{name: "another endpoint's delivery", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=" + otherDs[0].ID, key: key},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: cursorIssue},
		{name: "given twice", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=" + ds[0].ID + "&cursor=" + ds[1].ID, key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.cursor", "must be given once")},
		{name: "unknown parameter", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?limit=5", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.limit", "unknown parameter")},
		{name: "upper-case cursor", call: call{method: "GET", path: hooksPath(id, "deliveries") + "?cursor=" + strings.ToUpper(ds[99].ID), key: key},
			wantStatus: http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestWebhookRetry: a retry makes the delivery pending and due now, with
// its audit entry (webhooks_delivery_test.go shows it sent again).
func TestWebhookRetry(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	key, rec := e.newKey(t, e.org.ID, adminKey(licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite))
	id := e.addEndpoint(t, key, endpointBody(hookURL("/r"), licentia.EventLicenceIssued)).Endpoint.ID
	d := e.injectDeliveries(t, e.org.ID, id, 1, func(int) time.Time { return start })[0]
	failedAt := start.Add(time.Hour)
	d.Status, d.Attempts, d.LastAttemptAt, d.NextAttemptAt, d.LastStatusCode, d.FailureReason =
		licentia.DeliveryFailed, 9, &failedAt, nil, ptr(500), ptr(licentia.FailureStatus)
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.FinishAttempts(t.Context(), []licentia.Delivery{d}) }); err != nil {
		t.Fatalf("FinishAttempts() error = %v", err)
	}

	e.clock.Advance(2 * time.Hour)
	r := e.run(t, scenario{call: call{method: "POST", path: retryPath(id, strings.ToUpper(d.ID)), key: key}, wantStatus: http.StatusAccepted})
	got := decodeStrict[struct {
		Delivery deliveryView `json:"delivery"`
	}](t, r.body).Delivery
	want := deliveryView{ID: d.ID, EventID: d.EventID, EventType: "licence.issued", Status: "pending", Attempts: 9,
		LastAttemptAt: ptr(at(time.Hour)), NextAttemptAt: ptr(at(2 * time.Hour)), LastStatusCode: ptr(500),
		FailureReason: ptr("http_status"), CreatedAt: at(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retried delivery mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, e.delivery(t, key, id, d.ID)); diff != "" {
		t.Errorf("listed delivery after retry mismatch (-want +got):\n%s", diff)
	}
	wantAudit := auditLine{Action: "webhook_delivery.retried", Actor: licentia.APIKeyActor(rec.ID), At: at(2 * time.Hour),
		Data: map[string]any{"webhook_endpoint_id": id, "delivery_id": d.ID}}
	if a := webhookAudit(t, e, e.org.ID); len(a) != 2 || !cmp.Equal(a[1], wantAudit) {
		t.Errorf("audit = %+v, want the add then %+v", a, wantAudit)
	}
	for _, tt := range []scenario{
		{name: "delivery id not a UUID", call: call{method: "POST", path: retryPath(id, "latest"), key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.deliveryId", "must be a UUID")},
		{name: "both ids bad", call: call{method: "POST", path: retryPath("x", "y"), key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.id", "must be a UUID", "path.deliveryId", "must be a UUID")},
		{name: "a body field", call: call{method: "POST", path: retryPath(id, d.ID), key: key, body: map[string]any{"now": true}, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/now", "unknown field")},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestWebhookDeleteStopsDeliveries: removing an endpoint removes its
// deliveries, pending ones included, so nothing more is sent.
func TestWebhookDeleteStopsDeliveries(t *testing.T) {
	t.Parallel()
	e := newTestEnvWith(t, envOptions{webhooks: true})
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	gone := e.addEndpoint(t, key, endpointBody(hookURL("/gone"), licentia.EventLicenceIssued)).Endpoint.ID
	kept := e.addEndpoint(t, key, endpointBody(hookURL("/kept"), licentia.EventLicenceIssued)).Endpoint.ID
	ds := e.injectDeliveries(t, e.org.ID, gone, 3, func(int) time.Time { return start })
	e.injectDeliveries(t, e.org.ID, kept, 1, func(int) time.Time { return start })

	e.run(t, scenario{call: call{method: "DELETE", path: hooksPath(gone), key: key}, wantStatus: http.StatusNoContent})
	for _, d := range ds {
		if _, err := e.store.Delivery(t.Context(), e.org.ID, gone, d.ID); err == nil {
			t.Errorf("delivery %s of the removed endpoint is still stored", d.ID)
		}
	}
	if n, err := e.worker.RunOnce(t.Context()); err != nil || n != 1 {
		t.Errorf("RunOnce() = %d, %v; want only the kept endpoint's delivery", n, err)
	}
	if n := len(e.hooks.requestsTo("/gone")); n != 0 {
		t.Errorf("removed endpoint received %d requests, want 0", n)
	}
	if n := len(e.hooks.requestsTo("/kept")); n != 1 {
		t.Errorf("kept endpoint received %d requests, want 1", n)
	}
}

// TestWebhooksNotConfigured: without LICENTIA_BASE_URL or without a master
// key, every webhook route answers 503 webhooks_not_configured once the
// request is valid and the endpoint found; nothing is written.
func TestWebhooksNotConfigured(t *testing.T) {
	t.Parallel()
	base := newTestEnv(t)
	key := base.key(t, base.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	id := base.addEndpoint(t, key, endpointBody(hookURL("/n"), licentia.EventLicenceIssued)).Endpoint.ID
	d := base.injectDeliveries(t, base.org.ID, id, 1, func(int) time.Time { return start })[0]
	for name, o := range map[string]envOptions{
		"no base URL":   {shareStore: base, noBaseURL: true},
		"no master key": {shareStore: base, noMasterKey: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnvWith(t, o)
			for _, rt := range adminRoutes {
				if rt.scope != licentia.ScopeWebhooksRead && rt.scope != licentia.ScopeWebhooksWrite {
					continue
				}
				c := rt.call(key)
				c.path = strings.NewReplacer(someID, id, otherID, d.ID).Replace(c.path)
				t.Run(rt.String(), func(t *testing.T) {
					e.run(t, scenario{call: c, wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeWebhooksNotConfigured})
				})
			}
			for _, tt := range []scenario{
				{name: "404 first", call: call{method: "GET", path: hooksPath(someID), key: key},
					wantStatus: http.StatusNotFound, wantCode: licentia.CodeWebhookEndpointNotFound},
				{name: "400 first", call: call{method: "POST", path: hooksPath(""), key: key, body: endpointBody("http://x", licentia.EventLicenceIssued)},
					wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/url", "must use https")},
			} {
				t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
			}
		})
	}
	if got := base.getEndpoint(t, key, id); got.Enabled != true || got.UpdatedAt != at(0) {
		t.Errorf("endpoint changed by refused requests: %+v", got)
	}
	if got := base.delivery(t, key, id, d.ID); got.Status != "pending" || *got.NextAttemptAt != at(0) {
		t.Errorf("delivery changed by refused requests: %+v", got)
	}
	if n := len(webhookAudit(t, base, base.org.ID)); n != 1 {
		t.Errorf("%d webhook audit entries, want only the add", n)
	}
}
