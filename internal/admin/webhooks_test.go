package admin_test

import (
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

const hookBaseURL = "https://licences.example.net"

// hookFixture is a fixture whose service has a master key and a base URL,
// so webhooks are configured, with the options it was made with.
type hookFixture struct {
	*fixture
	opts admin.Options
}

func newHookFixture(t *testing.T) *hookFixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(start)
	opts := admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(m),
		BaseURL: hookBaseURL, Logger: slog.New(slog.DiscardHandler)}
	return &hookFixture{fixture: &fixture{st: st, clk: clk, svc: admin.New(opts)}, opts: opts}
}

func str(s string) *string { return &s }

// endpointInput subscribes url to types.
func endpointInput(url string, types ...licentia.EventType) admin.CreateWebhookEndpoint {
	return admin.CreateWebhookEndpoint{URL: &url, EventTypes: types}
}

// addEndpoint adds an endpoint and fails the test on an error.
func (f *hookFixture) addEndpoint(t *testing.T, orgID string, in admin.CreateWebhookEndpoint) *licentia.WebhookEndpoint {
	t.Helper()
	e, secret, err := f.svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, orgID, in)
	if err != nil {
		t.Fatalf("AddWebhookEndpoint() error = %v", err)
	}
	if !strings.HasPrefix(secret.Reveal(), "whsec_") {
		t.Errorf("secret = %q, want whsec_...", secret.Reveal())
	}
	return e
}

// issueMessages returns the path and message of each issue of a
// validation_failed error.
func issueMessages(t *testing.T, err error) []string {
	t.Helper()
	e := wantCode(t, "validation", err, licentia.CodeValidationFailed)
	if e == nil {
		return nil
	}
	var out []string
	for _, is := range e.Details["issues"].([]licentia.Issue) {
		out = append(out, is.Path+" "+is.Message)
	}
	return out
}

// TestWebhookEndpointRules: the rules of an add and a change, every
// problem reported at once, and what a valid input is stored as.
func TestWebhookEndpointRules(t *testing.T) {
	f := newHookFixture(t)
	o := f.org(t, "acme", licentia.PlanBusiness)
	ep := f.addEndpoint(t, o.ID, endpointInput("https://hooks.example.com/x", licentia.EventLicenceIssued))
	desc := "must be at most 500 characters without control characters"
	for _, tt := range []struct {
		name string
		in   admin.CreateWebhookEndpoint
		add  []string // issues of an add; nil when it succeeds
		upd  []string // issues of a change
	}{
		{"nothing", admin.CreateWebhookEndpoint{},
			[]string{"/url is required", "/event_types is required"}, []string{" give at least one of url, event_types, description, enabled"}},
		{"empty event types", admin.CreateWebhookEndpoint{URL: str("https://hooks.example.com/x"), EventTypes: []licentia.EventType{}},
			[]string{"/event_types must name at least one event type"}, []string{"/event_types must name at least one event type"}},
		{"unknown event types", endpointInput("https://hooks.example.com/x", "licence.issued", "licence.created", "Licence.Issued"),
			[]string{"/event_types/1 must be one of the event types", "/event_types/2 must be one of the event types"},
			[]string{"/event_types/1 must be one of the event types", "/event_types/2 must be one of the event types"}},
		{"service host", endpointInput("https://api.licences.example.net/x", licentia.EventLicenceIssued),
			[]string{"/url must not be the service's own host or a name under it"}, []string{"/url must not be the service's own host or a name under it"}},
		{"description of 501 characters", admin.CreateWebhookEndpoint{URL: str("https://hooks.example.com/x"), EventTypes: []licentia.EventType{licentia.EventLicenceIssued},
			Description: str(strings.Repeat("ü", 501))}, []string{"/description " + desc}, []string{"/description " + desc}},
		{"description with a newline", admin.CreateWebhookEndpoint{Description: str("a\nb")},
			[]string{"/url is required", "/event_types is required"}, []string{"/description " + desc}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := f.svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, o.ID, tt.in)
			if diff := cmp.Diff(tt.add, issueMessages(t, err)); diff != "" {
				t.Errorf("AddWebhookEndpoint() issues (-want +got):\n%s", diff)
			}
			_, err = f.svc.UpdateWebhookEndpoint(t.Context(), licentia.OperatorActor, o.ID, ep.ID, admin.UpdateWebhookEndpoint(tt.in))
			if diff := cmp.Diff(tt.upd, issueMessages(t, err)); diff != "" {
				t.Errorf("UpdateWebhookEndpoint() issues (-want +got):\n%s", diff)
			}
		})
	}

	got := f.addEndpoint(t, o.ID, admin.CreateWebhookEndpoint{URL: str("https://Hooks.Example.com.:443/y"), Description: str(strings.Repeat("ü", 500)),
		EventTypes: []licentia.EventType{licentia.EventActivationCreated, licentia.EventLicenceIssued, licentia.EventActivationCreated}})
	want := &licentia.WebhookEndpoint{ID: got.ID, OrgID: o.ID, URL: "https://hooks.example.com/y", Description: strings.Repeat("ü", 500),
		EventTypes: []licentia.EventType{licentia.EventActivationCreated, licentia.EventLicenceIssued}, Enabled: true,
		CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("added endpoint (-want +got):\n%s", diff)
	}
	stored, err := f.st.WebhookEndpoint(t.Context(), o.ID, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored endpoint (-want +got):\n%s", diff)
	}
}

// TestUpdateWebhookEndpointNoChange: a change that changes nothing writes
// neither updated_at nor an audit entry.
func TestUpdateWebhookEndpointNoChange(t *testing.T) {
	f := newHookFixture(t)
	o := f.org(t, "acme", licentia.PlanBusiness)
	ep := f.addEndpoint(t, o.ID, admin.CreateWebhookEndpoint{URL: str("https://hooks.example.com/x"), Description: str("d"),
		EventTypes: []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked}})
	f.clk.Advance(time.Hour)
	got, err := f.svc.UpdateWebhookEndpoint(t.Context(), licentia.OperatorActor, o.ID, ep.ID, admin.UpdateWebhookEndpoint{
		URL: str("https://HOOKS.example.com/x"), Description: str("d"), Enabled: new(true),
		EventTypes: []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked, licentia.EventLicenceIssued}})
	if err != nil {
		t.Fatalf("UpdateWebhookEndpoint() error = %v", err)
	}
	if diff := cmp.Diff(ep, got); diff != "" {
		t.Errorf("endpoint after a change of nothing (-want +got):\n%s", diff)
	}
	if n := countAudit(t, f.st, o.ID, licentia.AuditWebhookEndpointUpdated); n != 0 {
		t.Errorf("%d update audit entries, want 0", n)
	}
	got, err = f.svc.UpdateWebhookEndpoint(t.Context(), licentia.OperatorActor, o.ID, ep.ID, admin.UpdateWebhookEndpoint{Enabled: new(false)})
	if err != nil {
		t.Fatalf("UpdateWebhookEndpoint() error = %v", err)
	}
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != licentia.DisabledByMaker || !got.UpdatedAt.Equal(start.Add(time.Hour)) {
		t.Errorf("turned off: %+v", got)
	}
	if data := decode(t, lastAudit(t, f.st, o.ID).Data); !cmp.Equal(data, map[string]any{"webhook_endpoint_id": ep.ID, "enabled": false}) {
		t.Errorf("audit data = %v, want the id and what changed", data)
	}
}

// TestWebhooksNotConfigured: without a base URL or a master key, every
// webhook operation answers webhooks_not_configured, after its own 400 and
// 404; nothing is written.
func TestWebhooksNotConfigured(t *testing.T) {
	for name, change := range map[string]func(*admin.Options){
		"no base URL":   func(o *admin.Options) { o.BaseURL = "" },
		"no master key": func(o *admin.Options) { o.Keys = signing.NewKeyring(nil) },
	} {
		t.Run(name, func(t *testing.T) {
			configured := newHookFixture(t)
			org := configured.org(t, "acme", licentia.PlanBusiness)
			ep := configured.addEndpoint(t, org.ID, endpointInput("https://hooks.example.com/x", licentia.EventLicenceIssued))
			opts := configured.opts
			change(&opts)
			f := &fixture{st: configured.st, clk: configured.clk, svc: admin.New(opts)}
			ctx, actor := t.Context(), licentia.OperatorActor
			before := len(audits(t, f.st, org.ID))

			_, err := f.svc.WebhookEndpoints(ctx, org.ID)
			wantCode(t, "WebhookEndpoints()", err, licentia.CodeWebhooksNotConfigured)
			_, err = f.svc.WebhookEndpoint(ctx, org.ID, ep.ID)
			wantCode(t, "WebhookEndpoint()", err, licentia.CodeWebhooksNotConfigured)
			_, err = f.svc.WebhookEndpoint(ctx, org.ID, licentia.NewID())
			wantCode(t, "WebhookEndpoint(missing)", err, licentia.CodeWebhookEndpointNotFound)
			_, _, err = f.svc.AddWebhookEndpoint(ctx, actor, org.ID, endpointInput("https://hooks.example.com/y", licentia.EventLicenceIssued))
			wantCode(t, "AddWebhookEndpoint()", err, licentia.CodeWebhooksNotConfigured)
			_, _, err = f.svc.AddWebhookEndpoint(ctx, actor, org.ID, admin.CreateWebhookEndpoint{})
			wantCode(t, "AddWebhookEndpoint(invalid)", err, licentia.CodeValidationFailed)
			_, err = f.svc.UpdateWebhookEndpoint(ctx, actor, org.ID, ep.ID, admin.UpdateWebhookEndpoint{Enabled: new(false)})
			wantCode(t, "UpdateWebhookEndpoint()", err, licentia.CodeWebhooksNotConfigured)
			err = f.svc.DeleteWebhookEndpoint(ctx, actor, org.ID, ep.ID)
			wantCode(t, "DeleteWebhookEndpoint()", err, licentia.CodeWebhooksNotConfigured)
			_, _, err = f.svc.RotateWebhookSecret(ctx, actor, org.ID, ep.ID)
			wantCode(t, "RotateWebhookSecret()", err, licentia.CodeWebhooksNotConfigured)
			_, _, err = f.svc.Deliveries(ctx, org.ID, ep.ID, nil)
			wantCode(t, "Deliveries()", err, licentia.CodeWebhooksNotConfigured)
			_, err = f.svc.RetryDelivery(ctx, actor, org.ID, ep.ID, licentia.NewID())
			wantCode(t, "RetryDelivery(missing)", err, licentia.CodeWebhookDeliveryNotFound)

			if n := len(audits(t, f.st, org.ID)); n != before {
				t.Errorf("%d audit entries, want %d: nothing written", n, before)
			}
			stored, err := f.st.WebhookEndpoints(ctx, org.ID)
			if err != nil || len(stored) != 1 || !stored[0].Enabled {
				t.Errorf("endpoints = %+v, %v; want the one endpoint unchanged", stored, err)
			}
		})
	}
}

// TestDeliveriesQueuedWithChange: a licence change queues a delivery of
// its event to each endpoint of the organization enabled and subscribed at
// that moment, and to no other; an endpoint added later gets no earlier
// event; a change that changes nothing queues nothing.
func TestDeliveriesQueuedWithChange(t *testing.T) {
	f := newHookFixture(t)
	ctx, actor := t.Context(), licentia.OperatorActor
	o := f.org(t, "acme", licentia.PlanBusiness)
	other := f.org(t, "globex", licentia.PlanBusiness)
	for _, p := range []struct{ org, id, prefix string }{{o.ID, "desk-app", "DESK"}, {other.ID, "globex-app", "GLBX"}} {
		one := int64(1)
		if _, err := f.svc.CreateProduct(ctx, actor, p.org, admin.NewProduct{ID: str(p.id), Name: str("App"), KeyPrefix: str(p.prefix), CurrentMajor: &one}); err != nil {
			t.Fatalf("CreateProduct() error = %v", err)
		}
	}
	subscribed := f.addEndpoint(t, o.ID, endpointInput("https://hooks.example.com/a", licentia.EventLicenceIssued, licentia.EventLicenceRevoked))
	revokedOnly := f.addEndpoint(t, o.ID, endpointInput("https://hooks.example.com/b", licentia.EventLicenceRevoked))
	off := f.addEndpoint(t, o.ID, admin.CreateWebhookEndpoint{URL: str("https://hooks.example.com/c"), EventTypes: []licentia.EventType{licentia.EventLicenceIssued}, Enabled: new(false)})
	theirs := f.addEndpoint(t, other.ID, endpointInput("https://hooks.example.com/d", licentia.EventLicenceIssued))

	f.clk.Advance(time.Second)
	v, err := f.svc.IssueLicence(ctx, actor, o.ID, admin.NewLicence{ProductID: str("desk-app"), Email: str("ada@example.com")})
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	later := f.addEndpoint(t, o.ID, endpointInput("https://hooks.example.com/e", licentia.EventLicenceIssued))
	if _, err := f.svc.IssueLicence(ctx, actor, other.ID, admin.NewLicence{ProductID: str("globex-app"), Email: str("bob@example.com")}); err != nil {
		t.Fatalf("IssueLicence(other) error = %v", err)
	}
	evs, err := f.st.OrganizationEvents(ctx, o.ID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("OrganizationEvents() = %d events, %v; want 1", len(evs), err)
	}
	count := func(ep *licentia.WebhookEndpoint) []licentia.Delivery {
		t.Helper()
		ds, _, err := f.svc.Deliveries(ctx, ep.OrgID, ep.ID, nil)
		if err != nil {
			t.Fatalf("Deliveries() error = %v", err)
		}
		return ds
	}
	ds := count(subscribed)
	at := start.Add(time.Second).Truncate(time.Millisecond)
	want := []licentia.Delivery{{ID: ds[0].ID, OrgID: o.ID, EndpointID: subscribed.ID, EventID: evs[0].ID, EventType: licentia.EventLicenceIssued,
		Status: licentia.DeliveryPending, NextAttemptAt: &at, CreatedAt: at}}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("deliveries of the subscribed endpoint (-want +got):\n%s", diff)
	}
	for name, ep := range map[string]*licentia.WebhookEndpoint{"unsubscribed": revokedOnly, "turned off": off, "added later": later} {
		if n := len(count(ep)); n != 0 {
			t.Errorf("%s endpoint has %d deliveries, want 0", name, n)
		}
	}
	if n := len(count(theirs)); n != 1 {
		t.Errorf("the other organization's endpoint has %d deliveries, want only its own licence's", n)
	}

	if _, err := f.svc.RevokeLicence(ctx, actor, o.ID, v.Licence.ID, admin.Reason("refund")); err != nil {
		t.Fatalf("RevokeLicence() error = %v", err)
	}
	if _, err := f.svc.RevokeLicence(ctx, actor, o.ID, v.Licence.ID, admin.Reason("again")); err != nil {
		t.Fatalf("RevokeLicence(again) error = %v", err)
	}
	if n := len(count(subscribed)); n != 2 {
		t.Errorf("subscribed endpoint has %d deliveries, want 2 (a revoke that changes nothing queues nothing)", n)
	}
	if n := len(count(revokedOnly)); n != 1 {
		t.Errorf("licence.revoked endpoint has %d deliveries, want 1", n)
	}
}
