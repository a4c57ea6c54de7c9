package admin_test

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// providerFixture is an organization on a free plan of activeLimit active
// licences, with product app (major 2) and a webhook endpoint subscribed to
// every event, and an integration id its provider effects come from.
type providerFixture struct {
	st          store.Store
	clk         *clock.Fake
	svc         *admin.Service
	org         *licentia.Organization
	integration string
	endpoint    *licentia.WebhookEndpoint
}

func newProviderFixture(t *testing.T, st store.Store, activeLimit int64) *providerFixture {
	t.Helper()
	ctx := t.Context()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	plans := licentia.DefaultPlans()
	free := plans[licentia.PlanFree]
	free.ActiveLicences = activeLimit
	plans[licentia.PlanFree] = free
	f := &providerFixture{st: st, clk: clock.NewFake(start), integration: licentia.NewID()}
	f.svc = admin.New(admin.Options{Store: st, Clock: f.clk, Plans: plans, Keys: signing.NewKeyring(m),
		BaseURL: hookBaseURL, Logger: slog.New(slog.DiscardHandler)})
	f.org, err = f.svc.CreateOrganization(ctx, licentia.OperatorActor, admin.NewOrganization{
		Name: "Shop", Slug: "shop", Plan: licentia.PlanFree, OwnerEmail: "owner@shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	id, name, prefix, major := "app", "App", "APP", int64(2)
	if _, err := f.svc.CreateProduct(ctx, licentia.OperatorActor, f.org.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatal(err)
	}
	f.endpoint, _, err = f.svc.AddWebhookEndpoint(ctx, licentia.OperatorActor, f.org.ID,
		admin.CreateWebhookEndpoint{URL: str("https://hooks.example.com/x"), EventTypes: licentia.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// item is a mapped order line of provider product pp: seats, limit 2,
// revoked on refund, expired at the subscription's end.
func item(pp string, quantity int64) admin.ProviderItem {
	return admin.ProviderItem{ProviderProductID: pp, ProductID: "app", LimitKind: licentia.LimitSeats, LimitCount: 2,
		Quantity: quantity, OnRefund: licentia.RefundRevoke, OnSubscriptionEnd: licentia.SubscriptionEndExpire}
}

// order is a one-time Stripe order pi_1 of checkout cs_1.
func (f *providerFixture) order(items ...admin.ProviderItem) admin.ProviderOrder {
	return admin.ProviderOrder{OrgID: f.org.ID, IntegrationID: f.integration, Provider: providers.Stripe, EventID: "evt_1",
		OrderID: str("pi_1"), CheckoutID: str("cs_1"), CustomerID: str("cus_1"), Email: "buyer@example.com", Items: items}
}

// subscription is the first order in_1 of subscription sub_1.
func (f *providerFixture) subscription(trialEnd *time.Time, items ...admin.ProviderItem) admin.ProviderOrder {
	o := f.order(items...)
	o.OrderID, o.SubscriptionID, o.Subscription, o.TrialEndsAt = str("in_1"), str("sub_1"), true, trialEnd
	return o
}

func (f *providerFixture) end(kind admin.ProviderEndKind, ref string) admin.ProviderEnd {
	e := admin.ProviderEnd{OrgID: f.org.ID, IntegrationID: f.integration, Provider: providers.Stripe, Kind: kind}
	if kind == admin.ProviderRefund {
		e.OrderID = &ref
	} else {
		e.SubscriptionID = &ref
	}
	return e
}

func (f *providerFixture) issue(t *testing.T, o admin.ProviderOrder) []licentia.Licence {
	t.Helper()
	ls, err := f.svc.IssueFromProvider(t.Context(), o)
	if err != nil {
		t.Fatalf("IssueFromProvider() error = %v", err)
	}
	return ls
}

func (f *providerFixture) licence(t *testing.T, id string) *licentia.Licence {
	t.Helper()
	l, err := f.st.Licence(t.Context(), f.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// eventTypes lists the organization's events, oldest first.
func (f *providerFixture) eventTypes(t *testing.T) []licentia.EventType {
	t.Helper()
	es, err := f.st.OrganizationEvents(t.Context(), f.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []licentia.EventType
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

// deliveries counts the deliveries queued to the endpoint.
func (f *providerFixture) deliveries(t *testing.T) int {
	t.Helper()
	ds, _, err := f.svc.Deliveries(t.Context(), f.org.ID, f.endpoint.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

// audit returns a licence's audit entries with their data decoded.
func (f *providerFixture) audit(t *testing.T, id string) ([]licentia.AuditEntry, []map[string]any) {
	t.Helper()
	es, err := f.st.LicenceAudit(t.Context(), f.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var data []map[string]any
	for _, e := range es {
		data = append(data, decode(t, e.Data))
	}
	return es, data
}

// wantProviderActor reports an entry not made by the fixture's integration.
func (f *providerFixture) wantProviderActor(t *testing.T, e licentia.AuditEntry) {
	t.Helper()
	if e.Actor.Type != licentia.ActorProvider || e.Actor.ID == nil || *e.Actor.ID != f.integration {
		t.Errorf("%s actor = %+v, want provider %s", e.Action, e.Actor, f.integration)
	}
}

// A one-time order issues a licence per mapped item: limit × quantity, the
// product's major, expiry from key_valid_days, the provider's ids and the
// renewal URL, with licence.issued by the provider queued to endpoints. The
// same order seen again issues nothing more.
func TestIssueFromProvider(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		days := int64(365)
		yearly := item("price_year", 3)
		yearly.KeyValidDays, yearly.RenewalURL = &days, str("https://shop.example/renew")
		perpetual := item("price_life", 1)
		perpetual.LimitKind, perpetual.LimitCount = licentia.LimitMachines, 5
		// Two lines of one provider product make one licence.
		again := item("price_life", 2)
		again.LimitKind, again.LimitCount = licentia.LimitMachines, 5
		ls := f.issue(t, f.order(yearly, perpetual, again))
		if len(ls) != 2 {
			t.Fatalf("issued %d licences, want 2", len(ls))
		}
		now := licentia.TruncateMillis(start)
		expires := now.Add(365 * 24 * time.Hour)
		refs := licentia.ProviderRefs{OrderID: str("pi_1"), CheckoutID: str("cs_1"), CustomerID: str("cus_1")}
		want := []licentia.Licence{
			{ID: ls[0].ID, OrgID: f.org.ID, ProductID: "app", Email: "buyer@example.com", IssuedAt: now, ExpiresAt: &expires,
				LimitKind: licentia.LimitSeats, LimitCount: 6, Major: 2, Status: licentia.StatusActive, Source: licentia.SourceProvider,
				IntegrationID: &f.integration, Provider: refs, RenewalURL: str("https://shop.example/renew"), CreatedAt: now, UpdatedAt: now},
			{ID: ls[1].ID, OrgID: f.org.ID, ProductID: "app", Email: "buyer@example.com", IssuedAt: now,
				LimitKind: licentia.LimitMachines, LimitCount: 15, Major: 2, Status: licentia.StatusActive, Source: licentia.SourceProvider,
				IntegrationID: &f.integration, Provider: refs, CreatedAt: now, UpdatedAt: now},
		}
		if diff := cmp.Diff(want, ls); diff != "" {
			t.Errorf("issued (-want +got):\n%s", diff)
		}
		for i := range ls {
			if diff := cmp.Diff(&want[i], f.licence(t, ls[i].ID)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			es, data := f.audit(t, ls[i].ID)
			if len(es) != 1 || es[0].Action != licentia.AuditLicenceIssued {
				t.Fatalf("audit = %+v, want one licence.issued", es)
			}
			f.wantProviderActor(t, es[0])
			if _, ok := data[0]["plan_exceeded"]; ok || data[0]["provider_event_id"] != "evt_1" {
				t.Errorf("audit data = %v, want the event id and no plan_exceeded", data[0])
			}
		}
		es, err := st.OrganizationEvents(t.Context(), f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Data struct {
				Licence map[string]any `json:"licence"`
			} `json:"data"`
		}
		if err := json.Unmarshal(es[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		if got := body.Data.Licence["renewal_url"]; got != "https://shop.example/renew" {
			t.Errorf("event renewal_url = %v", got)
		}
		if got := body.Data.Licence["source"]; got != "provider" {
			t.Errorf("event source = %v", got)
		}

		// The same order again, say from another event of the same checkout.
		if again := f.issue(t, f.order(yearly, perpetual)); len(again) != 0 {
			t.Errorf("the order again issued %d licences, want none", len(again))
		}
		if diff := cmp.Diff([]licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceIssued}, f.eventTypes(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if n := f.deliveries(t); n != 2 {
			t.Errorf("%d deliveries queued, want 2", n)
		}
		// A new item of the same order still issues its licence.
		if more := f.issue(t, f.order(yearly, item("price_extra", 1))); len(more) != 1 || more[0].LimitCount != 2 {
			t.Errorf("a new item issued %+v, want one licence of limit 2", more)
		}
	})
}

// A subscription's licences run until it ends; a trialing one gives a trial
// ending with the subscription's trial.
func TestIssueFromProviderSubscription(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		days := int64(30)
		it := item("price_month", 1)
		it.KeyValidDays = &days
		ls := f.issue(t, f.subscription(nil, it))
		if len(ls) != 1 || ls[0].ExpiresAt != nil || ls[0].TrialEndsAt != nil || ls[0].Term() != licentia.TermSubscription {
			t.Fatalf("subscription licence = %+v, want no expiry and term subscription", ls)
		}
		trialEnd := start.Add(14*24*time.Hour + 123*time.Microsecond)
		o := f.subscription(&trialEnd, it)
		o.OrderID, o.CheckoutID, o.SubscriptionID = str("in_2"), str("cs_2"), str("sub_2")
		ls = f.issue(t, o)
		end := licentia.TruncateMillis(trialEnd)
		if len(ls) != 1 || ls[0].TrialEndsAt == nil || !ls[0].TrialEndsAt.Equal(end) || ls[0].ExpiresAt == nil || !ls[0].ExpiresAt.Equal(end) {
			t.Fatalf("trial licence = %+v, want trial_ends_at = expires_at = %s", ls, end)
		}
		if got := ls[0].DerivedState(f.clk.Now()); got != licentia.StateTrial {
			t.Errorf("state = %s, want trial", got)
		}
	})
}

// A paid order is issued on a full plan, its audit entry saying so, and
// administration issues still answer 402.
func TestIssueFromProviderFullPlan(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 1)
		product, email := "app", "first@example.com"
		if _, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{ProductID: &product, Email: &email}); err != nil {
			t.Fatal(err)
		}
		ls := f.issue(t, f.order(item("price_a", 1), item("price_b", 1)))
		if len(ls) != 2 {
			t.Fatalf("issued %d licences on a full plan, want 2", len(ls))
		}
		for i, l := range ls {
			_, data := f.audit(t, l.ID)
			want := map[string]any{"plan": "free", "resource": "active_licences", "limit": float64(1), "count": float64(1 + i)}
			if diff := cmp.Diff(want, data[0]["plan_exceeded"]); diff != "" {
				t.Errorf("plan_exceeded (-want +got):\n%s", diff)
			}
		}
		_, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{ProductID: &product, Email: &email})
		if e := wantCode(t, "IssueLicence()", err, licentia.CodePlanLimitReached); e != nil && e.Details["count"] != int64(3) {
			t.Errorf("402 details = %v, want count 3", e.Details)
		}
	})
}

// A full refund applies each licence's on_refund, found by order id or
// checkout id, with reason provider:stripe:refund by the provider; the
// prefix stays refused to administration callers.
func TestEndFromProviderRefund(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		kept := item("price_keep", 1)
		kept.OnRefund = licentia.RefundNone
		ls := f.issue(t, f.order(item("price_a", 1), kept))
		revokedID, keptID := ls[0].ID, ls[1].ID
		f.clk.Advance(time.Hour)
		out, err := f.svc.EndFromProvider(t.Context(), f.end(admin.ProviderRefund, "cs_1"))
		if err != nil {
			t.Fatal(err)
		}
		if out.Pending || len(out.Changes) != 2 {
			t.Fatalf("outcome = %+v, want two licences and nothing pending", out)
		}
		l := f.licence(t, revokedID)
		if l.Status != licentia.StatusRevoked || l.StatusReason == nil || *l.StatusReason != "provider:stripe:refund" {
			t.Errorf("refunded licence = %s (%v), want revoked for provider:stripe:refund", l.Status, l.StatusReason)
		}
		if l := f.licence(t, keptID); l.Status != licentia.StatusActive || l.StatusReason != nil {
			t.Errorf("on_refund none licence = %s, want active and untouched", l.Status)
		}
		es, data := f.audit(t, revokedID)
		if len(es) != 2 || es[1].Action != licentia.AuditLicenceRevoked || data[1]["reason"] != "provider:stripe:refund" {
			t.Fatalf("audit = %+v %v, want licence.revoked with the provider reason", es, data)
		}
		f.wantProviderActor(t, es[1])
		if es, _ := f.audit(t, keptID); len(es) != 1 {
			t.Errorf("on_refund none wrote %d audit entries, want the issue only", len(es))
		}
		// The same refund by order id changes nothing more.
		if _, err := f.svc.EndFromProvider(t.Context(), f.end(admin.ProviderRefund, "pi_1")); err != nil {
			t.Fatal(err)
		}
		want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceIssued, licentia.EventLicenceRevoked}
		if diff := cmp.Diff(want, f.eventTypes(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if n := f.deliveries(t); n != 3 {
			t.Errorf("%d deliveries queued, want 3", n)
		}
		_, err = f.svc.RevokeLicence(t.Context(), licentia.OperatorActor, f.org.ID, keptID, admin.Reason("provider:stripe:refund"))
		wantCode(t, "RevokeLicence(provider reason)", err, licentia.CodeValidationFailed)
	})
}

// A subscription's end applies on_subscription_end from active only, and
// its licences keep their place in the plan for 30 days after it ended.
func TestEndFromProviderSubscription(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 3)
		revoking := item("price_b", 1)
		revoking.OnSubscriptionEnd = licentia.SubscriptionEndRevoke
		ls := f.issue(t, f.subscription(nil, item("price_a", 1), revoking))
		refunded := f.issue(t, func() admin.ProviderOrder {
			o := f.subscription(nil, item("price_c", 1))
			o.OrderID, o.CheckoutID = str("in_9"), str("cs_9")
			return o
		}())[0]
		if _, err := f.svc.EndFromProvider(t.Context(), f.end(admin.ProviderRefund, "in_9")); err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(2 * time.Hour)
		ended := licentia.TruncateMillis(start.Add(time.Hour))
		e := f.end(admin.ProviderSubscriptionEnded, "sub_1")
		e.EndedAt = &ended
		if _, err := f.svc.EndFromProvider(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id     string
			status licentia.Status
			reason string
		}{
			{ls[0].ID, licentia.StatusExpired, "provider:stripe:subscription_ended"},
			{ls[1].ID, licentia.StatusRevoked, "provider:stripe:subscription_ended"},
			// The refund's revocation stands.
			{refunded.ID, licentia.StatusRevoked, "provider:stripe:refund"},
		} {
			l := f.licence(t, c.id)
			if l.Status != c.status || l.StatusReason == nil || *l.StatusReason != c.reason {
				t.Errorf("licence = %s (%v), want %s (%s)", l.Status, l.StatusReason, c.status, c.reason)
			}
			if l.SubscriptionEndedAt == nil || !l.SubscriptionEndedAt.Equal(ended) {
				t.Errorf("subscription_ended_at = %v, want %s", l.SubscriptionEndedAt, ended)
			}
		}
		es, _ := f.audit(t, ls[0].ID)
		f.wantProviderActor(t, es[len(es)-1])
		want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceIssued, licentia.EventLicenceIssued,
			licentia.EventLicenceRevoked, licentia.EventLicenceExpired, licentia.EventLicenceRevoked}
		got := f.eventTypes(t)
		// The end changes its licences in id order, which is random.
		if len(got) == len(want) {
			slices.Sort(got[4:])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}

		// All three keep their place until 30 days after the end.
		product, email := "app", "next@example.com"
		issue := func() error {
			_, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{ProductID: &product, Email: &email})
			return err
		}
		f.clk.Set(ended.Add(licentia.SubscriptionGrace - time.Millisecond))
		wantCode(t, "IssueLicence(29.99 days after)", issue(), licentia.CodePlanLimitReached)
		f.clk.Set(ended.Add(licentia.SubscriptionGrace))
		if err := issue(); err != nil {
			t.Errorf("IssueLicence(30 days after) error = %v", err)
		}
	})
}

// A refund or a subscription's end seen before its order is kept and
// applied in the transaction that issues the order's licences; so is a
// trial's conversion.
func TestProviderEffectsBeforeOrder(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		out, err := f.svc.EndFromProvider(t.Context(), f.end(admin.ProviderRefund, "pi_1"))
		if err != nil || !out.Pending || len(out.Changes) != 0 {
			t.Fatalf("refund before its order = %+v, %v; want it kept", out, err)
		}
		ls := f.issue(t, f.order(item("price_a", 1)))
		if len(ls) != 1 || ls[0].Status != licentia.StatusRevoked || *ls[0].StatusReason != "provider:stripe:refund" {
			t.Fatalf("issued %+v, want one licence revoked by the refund", ls)
		}
		want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked}
		if diff := cmp.Diff(want, f.eventTypes(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}

		ended := licentia.TruncateMillis(start.Add(-time.Minute))
		e := f.end(admin.ProviderSubscriptionEnded, "sub_1")
		e.EndedAt = &ended
		if out, err := f.svc.EndFromProvider(t.Context(), e); err != nil || !out.Pending {
			t.Fatalf("subscription end before its order = %+v, %v; want it kept", out, err)
		}
		ls = f.issue(t, f.subscription(nil, item("price_a", 1)))
		if len(ls) != 1 || ls[0].Status != licentia.StatusExpired || ls[0].SubscriptionEndedAt == nil || !ls[0].SubscriptionEndedAt.Equal(ended) {
			t.Fatalf("issued %+v, want one licence expired by the subscription's end at %s", ls, ended)
		}

		trialEnd := start.Add(7 * 24 * time.Hour)
		conv := admin.ProviderConversion{OrgID: f.org.ID, IntegrationID: f.integration, Provider: providers.Stripe, SubscriptionID: "sub_3"}
		if out, err := f.svc.ConvertTrial(t.Context(), conv); err != nil || !out.Pending {
			t.Fatalf("conversion before its order = %+v, %v; want it kept", out, err)
		}
		o := f.subscription(&trialEnd, item("price_a", 1))
		o.OrderID, o.CheckoutID, o.SubscriptionID = str("in_3"), str("cs_3"), str("sub_3")
		ls = f.issue(t, o)
		if len(ls) != 1 || ls[0].TrialEndsAt != nil || ls[0].ExpiresAt != nil || ls[0].Status != licentia.StatusActive {
			t.Fatalf("issued %+v, want one licence converted", ls)
		}
		want = append(want, licentia.EventLicenceIssued, licentia.EventLicenceExpired, licentia.EventLicenceIssued, licentia.EventLicenceTrialConverted)
		if diff := cmp.Diff(want, f.eventTypes(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		// Applied once: another order of the same refunded order id issues
		// a licence that stays active.
		o = f.order(item("price_z", 1))
		if ls := f.issue(t, o); len(ls) != 1 || ls[0].Status != licentia.StatusActive {
			t.Errorf("a later item of the order = %+v, want it active", ls)
		}
	})
}

// A subscription leaving its trial converts its trial licences once.
func TestConvertTrial(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		trialEnd := start.Add(14 * 24 * time.Hour)
		ls := f.issue(t, f.subscription(&trialEnd, item("price_a", 1)))
		f.clk.Advance(time.Hour)
		conv := admin.ProviderConversion{OrgID: f.org.ID, IntegrationID: f.integration, Provider: providers.Stripe, SubscriptionID: "sub_1"}
		out, err := f.svc.ConvertTrial(t.Context(), conv)
		if err != nil || len(out.Changes) != 1 || !out.Changes[0].Changed {
			t.Fatalf("ConvertTrial() = %+v, %v; want one change", out, err)
		}
		l := f.licence(t, ls[0].ID)
		if l.TrialEndsAt != nil || l.ExpiresAt != nil || l.DerivedState(f.clk.Now()) != licentia.StateActive {
			t.Errorf("converted licence = %+v, want active without trial or expiry", l)
		}
		es, data := f.audit(t, l.ID)
		if len(es) != 2 || es[1].Action != licentia.AuditLicenceTrialConverted {
			t.Fatalf("audit = %+v, want licence.trial_converted", es)
		}
		f.wantProviderActor(t, es[1])
		if data[1]["trial_ends_at"] != licentia.FormatTime(trialEnd) {
			t.Errorf("audit data = %v, want the trial's end", data[1])
		}
		out, err = f.svc.ConvertTrial(t.Context(), conv)
		if err != nil || len(out.Changes) != 1 || out.Changes[0].Changed {
			t.Errorf("ConvertTrial(again) = %+v, %v; want no change", out, err)
		}
		want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceTrialConverted}
		if diff := cmp.Diff(want, f.eventTypes(t)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if n := f.deliveries(t); n != 2 {
			t.Errorf("%d deliveries queued, want 2", n)
		}
	})
}

// Provider inputs are checked before anything is written.
func TestProviderValidation(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		for name, change := range map[string]func(o *admin.ProviderOrder){
			"no order id":         func(o *admin.ProviderOrder) { o.OrderID, o.CheckoutID = nil, nil },
			"bad email":           func(o *admin.ProviderOrder) { o.Email = "nobody" },
			"bad integration":     func(o *admin.ProviderOrder) { o.IntegrationID = "x" },
			"unknown provider":    func(o *admin.ProviderOrder) { o.Provider = "paypal" },
			"zero quantity":       func(o *admin.ProviderOrder) { o.Items[0].Quantity = 0 },
			"limit over the most": func(o *admin.ProviderOrder) { o.Items[0].LimitCount, o.Items[0].Quantity = 1<<31, 2 },
			"merged over the most": func(o *admin.ProviderOrder) {
				o.Items[0].LimitCount, o.Items[0].Quantity = 1<<31, 1
				o.Items[1].LimitCount = 1 << 31
			},
			"bad on_refund":         func(o *admin.ProviderOrder) { o.Items[0].OnRefund = "expire" },
			"long renewal url":      func(o *admin.ProviderOrder) { o.Items[0].RenewalURL = str(string(make([]byte, 2049))) },
			"trial of one-time":     func(o *admin.ProviderOrder) { o.TrialEndsAt = &start },
			"subscription, no id":   func(o *admin.ProviderOrder) { o.Subscription = true },
			"control in an id":      func(o *admin.ProviderOrder) { o.OrderID = str("pi\n1") },
			"empty order number":    func(o *admin.ProviderOrder) { o.OrderNumber = str("") },
			"unknown product again": func(o *admin.ProviderOrder) { o.Items[0].ProductID = "Not A Product" },
		} {
			o := f.order(item("price_a", 1), item("price_a", 1))
			change(&o)
			_, err := f.svc.IssueFromProvider(t.Context(), o)
			wantCode(t, name, err, licentia.CodeValidationFailed)
		}
		o := f.order(item("price_a", 1))
		o.Items[0].ProductID = "gone"
		_, err := f.svc.IssueFromProvider(t.Context(), o)
		wantCode(t, "IssueFromProvider(unknown product)", err, licentia.CodeProductNotFound)
		e := f.end("cancel", "pi_1")
		_, err = f.svc.EndFromProvider(t.Context(), e)
		wantCode(t, "EndFromProvider(unknown kind)", err, licentia.CodeValidationFailed)
		if types := f.eventTypes(t); len(types) != 0 {
			t.Errorf("refused inputs wrote events %v", types)
		}
	})
}

// The operations' transaction forms write in the caller's transaction: a
// caller that fails after them (say, on recording the provider's event id)
// leaves nothing, and the provider's resend issues the order then.
func TestProviderEffectsInCallersTransaction(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		failed := errors.New("event id not recorded")
		err := st.InTx(t.Context(), func(tx store.Tx) error {
			if ls, err := f.svc.IssueFromProviderTx(t.Context(), tx, f.order(item("price_a", 1))); err != nil || len(ls) != 1 {
				t.Errorf("IssueFromProviderTx() = %v, %v", ls, err)
			}
			if _, err := f.svc.EndFromProviderTx(t.Context(), tx, f.end(admin.ProviderRefund, "pi_2")); err != nil {
				t.Errorf("EndFromProviderTx() error = %v", err)
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatalf("InTx() error = %v, want the caller's", err)
		}
		if types := f.eventTypes(t); len(types) != 0 {
			t.Errorf("a rolled-back transaction left events %v", types)
		}
		if ls := f.issue(t, f.order(item("price_a", 1))); len(ls) != 1 || ls[0].Status != licentia.StatusActive {
			t.Errorf("the resend issued %+v, want one active licence", ls)
		}
		// The refund of pi_2 was rolled back too: nothing is kept for it.
		o := f.order(item("price_a", 1))
		o.OrderID, o.CheckoutID = str("pi_2"), str("cs_2")
		if ls := f.issue(t, o); len(ls) != 1 || ls[0].Status != licentia.StatusActive {
			t.Errorf("order pi_2 issued %+v, want one active licence", ls)
		}
	})
}

// Of several deliveries of one order racing, one issues its licences.
func TestIssueFromProviderRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newProviderFixture(t, st, 25)
		var wg sync.WaitGroup
		issued := make([]int, 4)
		for i := range issued {
			wg.Go(func() {
				ls, err := f.svc.IssueFromProvider(t.Context(), f.order(item("price_a", 1), item("price_b", 1)))
				if err != nil {
					t.Errorf("IssueFromProvider() error = %v", err)
				}
				issued[i] = len(ls)
			})
		}
		wg.Wait()
		slices.Sort(issued)
		if diff := cmp.Diff([]int{0, 0, 0, 2}, issued); diff != "" {
			t.Errorf("licences issued by each (-want +got):\n%s", diff)
		}
		if n, err := st.PlanLicenceCount(t.Context(), f.org.ID, f.clk.Now()); err != nil || n != 2 {
			t.Errorf("PlanLicenceCount() = %d, %v; want 2", n, err)
		}
	})
}
