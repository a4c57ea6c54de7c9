package signing_test

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// resealers are those masterkey rotate passes.
var resealers = signing.Resealers{WebhookSecret: webhooks.ResealSecret, Integration: providers.Reseal}

// rotationFixture is a store whose two product keys, one webhook secret and
// one disconnected integration's two credentials are sealed under f.m, with
// f.m's fingerprint recorded.
type rotationFixture struct {
	*fixture
	secretID      string
	integrationID string
}

func newRotationFixture(t *testing.T) *rotationFixture {
	t.Helper()
	f := &rotationFixture{fixture: newFixture(t)}
	p, _ := f.createProduct(t, "photo-editor", "PHOTO")
	f.rotate(t, p)
	e := &licentia.WebhookEndpoint{ID: licentia.NewID(), OrgID: f.org.ID, URL: "https://hooks.example.net/licentia",
		EventTypes: []licentia.EventType{licentia.EventLicenceIssued}, Enabled: true, CreatedAt: base, UpdatedAt: base}
	_, ws := webhooks.NewSecret(f.m, e.ID, base)
	f.secretID = ws.ID
	i := &licentia.Integration{ID: licentia.NewID(), OrgID: f.org.ID, Provider: "stripe", Name: "Shop", AccountID: "acct_1",
		CreatedAt: base}
	providers.Seal(f.m, i, "sk_test_rotate", "whsec_rotate")
	f.integrationID = i.ID
	f.inTx(t, func(tx store.Tx) error {
		if err := tx.CreateWebhookEndpoint(t.Context(), e, ws); err != nil {
			return err
		}
		if err := tx.CreateIntegration(t.Context(), i); err != nil {
			return err
		}
		// A disconnected integration's credentials are resealed too.
		if err := tx.DisconnectIntegration(t.Context(), f.org.ID, i.ID, base); err != nil {
			return err
		}
		return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, f.m.Fingerprint())
	})
	return f
}

// integrations lists every integration.
func (f *rotationFixture) integrations(t *testing.T) []licentia.Integration {
	t.Helper()
	is, err := f.st.AllIntegrations(t.Context())
	if err != nil {
		t.Fatalf("AllIntegrations() error = %v", err)
	}
	return is
}

// all lists every product key and webhook secret.
func (f *rotationFixture) all(t *testing.T) ([]licentia.ProductKey, []licentia.WebhookSecret) {
	t.Helper()
	ps, err := f.st.AllProducts(t.Context())
	if err != nil {
		t.Fatalf("AllProducts() error = %v", err)
	}
	var ks []licentia.ProductKey
	for _, p := range ps {
		ks = append(ks, p.Keys...)
	}
	ss, err := f.st.AllWebhookSecrets(t.Context())
	if err != nil {
		t.Fatalf("AllWebhookSecrets() error = %v", err)
	}
	return ks, ss
}

// sealed returns every key's and secret's master fingerprint and sealed
// bytes by id, and the recorded fingerprint.
func (f *rotationFixture) sealed(t *testing.T) (map[string]string, string) {
	t.Helper()
	out := map[string]string{}
	ks, ss := f.all(t)
	for _, k := range ks {
		out[k.ID] = k.MasterFingerprint + " " + hex.EncodeToString(k.Sealed)
	}
	for _, ws := range ss {
		out[ws.ID] = ws.MasterFingerprint + " " + hex.EncodeToString(ws.Sealed)
	}
	for _, i := range f.integrations(t) {
		out[i.ID] = i.MasterFingerprint + " " + hex.EncodeToString(i.SealedAPIKey) + hex.EncodeToString(i.SealedWebhookSecret)
	}
	fp, err := f.st.Setting(t.Context(), store.SettingMasterKeyFingerprint)
	if err != nil {
		t.Fatalf("Setting() error = %v", err)
	}
	return out, fp
}

// opened returns every key's private part and every secret's bytes that
// open under m.
func (f *rotationFixture) opened(t *testing.T, m *signing.MasterKey) map[string]string {
	t.Helper()
	out := map[string]string{}
	ks, ss := f.all(t)
	for _, k := range ks {
		if priv, err := signing.OpenProductKey(m, &k); err == nil {
			out[k.ID] = hex.EncodeToString(priv)
		}
	}
	for _, ws := range ss {
		if raw, err := webhooks.OpenSecret(signing.NewKeyring(m), &ws); err == nil {
			out[ws.ID] = hex.EncodeToString(raw)
		}
	}
	for _, i := range f.integrations(t) {
		key, errKey := providers.OpenAPIKey(signing.NewKeyring(m), &i)
		secret, errSecret := providers.OpenWebhookSecret(signing.NewKeyring(m), &i)
		if errKey == nil && errSecret == nil {
			out[i.ID] = key.Reveal() + " " + secret.Reveal()
		}
	}
	return out
}

func TestRotateMasterKey(t *testing.T) {
	f := newRotationFixture(t)
	before := f.opened(t, f.m)
	if len(before) != 4 {
		t.Fatalf("fixture opens %d keys, secrets and integrations, want 4", len(before))
	}
	next := newMasterKey(t, 2)
	n, err := signing.RotateMasterKey(t.Context(), f.st, f.m.Fingerprint(), f.m, next, resealers)
	if err != nil || n != 4 {
		t.Fatalf("RotateMasterKey() = %d, %v, want 4, nil", n, err)
	}
	if diff := cmp.Diff(before, f.opened(t, next)); diff != "" {
		t.Errorf("opened under the new master key mismatch (-want +got):\n%s", diff)
	}
	if got := f.opened(t, f.m); len(got) != 0 {
		t.Errorf("still opening under the old master key: %v", got)
	}
	sealed, fp := f.sealed(t)
	if fp != next.Fingerprint() {
		t.Errorf("recorded fingerprint = %s, want the new key's %s", fp, next.Fingerprint())
	}
	for id, s := range sealed {
		if !strings.HasPrefix(s, next.Fingerprint()+" ") {
			t.Errorf("%s sealed under %s, want %s", id, strings.Fields(s)[0], next.Fingerprint())
		}
	}
}

// TestRotateMasterKeyUnopenable: a secret that does not open under the old
// master key changes nothing, not even the keys resealed before it.
func TestRotateMasterKeyUnopenable(t *testing.T) {
	f := newRotationFixture(t)
	unknown := newMasterKey(t, 8)
	_, ss := f.all(t)
	if len(ss) != 1 {
		t.Fatalf("fixture has %d webhook secrets, want 1", len(ss))
	}
	resealed, err := webhooks.ResealSecret(f.m, unknown, &ss[0])
	if err != nil {
		t.Fatal(err)
	}
	f.inTx(t, func(tx store.Tx) error {
		return tx.ResealWebhookSecret(t.Context(), ss[0].ID, resealed, unknown.Fingerprint())
	})
	was, wasFP := f.sealed(t)

	_, err = signing.RotateMasterKey(t.Context(), f.st, f.m.Fingerprint(), f.m, newMasterKey(t, 2), resealers)
	if err == nil || !strings.Contains(err.Error(), "reseal webhook secret "+f.secretID) {
		t.Fatalf("RotateMasterKey() error = %v, want the secret %s named", err, f.secretID)
	}
	got, fp := f.sealed(t)
	if diff := cmp.Diff(was, got); diff != "" || fp != wasFP {
		t.Errorf("a refused rotation changed the keys (-before +after):\n%s\nrecorded fingerprint %s, was %s", diff, fp, wasFP)
	}
}

// TestRotateMasterKeyUnopenableIntegration: an integration whose
// credentials do not open under the old master key changes nothing.
func TestRotateMasterKeyUnopenableIntegration(t *testing.T) {
	f := newRotationFixture(t)
	unknown := newMasterKey(t, 9)
	is := f.integrations(t)
	key, secret, err := providers.Reseal(f.m, unknown, &is[0])
	if err != nil {
		t.Fatal(err)
	}
	f.inTx(t, func(tx store.Tx) error {
		return tx.ResealIntegration(t.Context(), is[0].ID, key, secret, unknown.Fingerprint())
	})
	was, wasFP := f.sealed(t)
	_, err = signing.RotateMasterKey(t.Context(), f.st, f.m.Fingerprint(), f.m, newMasterKey(t, 2), resealers)
	if err == nil || !strings.Contains(err.Error(), "reseal integration "+f.integrationID) {
		t.Fatalf("RotateMasterKey() error = %v, want the integration %s named", err, f.integrationID)
	}
	got, fp := f.sealed(t)
	if diff := cmp.Diff(was, got); diff != "" || fp != wasFP {
		t.Errorf("a refused rotation changed the keys (-before +after):\n%s\nrecorded fingerprint %s, was %s", diff, fp, wasFP)
	}
}

// beforeTx runs a function once, just before the first transaction.
type beforeTx struct {
	store.Store
	once   sync.Once
	before func()
}

func (s *beforeTx) InTx(ctx context.Context, fn func(store.Tx) error) error {
	s.once.Do(s.before)
	return s.Store.InTx(ctx, fn)
}

// TestRotateMasterKeyRaced: a rotation that finds the database's master key
// changed between the caller's check and its transaction (another rotation
// ran meanwhile) changes nothing.
func TestRotateMasterKeyRaced(t *testing.T) {
	f := newRotationFixture(t)
	was, _ := f.sealed(t)
	other := newMasterKey(t, 9).Fingerprint()
	st := &beforeTx{Store: f.st, before: func() {
		f.inTx(t, func(tx store.Tx) error {
			return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, other)
		})
	}}
	_, err := signing.RotateMasterKey(t.Context(), st, f.m.Fingerprint(), f.m, newMasterKey(t, 2), resealers)
	if err == nil || !strings.Contains(err.Error(), "changed to "+other+" meanwhile") {
		t.Fatalf("RotateMasterKey() error = %v, want the change to %s named", err, other)
	}
	got, fp := f.sealed(t)
	if diff := cmp.Diff(was, got); diff != "" {
		t.Errorf("keys changed (-before +after):\n%s", diff)
	}
	if fp != other {
		t.Errorf("recorded fingerprint = %s, want %s as the other rotation left it", fp, other)
	}
}
