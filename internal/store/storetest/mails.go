package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

var ignoreMailLease = cmpopts.IgnoreFields(licentia.Mail{}, "LeasedUntil")

// newMail is a key mail of orgID listing licenceIDs, queued at created and
// due then.
func newMail(orgID string, created time.Time, licenceIDs ...string) *licentia.Mail {
	return &licentia.Mail{ID: licentia.NewID(), OrgID: orgID, Kind: licentia.MailKey, LicenceIDs: licenceIDs,
		Status: licentia.MailQueued, NextAttemptAt: ptr(created), CreatedAt: created}
}

func createMails(t *testing.T, s store.Store, ms ...*licentia.Mail) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, m := range ms {
			if err := tx.CreateMail(t.Context(), m); err != nil {
				return err
			}
		}
		return nil
	})
}

func claimMails(t *testing.T, s store.Store, now, until time.Time, limit int) []licentia.Mail {
	t.Helper()
	var out []licentia.Mail
	inTx(t, s, func(tx store.Tx) (err error) {
		out, err = tx.ClaimMails(t.Context(), now, until, limit)
		return err
	})
	return out
}

func finishMail(t *testing.T, s store.Store, m *licentia.Mail) bool {
	t.Helper()
	var ok bool
	inTx(t, s, func(tx store.Tx) (err error) {
		ok, err = tx.FinishMail(t.Context(), m)
		return err
	})
	return ok
}

// testBranding: branding is written and read back with the organization,
// by id and by slug, and cleared with nil fields; another organization's is
// untouched, and a missing organization answers not_found.
func testBranding(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, other := createOrganization(t, s, "acme"), createOrganization(t, s, "other")
	b := licentia.Branding{DisplayName: ptr("Acme Software — Zoë"), SupportEmail: ptr("help@acme.example"),
		LogoURL: ptr("https://acme.example/logo.png"), Accent: ptr("#0a7cff")}
	inTx(t, s, func(tx store.Tx) error { return tx.SetBranding(ctx, o.ID, b) })
	want := *o
	want.Branding = b
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Organization(ctx, o.ID)
		if diff := cmp.Diff(&want, got); diff != "" || err != nil {
			t.Errorf("Organization() after SetBranding() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		got, err = r.OrganizationBySlug(ctx, o.Slug)
		if diff := cmp.Diff(&want, got); diff != "" || err != nil {
			t.Errorf("OrganizationBySlug() after SetBranding() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		got, err = r.Organization(ctx, other.ID)
		if diff := cmp.Diff(other, got); diff != "" || err != nil {
			t.Errorf("Organization(other) mismatch (-want +got), error %v:\n%s", err, diff)
		}
	})
	if got := want.DisplayName(); got != *b.DisplayName {
		t.Errorf("DisplayName() = %q, want %q", got, *b.DisplayName)
	}

	inTx(t, s, func(tx store.Tx) error { return tx.SetBranding(ctx, o.ID, licentia.Branding{}) })
	got, err := s.Organization(ctx, o.ID)
	if diff := cmp.Diff(o, got); diff != "" || err != nil {
		t.Errorf("Organization() after clearing the branding mismatch (-want +got), error %v:\n%s", err, diff)
	}
	if got.DisplayName() != o.Name {
		t.Errorf("DisplayName() without one = %q, want the name %q", got.DisplayName(), o.Name)
	}
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.SetBranding(ctx, licentia.NewID(), b) })
	wantCode(t, "SetBranding(missing)", err, licentia.CodeNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.SetBranding(ctx, "not-a-uuid", b) })
	wantCode(t, "SetBranding(malformed)", err, licentia.CodeNotFound)

	// An organization created with its branding keeps it.
	created := newOrganization("branded")
	created.Branding = b
	inTx(t, s, func(tx store.Tx) error { return tx.CreateOrganization(ctx, created) })
	if got, err := s.Organization(ctx, created.ID); cmp.Diff(created, got) != "" || err != nil {
		t.Errorf("Organization(created with branding) = %+v, %v, want %+v", got, err, created)
	}
}

// testMappingKeyMail: send_key_mail is written and read back, and a
// mapping written without it, as every mapping made before the column
// existed, reads true.
func testMappingKeyMail(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	integ := newIntegration(o.ID, base)
	createIntegrations(t, s, integ)
	on, off := newMapping(integ.ID, "prod_on", base), newMapping(integ.ID, "prod_off", base)
	on.SendKeyMail = true
	putMappings(t, s, on, off)
	Tamper(t, s, `INSERT INTO integration_mappings (integration_id, provider_product_id, product_id, limit_kind,
		limit_count, on_refund, on_subscription_end, created_at, updated_at)
		SELECT integration_id, 'prod_old', product_id, limit_kind, limit_count, on_refund, on_subscription_end,
		created_at, updated_at FROM integration_mappings WHERE provider_product_id = 'prod_off'`)
	old := *off
	old.ProviderProductID, old.SendKeyMail = "prod_old", true
	list, err := s.Mappings(ctx, o.ID, integ.ID)
	if diff := cmp.Diff([]licentia.Mapping{*off, old, *on}, list); diff != "" || err != nil {
		t.Errorf("Mappings() mismatch (-want +got), error %v:\n%s", err, diff)
	}
	on.SendKeyMail = false
	putMappings(t, s, on)
	if got, err := s.Mapping(ctx, o.ID, integ.ID, on.ProviderProductID); err != nil || got.SendKeyMail {
		t.Errorf("Mapping() after turning key mail off = %+v, %v, want SendKeyMail false", got, err)
	}
}

// testMails: a mail reads back with its licences in its order; another
// organization's answers as a missing one; the key-mail count counts each
// licence a mail lists, from since on, of its kind and organization.
func testMails(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, other := createOrganization(t, s, "acme"), createOrganization(t, s, "other")
	l1, l2, l3 := seqID(3), seqID(1), seqID(2)
	order := newMail(o.ID, base, l1, l2, l3)
	again := newMail(o.ID, base.Add(time.Hour), l2)
	old := newMail(o.ID, base.Add(-time.Millisecond), l2)
	theirs := newMail(other.ID, base, l2)
	createMails(t, s, order, again, old, theirs)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Mail(ctx, o.ID, order.ID)
		if diff := cmp.Diff(order, got); diff != "" || err != nil {
			t.Errorf("Mail() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		_, missing := r.Mail(ctx, o.ID, licentia.NewID())
		wantCode(t, "Mail(missing)", missing, licentia.CodeNotFound)
		_, err = r.Mail(ctx, o.ID, theirs.ID)
		wantSame(t, "Mail(theirs)", err, missing)
		_, err = r.Mail(ctx, o.ID, "not-a-uuid")
		wantCode(t, "Mail(malformed)", err, licentia.CodeNotFound)

		for _, tt := range []struct {
			orgID, licenceID string
			since            time.Time
			want             int64
		}{
			{o.ID, l2, base, 2},
			{o.ID, l2, base.Add(-time.Millisecond), 3},
			{o.ID, l2, base.Add(time.Hour), 1},
			{o.ID, l2, base.Add(time.Hour + time.Millisecond), 0},
			{o.ID, l1, base, 1},
			{o.ID, seqID(9), base, 0},
			{other.ID, l2, base.Add(-time.Hour), 1},
			{other.ID, l1, base.Add(-time.Hour), 0},
			{o.ID, "not-a-uuid", base, 0},
		} {
			n, err := r.CountLicenceMails(ctx, tt.orgID, tt.licenceID, licentia.MailKey, tt.since)
			if n != tt.want || err != nil {
				t.Errorf("CountLicenceMails(%s, since %v) = %d, %v, want %d", tt.licenceID, tt.since, n, err, tt.want)
			}
		}
		if n, err := r.CountLicenceMails(ctx, o.ID, l2, "other_kind", base.Add(-time.Hour)); n != 0 || err != nil {
			t.Errorf("CountLicenceMails(another kind) = %d, %v, want 0", n, err)
		}
	})
}

// testClaimMails claims only queued mails due at now and not leased,
// earliest first (id breaking ties), at most limit; a claimed mail is
// claimed again only once its lease has passed.
func testClaimMails(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	due := func(n int, next time.Time) *licentia.Mail {
		m := newMail(o.ID, base.Add(-time.Hour), seqID(100+n))
		m.ID, m.NextAttemptAt = seqID(n), ptr(next)
		return m
	}
	early, tieA, tieB := due(5, base.Add(-time.Minute)), due(2, base.Add(-time.Second)), due(1, base.Add(-time.Second))
	atNow, later := due(3, base), due(4, base.Add(time.Minute))
	sent, failed := due(6, base.Add(-time.Hour)), due(7, base.Add(-time.Hour))
	sent.Status, sent.NextAttemptAt, failed.Status, failed.NextAttemptAt = licentia.MailSent, nil, licentia.MailFailed, nil
	createMails(t, s, later, sent, atNow, tieA, failed, early, tieB)

	lease := base.Add(5 * time.Minute)
	for _, tt := range []struct {
		name       string
		now, until time.Time
		limit      int
		want       []*licentia.Mail
	}{
		{"limit", base, lease, 2, []*licentia.Mail{early, tieB}},
		{"rest due", base, lease, 10, []*licentia.Mail{tieA, atNow}},
		{"all leased", base, lease, 10, nil},
		{"later due", base.Add(time.Minute), lease, 10, []*licentia.Mail{later}},
		{"lease not passed", lease.Add(-time.Millisecond), lease.Add(time.Hour), 10, nil},
		{"lease passed", lease, lease.Add(time.Hour), 10, []*licentia.Mail{early, tieB, tieA, atNow, later}},
	} {
		got := claimMails(t, s, tt.now, tt.until, tt.limit)
		want := make([]licentia.Mail, len(tt.want))
		for i, m := range tt.want {
			want[i] = *m
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), ignoreMailLease); diff != "" {
			t.Errorf("%s: ClaimMails() mismatch (-want +got):\n%s", tt.name, diff)
		}
		for _, m := range got {
			if m.LeasedUntil == nil || !m.LeasedUntil.Equal(tt.until) {
				t.Errorf("%s: ClaimMails() lease = %v, want %v", tt.name, m.LeasedUntil, tt.until)
			}
		}
	}
}

// testFinishMail records an attempt and ends its lease, so a mail still
// queued is claimed again when due; an attempt whose lease passed to
// another claim records nothing.
func testFinishMail(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	m := newMail(o.ID, base, seqID(1))
	createMails(t, s, m)
	first := claimMails(t, s, base, base.Add(time.Minute), 1)
	if len(first) != 1 {
		t.Fatalf("ClaimMails() = %d mails, want 1", len(first))
	}
	// The lease passes and another worker claims the mail.
	second := claimMails(t, s, base.Add(time.Minute), base.Add(2*time.Minute), 1)
	if len(second) != 1 {
		t.Fatalf("ClaimMails() after the lease = %d mails, want 1", len(second))
	}
	late := first[0]
	late.Status, late.Attempts, late.NextAttemptAt = licentia.MailSent, 1, nil
	if finishMail(t, s, &late) {
		t.Errorf("FinishMail() with a lease another claim took = true, want false")
	}
	if got, _ := s.Mail(ctx, o.ID, m.ID); got.Status != licentia.MailQueued || got.Attempts != 0 {
		t.Errorf("Mail() after a stale FinishMail() = %+v, want it untouched", got)
	}

	zone := time.FixedZone("UTC-3", -3*60*60)
	retry := second[0]
	retry.Attempts, retry.FailureReason = 1, ptr(licentia.MailFailureNotHandedOver)
	retry.LastAttemptAt = ptr(base.Add(time.Minute + 1500*time.Microsecond).In(zone))
	retry.NextAttemptAt = ptr(base.Add(time.Hour + time.Microsecond).In(zone))
	if !finishMail(t, s, &retry) {
		t.Fatalf("FinishMail() with its own lease = false, want true")
	}
	want := retry
	want.LastAttemptAt, want.NextAttemptAt = ptr(atMillis(*retry.LastAttemptAt).UTC()), ptr(atMillis(*retry.NextAttemptAt).UTC())
	got, err := s.Mail(ctx, o.ID, m.ID)
	if diff := cmp.Diff(&want, got, ignoreMailLease); diff != "" || err != nil {
		t.Errorf("Mail() after a failed attempt mismatch (-want +got), error %v:\n%s", err, diff)
	}
	// The lease ended: the mail is claimed as soon as it is due.
	if got := claimMails(t, s, base.Add(time.Hour), base.Add(2*time.Hour), 10); len(got) != 1 {
		t.Fatalf("ClaimMails() at the next attempt = %d mails, want 1", len(got))
	} else {
		done := got[0]
		done.Status, done.Attempts, done.NextAttemptAt, done.FailureReason = licentia.MailSent, 2, nil, nil
		done.LastAttemptAt = ptr(base.Add(time.Hour))
		if !finishMail(t, s, &done) {
			t.Errorf("FinishMail(sent) = false, want true")
		}
	}
	if got := claimMails(t, s, base.Add(48*time.Hour), base.Add(49*time.Hour), 10); len(got) != 0 {
		t.Errorf("ClaimMails() of a sent mail = %+v, want none", got)
	}
	unclaimed := *m
	if finishMail(t, s, &unclaimed) {
		t.Errorf("FinishMail() of a mail never claimed = true, want false")
	}
}

// testMailClaimRace: claimers in separate transactions share the due mails;
// each is claimed exactly once.
func testMailClaimRace(t *testing.T, s store.Store) {
	const racers, limit, total = 8, 5, 20
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	var want []string
	var ms []*licentia.Mail
	for i := range total {
		m := newMail(o.ID, base.Add(-time.Duration(i%3)*time.Second), seqID(i))
		ms, want = append(ms, m), append(want, m.ID)
	}
	createMails(t, s, ms...)
	claimed := make([][]licentia.Mail, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				var err error
				claimed[i], err = tx.ClaimMails(ctx, base, base.Add(time.Minute), limit)
				return err
			})
		})
	}
	wg.Wait()
	var got []string
	for i, err := range errs {
		if err != nil || len(claimed[i]) > limit {
			t.Errorf("racer %d: claimed %d, error = %v, want at most %d, nil", i, len(claimed[i]), err, limit)
		}
		for _, m := range claimed[i] {
			got = append(got, m.ID)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claimed mails, each once (-want +got):\n%s", diff)
	}
}
