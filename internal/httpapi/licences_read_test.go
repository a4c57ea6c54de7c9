package httpapi_test

import (
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

// TestGetLicence: the licence, its key and its activations, live first.
// The key is derived on every read: the same string each time, a new one
// after the signing key is rotated (both verify), null once anonymised.
func TestGetLicence(t *testing.T) {
	e := newLicenceEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 5}))
	id := issued.Licence.ID

	first, second := e.read(t, id), e.read(t, id)
	if first.LicenceKey == nil || *first.LicenceKey != issued.LicenceKey || *second.LicenceKey != issued.LicenceKey {
		t.Errorf("licence_key read %v then %v, want the issued %s both times", first.LicenceKey, second.LicenceKey, issued.LicenceKey)
	}
	if got := e.read(t, strings.ToUpper(id)); got.Licence.ID != id {
		t.Errorf("read by upper-case id answered id %q, want %q", got.Licence.ID, id)
	}

	// Activations: live first, each group by activation time.
	older := e.activate(t, e.org.ID, id, "machine-a")
	e.clock.Advance(time.Minute)
	newer := e.activate(t, e.org.ID, id, "machine-b")
	e.clock.Advance(time.Minute)
	last := e.activate(t, e.org.ID, id, "machine-c")
	e.clock.Advance(time.Minute)
	r := e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/activations/" + older.ID + "/deactivate", key: e.allKey}, wantStatus: http.StatusOK})
	freed := decodeStrict[struct {
		Activation activationView `json:"activation"`
		Changed    bool           `json:"changed"`
	}](t, r.body).Activation
	want := []activationView{activationOf(newer), activationOf(last), freed}
	if diff := cmp.Diff(want, e.read(t, id).Activations); diff != "" {
		t.Errorf("activations mismatch (-want +got):\n%s", diff)
	}

	p := e.getProduct(t, e.allKey, "desk-app")
	e.rotate(t, e.allKey, "desk-app", nil)
	rotated := *e.read(t, id).LicenceKey
	if rotated == issued.LicenceKey || !keyRE.MatchString(rotated) {
		t.Errorf("licence_key after rotation = %q, want a new key (was %q)", rotated, issued.LicenceKey)
	}
	if again := *e.read(t, id).LicenceKey; again != rotated {
		t.Errorf("licence_key read twice after rotation: %q then %q", rotated, again)
	}
	stored, err := e.store.Product(t.Context(), e.org.ID, "desk-app")
	if err != nil {
		t.Fatal(err)
	}
	v, err := sdk.NewVerifier(signing.VerifierProduct(stored))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{issued.LicenceKey, rotated} {
		vk, err := v.VerifyLicenceKey(key)
		if err != nil || vk.LicenceID != id || vk.ProductID != p.ID {
			t.Errorf("VerifyLicenceKey(%s) = %v, %v; want licence %s of desk-app", key, vk, err, id)
		}
	}

	e.run(t, scenario{call: call{method: "POST", path: licencePath(id, "anonymise"), key: e.allKey, body: map[string]any{"confirm": true}}, wantStatus: http.StatusOK})
	if got := e.read(t, id); got.LicenceKey != nil {
		t.Errorf("licence_key = %q once anonymised, want null", *got.LicenceKey)
	}
}

// TestLicenceNotFound: an unknown licence and another organization's
// answer the same 404 licence_not_found on every licence route; an id
// that is not a UUID is 400 with path.id.
func TestLicenceNotFound(t *testing.T) {
	e := newLicenceEnv(t)
	other, _ := e.otherOrg(t, "beta", "beta-app", "BETA")
	theirs := e.seedIn(t, other.ID, "beta-app", admin.NewLicence{})
	routes := []struct {
		method, action string
		body           any
	}{
		{"GET", "", nil},
		{"GET", "audit", nil},
		{"POST", "revoke", map[string]any{"reason": "refund"}},
		{"POST", "expire", map[string]any{"reason": "ended"}},
		{"POST", "reinstate", map[string]any{"reason": "paid"}},
		{"POST", "anonymise", map[string]any{"confirm": true}},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.action, func(t *testing.T) {
			var answers []apiError
			for _, id := range []string{someID, theirs.ID, strings.ToUpper(theirs.ID)} {
				r := e.run(t, scenario{call: call{method: rt.method, path: licencePath(id, rt.action), key: e.allKey, body: rt.body},
					wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound})
				a := r.apiError(t)
				a.RequestID = ""
				answers = append(answers, a)
			}
			for _, a := range answers[1:] {
				if diff := cmp.Diff(answers[0], a); diff != "" {
					t.Errorf("another organization's licence answers unlike a missing one (-missing +other):\n%s", diff)
				}
			}
			for _, bad := range []string{"lic_1", strings.ReplaceAll(someID, "-", ""), someID + "0"} {
				c := call{method: rt.method, path: licencePath(bad, rt.action), key: e.allKey, body: rt.body, invalid: true}
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.id", "must be a UUID")})
				e.documentRefuses(t, c)
			}
		})
	}
	after, err := e.store.Licence(t.Context(), other.ID, theirs.ID)
	if err != nil || after.Status != licentia.StatusActive || after.AnonymisedAt != nil {
		t.Errorf("the other organization's licence = %+v, %v; want it untouched", after, err)
	}
	if n := len(e.events(t, other.ID)); n != 1 {
		t.Errorf("the other organization has %d events, want its issue only", n)
	}
}
