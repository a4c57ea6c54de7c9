package httpapi_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// events returns an organization's events, oldest first.
func (e *testEnv) events(t *testing.T, orgID string) []licentia.Event {
	t.Helper()
	evs, err := e.store.OrganizationEvents(t.Context(), orgID)
	if err != nil {
		t.Fatalf("OrganizationEvents() error = %v", err)
	}
	return evs
}

// wantEvent is an event expected: its type, time and snapshots. key is the
// licence key, which the body must never hold.
type wantEvent struct {
	typ        licentia.EventType
	at         time.Time
	licence    licenceView
	activation *activationView
	key        string
}

// eventBody is a webhook body as the contract gives it.
type eventBody struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Licence    licenceView     `json:"licence"`
		Activation *activationView `json:"activation"`
	} `json:"data"`
}

// checkEvent holds an event row to want: its type and licence, an evt_ id
// of 32 lower-case hexadecimal characters, and a body of one line of JSON
// {type, timestamp, data} whose snapshots equal the API's objects at the
// change, which the document's webhooks section accepts, and which never
// holds the licence key.
func checkEvent(t *testing.T, ev licentia.Event, want wantEvent) {
	t.Helper()
	if ev.Type != want.typ {
		t.Errorf("event type = %q, want %q", ev.Type, want.typ)
	}
	if !eventIDRE.MatchString(ev.ID) {
		t.Errorf("event id = %q, want evt_ and 32 lower-case hexadecimal characters", ev.ID)
	}
	if ev.LicenceID == nil || *ev.LicenceID != want.licence.ID {
		t.Errorf("event licence_id = %v, want %s", ev.LicenceID, want.licence.ID)
	}
	if !ev.At.Equal(want.at) {
		t.Errorf("event at = %v, want %v", ev.At, want.at)
	}
	if bytes.ContainsAny(ev.Body, "\r\n") || !json.Valid(ev.Body) {
		t.Errorf("event body is not one line of JSON: %q", ev.Body)
	}
	got := decodeStrict[eventBody](t, ev.Body)
	wantBody := eventBody{Type: string(want.typ), Timestamp: licentia.FormatTime(want.at)}
	wantBody.Data.Licence, wantBody.Data.Activation = want.licence, want.activation
	if diff := cmp.Diff(wantBody, got); diff != "" {
		t.Errorf("event %s body mismatch (-want +got):\n%s", want.typ, diff)
	}
	if want.key != "" {
		for _, form := range []string{want.key, strings.ReplaceAll(want.key, "-", ""), want.key[strings.IndexByte(want.key, '_')+1:]} {
			if bytes.Contains(ev.Body, []byte(form)) {
				t.Errorf("event body holds the licence key: %s", ev.Body)
			}
		}
	}
	if bytes.Contains(ev.Body, []byte("licence_key")) {
		t.Errorf("event body names a licence key: %s", ev.Body)
	}
	if err := eventSchemaError(t, want.typ, ev.Body); err != nil {
		t.Errorf("event body does not match the webhooks section of openapi.json: %v\nbody: %s", err, ev.Body)
	}
}

// eventSchemaError validates a webhook body against the document's webhook
// of its type.
func eventSchemaError(t *testing.T, typ licentia.EventType, body []byte) error {
	t.Helper()
	item := apiDocument(t).doc.Webhooks[string(typ)]
	if item == nil || item.Post == nil {
		t.Fatalf("openapi.json documents no webhook %s", typ)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	return schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())
}

// newEvents returns the events of orgID written since the first n.
func (e *testEnv) newEvents(t *testing.T, orgID string, n int) []licentia.Event {
	t.Helper()
	evs := e.events(t, orgID)
	if len(evs) < n {
		t.Fatalf("%d events, fewer than the %d before", len(evs), n)
	}
	return evs[n:]
}

// TestWebhooksDocumented: the document's webhooks section names every
// event type, and its body schemas refuse bodies that drift from a real
// one.
func TestWebhooksDocumented(t *testing.T) {
	var names []string
	for name := range apiDocument(t).doc.Webhooks {
		names = append(names, name)
	}
	// endpoint.test is sent to one endpoint on request; no endpoint
	// subscribes to it, so it is not in EventTypes.
	want := []string{string(licentia.EventEndpointTest)}
	for _, typ := range licentia.EventTypes {
		want = append(want, string(typ))
	}
	slices.Sort(names)
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("webhooks in openapi.json differ from the event types (-types +document):\n%s", diff)
	}

	e := newLicenceEnv(t)
	id := e.seed(t, admin.NewLicence{}).ID
	a := e.activate(t, e.org.ID, id, "m1")
	if _, err := e.admin.DeactivateActivation(t.Context(), e.actor, e.org.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	evs := e.events(t, e.org.ID)
	issued, deactivated := evs[0].Body, evs[1].Body
	edit := func(raw []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }
	licence := func(m map[string]any) map[string]any { return data(m)["licence"].(map[string]any) }
	var withActivation map[string]any
	if err := json.Unmarshal(deactivated, &withActivation); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		typ  licentia.EventType
		body []byte
	}{
		{"licence with a key", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { licence(m)["licence_key"] = "DESK_X" })},
		{"data with a key", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { data(m)["licence_key"] = "DESK_X" })},
		{"licence without state", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { delete(licence(m), "state") })},
		{"provider without a key", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { delete(licence(m)["provider"].(map[string]any), "order_id") })},
		{"another type", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { m["type"] = "licence.revoked" })},
		{"timestamp without milliseconds", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { m["timestamp"] = "2026-03-02T09:00:00Z" })},
		{"licence event with an activation", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { data(m)["activation"] = data(withActivation)["activation"] })},
		{"activation event without its activation", licentia.EventActivationDeactivated, edit(deactivated, func(m map[string]any) { delete(data(m), "activation") })},
		{"activation with an extra field", licentia.EventActivationDeactivated, edit(deactivated, func(m map[string]any) { data(m)["activation"].(map[string]any)["ip"] = "192.0.2.1" })},
		{"field added to the body", licentia.EventLicenceIssued, edit(issued, func(m map[string]any) { m["id"] = "evt_1" })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if eventSchemaError(t, tt.typ, tt.body) == nil {
				t.Errorf("the webhooks section accepts %s", tt.body)
			}
		})
	}
	for _, ev := range evs {
		if err := eventSchemaError(t, ev.Type, ev.Body); err != nil {
			t.Errorf("real %s body refused: %v", ev.Type, err)
		}
	}
}
