package httpapi_test

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/sdk"
)

// actEnv is a licenceEnv whose catalogue already holds desk-app (prefix
// DESK, current_major 3, machines_per_seat 3), for the activation routes.
type actEnv struct {
	*licenceEnv
}

func newActEnv(t *testing.T) *actEnv {
	t.Helper()
	e := &actEnv{newLicenceEnv(t)}
	e.refreshCatalogue(t)
	return e
}

// refreshCatalogue reloads the product catalogue now, as the catalogue job
// of serve does every signing.RefreshInterval.
func (e *testEnv) refreshCatalogue(t *testing.T) {
	t.Helper()
	if err := e.cat.Refresh(t.Context()); err != nil {
		t.Fatalf("Catalogue.Refresh() error = %v", err)
	}
}

// appActor is the audit actor of the activation routes.
var appActor = licentia.Actor{Type: licentia.ActorApplication}

// activateBody is a valid activation body for key on machineID with edits
// applied; a field edited to absent is left out.
func activateBody(key, machineID string, edits map[string]any) map[string]any {
	b := map[string]any{"licence_key": key, "machine_id": machineID, "label": "Ada's laptop", "os": "macOS 15.3", "app_version": "3.1.0"}
	for k, v := range edits {
		if v == absent {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func activateCall(body any) call { return call{method: "POST", path: "/v1/activations", body: body} }

func statusCall(key, machineID string) call {
	return call{method: "POST", path: "/v1/activations/status", body: map[string]any{"licence_key": key, "machine_id": machineID}}
}

func deactivateCall(key, machineID string) call {
	return call{method: "POST", path: "/v1/activations/deactivate", body: map[string]any{"licence_key": key, "machine_id": machineID}}
}

// activatedView is the answer of POST /v1/activations.
type activatedView struct {
	Activation activationView `json:"activation"`
	Verdict    string         `json:"verdict"`
}

// takeSeat activates key on machineID and wants status (201 or 200).
func (e *testEnv) takeSeat(t *testing.T, key, machineID string, status int) activatedView {
	t.Helper()
	r := e.run(t, scenario{call: activateCall(activateBody(key, machineID, nil)), wantStatus: status})
	if r.status != status {
		t.FailNow()
	}
	return decodeStrict[activatedView](t, r.body)
}

// askStatus asks for the verdict of key on machineID and wants 200.
func (e *testEnv) askStatus(t *testing.T, key, machineID string) string {
	t.Helper()
	r := e.run(t, scenario{call: statusCall(key, machineID), wantStatus: http.StatusOK})
	return decodeStrict[struct {
		Verdict string `json:"verdict"`
	}](t, r.body).Verdict
}

// freeSeat deactivates key on machineID and returns changed.
func (e *testEnv) freeSeat(t *testing.T, key, machineID string) bool {
	t.Helper()
	r := e.run(t, scenario{call: deactivateCall(key, machineID), wantStatus: http.StatusOK})
	return decodeStrict[struct {
		Changed bool `json:"changed"`
	}](t, r.body).Changed
}

// shipped is what an application of productID ships to check verdicts: the
// product's current public key as GET /v1/admin/products/{id} shows it,
// and its fingerprint computed here.
func (e *licenceEnv) shipped(t *testing.T, productID string) (sdk.Product, string) {
	t.Helper()
	return e.shippedWith(t, e.allKey, productID)
}

// shippedWith is shipped for a product of the organization of key.
func (e *testEnv) shippedWith(t *testing.T, key, productID string) (sdk.Product, string) {
	t.Helper()
	p := e.getProduct(t, key, productID)
	pub, err := sdk.ParsePublicKey(p.PublicKey)
	if err != nil {
		t.Fatalf("public_key %q: %v", p.PublicKey, err)
	}
	return sdk.Product{
		ID: p.ID, KeyPrefix: p.KeyPrefix, LicenceDomain: p.LicenceSigningDomain, VerdictDomain: p.VerdictSigningDomain,
		PublicKeys: []ed25519.PublicKey{pub},
	}, fingerprint(t, p.PublicKey)
}

// verdict verifies raw with the current public key of productID, as an
// application would, and returns its content.
func (e *licenceEnv) verdict(t *testing.T, productID, raw string) sdk.Verdict {
	t.Helper()
	p, _ := e.shipped(t, productID)
	v, err := sdk.VerifyVerdict(raw, p)
	if err != nil {
		t.Fatalf("VerifyVerdict(%q) error = %v", raw, err)
	}
	return *v
}

// wantVerdict is the verdict of l on machineID issued now: the licence's
// facts, the activation named (nil for none), state, valid for
// verdictValidity, signed by the key of fingerprint fp.
func wantVerdict(l licenceView, machineID string, activationID *string, state string, now time.Time, fp string) sdk.Verdict {
	return sdk.Verdict{
		Format: sdk.VerdictFormat, LicenceID: l.ID, ProductID: l.ProductID, MachineID: machineID, ActivationID: activationID,
		State: state, ExpiresAt: l.ExpiresAt, TrialEndsAt: l.TrialEndsAt, Major: int(l.Major), LimitKind: l.LimitKind,
		LimitCount: l.LimitCount, IssuedAt: licentia.FormatTime(now), ValidUntil: licentia.FormatTime(now.Add(verdictValidity)),
		KeyFingerprint: fp,
	}
}

// checkVerdict verifies raw and compares it with want.
func (e *licenceEnv) checkVerdict(t *testing.T, raw string, want sdk.Verdict) {
	t.Helper()
	if diff := cmp.Diff(want, e.verdict(t, want.ProductID, raw)); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

// genuineKey signs licenceID with the current key of a product, opened
// from storage with the env's master key: a key the service would issue,
// whether or not the licence exists.
func (e *testEnv) genuineKey(t *testing.T, orgID, productID, licenceID string) string {
	t.Helper()
	p, err := e.store.Product(t.Context(), orgID, productID)
	if err != nil {
		t.Fatalf("Product(%s) error = %v", productID, err)
	}
	priv, err := signing.OpenProductKey(e.master, p.CurrentKey())
	if err != nil {
		t.Fatalf("OpenProductKey() error = %v", err)
	}
	key, err := sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
	if err != nil {
		t.Fatalf("SignLicenceKey() error = %v", err)
	}
	return key
}

// withPrefix puts prefix in front of key's body.
func withPrefix(prefix, key string) string { return prefix + key[strings.IndexByte(key, '_'):] }

// activationAudit is the audit entry of an activation route.
func activationAudit(action string, now time.Time, a activationView) auditLine {
	return auditLine{Action: action, Actor: appActor, At: licentia.FormatTime(now),
		Data: map[string]any{"licence_id": a.LicenceID, "activation_id": a.ID, "machine_id": a.MachineID}}
}

// wantTrail checks what the activation routes wrote for a licence after
// its issue: the types of the organization's events since the first n,
// and the licence's audit entries after the issue, each by the
// application (actor id null) and naming its licence, with the same
// actions in the same order.
func (e *licenceEnv) wantTrail(t *testing.T, licenceID string, n int, want ...string) {
	t.Helper()
	var types []string
	for _, ev := range e.newEvents(t, e.org.ID, n) {
		types = append(types, string(ev.Type))
	}
	var actions []string
	for _, a := range e.audit(t, licenceID)[1:] {
		actions = append(actions, a.Action)
		if a.Actor != appActor || a.Data["licence_id"] != licenceID {
			t.Errorf("audit %s by %+v for %v, want by the application for %s", a.Action, a.Actor, a.Data["licence_id"], licenceID)
		}
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("audit actions mismatch (-want +got):\n%s", diff)
	}
}

// repeated is n copies of s.
func repeated(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestActivate: a machine without a live activation takes a seat (201,
// activation.created, an audit entry by the application); the same
// machine again answers 200 with the same activation refreshed, and writes
// neither event nor audit entry.
func TestActivate(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	_, fp := e.shipped(t, "desk-app")
	issued := e.issue(t, e.allKey, issueBody(nil))
	lic := e.read(t, issued.Licence.ID).Licence
	first := e.later(90*time.Second + 250*time.Millisecond)

	got := e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
	if !uuidRE.MatchString(got.Activation.ID) {
		t.Errorf("activation id = %q, want a lower-case UUID", got.Activation.ID)
	}
	want := activationView{
		ID: got.Activation.ID, LicenceID: lic.ID, MachineID: "ada-laptop", Label: "Ada's laptop", OS: "macOS 15.3",
		AppVersion: "3.1.0", ActivatedAt: licentia.FormatTime(first), LastSeenAt: licentia.FormatTime(first),
	}
	if diff := cmp.Diff(want, got.Activation); diff != "" {
		t.Errorf("activation mismatch (-want +got):\n%s", diff)
	}
	e.checkVerdict(t, got.Verdict, wantVerdict(lic, "ada-laptop", &want.ID, "active", first, fp))

	evs := e.events(t, e.org.ID)
	if len(evs) != 2 {
		t.Fatalf("%d events, want licence.issued and activation.created", len(evs))
	}
	checkEvent(t, evs[1], wantEvent{typ: licentia.EventActivationCreated, at: first, licence: lic, activation: &want, key: issued.LicenceKey})
	wantAudit := []auditLine{activationAudit("activation.created", first, want)}
	if diff := cmp.Diff(wantAudit, e.audit(t, lic.ID)[1:]); diff != "" {
		t.Errorf("audit after the activation mismatch (-want +got):\n%s", diff)
	}

	again := e.later(5 * time.Minute)
	r := e.run(t, scenario{
		call:       activateCall(activateBody(issued.LicenceKey, "ada-laptop", map[string]any{"label": "Ada's new name", "os": "macOS 16", "app_version": "3.2.0"})),
		wantStatus: http.StatusOK,
	})
	refreshed := decodeStrict[activatedView](t, r.body)
	want.Label, want.OS, want.AppVersion, want.LastSeenAt = "Ada's new name", "macOS 16", "3.2.0", licentia.FormatTime(again)
	if diff := cmp.Diff(want, refreshed.Activation); diff != "" {
		t.Errorf("refreshed activation mismatch (-want +got):\n%s", diff)
	}
	e.checkVerdict(t, refreshed.Verdict, wantVerdict(lic, "ada-laptop", &want.ID, "active", again, fp))
	if diff := cmp.Diff([]activationView{want}, e.read(t, lic.ID).Activations); diff != "" {
		t.Errorf("activations after the refresh mismatch (-want +got):\n%s", diff)
	}
	if n := len(e.events(t, e.org.ID)); n != 2 {
		t.Errorf("%d events after refreshing a held seat, want still 2", n)
	}
	if diff := cmp.Diff(wantAudit, e.audit(t, lic.ID)[1:]); diff != "" {
		t.Errorf("audit after the refresh mismatch (-want +got):\n%s", diff)
	}
}

// TestActivateKeyForms: the key is read in any case, with or without
// dashes and surrounding spaces, as the customer may type it.
func TestActivateKeyForms(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 10}))
	k := issued.LicenceKey
	for i, form := range []string{k, strings.ToLower(k), strings.ReplaceAll(k, "-", ""), "  " + k + "\n"} {
		status := http.StatusOK
		if i == 0 {
			status = http.StatusCreated
		}
		got := e.takeSeat(t, form, "ada-laptop", status)
		if got.Activation.LicenceID != issued.Licence.ID {
			t.Errorf("key form %q: licence_id = %q, want %q", form, got.Activation.LicenceID, issued.Licence.ID)
		}
	}
}

// TestActivateSeats: a seats licence allows limit_count × machines_per_seat
// machines, a machines licence limit_count; past that 409
// seat_limit_reached with limit and active in machines. Each seat taken
// writes activation.created and an audit entry; a refusal writes nothing;
// a machine that holds a seat is still refreshed (200) when all are taken.
func TestActivateSeats(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	e.createProduct(t, e.allKey, productBody("note-app", "NOTE", map[string]any{"machines_per_seat": 7}))
	e.refreshCatalogue(t)
	for _, tt := range []struct {
		name      string
		product   string
		limitKind string
		count     int64
		allowed   int
	}{
		{name: "seats × machines_per_seat 3", product: "desk-app", limitKind: "seats", count: 2, allowed: 6},
		{name: "one seat × machines_per_seat 3", product: "desk-app", limitKind: "seats", count: 1, allowed: 3},
		{name: "machines", product: "desk-app", limitKind: "machines", count: 2, allowed: 2},
		{name: "one machine", product: "note-app", limitKind: "machines", count: 1, allowed: 1},
		{name: "seats × machines_per_seat 7", product: "note-app", limitKind: "seats", count: 2, allowed: 14},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.clock.Advance(time.Minute) // a new window of the public rate limit
			issued := e.issue(t, e.allKey, issueBody(map[string]any{"product_id": tt.product, "limit_kind": tt.limitKind, "limit_count": tt.count}))
			events := len(e.events(t, e.org.ID))
			for i := range tt.allowed {
				e.takeSeatQuietly(t, issued.LicenceKey, machineName(i), http.StatusCreated)
			}
			e.clock.Advance(time.Second)
			e.run(t, scenario{
				call:       activateCall(activateBody(issued.LicenceKey, "one-too-many", nil)),
				wantStatus: http.StatusConflict, wantCode: licentia.CodeSeatLimitReached,
				wantDetails: map[string]any{"limit": float64(tt.allowed), "active": float64(tt.allowed), "limit_kind": tt.limitKind},
			})
			e.takeSeat(t, issued.LicenceKey, machineName(tt.allowed-1), http.StatusOK)

			e.wantTrail(t, issued.Licence.ID, events, repeated("activation.created", tt.allowed)...)
			if n := e.live(t, issued.Licence.ID); n != tt.allowed {
				t.Errorf("%d live activations, want %d", n, tt.allowed)
			}
		})
	}
}

func machineName(i int) string { return fmt.Sprintf("machine-%03d", i) }

// takeSeatQuietly activates without validating against the document, for
// the many activations of one test; the first of each kind is validated
// elsewhere.
func (e *testEnv) takeSeatQuietly(t *testing.T, key, machineID string, status int) {
	t.Helper()
	e.repeat(t, 1, activateCall(activateBody(key, machineID, nil)), status)
}

// live counts a licence's live activations in the store.
func (e *testEnv) live(t *testing.T, licenceID string) int {
	t.Helper()
	l, err := e.store.LicenceByID(t.Context(), licenceID)
	if err != nil {
		t.Fatalf("LicenceByID() error = %v", err)
	}
	as, err := e.store.Activations(t.Context(), l.OrgID, licenceID)
	if err != nil {
		t.Fatalf("Activations() error = %v", err)
	}
	n := 0
	for _, a := range as {
		if a.DeactivatedAt == nil {
			n++
		}
	}
	if int64(n) != l.LiveActivations {
		t.Errorf("licence counts %d live activations, its activations show %d", l.LiveActivations, n)
	}
	return n
}

// TestLoweringMachinesPerSeat: lowering machines_per_seat evicts nobody:
// the machines keep their seats and are refreshed, a new machine is refused
// with active above limit, and a new one fits only once enough have left.
func TestLoweringMachinesPerSeat(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil)) // one seat × 3 machines
	key := issued.LicenceKey
	events := len(e.events(t, e.org.ID))
	for i := range 3 {
		e.takeSeat(t, key, machineName(i), http.StatusCreated)
	}
	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey, body: map[string]any{"machines_per_seat": 1}}, wantStatus: http.StatusOK})

	for i := range 3 {
		v := e.verdict(t, "desk-app", e.askStatus(t, key, machineName(i)))
		if v.ActivationID == nil || v.State != "active" {
			t.Errorf("%s after lowering: verdict state %s, activation %v; want active with its seat", machineName(i), v.State, v.ActivationID)
		}
		e.takeSeat(t, key, machineName(i), http.StatusOK)
	}
	full := func(active int) scenario {
		return scenario{
			call:       activateCall(activateBody(key, "newcomer", nil)),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeSeatLimitReached,
			wantDetails: map[string]any{"limit": 1.0, "active": float64(active), "limit_kind": "seats"},
		}
	}
	e.run(t, full(3))
	for i := range 2 {
		if !e.freeSeat(t, key, machineName(i)) {
			t.Fatalf("deactivate %s: changed false, want true", machineName(i))
		}
	}
	e.run(t, full(1))
	e.freeSeat(t, key, machineName(2))
	e.takeSeat(t, key, "newcomer", http.StatusCreated)
	if n := e.live(t, issued.Licence.ID); n != 1 {
		t.Errorf("%d live activations, want 1", n)
	}
	e.wantTrail(t, issued.Licence.ID, events, append(repeated("activation.created", 3), append(repeated("activation.deactivated", 3), "activation.created")...)...)
}

// TestReactivateAfterDeactivation: a machine that activates again after its
// seat was freed gets a new activation (201, activation.created); the old
// one stays, deactivated.
func TestReactivateAfterDeactivation(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	first := len(e.events(t, e.org.ID))
	old := e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated).Activation
	e.clock.Advance(time.Minute)
	if !e.freeSeat(t, issued.LicenceKey, "ada-laptop") {
		t.Fatal("deactivate: changed false, want true")
	}
	freed := e.clock.Now()
	now := e.later(time.Minute)
	events := len(e.events(t, e.org.ID))

	got := e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated).Activation
	if got.ID == old.ID {
		t.Errorf("activation id = %s again, want a new activation", got.ID)
	}
	lic := e.read(t, issued.Licence.ID)
	old.DeactivatedAt = ptr(licentia.FormatTime(freed))
	if diff := cmp.Diff([]activationView{got, old}, lic.Activations); diff != "" {
		t.Errorf("activations mismatch (-want +got):\n%s", diff)
	}
	evs := e.newEvents(t, e.org.ID, events)
	if len(evs) != 1 {
		t.Fatalf("%d new events, want activation.created", len(evs))
	}
	checkEvent(t, evs[0], wantEvent{typ: licentia.EventActivationCreated, at: now, licence: lic.Licence, activation: &got, key: issued.LicenceKey})
	e.wantTrail(t, issued.Licence.ID, first, "activation.created", "activation.deactivated", "activation.created")
	if audit := e.audit(t, issued.Licence.ID); audit[3].Data["activation_id"] != got.ID || audit[1].Data["activation_id"] != old.ID {
		t.Errorf("audit %+v, want the first activation then the new one", audit)
	}
}

// TestActivateFullPlan: a plan with no room for another licence never
// affects activation: machines still take and refresh seats.
func TestActivateFullPlan(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	free := e.createOrg(t, "solo", licentia.PlanFree)
	key := e.key(t, free.ID, keyScopes()...)
	e.createProduct(t, key, productBody("solo-app", "SOLO", nil))
	e.refreshCatalogue(t)
	limit := licentia.DefaultPlans()[licentia.PlanFree].ActiveLicences
	var last *licentia.Licence
	for range int(limit) {
		last = e.seedIn(t, free.ID, "solo-app", admin.NewLicence{})
	}
	e.run(t, scenario{call: issueCall(key, issueBody(map[string]any{"product_id": "solo-app"})), wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached,
		wantDetails: map[string]any{"plan": "free", "resource": "active_licences", "limit": float64(limit), "count": float64(limit)}})

	licenceKey := e.genuineKey(t, free.ID, "solo-app", last.ID)
	e.takeSeat(t, licenceKey, "solo-1", http.StatusCreated)
	e.takeSeat(t, licenceKey, "solo-1", http.StatusOK)
	e.takeSeat(t, licenceKey, "solo-2", http.StatusCreated)
	p, _ := e.shippedWith(t, key, "solo-app")
	v, err := sdk.VerifyVerdict(e.askStatus(t, licenceKey, "solo-2"), p)
	if err != nil {
		t.Fatalf("VerifyVerdict() error = %v", err)
	}
	if v.State != "active" || v.ActivationID == nil {
		t.Errorf("status on a full plan: state %s, activation %v; want active with a seat", v.State, v.ActivationID)
	}
}

// TestActivationCatalogueReload: a product created after the catalogue was
// loaded is found without waiting for the next refresh: a key that does
// not verify reloads the catalogue once its clock has moved a second.
func TestActivationCatalogueReload(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	e.createProduct(t, e.allKey, productBody("late-app", "LATE", nil))
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"product_id": "late-app"}))
	e.clock.Advance(time.Second)
	e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
}
