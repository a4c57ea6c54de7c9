package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// licenceView is the licence object of an answer or a webhook body.
type licenceView struct {
	ID              string       `json:"id"`
	ProductID       string       `json:"product_id"`
	Email           string       `json:"email"`
	IssuedAt        string       `json:"issued_at"`
	ExpiresAt       *string      `json:"expires_at"`
	LimitKind       string       `json:"limit_kind"`
	LimitCount      int64        `json:"limit_count"`
	Major           int64        `json:"major"`
	Status          string       `json:"status"`
	State           string       `json:"state"`
	StatusReason    *string      `json:"status_reason"`
	StatusChangedAt *string      `json:"status_changed_at"`
	TrialEndsAt     *string      `json:"trial_ends_at"`
	Source          string       `json:"source"`
	IntegrationID   *string      `json:"integration_id"`
	ExternalRef     *string      `json:"external_ref"`
	Provider        providerView `json:"provider"`
	RenewalURL      *string      `json:"renewal_url"`
	Replaces        *string      `json:"replaces"`
	ReplacedBy      *string      `json:"replaced_by"`
	AnonymisedAt    *string      `json:"anonymised_at"`
	CreatedAt       string       `json:"created_at"`
	UpdatedAt       string       `json:"updated_at"`
	Transfers       *int64       `json:"transfers_per_30_days"`
	MaxConcurrent   *int64       `json:"max_concurrent"`
	Features        []grantView  `json:"features"`
}

// grantView is a feature a licence grants.
type grantView struct {
	Code      string  `json:"code"`
	ExpiresAt *string `json:"expires_at"`
}

// providerView is a licence's provider object; every key is always there.
type providerView struct {
	OrderID        *string `json:"order_id"`
	SubscriptionID *string `json:"subscription_id"`
	CustomerID     *string `json:"customer_id"`
	CheckoutID     *string `json:"checkout_id"`
	OrderNumber    *string `json:"order_number"`
}

// activationView is the activation object of an answer or a webhook body.
type activationView struct {
	ID            string  `json:"id"`
	LicenceID     string  `json:"licence_id"`
	MachineID     string  `json:"machine_id"`
	Label         string  `json:"label"`
	OS            string  `json:"os"`
	AppVersion    string  `json:"app_version"`
	ActivatedAt   string  `json:"activated_at"`
	LastSeenAt    string  `json:"last_seen_at"`
	DeactivatedAt *string `json:"deactivated_at"`
	Components    names   `json:"components"`
}

// names are an activation's component names. An array is required (null
// fails the decoding); an empty one reads as nil, as the expected values
// of tests whose machines send no components leave it.
type names []string

func (n *names) UnmarshalJSON(b []byte) error {
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil {
		return errors.New("components must be an array, not null")
	}
	if len(s) > 0 {
		*n = s
	}
	return nil
}

// issuedView is the answer to an issue.
type issuedView struct {
	Licence    licenceView `json:"licence"`
	LicenceKey string      `json:"licence_key"`
}

// readView is the answer to a read.
type readView struct {
	Licence     licenceView      `json:"licence"`
	LicenceKey  *string          `json:"licence_key"`
	Activations []activationView `json:"activations"`
}

// changeView is the answer to revoke, expire, reinstate and anonymise.
type changeView struct {
	Licence licenceView `json:"licence"`
	Changed bool        `json:"changed"`
}

// decodeStrict decodes an answer, refusing fields the test does not know:
// a field that leaks into an answer fails here as well as in the document.
func decodeStrict[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

// at formats start plus d as answers show times.
func at(d time.Duration) string { return licentia.FormatTime(start.Add(d)) }

var (
	uuidRE    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	eventIDRE = regexp.MustCompile(`^evt_[0-9a-f]{32}$`)
	keyRE     = regexp.MustCompile(`^DESK_([0-9A-HJKMNP-TV-Z]{5}-){28}[0-9A-HJKMNP-TV-Z]{3}$`)
)

// licenceEnv is an env with a product, desk-app (prefix DESK, current_major
// 3), and a key holding every key scope.
type licenceEnv struct {
	*testEnv
	allKey string
	actor  licentia.Actor
}

func newLicenceEnv(t *testing.T) *licenceEnv {
	t.Helper()
	return licenceEnvOf(t, newTestEnv(t))
}

// licenceEnvOf adds desk-app and the key to e.
func licenceEnvOf(t *testing.T, e *testEnv) *licenceEnv {
	t.Helper()
	key, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "all", Scopes: keyScopes()})
	e.createProduct(t, key, productBody("desk-app", "DESK", map[string]any{"current_major": 3}))
	return &licenceEnv{testEnv: e, allKey: key, actor: licentia.APIKeyActor(rec.ID)}
}

// otherOrg makes an organization with its own product (id and prefix
// given) and returns it with a key holding every key scope.
func (e *licenceEnv) otherOrg(t *testing.T, slug, productID, prefix string) (*licentia.Organization, string) {
	t.Helper()
	o := e.createOrg(t, slug, licentia.PlanBusiness)
	key := e.key(t, o.ID, keyScopes()...)
	e.createProduct(t, key, productBody(productID, prefix, nil))
	return o, key
}

// issueBody is a valid issue body for desk-app with edits applied; a field
// edited to absent is left out.
func issueBody(edits map[string]any) map[string]any {
	b := map[string]any{"product_id": "desk-app", "email": "ada@example.com"}
	for k, v := range edits {
		if v == absent {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func issueCall(key string, body any) call {
	return call{method: "POST", path: "/v1/admin/licences", key: key, body: body}
}

// issue issues a licence through the API with key.
func (e *licenceEnv) issue(t *testing.T, key string, body any) issuedView {
	t.Helper()
	r := e.run(t, scenario{call: issueCall(key, body), wantStatus: http.StatusCreated})
	return decodeStrict[issuedView](t, r.body)
}

// seed issues a licence of desk-app in the env's organization through the
// operation, for setting the scene quickly.
func (e *licenceEnv) seed(t *testing.T, in admin.NewLicence) *licentia.Licence {
	t.Helper()
	return e.seedIn(t, e.org.ID, "desk-app", in)
}

func (e *licenceEnv) seedIn(t *testing.T, orgID, productID string, in admin.NewLicence) *licentia.Licence {
	t.Helper()
	in.ProductID = &productID
	if in.Email == nil {
		in.Email = ptr("ada@example.com")
	}
	v, err := e.admin.IssueLicence(t.Context(), licentia.OperatorActor, orgID, in)
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	return v.Licence
}

// licencePath is the path of a licence, with an action when not "".
func licencePath(id, action string) string {
	if action == "" {
		return "/v1/admin/licences/" + id
	}
	return "/v1/admin/licences/" + id + "/" + action
}

// read reads a licence through the API.
func (e *licenceEnv) read(t *testing.T, id string) readView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: licencePath(id, ""), key: e.allKey}, wantStatus: http.StatusOK})
	return decodeStrict[readView](t, r.body)
}

// change calls revoke, expire or reinstate with reason and wants 200.
func (e *licenceEnv) change(t *testing.T, id, action, reason string) changeView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "POST", path: licencePath(id, action), key: e.allKey, body: map[string]any{"reason": reason}}, wantStatus: http.StatusOK})
	return decodeStrict[changeView](t, r.body)
}

// find runs a find with query (already encoded) and returns the licences.
func (e *licenceEnv) find(t *testing.T, key, query string) []licenceView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences?" + query, key: key}, wantStatus: http.StatusOK})
	return decodeStrict[struct {
		Licences []licenceView `json:"licences"`
	}](t, r.body).Licences
}

// activate gives a licence a live activation through the store, as the
// activation routes would, and returns it.
func (e *testEnv) activate(t *testing.T, orgID, licenceID, machineID string) *licentia.Activation {
	t.Helper()
	now := e.clock.Now().UTC().Truncate(time.Millisecond)
	a := &licentia.Activation{
		ID: licentia.NewID(), OrgID: orgID, LicenceID: licenceID, MachineID: machineID,
		Label: "Label of " + machineID, OS: "macOS 15", AppVersion: "3.1.0", ActivatedAt: now, LastSeenAt: now,
	}
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateActivation(t.Context(), a) }); err != nil {
		t.Fatalf("CreateActivation() error = %v", err)
	}
	return a
}

// activationOf shows a as answers do.
func activationOf(a *licentia.Activation) activationView {
	v := activationView{
		ID: a.ID, LicenceID: a.LicenceID, MachineID: a.MachineID, Label: a.Label, OS: a.OS, AppVersion: a.AppVersion,
		ActivatedAt: licentia.FormatTime(a.ActivatedAt), LastSeenAt: licentia.FormatTime(a.LastSeenAt),
	}
	if a.DeactivatedAt != nil {
		v.DeactivatedAt = ptr(licentia.FormatTime(*a.DeactivatedAt))
	}
	return v
}

// auditAnswer is the answer to an audit read.
type auditAnswer struct {
	Events []struct {
		ID     string         `json:"id"`
		Action string         `json:"action"`
		Actor  licentia.Actor `json:"actor"`
		At     string         `json:"at"`
		Data   map[string]any `json:"data"`
	} `json:"events"`
}

// audit reads a licence's audit log through the API and checks each
// entry's id.
func (e *licenceEnv) audit(t *testing.T, id string) []auditLine {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: licencePath(id, "audit"), key: e.allKey}, wantStatus: http.StatusOK})
	v := decodeStrict[auditAnswer](t, r.body)
	out := []auditLine{}
	for _, ev := range v.Events {
		if !uuidRE.MatchString(ev.ID) {
			t.Errorf("audit entry id = %q, want a lower-case UUID", ev.ID)
		}
		out = append(out, auditLine{Action: ev.Action, Actor: ev.Actor, At: ev.At, Data: ev.Data})
	}
	return out
}

// q escapes query parameters given as name, value pairs.
func q(pairs ...string) string {
	v := url.Values{}
	for i := 0; i < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return v.Encode()
}

// issuedData is the audit data of an issue.
func issuedData(l licenceView) map[string]any {
	data := map[string]any{
		"licence_id": l.ID, "product_id": l.ProductID, "status": l.Status, "limit_kind": l.LimitKind,
		"limit_count": float64(l.LimitCount), "major": float64(l.Major), "expires_at": nil, "trial_ends_at": nil,
		"email": l.Email, "external_ref": nil, "features": []any{},
	}
	if l.ExpiresAt != nil {
		data["expires_at"] = *l.ExpiresAt
	}
	if l.TrialEndsAt != nil {
		data["trial_ends_at"] = *l.TrialEndsAt
	}
	if l.ExternalRef != nil {
		data["external_ref"] = *l.ExternalRef
	}
	return data
}

// TestIssueLicence: the defaults of a new licence, its key, its
// licence.issued event and its audit entry; a read answers the same licence
// and key.
func TestIssueLicence(t *testing.T) {
	e := newLicenceEnv(t)
	e.clock.Advance(90*time.Second + 250*time.Millisecond)
	now := e.clock.Now()
	got := e.issue(t, e.allKey, issueBody(nil))

	if !uuidRE.MatchString(got.Licence.ID) {
		t.Errorf("id = %q, want a random lower-case UUID", got.Licence.ID)
	}
	if !keyRE.MatchString(got.LicenceKey) {
		t.Errorf("licence_key = %q, want DESK_ and 143 characters in groups of five", got.LicenceKey)
	}
	want := licenceView{
		ID: got.Licence.ID, ProductID: "desk-app", Email: "ada@example.com", IssuedAt: "2026-03-02T09:01:30.250Z",
		LimitKind: "seats", LimitCount: 1, Major: 3, Status: "active", State: "active", Source: "admin",
		CreatedAt: "2026-03-02T09:01:30.250Z", UpdatedAt: "2026-03-02T09:01:30.250Z", Features: []grantView{},
	}
	if diff := cmp.Diff(want, got.Licence); diff != "" {
		t.Errorf("issued licence mismatch (-want +got):\n%s", diff)
	}
	read := e.read(t, got.Licence.ID)
	if diff := cmp.Diff(readView{Licence: want, LicenceKey: &got.LicenceKey, Activations: []activationView{}}, read); diff != "" {
		t.Errorf("read after issue mismatch (-want +got):\n%s", diff)
	}

	evs := e.events(t, e.org.ID)
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	checkEvent(t, evs[0], wantEvent{typ: licentia.EventLicenceIssued, at: now, licence: want, key: got.LicenceKey})
	wantAudit := []auditLine{{Action: "licence.issued", Actor: e.actor, At: want.IssuedAt, Data: issuedData(want)}}
	if diff := cmp.Diff(wantAudit, e.audit(t, want.ID)); diff != "" {
		t.Errorf("audit mismatch (-want +got):\n%s", diff)
	}
}
