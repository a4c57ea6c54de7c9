package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testWebhookIsolation asks, as one organization, for another's endpoint
// and delivery through every method that takes an organization: each
// answers exactly as for an id that does not exist, and changes nothing. A
// delivery of another endpoint of the same organization answers the same.
func testWebhookIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine, other := createOrganization(t, s, "mine"), createOrganization(t, s, "other")
	myEndpoint, mySecondEndpoint, theirEndpoint := newEndpoint(mine.ID, base), newEndpoint(mine.ID, base), newEndpoint(other.ID, base)
	for _, e := range []*licentia.WebhookEndpoint{myEndpoint, mySecondEndpoint, theirEndpoint} {
		createEndpoint(t, s, e)
	}
	myDelivery := newDelivery(myEndpoint, createEvent(t, s, mine.ID, base), base)
	theirDelivery := newDelivery(theirEndpoint, createEvent(t, s, other.ID, base), base)
	// Failed, so that a requeue would show.
	myDelivery.Status, myDelivery.NextAttemptAt = licentia.DeliveryFailed, nil
	theirDelivery.Status, theirDelivery.NextAttemptAt = licentia.DeliveryFailed, nil
	createDeliveries(t, s, myDelivery, theirDelivery)
	missing := licentia.NewID()

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, want := r.WebhookEndpoint(ctx, mine.ID, missing)
		wantCode(t, "WebhookEndpoint(missing)", want, licentia.CodeWebhookEndpointNotFound)
		_, err := r.WebhookEndpoint(ctx, mine.ID, theirEndpoint.ID)
		wantSame(t, "WebhookEndpoint(theirs)", err, want)

		_, want = r.Delivery(ctx, mine.ID, myEndpoint.ID, missing)
		wantCode(t, "Delivery(missing)", want, licentia.CodeWebhookDeliveryNotFound)
		_, err = r.Delivery(ctx, mine.ID, myEndpoint.ID, theirDelivery.ID)
		wantSame(t, "Delivery(my endpoint, their delivery)", err, want)
		_, want = r.Delivery(ctx, mine.ID, missing, missing)
		_, err = r.Delivery(ctx, mine.ID, theirEndpoint.ID, theirDelivery.ID)
		wantSame(t, "Delivery(theirs)", err, want)
		_, want = r.Delivery(ctx, mine.ID, mySecondEndpoint.ID, missing)
		_, err = r.Delivery(ctx, mine.ID, mySecondEndpoint.ID, myDelivery.ID)
		wantSame(t, "Delivery(another endpoint's)", err, want)

		eps, err := r.WebhookEndpoints(ctx, mine.ID)
		if len(eps) != 2 || err != nil || eps[0].OrgID != mine.ID || eps[1].OrgID != mine.ID {
			t.Errorf("WebhookEndpoints() = %+v, %v, want my two", eps, err)
		}
		lists := map[string]func() (int, error){
			"Deliveries(theirs)": func() (int, error) {
				v, err := r.Deliveries(ctx, mine.ID, theirEndpoint.ID, nil, 10)
				return len(v), err
			},
			"Deliveries(another endpoint's)": func() (int, error) {
				v, err := r.Deliveries(ctx, mine.ID, mySecondEndpoint.ID, nil, 10)
				return len(v), err
			},
			"Deliveries(after theirs)": func() (int, error) {
				v, err := r.Deliveries(ctx, mine.ID, myEndpoint.ID, &theirDelivery.ID, 10)
				return len(v), err
			},
			"Deliveries(after missing)": func() (int, error) {
				v, err := r.Deliveries(ctx, mine.ID, myEndpoint.ID, &missing, 10)
				return len(v), err
			},
		}
		for name, list := range lists {
			if n, err := list(); n != 0 || err != nil {
				t.Errorf("%s = %d rows, %v, want none, nil", name, n, err)
			}
		}
	})

	inTx(t, s, func(tx store.Tx) error {
		checkIsolatedWebhookWrites(t, tx, mine.ID, myEndpoint, mySecondEndpoint, theirEndpoint, myDelivery, theirDelivery)
		return nil
	})
	for _, e := range []*licentia.WebhookEndpoint{myEndpoint, theirEndpoint} {
		got, err := s.WebhookEndpoint(ctx, e.OrgID, e.ID)
		if diff := cmp.Diff(storedEndpoint(e), *got, ignoreLease); err != nil || diff != "" {
			t.Errorf("WebhookEndpoint() after isolated writes error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	}
	for _, d := range []*licentia.Delivery{myDelivery, theirDelivery} {
		if diff := cmp.Diff(storedDelivery(d), *readDelivery(t, s, d), ignoreLease); diff != "" {
			t.Errorf("Delivery() after isolated writes mismatch (-want +got):\n%s", diff)
		}
	}
}

func checkIsolatedWebhookWrites(t *testing.T, tx store.Tx, myOrg string, myEndpoint, mySecondEndpoint, theirEndpoint *licentia.WebhookEndpoint,
	myDelivery, theirDelivery *licentia.Delivery) {
	ctx := t.Context()
	missing := licentia.NewID()
	missingEndpoint, theirsAsMine := *myEndpoint, *theirEndpoint
	missingEndpoint.ID = missing
	theirsAsMine.OrgID, theirsAsMine.URL, theirsAsMine.UpdatedAt = myOrg, "https://attacker.example", base.Add(time.Hour)
	want := tx.UpdateWebhookEndpoint(ctx, &missingEndpoint)
	wantCode(t, "UpdateWebhookEndpoint(missing)", want, licentia.CodeWebhookEndpointNotFound)
	wantSame(t, "UpdateWebhookEndpoint(theirs)", tx.UpdateWebhookEndpoint(ctx, &theirsAsMine), want)
	want = tx.DeleteWebhookEndpoint(ctx, myOrg, missing)
	wantCode(t, "DeleteWebhookEndpoint(missing)", want, licentia.CodeWebhookEndpointNotFound)
	wantSame(t, "DeleteWebhookEndpoint(theirs)", tx.DeleteWebhookEndpoint(ctx, myOrg, theirEndpoint.ID), want)

	want = tx.RequeueDelivery(ctx, myOrg, myEndpoint.ID, missing, base)
	wantCode(t, "RequeueDelivery(missing)", want, licentia.CodeWebhookDeliveryNotFound)
	for name, err := range map[string]error{
		"RequeueDelivery(theirs)":                 tx.RequeueDelivery(ctx, myOrg, theirEndpoint.ID, theirDelivery.ID, base),
		"RequeueDelivery(their delivery, mine)":   tx.RequeueDelivery(ctx, myOrg, myEndpoint.ID, theirDelivery.ID, base),
		"RequeueDelivery(another endpoint's)":     tx.RequeueDelivery(ctx, myOrg, mySecondEndpoint.ID, myDelivery.ID, base),
		"RequeueDelivery(their org, my delivery)": tx.RequeueDelivery(ctx, theirEndpoint.OrgID, myEndpoint.ID, myDelivery.ID, base),
	} {
		wantSame(t, name, err, want)
	}
}

// testWebhookMalformedIDs gives ids that are not stored ids to every
// webhook method: they answer like missing ones, never with an internal
// error, and leave a transaction usable.
func testWebhookMalformedIDs(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	secret := createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	d := newDelivery(ep, ev, base)
	createDeliveries(t, s, d)
	for _, tt := range []struct{ name, id string }{
		{"empty", ""},
		{"word", "not-a-uuid"},
		{"not hex", "0000000g-0000-4000-8000-000000000000"},
		{"upper case", strings.ToUpper(ep.ID)},
		{"upper case event", strings.ToUpper(ev.ID)},
		{"sql", "' OR '1'='1"},
		{"nul", ep.ID + "\x00"},
		{"invalid utf-8", "evt_\xff\xfe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) { checkMalformedWebhookReads(t, r, d, tt.id) })
			err := s.InTx(t.Context(), func(tx store.Tx) error {
				checkMalformedWebhookWrites(t, tx, ep, secret, d, tt.id)
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				t.Errorf("InTx() error = %v, want %v", err, errRollback)
			}
		})
	}
}

func checkMalformedWebhookReads(t *testing.T, r store.Reader, d *licentia.Delivery, bad string) {
	ctx := t.Context()
	_, err := r.WebhookEndpoint(ctx, d.OrgID, bad)
	wantCode(t, "WebhookEndpoint(org, bad)", err, licentia.CodeWebhookEndpointNotFound)
	_, err = r.WebhookEndpoint(ctx, bad, d.EndpointID)
	wantCode(t, "WebhookEndpoint(bad, endpoint)", err, licentia.CodeWebhookEndpointNotFound)
	for name, args := range map[string][3]string{
		"Delivery(bad, endpoint, delivery)": {bad, d.EndpointID, d.ID},
		"Delivery(org, bad, delivery)":      {d.OrgID, bad, d.ID},
		"Delivery(org, endpoint, bad)":      {d.OrgID, d.EndpointID, bad},
	} {
		_, err = r.Delivery(ctx, args[0], args[1], args[2])
		wantCode(t, name, err, licentia.CodeWebhookDeliveryNotFound)
	}
	_, err = r.Event(ctx, bad)
	wantCode(t, "Event(bad)", err, licentia.CodeNotFound)
	lists := map[string]func() (int, error){
		"WebhookEndpoints": func() (int, error) { v, err := r.WebhookEndpoints(ctx, bad); return len(v), err },
		"WebhookSecrets":   func() (int, error) { v, err := r.WebhookSecrets(ctx, bad); return len(v), err },
		"Deliveries(bad, endpoint)": func() (int, error) {
			v, err := r.Deliveries(ctx, bad, d.EndpointID, nil, 10)
			return len(v), err
		},
		"Deliveries(org, bad)": func() (int, error) { v, err := r.Deliveries(ctx, d.OrgID, bad, nil, 10); return len(v), err },
		"Deliveries(after bad)": func() (int, error) {
			v, err := r.Deliveries(ctx, d.OrgID, d.EndpointID, &bad, 10)
			return len(v), err
		},
	}
	for name, list := range lists {
		if n, err := list(); n != 0 || err != nil {
			t.Errorf("%s() = %d rows, %v, want none, nil", name, n, err)
		}
	}
	// The reads above must not have spoilt a transaction.
	if got, err := r.Delivery(ctx, d.OrgID, d.EndpointID, d.ID); err != nil || got.ID != d.ID {
		t.Errorf("Delivery(valid) after malformed reads = %v, %v", got, err)
	}
}

func checkMalformedWebhookWrites(t *testing.T, tx store.Tx, ep *licentia.WebhookEndpoint, secret *licentia.WebhookSecret,
	d *licentia.Delivery, bad string) {
	ctx := t.Context()
	badID, badOrg := *ep, *ep
	badID.ID, badOrg.OrgID = bad, bad
	wantCode(t, "UpdateWebhookEndpoint(org, bad)", tx.UpdateWebhookEndpoint(ctx, &badID), licentia.CodeWebhookEndpointNotFound)
	wantCode(t, "UpdateWebhookEndpoint(bad, endpoint)", tx.UpdateWebhookEndpoint(ctx, &badOrg), licentia.CodeWebhookEndpointNotFound)
	wantCode(t, "DeleteWebhookEndpoint(org, bad)", tx.DeleteWebhookEndpoint(ctx, ep.OrgID, bad), licentia.CodeWebhookEndpointNotFound)
	wantCode(t, "DeleteWebhookEndpoint(bad, endpoint)", tx.DeleteWebhookEndpoint(ctx, bad, ep.ID), licentia.CodeWebhookEndpointNotFound)
	err := tx.ReplaceWebhookSecret(ctx, newSecret(bad, base), base)
	wantCode(t, "ReplaceWebhookSecret(bad endpoint)", err, licentia.CodeWebhookEndpointNotFound)
	err = tx.ResealWebhookSecret(ctx, bad, sealedBlob(), "sha256:next")
	wantCode(t, "ResealWebhookSecret(bad)", err, licentia.CodeNotFound)
	for name, args := range map[string][3]string{
		"RequeueDelivery(bad, endpoint, delivery)": {bad, d.EndpointID, d.ID},
		"RequeueDelivery(org, bad, delivery)":      {d.OrgID, bad, d.ID},
		"RequeueDelivery(org, endpoint, bad)":      {d.OrgID, d.EndpointID, bad},
	} {
		wantCode(t, name, tx.RequeueDelivery(ctx, args[0], args[1], args[2], base), licentia.CodeWebhookDeliveryNotFound)
	}
	badDelivery := *d
	badDelivery.ID, badDelivery.Status = bad, licentia.DeliveryFailed
	if err := tx.FinishAttempts(ctx, []licentia.Delivery{badDelivery}); err != nil {
		t.Errorf("FinishAttempts(bad) error = %v, want nil, as for a deleted delivery", err)
	}
	// Nothing changed, and the transaction is still usable.
	if diff := cmp.Diff(storedDelivery(d), *readDelivery(t, tx, d), ignoreLease); diff != "" {
		t.Errorf("Delivery(valid) after malformed writes mismatch (-want +got):\n%s", diff)
	}
	secrets, err := tx.WebhookSecrets(ctx, ep.ID)
	if diff := cmp.Diff([]licentia.WebhookSecret{storedSecret(secret)}, secrets, ignoreLease); diff != "" || err != nil {
		t.Errorf("WebhookSecrets(valid) after malformed writes error = %v, mismatch (-want +got):\n%s", err, diff)
	}
}
