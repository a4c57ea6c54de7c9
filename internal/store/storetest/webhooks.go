package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newEventID returns an id as the service writes events: evt_ and 32
// lower-case hexadecimal characters, not a UUID.
func newEventID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "evt_" + hex.EncodeToString(b)
}

// createEvent stores an event of orgID at at.
func createEvent(t *testing.T, s store.Store, orgID string, at time.Time) *licentia.Event {
	t.Helper()
	e := &licentia.Event{ID: newEventID(), OrgID: orgID, Type: licentia.EventLicenceIssued, At: at,
		Body: []byte(`{"type":"licence.issued","data":{"email":"Zoë"}}`)}
	inTx(t, s, func(tx store.Tx) error { return tx.InsertEvent(t.Context(), e) })
	return e
}

// newEndpoint returns an enabled endpoint of orgID whose event types are
// not in any sorted order, so only a store that keeps the order returns
// them unchanged.
func newEndpoint(orgID string, created time.Time) *licentia.WebhookEndpoint {
	return &licentia.WebhookEndpoint{
		ID: licentia.NewID(), OrgID: orgID, URL: "https://hooks.example.com/licentia?tenant=1",
		EventTypes:  []licentia.EventType{licentia.EventLicenceRevoked, licentia.EventLicenceIssued, licentia.EventActivationCreated},
		Description: "Orders", Enabled: true, CreatedAt: created, UpdatedAt: created,
	}
}

// newSecret returns a current secret of endpointID.
func newSecret(endpointID string, created time.Time) *licentia.WebhookSecret {
	return &licentia.WebhookSecret{ID: licentia.NewID(), EndpointID: endpointID, Sealed: sealedBlob(),
		MasterFingerprint: "sha256:master", CreatedAt: created}
}

// createEndpoint stores e with a new secret created with it, and returns
// the secret.
func createEndpoint(t *testing.T, s store.Store, e *licentia.WebhookEndpoint) *licentia.WebhookSecret {
	t.Helper()
	secret := newSecret(e.ID, e.CreatedAt)
	inTx(t, s, func(tx store.Tx) error { return tx.CreateWebhookEndpoint(t.Context(), e, secret) })
	return secret
}

// replaceSecret makes next the current secret of its endpoint at at.
func replaceSecret(t *testing.T, s store.Store, next *licentia.WebhookSecret, at time.Time) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error { return tx.ReplaceWebhookSecret(t.Context(), next, at) })
}

// storedEndpoint returns e as a store reads it back.
func storedEndpoint(e *licentia.WebhookEndpoint) licentia.WebhookEndpoint {
	c := *e
	c.CreatedAt, c.UpdatedAt = atMillis(c.CreatedAt), atMillis(c.UpdatedAt)
	return c
}

func storedSecret(s *licentia.WebhookSecret) licentia.WebhookSecret {
	c := *s
	c.CreatedAt, c.ReplacedAt = atMillis(c.CreatedAt), atMillisPtr(c.ReplacedAt)
	return c
}

// wantUTC reports the times not in UTC; cmp compares times with Equal,
// which ignores the zone.
func wantUTC(t *testing.T, what string, times ...*time.Time) {
	t.Helper()
	for _, at := range times {
		if at != nil && at.Location() != time.UTC {
			t.Errorf("%s: time %s is in %v, want UTC", what, at, at.Location())
		}
	}
}

// testWebhookEndpoints writes endpoints at times finer than a millisecond
// and in another zone, lists them oldest first (id breaking ties), and
// updates every changeable field.
func testWebhookEndpoints(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	createEndpoint(t, s, newEndpoint(createOrganization(t, s, "other").ID, base))
	zone := time.FixedZone("UTC+2", 2*60*60)
	late := newEndpoint(o.ID, base.Add(time.Hour+1500*time.Microsecond).In(zone))
	sameB := newEndpoint(o.ID, base)
	sameB.ID, sameB.Enabled, sameB.DisabledReason = seqID(2), false, ptr(licentia.DisabledByMaker)
	sameA := newEndpoint(o.ID, base)
	sameA.ID, sameA.Description, sameA.EventTypes = seqID(1), "", []licentia.EventType{licentia.EventLicenceExpired}
	for _, e := range []*licentia.WebhookEndpoint{late, sameB, sameA} {
		createEndpoint(t, s, e)
	}
	want := []licentia.WebhookEndpoint{storedEndpoint(sameA), storedEndpoint(sameB), storedEndpoint(late)}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.WebhookEndpoints(ctx, o.ID)
		if diff := cmp.Diff(want, got, ignoreLease); diff != "" || err != nil {
			t.Errorf("WebhookEndpoints() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		for _, w := range want {
			e, err := r.WebhookEndpoint(ctx, o.ID, w.ID)
			if diff := cmp.Diff(&w, e, ignoreLease); diff != "" || err != nil {
				t.Errorf("WebhookEndpoint(%s) error = %v, mismatch (-want +got):\n%s", w.ID, err, diff)
				continue
			}
			wantUTC(t, "WebhookEndpoint()", &e.CreatedAt, &e.UpdatedAt)
		}
	})

	// Turned off for failures, then on again: disabled_reason is set, then
	// nil. created_at is not changeable.
	off := *late
	off.URL, off.Description = "https://hooks.example.org/v2", "Changed"
	off.EventTypes = []licentia.EventType{licentia.EventActivationDeactivated, licentia.EventLicenceAnonymised}
	off.Enabled, off.DisabledReason = false, ptr(licentia.DisabledByFailures)
	off.CreatedAt, off.UpdatedAt = base.Add(9*time.Hour), base.Add(2*time.Hour+time.Microsecond).In(zone)
	on := off
	on.Enabled, on.DisabledReason, on.UpdatedAt = true, nil, base.Add(3*time.Hour)
	for _, e := range []licentia.WebhookEndpoint{off, on} {
		inTx(t, s, func(tx store.Tx) error { return tx.UpdateWebhookEndpoint(ctx, &e) })
		want := storedEndpoint(&e)
		want.CreatedAt = atMillis(late.CreatedAt)
		got, err := s.WebhookEndpoint(ctx, o.ID, late.ID)
		if diff := cmp.Diff(&want, got, ignoreLease); diff != "" || err != nil {
			t.Errorf("WebhookEndpoint() after update error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	}
	err := s.InTx(ctx, func(tx store.Tx) error {
		missing := on
		missing.ID = licentia.NewID()
		return tx.UpdateWebhookEndpoint(ctx, &missing)
	})
	wantCode(t, "UpdateWebhookEndpoint(missing)", err, licentia.CodeWebhookEndpointNotFound)
}

// testWebhookSecrets replaces an endpoint's secret twice: each replacement
// marks only the then current secret replaced, at the time given, and lists
// put the newest first.
func testWebhookSecrets(t *testing.T, s store.Store) {
	ctx := t.Context()
	zone := time.FixedZone("UTC-5", -5*60*60)
	ep := newEndpoint(createOrganization(t, s, "acme").ID, base.Add(1500*time.Microsecond).In(zone))
	first := createEndpoint(t, s, ep)
	theirs := createEndpoint(t, s, newEndpoint(createOrganization(t, s, "other").ID, base))
	second, third := newSecret(ep.ID, base.Add(time.Hour)), newSecret(ep.ID, base.Add(2*time.Hour))
	replaceSecret(t, s, second, base.Add(time.Hour+time.Microsecond).In(zone))
	replaceSecret(t, s, third, base.Add(2*time.Hour))

	wantFirst, wantSecond := storedSecret(first), storedSecret(second)
	wantFirst.ReplacedAt, wantSecond.ReplacedAt = ptr(base.Add(time.Hour)), ptr(base.Add(2*time.Hour))
	want := []licentia.WebhookSecret{storedSecret(third), wantSecond, wantFirst}
	checkSecrets := func(t *testing.T, r store.Reader) {
		t.Helper()
		got, err := r.WebhookSecrets(ctx, ep.ID)
		if diff := cmp.Diff(want, got, ignoreLease); diff != "" || err != nil {
			t.Errorf("WebhookSecrets() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		for _, g := range got {
			wantUTC(t, "WebhookSecrets()", &g.CreatedAt, g.ReplacedAt)
		}
		// Every organization's secrets, in no order the contract names.
		all, err := r.AllWebhookSecrets(ctx)
		byID := func(a, b licentia.WebhookSecret) int { return strings.Compare(a.ID, b.ID) }
		wantAll := slices.SortedFunc(slices.Values(append(slices.Clone(want), storedSecret(theirs))), byID)
		slices.SortFunc(all, byID)
		if diff := cmp.Diff(wantAll, all, ignoreLease); diff != "" || err != nil {
			t.Errorf("AllWebhookSecrets() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	}
	eachReader(t, s, checkSecrets)

	sealed := sealedBlob()
	inTx(t, s, func(tx store.Tx) error { return tx.ResealWebhookSecret(ctx, first.ID, sealed, "sha256:next") })
	want[2].Sealed, want[2].MasterFingerprint = sealed, "sha256:next"
	checkSecrets(t, s)

	err := s.InTx(ctx, func(tx store.Tx) error { return tx.ResealWebhookSecret(ctx, licentia.NewID(), sealed, "sha256:next") })
	wantCode(t, "ResealWebhookSecret(missing)", err, licentia.CodeNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error {
		return tx.ReplaceWebhookSecret(ctx, newSecret(licentia.NewID(), base), base)
	})
	wantCode(t, "ReplaceWebhookSecret(missing endpoint)", err, licentia.CodeWebhookEndpointNotFound)
	checkSecrets(t, s)
}

// testDeleteWebhookEndpoint deletes an endpoint with secrets and deliveries
// in every status: all of them go, pending ones too, and another endpoint
// of the organization keeps its own.
func testDeleteWebhookEndpoint(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	gone, kept := newEndpoint(o.ID, base), newEndpoint(o.ID, base.Add(time.Second))
	createEndpoint(t, s, gone)
	keptSecret := createEndpoint(t, s, kept)
	replaceSecret(t, s, newSecret(gone.ID, base.Add(time.Hour)), base.Add(time.Hour))
	ev := createEvent(t, s, o.ID, base)
	pending, succeeded, failed := newDelivery(gone, ev, base), newDelivery(gone, ev, base), newDelivery(gone, ev, base)
	succeeded.Status, succeeded.NextAttemptAt = licentia.DeliverySucceeded, nil
	failed.Status, failed.NextAttemptAt = licentia.DeliveryFailed, nil
	keptDelivery := newDelivery(kept, ev, base)
	createDeliveries(t, s, pending, succeeded, failed, keptDelivery)

	inTx(t, s, func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(ctx, o.ID, gone.ID) })
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, err := r.WebhookEndpoint(ctx, o.ID, gone.ID)
		wantCode(t, "WebhookEndpoint(deleted)", err, licentia.CodeWebhookEndpointNotFound)
		if v, err := r.WebhookSecrets(ctx, gone.ID); len(v) != 0 || err != nil {
			t.Errorf("WebhookSecrets(deleted) = %d rows, %v, want none, nil", len(v), err)
		}
		if v, err := r.Deliveries(ctx, o.ID, gone.ID, nil, 10); len(v) != 0 || err != nil {
			t.Errorf("Deliveries(deleted) = %d rows, %v, want none, nil", len(v), err)
		}
		_, err = r.Delivery(ctx, o.ID, gone.ID, pending.ID)
		wantCode(t, "Delivery(deleted)", err, licentia.CodeWebhookDeliveryNotFound)
		eps, err := r.WebhookEndpoints(ctx, o.ID)
		if diff := cmp.Diff([]licentia.WebhookEndpoint{storedEndpoint(kept)}, eps, ignoreLease); diff != "" || err != nil {
			t.Errorf("WebhookEndpoints() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		all, err := r.AllWebhookSecrets(ctx)
		if diff := cmp.Diff([]licentia.WebhookSecret{storedSecret(keptSecret)}, all, ignoreLease); diff != "" || err != nil {
			t.Errorf("AllWebhookSecrets() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		ds, err := r.Deliveries(ctx, o.ID, kept.ID, nil, 10)
		if diff := cmp.Diff([]licentia.Delivery{storedDelivery(keptDelivery)}, ds, ignoreLease); diff != "" || err != nil {
			t.Errorf("Deliveries(kept) error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})
	// The deleted endpoint's pending delivery is not sent.
	claimed := claim(t, s, base.Add(time.Hour), base.Add(2*time.Hour), 10)
	if diff := cmp.Diff([]licentia.Delivery{storedDelivery(keptDelivery)}, claimed, ignoreLease); diff != "" {
		t.Errorf("ClaimDeliveries() after delete mismatch (-want +got):\n%s", diff)
	}
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(ctx, o.ID, gone.ID) })
	wantCode(t, "DeleteWebhookEndpoint(again)", err, licentia.CodeWebhookEndpointNotFound)
}

// testWebhookSecretRace replaces one endpoint's secret from several
// transactions at once: each replacement succeeds and one current secret
// remains.
func testWebhookSecretRace(t *testing.T, s store.Store) {
	const racers = 8
	ctx := t.Context()
	ep := newEndpoint(createOrganization(t, s, "acme").ID, base)
	createEndpoint(t, s, ep)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			at := base.Add(time.Duration(i+1) * time.Second)
			errs[i] = s.InTx(ctx, func(tx store.Tx) error { return tx.ReplaceWebhookSecret(ctx, newSecret(ep.ID, at), at) })
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("racer %d: ReplaceWebhookSecret() error = %v", i, err)
		}
	}
	secrets, err := s.WebhookSecrets(ctx, ep.ID)
	current := 0
	for _, sc := range secrets {
		if sc.ReplacedAt == nil {
			current++
		}
	}
	if len(secrets) != racers+1 || current != 1 || err != nil {
		t.Errorf("WebhookSecrets() = %d secrets, %d current, %v; want %d, 1 current", len(secrets), current, err, racers+1)
	}
}
