package console_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestWebhookTestEvent: "Send a test event" queues one endpoint.test
// delivery to that endpoint only, audited; the page shows each delivery's
// request body and the receiver's status and answer; a viewer's post is
// refused, another organization's member gets 404, and an endpoint that
// is off says why nothing is sent.
func TestWebhookTestEvent(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		add := func(path string) *licentia.WebhookEndpoint {
			u := "https://hooks.example.com" + path
			ep, _, err := e.admin.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, e.org.ID, admin.CreateWebhookEndpoint{
				URL: &u, EventTypes: licentia.EventTypes})
			if err != nil {
				t.Fatal(err)
			}
			return ep
		}
		ep, bystander := add("/a"), add("/b")
		dev := e.as(t, licentia.RoleDeveloper)
		wantSeeOther(t, "test event", dev.post(t, "/console/webhooks/"+ep.ID+"/test", url.Values{}),
			"/console/webhooks/"+ep.ID+"?done=test-queued")

		ds, err := e.store.Deliveries(t.Context(), e.org.ID, ep.ID, nil, 10)
		if err != nil || len(ds) != 1 || ds[0].EventType != licentia.EventEndpointTest || ds[0].Status != licentia.DeliveryPending {
			t.Fatalf("deliveries after the test = %+v, %v; want one pending endpoint.test", ds, err)
		}
		if others, _ := e.store.Deliveries(t.Context(), e.org.ID, bystander.ID, nil, 10); len(others) != 0 {
			t.Errorf("another endpoint subscribed to every event got %d deliveries of the test, want 0", len(others))
		}
		d := ds[0]
		d.Status, d.Attempts, d.LastStatusCode = licentia.DeliveryPending, 1, ptr(500)
		d.LastAttemptAt, d.FailureReason, d.LastResponse = ptr(e.clock.Now()), ptr(licentia.FailureStatus), ptr(`{"error":"<boom>"}`)
		if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.FinishAttempts(t.Context(), []licentia.Delivery{d}) }); err != nil {
			t.Fatal(err)
		}
		page := dev.get(t, "/console/webhooks/"+ep.ID)
		body := html.UnescapeString(page.body)
		for _, want := range []string{`{"type":"endpoint.test"`, `"webhook_endpoint":{"id":"` + ep.ID + `"}`,
			"Answer (status 500)", `{"error":"<boom>"}`, `action="/console/webhooks/` + ep.ID + `/test"`} {
			if !strings.Contains(body, want) {
				t.Errorf("endpoint page lacks %q", want)
			}
		}
		if strings.Contains(page.body, `"<boom>"`) {
			t.Error("the receiver's answer is not escaped")
		}
		entries, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
		if err != nil || !hasAction(entries, licentia.AuditWebhookEndpointTested) {
			t.Errorf("audit log lacks %s: %v", licentia.AuditWebhookEndpointTested, err)
		}

		if a := e.as(t, licentia.RoleViewer).post(t, "/console/webhooks/"+ep.ID+"/test", url.Values{}); a.status != http.StatusForbidden {
			t.Errorf("test event as a viewer = %d, want 403", a.status)
		}
		outsider := e.signUp(t, e.otherOrg(t).ID, "boss@beta.example")
		if a := outsider.post(t, "/console/webhooks/"+ep.ID+"/test", url.Values{}); a.status != http.StatusNotFound {
			t.Errorf("test event to another organization's endpoint = %d, want 404", a.status)
		}
		off := false
		if _, err := e.admin.UpdateWebhookEndpoint(t.Context(), licentia.OperatorActor, e.org.ID, ep.ID,
			admin.UpdateWebhookEndpoint{Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		if a := dev.post(t, "/console/webhooks/"+ep.ID+"/test", url.Values{}); !strings.Contains(a.body, "the endpoint is turned off") {
			t.Errorf("test event to an endpoint that is off does not say why:\n%s", a.body)
		}
	})
}

func hasAction(es []licentia.AuditEntry, action string) bool {
	for _, x := range es {
		if x.Action == action {
			return true
		}
	}
	return false
}
