package admin_test

import (
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// holdAddon sends an add-on order of prod_pdf, its payment intent pi, for
// a buyer holding no licence of app, and returns the order it held.
func holdAddon(t *testing.T, f *webhookFixture, eventID, pi string) licentia.HeldOrder {
	t.Helper()
	f.mustSend(t, "add-on order without a licence", f.order(t, eventID, pi, "prod_pdf", "later@example.com"))
	hs, err := f.svc.ListHeldOrders(t.Context(), f.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.OrderID != nil && *h.OrderID == pi {
			return h
		}
	}
	t.Fatalf("held orders = %+v, want one of %s", hs, pi)
	return licentia.HeldOrder{}
}

// issueFor issues a licence of product for email in f's organization.
func (f *webhookFixture) issueFor(t *testing.T, product, email string) string {
	t.Helper()
	v, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{ProductID: &product, Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	return v.Licence.ID
}

// TestAddonHeld, on both engines: an add-on order with no licence to add
// to is answered 200 and held with reason no_licence_to_add_to, writing
// no licence; its release without a correction, or naming a licence that
// is another organization's, of another product or revoked, answers 400
// at /adds_to_licence_id and leaves it held; released naming a licence,
// it adds its features to that licence and answers it, and the order's
// refund then removes them; released without a correction once the buyer
// holds a licence, it finds that one.
func TestAddonHeld(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		ctx := t.Context()
		h := holdAddon(t, f, "evt_1", "pi_1")
		if h.Reason != licentia.HeldNoLicenceToAddTo || len(h.Items) != 1 || h.Items[0].ProviderProductID != "prod_pdf" {
			t.Errorf("held order = %+v, want reason no_licence_to_add_to with the item prod_pdf", h)
		}
		if n := len(f.licences(t)); n != 0 {
			t.Errorf("licences after a held add-on = %d, want 0", n)
		}

		otherSvc, other := raceFixture(t, st, licentia.PlanBusiness)
		theirs, err := issue(t, otherSvc, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		id, name, prefix, major := "tool", "Tool", "TOOL", int64(1)
		if _, err := f.svc.CreateProduct(ctx, licentia.OperatorActor, f.org.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
			t.Fatal(err)
		}
		tool := f.issueFor(t, "tool", "later@example.com")
		revoked := f.issueFor(t, "app", "later@example.com")
		if _, err := f.svc.RevokeLicence(ctx, licentia.OperatorActor, f.org.ID, revoked, admin.Reason("test")); err != nil {
			t.Fatal(err)
		}
		for what, target := range map[string]*string{"no correction, no licence": nil, "another organization's licence": &theirs.Licence.ID,
			"a licence of another product": &tool, "a revoked licence": &revoked} {
			_, err := f.svc.ReleaseHeldOrder(ctx, licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{AddsToLicenceID: target})
			if !hasIssueAt(err, "/adds_to_licence_id") {
				t.Errorf("release (%s) = %v, want an issue at /adds_to_licence_id", what, err)
			}
		}
		if hs, _ := f.svc.ListHeldOrders(ctx, f.org.ID); len(hs) != 1 {
			t.Errorf("held orders after refused releases = %d, want 1", len(hs))
		}

		f.mustSend(t, "order prod_app for another email", f.order(t, "evt_2", "pi_2", "prod_app", "first@example.com"))
		var target string
		for _, l := range f.licences(t) {
			if l.Email == "first@example.com" {
				target = l.ID
			}
		}
		ls, err := f.svc.ReleaseHeldOrder(ctx, licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{AddsToLicenceID: &target})
		if err != nil || len(ls) != 1 || ls[0].ID != target {
			t.Fatalf("release naming a licence = %+v, %v; want that licence", ls, err)
		}
		if got := f.codes(t, target); got != "basic,export-pdf" {
			t.Errorf("after the release: %q, want basic,export-pdf", got)
		}
		if n := len(f.licences(t)); n != 2 {
			t.Errorf("licences after the release = %d, want 2 (the released add-on issues none)", n)
		}
		f.mustSend(t, "refund of the released add-on", f.refund(t, "evt_r1", "pi_1"))
		if got := f.codes(t, target); got != "basic" {
			t.Errorf("after the released add-on's refund: %q, want basic", got)
		}

		h = holdAddon(t, f, "evt_3", "pi_3")
		f.mustSend(t, "order prod_app for the buyer", f.order(t, "evt_4", "pi_4", "prod_app", "later@example.com"))
		ls, err = f.svc.ReleaseHeldOrder(ctx, licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{})
		if err != nil || len(ls) != 1 || f.codes(t, ls[0].ID) != "basic,export-pdf" || ls[0].Email != "later@example.com" {
			t.Errorf("release without a correction = %+v, %v; want the buyer's licence, granting export-pdf", ls, err)
		}
	})
}

// TestAddonHeldRefunded, on both engines: an add-on order refunded while
// held stays held; its release adds nothing and answers no licence.
func TestAddonHeldRefunded(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		h := holdAddon(t, f, "evt_1", "pi_1")
		f.mustSend(t, "refund while held", f.refund(t, "evt_r1", "pi_1"))
		if hs, _ := f.svc.ListHeldOrders(t.Context(), f.org.ID); len(hs) != 1 {
			t.Errorf("held orders after the refund = %d, want 1", len(hs))
		}
		f.mustSend(t, "order prod_app", f.order(t, "evt_2", "pi_2", "prod_app", "later@example.com"))
		target := f.licences(t)[0].ID
		ls, err := f.svc.ReleaseHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{AddsToLicenceID: &target})
		if err != nil || len(ls) != 0 {
			t.Errorf("release of a refunded add-on = %+v, %v; want no licence", ls, err)
		}
		if got := f.codes(t, target); got != "basic" {
			t.Errorf("after releasing a refunded add-on: %q, want basic", got)
		}
	})
}

// TestAddonHeldReleaseRace, on both engines: two releases of one held
// add-on order, both past their reads before either writes; exactly one
// adds (201), the other answers 409 conflict, and the features are added
// once (one add-on record, so its refund removes them).
func TestAddonHeldReleaseRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		h := holdAddon(t, f, "evt_1", "pi_1")
		f.mustSend(t, "order prod_app", f.order(t, "evt_2", "pi_2", "prod_app", "later@example.com"))
		target := f.licences(t)[0].ID
		racers := f.service(newGatedStore(st, 2))
		var mu sync.Mutex
		codes := map[licentia.Code]int{}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				ls, err := racers.ReleaseHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{AddsToLicenceID: &target})
				mu.Lock()
				defer mu.Unlock()
				code := licentia.Code("ok")
				if err != nil {
					code = licentia.ErrorCode(err)
				} else if len(ls) != 1 || ls[0].ID != target {
					code = "wrong answer"
				}
				codes[code]++
			})
		}
		wg.Wait()
		if codes["ok"] != 1 || codes[licentia.CodeConflict] != 1 {
			t.Errorf("racing releases: %v; want one success answering the licence and one conflict", codes)
		}
		var as []store.ProviderAddon
		err := st.InTx(t.Context(), func(tx store.Tx) error {
			var err error
			as, err = tx.ProviderAddonsByLicence(t.Context(), f.org.ID, target)
			return err
		})
		if err != nil || len(as) != 1 {
			t.Errorf("add-on records = %d, %v; want 1", len(as), err)
		}
		f.mustSend(t, "refund", f.refund(t, "evt_r1", "pi_1"))
		if got := f.codes(t, target); got != "basic" {
			t.Errorf("after the refund: %q, want basic", got)
		}
	})
}
