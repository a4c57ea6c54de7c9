package integrity_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/integrity"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/internal/webhooks"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func masterKey(t *testing.T) *signing.MasterKey {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// seeded names what Seed stored.
type seeded struct {
	org         *licentia.Organization
	product     *licentia.Product
	licences    []*licentia.Licence
	activation  *licentia.Activation
	endpoint    *licentia.WebhookEndpoint
	secret      *licentia.WebhookSecret
	event       *licentia.Event
	delivery    *licentia.Delivery
	integration *licentia.Integration
}

// seed stores, through the store as the service does, an organization with
// a product whose key is sealed under m, licences, a live activation, a
// webhook endpoint with its secret, an event with its delivery, and an
// integration: every kind of record the checks read.
func seed(t *testing.T, s store.Store, m *signing.MasterKey, pages int) *seeded {
	t.Helper()
	ctx := t.Context()
	d := &seeded{org: &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree, CreatedAt: now}}
	d.product = &licentia.Product{ID: "acme-app", OrgID: d.org.ID, Name: "App", KeyPrefix: "ACME", CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: now, UpdatedAt: now}
	key, err := signing.NewProductKey(m, d.product.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	d.product.Keys = []licentia.ProductKey{*key}
	for i := range pages {
		l := &licentia.Licence{ID: licentia.NewID(), OrgID: d.org.ID, ProductID: d.product.ID, Email: "c@example.com",
			IssuedAt: now, LimitKind: licentia.LimitMachines, LimitCount: 3, Major: 1, Status: licentia.StatusActive,
			Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
		if i%3 == 1 {
			l.ExpiresAt = new(now.Add(-time.Hour))
		}
		d.licences = append(d.licences, l)
	}
	d.activation = &licentia.Activation{ID: licentia.NewID(), OrgID: d.org.ID, LicenceID: d.licences[0].ID, MachineID: "m1",
		Label: "Laptop", OS: "linux", AppVersion: "1.0.0", ActivatedAt: now, LastSeenAt: now}
	d.endpoint = &licentia.WebhookEndpoint{ID: licentia.NewID(), OrgID: d.org.ID, URL: "https://hooks.example.com/",
		EventTypes: []licentia.EventType{licentia.EventLicenceIssued}, Enabled: true, CreatedAt: now, UpdatedAt: now}
	_, d.secret = webhooks.NewSecret(m, d.endpoint.ID, now)
	b := make([]byte, 16)
	rand.Read(b)
	d.event = &licentia.Event{ID: "evt_" + hex.EncodeToString(b), OrgID: d.org.ID, Type: licentia.EventLicenceIssued, At: now, Body: []byte(`{}`)}
	d.delivery = &licentia.Delivery{ID: licentia.NewID(), OrgID: d.org.ID, EndpointID: d.endpoint.ID, EventID: d.event.ID,
		EventType: d.event.Type, Status: licentia.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
	d.integration = &licentia.Integration{ID: licentia.NewID(), OrgID: d.org.ID, Provider: "stripe", Name: "Shop", AccountID: "acct_1", CreatedAt: now}
	providers.Seal(m, d.integration, "sk_test_key", "whsec_test")
	err = s.InTx(ctx, func(tx store.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.SetSetting(ctx, store.SettingMasterKeyFingerprint, m.Fingerprint()) },
			func() error { return tx.CreateOrganization(ctx, d.org) },
			func() error { return tx.CreateProduct(ctx, d.product) },
			func() error {
				for _, l := range d.licences {
					if err := tx.CreateLicence(ctx, l); err != nil {
						return err
					}
				}
				return nil
			},
			func() error { return tx.CreateActivation(ctx, d.activation) },
			func() error { return tx.CreateWebhookEndpoint(ctx, d.endpoint, d.secret) },
			func() error { return tx.InsertEvent(ctx, d.event) },
			func() error { return tx.CreateDeliveries(ctx, []licentia.Delivery{*d.delivery}) },
			func() error { return tx.CreateIntegration(ctx, d.integration) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	return d
}

func runCheck(t *testing.T, s store.Store, m *signing.MasterKey) *integrity.Report {
	t.Helper()
	r, err := integrity.Check(t.Context(), s, m, integrity.Options{PageSize: 2})
	if err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	return r
}

// wantProblem fails unless r is not OK and lists a problem of check about
// the record kind and id.
func wantProblem(t *testing.T, r *integrity.Report, check, kind, id string) {
	t.Helper()
	if r.OK {
		t.Errorf("Check() ok = true, want false")
	}
	for _, p := range r.Problems {
		if p.Check == check && p.Kind == kind && p.ID == id {
			return
		}
	}
	t.Errorf("Check() problems = %+v, want one of check %s about %s %s", r.Problems, check, kind, id)
}

func engines(t *testing.T, run func(t *testing.T, open func(t *testing.T) store.Store)) {
	t.Run("sqlite", func(t *testing.T) { run(t, storetest.OpenSQLite) })
	t.Run("postgres", func(t *testing.T) { run(t, storetest.OpenPostgres) })
}

func TestCheckClean(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		s, m := open(t), masterKey(t)
		seed(t, s, m, 5)
		var progress [][2]int64
		r, err := integrity.Check(t.Context(), s, m, integrity.Options{PageSize: 2,
			Progress: func(done, total int64) { progress = append(progress, [2]int64{done, total}) }})
		if err != nil {
			t.Fatalf("Check() error = %v", err)
		}
		if !r.OK || len(r.Problems) != 0 {
			t.Errorf("Check() = ok %v, problems %+v, want ok and none", r.OK, r.Problems)
		}
		want := integrity.Checked{ProductKeys: 1, WebhookSecrets: 1, Integrations: 1, Licences: 5, CounterRows: r.Checked.CounterRows}
		if r.Checked != want || r.Checked.CounterRows == 0 {
			t.Errorf("Check() checked = %+v, want %+v with counter rows", r.Checked, want)
		}
		if want := [][2]int64{{0, 5}, {2, 5}, {4, 5}, {5, 5}}; !slices.Equal(progress, want) {
			t.Errorf("Progress calls = %v, want %v", progress, want)
		}
	})
}

func TestCheckFinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		// damage damages the seeded database and returns the problem it
		// must cause: check, kind, id.
		damage func(t *testing.T, s store.Store, m *signing.MasterKey, d *seeded) (check, kind, id string)
	}{
		{"counter altered by hand", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			// No sweep has run: the watermark is the epoch.
			k := store.KeyOf(d.licences[0], store.FromMillis(0))
			storetest.Tamper(t, s, fmt.Sprintf(`UPDATE licence_stats SET n = n + 1 WHERE org_id = '%s' AND product_id = '%s'
				AND status = '%s' AND source = '%s' AND term = '%s' AND NOT trial AND NOT lapsed AND shard = %d`,
				d.org.ID, k.ProductID, k.Status, k.Source, k.Term, k.Shard))
			return integrity.CheckLicenceCounters, "licence_stats", integrity.CounterName(d.org.ID, k)
		}},
		{"live activations altered by hand", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			storetest.Tamper(t, s, "UPDATE licences SET live_activations = 2 WHERE id = '"+d.licences[0].ID+"'")
			return integrity.CheckLiveActivations, "licence", d.licences[0].ID
		}},
		{"product key sealed under another master key", func(t *testing.T, s store.Store, m *signing.MasterKey, d *seeded) (string, string, string) {
			k := d.product.Keys[0]
			other, err := signing.NewProductKey(masterKey(t), d.product.ID, now)
			if err != nil {
				t.Fatal(err)
			}
			// The record still names the current key: only opening it tells.
			storetest.Tamper(t, s, "UPDATE product_keys SET sealed = "+blob(t, s, other.Sealed)+" WHERE id = '"+k.ID+"'")
			return integrity.CheckSealedSecret, "product_key", k.ID
		}},
		{"webhook secret sealed under another master key", func(t *testing.T, s store.Store, m *signing.MasterKey, d *seeded) (string, string, string) {
			inTx(t, s, func(tx store.Tx) error {
				sealed, err := webhooks.ResealSecret(m, masterKey(t), d.secret)
				if err != nil {
					return err
				}
				return tx.ResealWebhookSecret(t.Context(), d.secret.ID, sealed, m.Fingerprint())
			})
			return integrity.CheckSealedSecret, "webhook_secret", d.secret.ID
		}},
		{"integration sealed under another master key", func(t *testing.T, s store.Store, m *signing.MasterKey, d *seeded) (string, string, string) {
			other := masterKey(t)
			inTx(t, s, func(tx store.Tx) error {
				apiKey, secret, err := providers.Reseal(m, other, d.integration)
				if err != nil {
					return err
				}
				return tx.ResealIntegration(t.Context(), d.integration.ID, apiKey, secret, other.Fingerprint())
			})
			return integrity.CheckSealedSecret, "integration", d.integration.ID
		}},
		{"another master key recorded", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			inTx(t, s, func(tx store.Tx) error {
				return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, masterKey(t).Fingerprint())
			})
			return integrity.CheckMasterKey, "setting", store.SettingMasterKeyFingerprint
		}},
		{"no master key recorded", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			storetest.Tamper(t, s, "DELETE FROM settings WHERE name = '"+store.SettingMasterKeyFingerprint+"'")
			return integrity.CheckMasterKey, "setting", store.SettingMasterKeyFingerprint
		}},
		{"licence without its product", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			storetest.Tamper(t, s, "DELETE FROM products WHERE id = '"+d.product.ID+"'")
			return integrity.CheckLicenceProduct, "licence", d.licences[0].ID
		}},
		{"activation without its licence", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			storetest.Tamper(t, s, "DELETE FROM licences WHERE id = '"+d.licences[0].ID+"'")
			return integrity.CheckActivation, "activation", d.activation.ID
		}},
		{"delivery without its event", func(t *testing.T, s store.Store, _ *signing.MasterKey, d *seeded) (string, string, string) {
			storetest.Tamper(t, s, "DELETE FROM events WHERE id = '"+d.event.ID+"'")
			return integrity.CheckDelivery, "webhook_delivery", d.delivery.ID
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
				s, m := open(t), masterKey(t)
				d := seed(t, s, m, 5)
				check, kind, id := tt.damage(t, s, m, d)
				r := runCheck(t, s, m)
				wantProblem(t, r, check, kind, id)
				for _, p := range r.Problems {
					if strings.Contains(p.Message, "sk_test_key") || strings.Contains(p.Message, "whsec_") {
						t.Errorf("problem %+v shows a secret", p)
					}
				}
			})
		})
	}
}

func inTx(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(t.Context(), fn); err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
}

// blob is b as an SQL literal of the engine behind s.
func blob(t *testing.T, s store.Store, b []byte) string {
	if strings.HasPrefix(storetest.DatabaseURL(t, s), "sqlite:") {
		return "X'" + hex.EncodeToString(b) + "'"
	}
	return "decode('" + hex.EncodeToString(b) + "', 'hex')"
}

// TestCheckWhileWriting issues a licence with a live machine after the
// check has read the counters and after every page it reads, last page
// included: the check reads one snapshot, so counters and licences still
// agree and a healthy live database passes.
func TestCheckWhileWriting(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		s, m := open(t), masterKey(t)
		d := seed(t, s, m, 3)
		issued := 0
		issue := func(int64, int64) {
			issued++
			l := &licentia.Licence{ID: licentia.NewID(), OrgID: d.org.ID, ProductID: d.product.ID, Email: "w@example.com",
				IssuedAt: now, LimitKind: licentia.LimitMachines, LimitCount: 3, Major: 1, Status: licentia.StatusActive,
				Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
			a := &licentia.Activation{ID: licentia.NewID(), OrgID: d.org.ID, LicenceID: l.ID, MachineID: "w" + l.ID,
				Label: "Laptop", OS: "linux", AppVersion: "1.0.0", ActivatedAt: now, LastSeenAt: now}
			inTx(t, s, func(tx store.Tx) error {
				if err := tx.CreateLicence(t.Context(), l); err != nil {
					return err
				}
				return tx.CreateActivation(t.Context(), a)
			})
		}
		r, err := integrity.Check(t.Context(), s, m, integrity.Options{PageSize: 2, Progress: issue})
		if err != nil {
			t.Fatalf("Check() error = %v", err)
		}
		if !r.OK || r.Checked.Licences != 3 {
			t.Errorf("Check() while issuing = ok %v, %d licences, problems %+v, want ok and the 3 licences of its snapshot",
				r.OK, r.Checked.Licences, r.Problems)
		}
		if issued != 3 {
			t.Errorf("issued %d licences during the check, want one after the counters and one after each of its 2 pages", issued)
		}
		if r := runCheck(t, s, m); !r.OK || r.Checked.Licences != 6 {
			t.Errorf("Check() after = ok %v, %d licences, problems %+v, want ok and 6", r.OK, r.Checked.Licences, r.Problems)
		}
	})
}
