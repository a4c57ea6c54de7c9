package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

var (
	eventIDRE = regexp.MustCompile(`^evt_[0-9a-f]{32}$`)
	// timeRE is the one time format of webhook bodies: UTC, milliseconds, Z.
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

// at is the change time of the tests: nanoseconds past the millisecond and
// in another zone, so the body must truncate and convert it.
var at = time.Date(2026, 11, 22, 2, 16, 13, 250_987_654, time.FixedZone("CET", 3600))

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newOrg stores an organization, which audit entries refer to.
func newOrg(t *testing.T, st store.Store) string {
	t.Helper()
	id := licentia.NewID()
	o := &licentia.Organization{ID: id, Name: "Acme", Slug: "org-" + id[:8], Plan: licentia.PlanIndie, CreatedAt: at}
	if err := st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateOrganization(t.Context(), o) }); err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	return o.ID
}

func ptr[T any](v T) *T { return &v }

// newLicence returns a licence with every field set, in a trial whose end
// is a millisecond after at, so its state depends on when it is shown. Its
// free text holds characters encoding/json would escape for HTML.
func newLicence(orgID string) *licentia.Licence {
	issued := at.Add(-48 * time.Hour)
	trialEnd := at.Add(time.Millisecond)
	return &licentia.Licence{
		ID: licentia.NewID(), OrgID: orgID, ProductID: "photo-editor", Email: "o'brien+<vip>&co@example.com",
		IssuedAt: issued, ExpiresAt: &trialEnd, LimitKind: licentia.LimitSeats, LimitCount: 3, Major: 2,
		Status: licentia.StatusActive, StatusReason: ptr("moved <back> & forth"), StatusChangedAt: &issued,
		TrialEndsAt: &trialEnd, Source: licentia.SourceProvider, IntegrationID: ptr(licentia.NewID()),
		ExternalRef: ptr("order <42> & more"),
		Provider: licentia.ProviderRefs{OrderID: ptr("ord_1"), SubscriptionID: ptr("sub_1"),
			CustomerID: ptr("cus_1"), CheckoutID: ptr("chk_1"), OrderNumber: ptr("325-10566")},
		Replaces: ptr(licentia.NewID()), CreatedAt: issued, UpdatedAt: issued,
	}
}

func newActivation(l *licentia.Licence) *licentia.Activation {
	return &licentia.Activation{
		ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, MachineID: "machine-<1>", Label: "Ada's <laptop>",
		OS: "linux", AppVersion: "2.1.0", ActivatedAt: at, LastSeenAt: at,
	}
}

// write runs events.Write in a committed transaction.
func write(t *testing.T, st store.Store, typ licentia.EventType, l *licentia.Licence, a *licentia.Activation) *licentia.Event {
	t.Helper()
	var e *licentia.Event
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		var err error
		e, err = events.Write(t.Context(), tx, typ, at, l, a)
		return err
	})
	if err != nil {
		t.Fatalf("Write(%s) error = %v", typ, err)
	}
	return e
}

// keys returns the names of the JSON object in raw, in their order.
func keys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not a JSON object: %v %v", raw, tok, err)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("read %s: %v", raw, err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("read %s: %v", raw, err)
		}
	}
	return names
}

// wantLicenceKeys are the names of a licence snapshot: the contract's
// fields, and no key.
var wantLicenceKeys = []string{
	"id", "product_id", "email", "issued_at", "expires_at", "limit_kind", "limit_count", "major", "status", "state",
	"status_reason", "status_changed_at", "trial_ends_at", "source", "integration_id", "external_ref", "provider", "renewal_url",
	"replaces", "replaced_by", "anonymised_at", "created_at", "updated_at", "transfers_per_30_days", "max_concurrent", "features",
}

// wantProviderKeys are the names of a snapshot's provider object, every one
// always present: the contract's four and the order number.
var wantProviderKeys = []string{"order_id", "subscription_id", "customer_id", "checkout_id", "order_number"}

func TestWrite(t *testing.T) {
	for _, tt := range []struct {
		typ        licentia.EventType
		activation bool
	}{
		{licentia.EventLicenceIssued, false},
		{licentia.EventLicenceRevoked, false},
		{licentia.EventActivationCreated, true},
		{licentia.EventActivationDeactivated, true},
	} {
		t.Run(string(tt.typ), func(t *testing.T) {
			st := openStore(t)
			l := newLicence(newOrg(t, st))
			var a *licentia.Activation
			if tt.activation {
				a = newActivation(l)
			}
			e := write(t, st, tt.typ, l, a)

			if !eventIDRE.MatchString(e.ID) {
				t.Errorf("Write() id = %q, want evt_ and 32 lower-case hexadecimal characters", e.ID)
			}
			if e.OrgID != l.OrgID || e.Type != tt.typ || e.LicenceID == nil || *e.LicenceID != l.ID {
				t.Errorf("Write() = org %s, type %s, licence %v, want %s, %s, %s", e.OrgID, e.Type, e.LicenceID, l.OrgID, tt.typ, l.ID)
			}
			if bytes.ContainsAny(e.Body, "\r\n") || !json.Valid(e.Body) {
				t.Fatalf("body = %q, want one line of JSON", e.Body)
			}
			if diff := cmp.Diff([]string{"type", "timestamp", "data"}, keys(t, e.Body)); diff != "" {
				t.Errorf("body keys mismatch (-want +got):\n%s", diff)
			}

			var b struct {
				Type      licentia.EventType
				Timestamp string
				Data      json.RawMessage
			}
			if err := json.Unmarshal(e.Body, &b); err != nil {
				t.Fatalf("decode body: %v", err)
			}
			if b.Type != tt.typ {
				t.Errorf("body type = %q, want %q", b.Type, tt.typ)
			}
			if want := "2026-11-22T01:16:13.250Z"; b.Timestamp != want {
				t.Errorf("body timestamp = %q, want %q (UTC, milliseconds, Z)", b.Timestamp, want)
			}
			wantData := []string{"licence"}
			if tt.activation {
				wantData = []string{"activation", "licence"}
			}
			if diff := cmp.Diff(wantData, keys(t, b.Data)); diff != "" {
				t.Errorf("data keys mismatch (-want +got):\n%s", diff)
			}

			var d struct {
				Activation *json.RawMessage
				Licence    json.RawMessage
			}
			if err := json.Unmarshal(b.Data, &d); err != nil {
				t.Fatalf("decode data: %v", err)
			}
			if diff := cmp.Diff(wantLicenceKeys, keys(t, d.Licence)); diff != "" {
				t.Errorf("licence snapshot keys mismatch (-want +got):\n%s", diff)
			}
			var snap struct{ Provider json.RawMessage }
			if err := json.Unmarshal(d.Licence, &snap); err != nil {
				t.Fatalf("decode snapshot: %v", err)
			}
			if diff := cmp.Diff(wantProviderKeys, keys(t, snap.Provider)); diff != "" {
				t.Errorf("provider keys mismatch (-want +got):\n%s", diff)
			}
			// The snapshot is the licence at the change time: still in its
			// trial, which ends a millisecond later.
			got := decodeStrict[events.Licence](t, d.Licence)
			if diff := cmp.Diff(events.LicenceOf(l, at), got); diff != "" {
				t.Errorf("licence snapshot mismatch (-want +got):\n%s", diff)
			}
			if got.State != licentia.StateTrial {
				t.Errorf("snapshot state = %s, want trial (the state at the change time)", got.State)
			}
			if tt.activation {
				if d.Activation == nil {
					t.Fatal("activation event without an activation snapshot")
				}
				if diff := cmp.Diff(events.ActivationOf(a), decodeStrict[events.Activation](t, *d.Activation)); diff != "" {
					t.Errorf("activation snapshot mismatch (-want +got):\n%s", diff)
				}
			}

			checkTimes(t, e.Body)
			// Free text is written as sent: no \u003c for <, \u0026 for &.
			for _, s := range []string{`o'brien+<vip>&co@example.com`, `moved <back> & forth`, `order <42> & more`} {
				if !bytes.Contains(e.Body, []byte(s)) {
					t.Errorf("body lacks %q unescaped: %s", s, e.Body)
				}
			}
			if bytes.Contains(e.Body, []byte(`\u00`)) {
				t.Errorf("body holds escapes: %s", e.Body)
			}

			stored, err := st.OrganizationEvents(t.Context(), l.OrgID)
			if err != nil {
				t.Fatalf("OrganizationEvents() error = %v", err)
			}
			want := []licentia.Event{{ID: e.ID, OrgID: l.OrgID, Type: tt.typ, LicenceID: &l.ID,
				At: at.UTC().Truncate(time.Millisecond), Body: e.Body}}
			if diff := cmp.Diff(want, stored); diff != "" {
				t.Errorf("stored events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func decodeStrict[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// checkTimes fails unless every string in body that looks like a time is
// in the one time format.
func checkTimes(t *testing.T, body []byte) {
	t.Helper()
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case string:
			if (strings.HasSuffix(path, "_at") || strings.HasSuffix(path, "timestamp")) && !timeRE.MatchString(v) {
				t.Errorf("%s = %q, want RFC 3339, UTC, three fractional digits, Z", path, v)
			}
		}
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	walk("", v)
}

// TestWriteStateAtChange shows that the snapshot's state is taken at the
// change time, not when the event is read or sent.
func TestWriteStateAtChange(t *testing.T) {
	st := openStore(t)
	l := newLicence(newOrg(t, st))
	l.TrialEndsAt, l.ExpiresAt = nil, ptr(at.Add(-time.Millisecond))
	e := write(t, st, licentia.EventLicenceExpired, l, nil)
	var b struct {
		Data struct{ Licence events.Licence }
	}
	if err := json.Unmarshal(e.Body, &b); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	if b.Data.Licence.State != licentia.StateExpired || b.Data.Licence.Status != licentia.StatusActive {
		t.Errorf("snapshot status, state = %s, %s, want active, expired", b.Data.Licence.Status, b.Data.Licence.State)
	}
	if !strings.HasSuffix(string(e.Body), `}}}`) {
		t.Errorf("body = %s, want it to end with the data object and no newline", e.Body)
	}
}

// TestLicenceHasNoKey holds the snapshot type to its promise: no field
// could carry a licence key.
func TestLicenceHasNoKey(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[events.Licence](), reflect.TypeFor[events.Provider](), reflect.TypeFor[events.Activation]()} {
		for f := range typ.Fields() {
			name := strings.ToLower(f.Name + " " + f.Tag.Get("json"))
			if strings.Contains(name, "key") {
				t.Errorf("%s.%s (json %q) could hold a key", typ.Name(), f.Name, f.Tag.Get("json"))
			}
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := events.NewID()
		if !eventIDRE.MatchString(id) {
			t.Fatalf("NewID() = %q, want evt_ and 32 lower-case hexadecimal characters", id)
		}
		if seen[id] {
			t.Fatalf("NewID() = %q twice", id)
		}
		seen[id] = true
	}
}

func TestAudit(t *testing.T) {
	st := openStore(t)
	orgID := newOrg(t, st)
	data := map[string]any{"product_id": "photo-editor", "count": 3, "nested": map[string]any{"b": []int{1, 2}, "a": nil}}
	wantData, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	entry := licentia.AuditEntry{OrgID: orgID, Action: "product.created", Actor: licentia.APIKeyActor("key-1"), At: at}
	err = st.InTx(t.Context(), func(tx store.Tx) error { return events.Audit(t.Context(), tx, entry, data) })
	if err != nil {
		t.Fatalf("Audit() error = %v", err)
	}
	got, err := st.OrganizationAudit(t.Context(), orgID)
	if err != nil || len(got) != 1 {
		t.Fatalf("OrganizationAudit() = %d entries, %v, want 1", len(got), err)
	}
	if _, ok := licentia.ParseUUID(got[0].ID); !ok {
		t.Errorf("audit id = %q, want a UUID", got[0].ID)
	}
	want := licentia.AuditEntry{ID: got[0].ID, OrgID: orgID, Action: "product.created", Actor: licentia.APIKeyActor("key-1"),
		At: at.UTC().Truncate(time.Millisecond), Data: wantData}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("audit entry mismatch (-want +got):\n%s", diff)
	}

	// Data that cannot be encoded is an error, and nothing is written.
	err = st.InTx(t.Context(), func(tx store.Tx) error { return events.Audit(t.Context(), tx, entry, make(chan int)) })
	if err == nil {
		t.Error("Audit(channel) error = nil, want one")
	}
	if got, _ := st.OrganizationAudit(t.Context(), orgID); len(got) != 1 {
		t.Errorf("audit entries after a failed Audit = %d, want 1", len(got))
	}
}

func TestRecord(t *testing.T) {
	st := openStore(t)
	orgID := newOrg(t, st)
	l := newLicence(orgID)
	a := newActivation(l)
	data := events.ActivationData(l, a)
	record := func(tx store.Tx) error {
		return events.Record(t.Context(), tx, licentia.APIKeyActor("key-1"), l, a, "activation.created",
			licentia.EventActivationCreated, at, data)
	}

	// Rolled back: neither the audit entry nor the event remains.
	errRollback := errors.New("roll back")
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if err := record(tx); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx() error = %v, want the rollback", err)
	}
	audit, evs, err := recorded(t, st, orgID, l.ID)
	if err != nil || len(audit) != 0 || len(evs) != 0 {
		t.Errorf("after a rollback: %d audit entries, %d events, %v, want none", len(audit), len(evs), err)
	}

	// Committed: both.
	if err := st.InTx(t.Context(), record); err != nil {
		t.Fatalf("Record() error = %v", err)
	}
	audit, evs, err = recorded(t, st, orgID, l.ID)
	if err != nil || len(audit) != 1 || len(evs) != 1 {
		t.Fatalf("after a commit: %d audit entries, %d events, %v, want one of each", len(audit), len(evs), err)
	}
	wantData, _ := json.Marshal(data)
	wantAudit := licentia.AuditEntry{ID: audit[0].ID, OrgID: orgID, LicenceID: &l.ID, Action: "activation.created",
		Actor: licentia.APIKeyActor("key-1"), At: at.UTC().Truncate(time.Millisecond), Data: wantData}
	if diff := cmp.Diff(wantAudit, audit[0]); diff != "" {
		t.Errorf("audit entry mismatch (-want +got):\n%s", diff)
	}
	if evs[0].Type != licentia.EventActivationCreated || !evs[0].At.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("event = %s at %v, want %s at %v", evs[0].Type, evs[0].At, licentia.EventActivationCreated, at)
	}
}

func recorded(t *testing.T, st store.Store, orgID, licenceID string) ([]licentia.AuditEntry, []licentia.Event, error) {
	t.Helper()
	audit, err := st.LicenceAudit(t.Context(), orgID, licenceID)
	if err != nil {
		return nil, nil, err
	}
	evs, err := st.OrganizationEvents(t.Context(), orgID)
	return audit, evs, err
}

func TestCleanup(t *testing.T) {
	st := openStore(t)
	orgID := newOrg(t, st)
	now := time.Date(2026, 11, 22, 1, 16, 13, 250_000_000, time.UTC)
	cutoff := now.Add(-licentia.EventRetention)
	ages := map[string]time.Time{
		"older by a millisecond":   cutoff.Add(-time.Millisecond),
		"a year old":               now.AddDate(-1, 0, 0),
		"exactly 30 days":          cutoff,
		"younger by a millisecond": cutoff.Add(time.Millisecond),
		"just now":                 now,
	}
	ids := map[string]string{}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		for name, when := range ages {
			ids[name] = events.NewID()
			e := &licentia.Event{ID: ids[name], OrgID: orgID, Type: licentia.EventLicenceIssued, At: when, Body: []byte(`{}`)}
			if err := tx.InsertEvent(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("InsertEvent() error = %v", err)
	}
	n, err := events.Cleanup(t.Context(), st, now)
	if err != nil || n != 2 {
		t.Errorf("Cleanup() = %d, %v, want 2 (the events older than 30 days)", n, err)
	}
	stored, err := st.OrganizationEvents(t.Context(), orgID)
	if err != nil {
		t.Fatalf("OrganizationEvents() error = %v", err)
	}
	var kept []string
	for _, e := range stored {
		for name, id := range ids {
			if id == e.ID {
				kept = append(kept, name)
			}
		}
	}
	// An event exactly 30 days old is kept: Cleanup deletes what happened
	// before now minus 30 days.
	want := []string{"exactly 30 days", "younger by a millisecond", "just now"}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("kept events mismatch (-want +got):\n%s", diff)
	}
}

// newEndpoint stores an endpoint of orgID.
func newEndpoint(t *testing.T, st store.Store, orgID string, enabled bool, types ...licentia.EventType) string {
	t.Helper()
	e := &licentia.WebhookEndpoint{ID: licentia.NewID(), OrgID: orgID, URL: "https://hooks.example.com/licentia",
		EventTypes: types, Enabled: enabled, CreatedAt: at, UpdatedAt: at}
	if !enabled {
		e.DisabledReason = ptr(licentia.DisabledByMaker)
	}
	secret := &licentia.WebhookSecret{ID: licentia.NewID(), EndpointID: e.ID, Sealed: []byte("sealed"),
		MasterFingerprint: "0011223344556677", CreatedAt: at}
	err := st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateWebhookEndpoint(t.Context(), e, secret) })
	if err != nil {
		t.Fatalf("CreateWebhookEndpoint() error = %v", err)
	}
	return e.ID
}

func deliveries(t *testing.T, st store.Store, orgID, endpointID string) []licentia.Delivery {
	t.Helper()
	ds, err := st.Deliveries(t.Context(), orgID, endpointID, nil, 100)
	if err != nil {
		t.Fatalf("Deliveries() error = %v", err)
	}
	return ds
}

// TestWriteDeliveries checks that an event is queued, in its transaction,
// for the endpoints of its organization that are enabled and subscribed to
// its type, and for no other.
func TestWriteDeliveries(t *testing.T) {
	st := openStore(t)
	orgID, otherOrg := newOrg(t, st), newOrg(t, st)
	subscribed := newEndpoint(t, st, orgID, true, licentia.EventLicenceRevoked, licentia.EventLicenceIssued)
	others := map[string]string{
		"another type": newEndpoint(t, st, orgID, true, licentia.EventLicenceRevoked),
		"turned off":   newEndpoint(t, st, orgID, false, licentia.EventLicenceIssued),
	}
	elsewhere := newEndpoint(t, st, otherOrg, true, licentia.EventLicenceIssued)
	l := newLicence(orgID)

	errRollback := errors.New("roll back")
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if _, err := events.Write(t.Context(), tx, licentia.EventLicenceIssued, at, l, nil); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx() error = %v, want the rollback", err)
	}
	if ds := deliveries(t, st, orgID, subscribed); len(ds) != 0 {
		t.Errorf("deliveries after a rollback = %v, want none", ds)
	}

	e := write(t, st, licentia.EventLicenceIssued, l, nil)
	ds := deliveries(t, st, orgID, subscribed)
	if len(ds) != 1 {
		t.Fatalf("deliveries to the subscribed endpoint = %d, want 1", len(ds))
	}
	due := at.UTC().Truncate(time.Millisecond)
	want := licentia.Delivery{ID: ds[0].ID, OrgID: orgID, EndpointID: subscribed, EventID: e.ID,
		EventType: licentia.EventLicenceIssued, Status: licentia.DeliveryPending, NextAttemptAt: &due, CreatedAt: due}
	if diff := cmp.Diff(want, ds[0]); diff != "" {
		t.Errorf("delivery mismatch (-want +got):\n%s", diff)
	}
	for name, id := range others {
		if ds := deliveries(t, st, orgID, id); len(ds) != 0 {
			t.Errorf("endpoint %s has %d deliveries, want none", name, len(ds))
		}
	}
	if ds := deliveries(t, st, otherOrg, elsewhere); len(ds) != 0 {
		t.Errorf("another organization's endpoint has %d deliveries, want none", len(ds))
	}

	// Deliveries go with their event when it is cleaned up.
	if _, err := events.Cleanup(t.Context(), st, at.Add(licentia.EventRetention+time.Millisecond)); err != nil {
		t.Fatalf("Cleanup() error = %v", err)
	}
	if ds := deliveries(t, st, orgID, subscribed); len(ds) != 0 {
		t.Errorf("deliveries after their event was cleaned up = %d, want none", len(ds))
	}
}
