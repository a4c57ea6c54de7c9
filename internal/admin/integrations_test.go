package admin_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

const (
	shopKey    = "sk_test_51ShopKeyForTestsOnlyAbcdef"
	shopSecret = "whsec_ShopWebhookSecretForTests"
	shopAcct   = "acct_1Shop"
)

// newShop is a Stripe fake knowing shopKey, with product prod_basic.
func newShop(t *testing.T) *providertest.Stripe {
	f := providertest.NewStripe(t, shopKey)
	f.AccountID = shopAcct
	f.AddProduct("prod_basic")
	return f
}

// shopProviders is the Stripe adapter on shop, whose calls give up after
// timeout, standing for providers.Timeout; the other providers have none.
func shopProviders(shop *providertest.Stripe, timeout time.Duration) map[providers.Name]providers.Provider {
	return map[providers.Name]providers.Provider{providers.Stripe: stripe.New(shop.URL(), timeout)}
}

func shopConnection(name string) admin.ConnectIntegration {
	return admin.ConnectIntegration{Provider: "stripe", Name: name, APIKey: shopKey, WebhookSecret: shopSecret}
}

// integrationFixture is serviceFixture's organization served by a Service
// whose Stripe is shop, logging to logs.
func integrationFixture(t *testing.T, st store.Store, shop *providertest.Stripe, logs *bytes.Buffer) (*admin.Service, *licentia.Organization, *signing.Keyring) {
	t.Helper()
	_, o := serviceFixture(t, st, licentia.DefaultPlans(), licentia.PlanIndie)
	m, err := signing.NewMasterKey(bytes.Repeat([]byte{7}, signing.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	keys := signing.NewKeyring(m)
	// serviceFixture's service recorded no fingerprint: it sealed no
	// secret, so this key may seal from here on.
	svc := admin.New(admin.Options{Store: st, Clock: clock.NewFake(time.Now().UTC()), Plans: licentia.DefaultPlans(),
		Keys: keys, BaseURL: hookBaseURL + "/", Providers: shopProviders(shop, 300*time.Millisecond),
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	return svc, o, keys
}

// TestConnectIntegration: the key is checked with the provider first, then
// both credentials are sealed, each bound to the integration, and only the
// integration's public fields are audited.
func TestConnectIntegration(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		shop := newShop(t)
		var logs bytes.Buffer
		svc, o, keys := integrationFixture(t, st, shop, &logs)
		v, err := svc.ConnectIntegration(t.Context(), licentia.OperatorActor, o.ID, shopConnection("Shop"))
		if err != nil {
			t.Fatalf("ConnectIntegration() error = %v", err)
		}
		i := v.Integration
		if i.Provider != "stripe" || i.Name != "Shop" || i.AccountID != shopAcct || i.Livemode || !i.IsConnected() {
			t.Errorf("ConnectIntegration() = %+v", i)
		}
		if want := hookBaseURL + "/v1/providers/" + i.ID + "/webhooks"; v.WebhookURL == nil || *v.WebhookURL != want {
			t.Errorf("WebhookURL = %v, want %s", v.WebhookURL, want)
		}
		if got, keys := shop.Requests(), shop.Keys(); len(got) != 1 || got[0] != "GET /v1/account" || keys[0] != shopKey {
			t.Errorf("provider calls = %q, want GET /v1/account with the key", got)
		}
		stored, err := st.Integration(t.Context(), o.ID, i.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, sealed := range [][]byte{stored.SealedAPIKey, stored.SealedWebhookSecret} {
			if bytes.Contains(sealed, []byte(shopKey)) || bytes.Contains(sealed, []byte(shopSecret)) {
				t.Error("a credential is stored in clear")
			}
		}
		key, err := providers.OpenAPIKey(keys, stored)
		if err != nil || key.Reveal() != shopKey {
			t.Errorf("OpenAPIKey() = %v, %v", key.Reveal() == shopKey, err)
		}
		secret, err := providers.OpenWebhookSecret(keys, stored)
		if err != nil || secret.Reveal() != shopSecret {
			t.Errorf("OpenWebhookSecret() = %v, %v", secret.Reveal() == shopSecret, err)
		}
		// Swapped, the two sealed credentials open under neither name.
		swapped := *stored
		swapped.SealedAPIKey, swapped.SealedWebhookSecret = stored.SealedWebhookSecret, stored.SealedAPIKey
		if _, err := providers.OpenAPIKey(keys, &swapped); err == nil {
			t.Error("OpenAPIKey() opened the webhook secret")
		}
		audit, err := st.OrganizationAudit(t.Context(), o.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := audit[len(audit)-1]
		if last.Action != licentia.AuditIntegrationConnected || !strings.Contains(string(last.Data), shopAcct) {
			t.Errorf("last audit entry = %s %s", last.Action, last.Data)
		}
		for _, leak := range []string{shopKey, shopSecret} {
			if strings.Contains(string(last.Data), leak) || strings.Contains(logs.String(), leak) ||
				strings.Contains(fmt.Sprintf("%v %+v %#v", v, *i, shopConnection("x")), leak) {
				t.Error("a credential appears in the audit entry, the log or a printed value")
			}
		}
	})
}

// TestConnectIntegrationRefused: each refusal writes nothing, and the
// provider is asked only once the request is valid.
func TestConnectIntegrationRefused(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		shop := newShop(t)
		var logs bytes.Buffer
		svc, o, _ := integrationFixture(t, st, shop, &logs)
		for _, tt := range []struct {
			name    string
			in      admin.ConnectIntegration
			outcome providertest.Outcome
			code    licentia.Code
			reason  string
			calls   int
		}{
			{name: "invalid", in: admin.ConnectIntegration{Provider: "paypal", Name: "", APIKey: "a b"}, code: licentia.CodeValidationFailed},
			{name: "no client", in: admin.ConnectIntegration{Provider: "paddle", Name: "P", APIKey: "k", WebhookSecret: "s"}, code: licentia.CodeIntegrationsNotConfigured},
			{name: "key refused", in: admin.ConnectIntegration{Provider: "stripe", Name: "S", APIKey: "sk_test_unknown", WebhookSecret: "s"},
				code: licentia.CodeProviderTokenInvalid, reason: "token_refused", calls: 1},
			{name: "provider failing", in: shopConnection("S"), outcome: providertest.ServerError, code: licentia.CodeProviderUnavailable, calls: 1},
			{name: "provider silent", in: shopConnection("S"), outcome: providertest.Hang, code: licentia.CodeProviderUnavailable, calls: 1},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before := len(shop.Requests())
				shop.SetOutcome(tt.outcome)
				_, err := svc.ConnectIntegration(t.Context(), licentia.OperatorActor, o.ID, tt.in)
				e := wantCode(t, "ConnectIntegration()", err, tt.code)
				if e != nil && tt.reason != "" && e.Details["reason"] != tt.reason {
					t.Errorf("details = %v, want reason %s", e.Details, tt.reason)
				}
				if got := len(shop.Requests()) - before; got != tt.calls {
					t.Errorf("provider calls = %d, want %d", got, tt.calls)
				}
				if is, err := st.Integrations(t.Context(), o.ID); len(is) != 0 || err != nil {
					t.Errorf("Integrations() = %d, %v, want none written", len(is), err)
				}
			})
		}
		if strings.Contains(logs.String(), "sk_test_unknown") {
			t.Error("a refused key reached the log")
		}
	})
}

// TestDisconnectIntegration: a disconnected integration is no longer listed,
// answers integration_not_found everywhere, keeps its mappings stored, and
// frees its place in the plan.
func TestDisconnectIntegration(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		shop := newShop(t)
		svc, o, _ := integrationFixture(t, st, shop, &bytes.Buffer{})
		v, err := svc.ConnectIntegration(t.Context(), licentia.OperatorActor, o.ID, shopConnection("Shop"))
		if err != nil {
			t.Fatal(err)
		}
		id := v.Integration.ID
		product := "race-app"
		if _, err := svc.PutMapping(t.Context(), licentia.OperatorActor, o.ID, id, "prod_basic", admin.PutMapping{ProductID: &product}); err != nil {
			t.Fatalf("PutMapping() error = %v", err)
		}
		if err := svc.DisconnectIntegration(t.Context(), licentia.OperatorActor, o.ID, id); err != nil {
			t.Fatalf("DisconnectIntegration() error = %v", err)
		}
		if list, err := svc.Integrations(t.Context(), o.ID); len(list) != 0 || err != nil {
			t.Errorf("Integrations() = %d, %v, want none", len(list), err)
		}
		wantCode(t, "DisconnectIntegration(again)", svc.DisconnectIntegration(t.Context(), licentia.OperatorActor, o.ID, id), licentia.CodeIntegrationNotFound)
		_, err = svc.Mappings(t.Context(), o.ID, id)
		wantCode(t, "Mappings(disconnected)", err, licentia.CodeIntegrationNotFound)
		_, err = svc.PutMapping(t.Context(), licentia.OperatorActor, o.ID, id, "prod_basic", admin.PutMapping{ProductID: &product})
		wantCode(t, "PutMapping(disconnected)", err, licentia.CodeIntegrationNotFound)
		wantCode(t, "DeleteMapping(disconnected)", svc.DeleteMapping(t.Context(), licentia.OperatorActor, o.ID, id, "prod_basic", admin.DeleteMappingRequest{}), licentia.CodeIntegrationNotFound)
		if ms, err := st.Mappings(t.Context(), o.ID, id); len(ms) != 1 || err != nil {
			t.Errorf("stored mappings = %d, %v, want 1 kept", len(ms), err)
		}
		audit, _ := st.OrganizationAudit(t.Context(), o.ID)
		var actions []string
		for _, e := range audit {
			actions = append(actions, e.Action)
		}
		for _, want := range []string{licentia.AuditIntegrationConnected, licentia.AuditMappingSaved, licentia.AuditIntegrationDisconnected} {
			if !slices.Contains(actions, want) {
				t.Errorf("audit actions %v lack %s", actions, want)
			}
		}
	})
}
