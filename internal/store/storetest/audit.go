package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// appendAudit appends entries in one transaction.
func appendAudit(t *testing.T, s store.Store, entries ...*licentia.AuditEntry) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, e := range entries {
			if err := tx.AppendAudit(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
}

func newAuditEntry(orgID, data string) *licentia.AuditEntry {
	return &licentia.AuditEntry{
		ID: licentia.NewID(), OrgID: orgID, Action: licentia.AuditOrganizationCreated,
		Actor: licentia.OperatorActor, At: base, Data: json.RawMessage(data),
	}
}

func testAudit(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	// The data is kept byte for byte: spacing, key order, escapes and
	// number forms included, which a JSON column would normalise.
	first := newAuditEntry(o.ID, `{"slug": "acme",  "plan":"free", "a":[ ]}`)
	// Same instant as first: the order written decides.
	second := newAuditEntry(o.ID, `{"name":"Zoë \u00e9 \ud83d\ude00","n":1.50,"big":12345678901234567890}`)
	second.Action, second.Actor = licentia.AuditAPIKeyCreated, licentia.APIKeyActor(licentia.NewID())
	second.LicenceID = ptr(licentia.NewID())
	third := newAuditEntry(o.ID, "{\n  \"indented\": true\n}")
	third.At = base.Add(time.Millisecond)
	noData := newAuditEntry(o.ID, "")
	noData.At = base.Add(time.Millisecond)
	appendAudit(t, s, first, second)
	appendAudit(t, s, newAuditEntry(other.ID, `{}`))
	appendAudit(t, s, third, noData)

	// An entry written without data reads back as the empty object.
	wantNoData := *noData
	wantNoData.Data = json.RawMessage(`{}`)
	want := []licentia.AuditEntry{*first, *second, *third, wantNoData}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.OrganizationAudit(t.Context(), o.ID)
		if err != nil {
			t.Errorf("OrganizationAudit() error = %v", err)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("OrganizationAudit() mismatch (-want +got):\n%s", diff)
		}
	})
}

// testLicenceAudit lists one licence's entries, oldest first, and rewrites
// their data (as anonymising does), leaving every other entry as it was.
func testLicenceAudit(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l, otherLicence := newLicence(o.ID, p.ID, "a@example.com", base), newLicence(o.ID, p.ID, "b@example.com", base)
	createLicences(t, s, l, otherLicence)
	entry := func(licenceID *string, data string, at time.Time) *licentia.AuditEntry {
		e := newAuditEntry(o.ID, data)
		e.LicenceID, e.At = licenceID, at
		return e
	}
	first := entry(&l.ID, `{"email":"a@example.com", "n": 1}`, base)
	second := entry(&l.ID, `{"email":"a@example.com"}`, base) // same instant: written order decides
	third := entry(&l.ID, `{}`, base.Add(time.Hour))
	others := []*licentia.AuditEntry{entry(&otherLicence.ID, `{"email":"b@example.com"}`, base), entry(nil, `{"org":true}`, base)}
	appendAudit(t, s, first, second, others[0])
	appendAudit(t, s, others[1], third)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.LicenceAudit(ctx, o.ID, l.ID)
		if diff := cmp.Diff([]licentia.AuditEntry{*first, *second, *third}, got); diff != "" || err != nil {
			t.Errorf("LicenceAudit() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})
	var seen []string
	inTx(t, s, func(tx store.Tx) error {
		return tx.RewriteLicenceAudit(ctx, o.ID, l.ID, func(data []byte) []byte {
			seen = append(seen, string(data))
			return []byte(`{"reduced": true}`)
		})
	})
	if diff := cmp.Diff([]string{string(first.Data), string(second.Data), string(third.Data)}, seen); diff != "" {
		t.Errorf("RewriteLicenceAudit() passed data mismatch (-want +got):\n%s", diff)
	}
	want := []licentia.AuditEntry{*first, *second, *others[0], *others[1], *third}
	for _, i := range []int{0, 1, 4} {
		want[i].Data = json.RawMessage(`{"reduced": true}`)
	}
	got, err := s.OrganizationAudit(ctx, o.ID)
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		t.Errorf("OrganizationAudit() after rewrite error = %v, mismatch (-want +got):\n%s", err, diff)
	}
}
