package httpapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func anonymiseCall(key, id string, body any) call {
	return call{method: "POST", path: licencePath(id, "anonymise"), key: key, body: body}
}

// setProvider gives a licence a payment provider's ids through the store,
// as an integration would.
func (e *testEnv) setProvider(t *testing.T, orgID, id string, refs licentia.ProviderRefs) {
	t.Helper()
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		before, err := tx.LockLicence(t.Context(), orgID, id)
		if err != nil {
			return err
		}
		after := *before
		after.Provider = refs
		return tx.UpdateLicence(t.Context(), &after)
	})
	if err != nil {
		t.Fatalf("set provider ids: %v", err)
	}
}

// TestAnonymiseLicence holds every erasure rule, from each starting
// status: email <id>@anonymised.invalid; external_ref, status_reason and
// the provider's customer and checkout ids cleared; machines anonymised
// and the live ones freed without activation.deactivated; a stored-active
// licence revoked (without licence.revoked), a revoked or expired one
// keeping its status; one licence.anonymised event with the snapshot after
// the erasure; audit data reduced; the key null. A second anonymise
// changes nothing.
func TestAnonymiseLicence(t *testing.T) {
	const trialEnd, soon = 14 * 24 * time.Hour, time.Hour
	for _, tt := range []struct {
		name    string
		expires time.Duration
		trial   bool
		steps   []string
		lapse   bool
		// status is the stored status after; changedAt whether
		// status_changed_at moves to the anonymisation.
		status    string
		changedAt bool
	}{
		{name: "active", status: "revoked", changedAt: true},
		{name: "reinstated with a reason", steps: []string{"revoke", "reinstate"}, status: "revoked", changedAt: true},
		{name: "trial", expires: trialEnd, trial: true, status: "revoked", changedAt: true},
		{name: "lapsed", expires: soon, lapse: true, status: "revoked", changedAt: true},
		{name: "revoked", steps: []string{"revoke"}, status: "revoked"},
		{name: "expired", steps: []string{"expire"}, status: "expired"},
		{name: "expired, then lapsed", expires: soon, steps: []string{"expire"}, lapse: true, status: "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newLicenceEnv(t)
			body := issueBody(map[string]any{"external_ref": "order-7", "limit_kind": "machines", "limit_count": 3})
			if tt.expires != 0 {
				body["expires_at"] = licentia.FormatTime(start.Add(tt.expires))
				body["trial"] = tt.trial
			}
			issued := e.issue(t, e.allKey, body)
			id := issued.Licence.ID
			refs := licentia.ProviderRefs{OrderID: ptr("ord_1"), SubscriptionID: ptr("sub_1"), CustomerID: ptr("cus_1"), CheckoutID: ptr("cs_1")}
			e.setProvider(t, e.org.ID, id, refs)
			e.clock.Advance(time.Minute)
			live1, live2 := e.activate(t, e.org.ID, id, "ada-laptop"), e.activate(t, e.org.ID, id, "ada-desktop")
			freedEarlier := e.activate(t, e.org.ID, id, "old-machine")
			e.clock.Advance(time.Minute)
			if _, err := e.admin.DeactivateActivation(t.Context(), e.actor, e.org.ID, freedEarlier.ID); err != nil {
				t.Fatal(err)
			}
			freedAt := e.clock.Now()
			for _, s := range tt.steps {
				e.clock.Advance(time.Minute)
				e.change(t, id, s, "because "+s)
			}
			if tt.lapse {
				e.clock.Set(start.Add(tt.expires + time.Minute))
			} else {
				e.clock.Advance(time.Minute)
			}
			now := e.clock.Now()
			before := e.read(t, id)
			events := e.events(t, e.org.ID)
			counts := e.counts(t, "")

			r := e.run(t, scenario{call: anonymiseCall(e.allKey, id, map[string]any{"confirm": true}), wantStatus: http.StatusOK})
			got := decodeStrict[changeView](t, r.body)
			want := before.Licence
			want.Email = id + "@anonymised.invalid"
			want.ExternalRef, want.StatusReason = nil, nil
			want.Provider = providerView{OrderID: ptr("ord_1"), SubscriptionID: ptr("sub_1")}
			want.AnonymisedAt, want.UpdatedAt = ptr(licentia.FormatTime(now)), licentia.FormatTime(now)
			want.Status, want.State = tt.status, tt.status
			if tt.changedAt {
				want.StatusChangedAt = ptr(licentia.FormatTime(now))
			}
			if diff := cmp.Diff(changeView{Licence: want, Changed: true}, got); diff != "" {
				t.Errorf("anonymise answer mismatch (-want +got):\n%s", diff)
			}

			read := e.read(t, id)
			if read.LicenceKey != nil {
				t.Errorf("licence_key = %q once anonymised, want null", *read.LicenceKey)
			}
			anonymised := func(a *licentia.Activation, deactivated time.Time) activationView {
				v := activationOf(a)
				v.MachineID, v.Label, v.OS, v.AppVersion = "anonymised-"+a.ID, "anonymised", "anonymised", "anonymised"
				v.DeactivatedAt = ptr(licentia.FormatTime(deactivated))
				return v
			}
			wantActs := []activationView{anonymised(live1, now), anonymised(live2, now), anonymised(freedEarlier, freedAt)}
			// Every activation is freed now: ordered by activation time.
			if diff := cmp.Diff(readView{Licence: want, Activations: wantActs}, read, cmp.Transformer("sort", sortActivations)); diff != "" {
				t.Errorf("read after anonymise mismatch (-want +got):\n%s", diff)
			}
			readBody := e.run(t, scenario{call: call{method: "GET", path: licencePath(id, ""), key: e.allKey}, wantStatus: http.StatusOK}).body
			for _, secret := range []string{"ada@example.com", "order-7", "cus_1", "cs_1", "ada-laptop", "Label of", "macOS", "because"} {
				if bytes.Contains(r.body, []byte(secret)) || bytes.Contains(readBody, []byte(secret)) {
					t.Errorf("answers still hold %q", secret)
				}
			}

			evs := e.newEvents(t, e.org.ID, len(events))
			if len(evs) != 1 {
				t.Fatalf("%d new events (%v), want licence.anonymised only", len(evs), evs)
			}
			checkEvent(t, evs[0], wantEvent{typ: licentia.EventLicenceAnonymised, at: now, licence: want, key: issued.LicenceKey})
			if diff := cmp.Diff(events, e.events(t, e.org.ID)[:len(events)]); diff != "" {
				t.Errorf("earlier events changed (-before +after):\n%s", diff)
			}

			audit := e.audit(t, id)
			last := audit[len(audit)-1]
			wantLast := auditLine{Action: "licence.anonymised", Actor: e.actor, At: licentia.FormatTime(now),
				Data: map[string]any{"licence_id": id, "from": before.Licence.Status, "to": tt.status, "machines_freed": 2.0}}
			if diff := cmp.Diff(wantLast, last); diff != "" {
				t.Errorf("anonymised audit entry mismatch (-want +got):\n%s", diff)
			}
			for _, a := range audit {
				for _, k := range []string{"email", "reason", "external_ref", "machine_id"} {
					if _, ok := a.Data[k]; ok {
						t.Errorf("audit %s still holds %s: %v", a.Action, k, a.Data)
					}
				}
				if a.Action == "licence.issued" {
					want := map[string]any{"licence_id": id, "product_id": "desk-app", "status": "active", "limit_kind": "machines",
						"limit_count": 3.0, "major": 3.0, "expires_at": nil, "trial_ends_at": nil}
					if l := issued.Licence; l.ExpiresAt != nil {
						want["expires_at"] = *l.ExpiresAt
						if l.TrialEndsAt != nil {
							want["trial_ends_at"] = *l.TrialEndsAt
						}
					}
					if diff := cmp.Diff(want, a.Data); diff != "" {
						t.Errorf("reduced issue entry mismatch (-want +got):\n%s", diff)
					}
				}
			}

			after := e.counts(t, "")
			if got, want := after.Counts.LiveMachines, counts.Counts.LiveMachines-map[bool]int64{true: 2}[before.Licence.State == "active" || before.Licence.State == "trial"]; got != want {
				t.Errorf("live_machines = %d after anonymising, want %d", got, want)
			}
			if after.Counts.All != 1 {
				t.Errorf("all = %d, want 1: an anonymised licence still counts", after.Counts.All)
			}

			// Anonymising again changes nothing and writes nothing.
			e.clock.Advance(time.Minute)
			again := decodeStrict[changeView](t, e.run(t, scenario{call: anonymiseCall(e.allKey, id, map[string]any{"confirm": true}), wantStatus: http.StatusOK}).body)
			if diff := cmp.Diff(changeView{Licence: want, Changed: false}, again); diff != "" {
				t.Errorf("second anonymise mismatch (-want +got):\n%s", diff)
			}
			if n := len(e.events(t, e.org.ID)); n != len(events)+1 {
				t.Errorf("%d events after a second anonymise, want %d", n, len(events)+1)
			}
			if diff := cmp.Diff(audit, e.audit(t, id)); diff != "" {
				t.Errorf("second anonymise changed the audit log (-before +after):\n%s", diff)
			}
			// The external reference is free again on the product.
			e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-7"}))
		})
	}
}

// sortActivations orders activations by activation time, then id.
func sortActivations(in []activationView) []activationView {
	out := append([]activationView{}, in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].ActivatedAt < out[i].ActivatedAt || out[j].ActivatedAt == out[i].ActivatedAt && out[j].ID < out[i].ID {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestAnonymiseBody: confirm is required and must be true; a refused
// request changes nothing. Only licences:anonymise allows it.
func TestAnonymiseBody(t *testing.T) {
	e := newLicenceEnv(t)
	id := e.seed(t, admin.NewLicence{}).ID
	before := e.read(t, id)
	for _, tt := range []struct {
		name   string
		body   any
		issues []string
	}{
		{"confirm false", map[string]any{"confirm": false}, []string{"/confirm", "must be true"}},
		{"confirm missing", map[string]any{}, []string{"/confirm", "is required"}},
		{"no body", nil, []string{"/confirm", "is required"}},
		{"confirm a string", map[string]any{"confirm": "true"}, []string{"/confirm", "must be a boolean"}},
		{"confirm 1", map[string]any{"confirm": 1}, []string{"/confirm", "must be a boolean"}},
		{"confirm null", map[string]any{"confirm": nil}, []string{"/confirm", "must be a boolean"}},
		{"unknown field", map[string]any{"confirm": true, "reason": "gdpr"}, []string{"/reason", "unknown field"}},
		{"name in another case", map[string]any{"Confirm": true}, []string{"/Confirm", "unknown field", "/confirm", "is required"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := anonymiseCall(e.allKey, id, tt.body)
			c.invalid = true
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
			e.documentRefuses(t, c)
		})
	}
	if diff := cmp.Diff(before, e.read(t, id)); diff != "" {
		t.Errorf("refused anonymisations changed the licence (-before +after):\n%s", diff)
	}
	writer := e.key(t, e.org.ID, scopesBut(licentia.ScopeLicencesAnonymise)...)
	e.run(t, scenario{call: anonymiseCall(writer, id, map[string]any{"confirm": true}), wantStatus: http.StatusForbidden,
		wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"licences:anonymise"}}})
	only := e.key(t, e.org.ID, licentia.ScopeLicencesAnonymise)
	if got := decodeStrict[changeView](t, e.run(t, scenario{call: anonymiseCall(only, id, map[string]any{"confirm": true}), wantStatus: http.StatusOK}).body); !got.Changed {
		t.Errorf("anonymise with licences:anonymise alone: changed false")
	}
}

// TestDeactivateActivation: the admin route frees a live seat with
// activation.deactivated (the activation and its licence as snapshots);
// again it answers changed false with no event. Another organization's or
// an unknown activation is 404 not_found alike; an id that is not a UUID
// is 400.
func TestDeactivateActivation(t *testing.T) {
	e := newLicenceEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	a := e.activate(t, e.org.ID, issued.Licence.ID, "ada-laptop")
	other, _ := e.otherOrg(t, "beta", "beta-app", "BETA")
	theirs := e.activate(t, other.ID, e.seedIn(t, other.ID, "beta-app", admin.NewLicence{}).ID, "bob-laptop")
	e.clock.Advance(time.Minute)
	now := e.clock.Now()
	events := len(e.events(t, e.org.ID))
	path := func(id string) string { return "/v1/admin/activations/" + id + "/deactivate" }
	type answer struct {
		Activation activationView `json:"activation"`
		Changed    bool           `json:"changed"`
	}

	want := activationOf(a)
	want.DeactivatedAt = ptr(licentia.FormatTime(now))
	got := decodeStrict[answer](t, e.run(t, scenario{call: call{method: "POST", path: path(strings.ToUpper(a.ID)), key: e.allKey}, wantStatus: http.StatusOK}).body)
	if diff := cmp.Diff(answer{Activation: want, Changed: true}, got); diff != "" {
		t.Errorf("deactivate answer mismatch (-want +got):\n%s", diff)
	}
	evs := e.newEvents(t, e.org.ID, events)
	if len(evs) != 1 {
		t.Fatalf("%d new events, want 1", len(evs))
	}
	checkEvent(t, evs[0], wantEvent{typ: licentia.EventActivationDeactivated, at: now, licence: e.read(t, issued.Licence.ID).Licence, activation: &want, key: issued.LicenceKey})
	wantAudit := auditLine{Action: "activation.deactivated", Actor: e.actor, At: licentia.FormatTime(now),
		Data: map[string]any{"licence_id": issued.Licence.ID, "activation_id": a.ID, "machine_id": "ada-laptop"}}
	if audit := e.audit(t, issued.Licence.ID); len(audit) != 2 || !cmp.Equal(wantAudit, audit[1]) {
		t.Errorf("audit = %v, want the issue and %v", audit, wantAudit)
	}

	e.clock.Advance(time.Minute)
	again := decodeStrict[answer](t, e.run(t, scenario{call: call{method: "POST", path: path(a.ID), key: e.allKey}, wantStatus: http.StatusOK}).body)
	if diff := cmp.Diff(answer{Activation: want, Changed: false}, again); diff != "" {
		t.Errorf("second deactivate mismatch (-want +got):\n%s", diff)
	}
	if n := len(e.events(t, e.org.ID)); n != events+1 {
		t.Errorf("%d events after a second deactivate, want %d", n, events+1)
	}
	if audit := e.audit(t, issued.Licence.ID); len(audit) != 2 {
		t.Errorf("audit after a second deactivate = %v, want 2 entries", audit)
	}

	var answers []apiError
	for _, id := range []string{someID, theirs.ID} {
		r := e.run(t, scenario{call: call{method: "POST", path: path(id), key: e.allKey}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
		err := r.apiError(t)
		err.RequestID = ""
		answers = append(answers, err)
	}
	if diff := cmp.Diff(answers[0], answers[1]); diff != "" {
		t.Errorf("another organization's activation answers unlike a missing one (-missing +other):\n%s", diff)
	}
	if stored, err := e.store.Activation(t.Context(), other.ID, theirs.ID); err != nil || stored.DeactivatedAt != nil {
		t.Errorf("the other organization's activation = %+v, %v; want it live", stored, err)
	}
	for _, bad := range []string{"act_1", strings.ReplaceAll(a.ID, "-", "")} {
		c := call{method: "POST", path: path(bad), key: e.allKey, invalid: true}
		e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.id", "must be a UUID")})
		e.documentRefuses(t, c)
	}
	e.run(t, scenario{call: call{method: "POST", path: path(a.ID) + "?force=1", key: e.allKey, invalid: true},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.force", "unknown parameter")})
}
