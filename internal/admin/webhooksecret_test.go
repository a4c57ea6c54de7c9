package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// TestSetWebhookSecret, on both engines: an integration connected without
// a webhook secret refuses every webhook as a bad signature, an empty one
// among them; once its secret is set, a webhook signed with it is
// accepted. Another organization's or a disconnected integration answers
// integration_not_found, an empty secret validation_failed, and the audit
// never holds the secret.
func TestSetWebhookSecret(t *testing.T) {
	const newSecret = "whsec_SetLaterAdminTestsOnly"
	engines(t, func(t *testing.T, st store.Store) {
		ctx := t.Context()
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		v, err := f.svc.ConnectIntegration(ctx, licentia.OperatorActor, f.org.ID, admin.ConnectIntegration{Provider: "stripe", Name: "Later", APIKey: webhookKey})
		if err != nil {
			t.Fatalf("ConnectIntegration(no webhook secret) error = %v", err)
		}
		f.integ = v.Integration.ID
		if _, err := f.svc.PutMapping(ctx, licentia.OperatorActor, f.org.ID, f.integ, "prod_app", admin.PutMapping{ProductID: str("app")}); err != nil {
			t.Fatal(err)
		}
		signed := func(secret string) admin.ProviderWebhook {
			w := f.paid("evt_later_1")
			w.Header = http.Header{"Stripe-Signature": {providertest.StripeSignature(w.Body, secret, f.clk.Now())}}
			return w
		}
		for _, secret := range []string{"", webhookSecret, newSecret} {
			_, err := f.svc.HandleProviderWebhook(ctx, signed(secret))
			wantCode(t, "HandleProviderWebhook(no secret set)", err, licentia.CodeWebhookSignatureInvalid)
		}

		_, err = f.svc.SetWebhookSecret(ctx, licentia.OperatorActor, f.org.ID, f.integ, "")
		if paths := issuePaths(t, err); !slices.Equal(paths, []string{"/webhook_secret"}) {
			t.Errorf("SetWebhookSecret(empty) paths = %v, want /webhook_secret", paths)
		}
		other, err := f.svc.CreateOrganization(ctx, licentia.OperatorActor, admin.NewOrganization{
			Name: "Other", Slug: "other", Plan: licentia.PlanBusiness, OwnerEmail: "owner@other.example"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.SetWebhookSecret(ctx, licentia.OperatorActor, other.ID, f.integ, newSecret)
		wantCode(t, "SetWebhookSecret(another organization's)", err, licentia.CodeIntegrationNotFound)
		_, err = f.svc.SetWebhookSecret(ctx, licentia.OperatorActor, f.org.ID, licentia.NewID(), newSecret)
		wantCode(t, "SetWebhookSecret(missing)", err, licentia.CodeIntegrationNotFound)

		got, err := f.svc.SetWebhookSecret(ctx, licentia.OperatorActor, f.org.ID, f.integ, newSecret)
		if err != nil {
			t.Fatalf("SetWebhookSecret() error = %v", err)
		}
		if got.Integration.ID != f.integ || got.WebhookURL == nil || !strings.HasSuffix(*got.WebhookURL, "/v1/providers/"+f.integ+"/webhooks") {
			t.Errorf("SetWebhookSecret() = %+v", got)
		}
		_, err = f.svc.HandleProviderWebhook(ctx, signed(""))
		wantCode(t, "HandleProviderWebhook(empty key)", err, licentia.CodeWebhookSignatureInvalid)
		res, err := f.svc.HandleProviderWebhook(ctx, signed(newSecret))
		if err != nil || res.Issued != 1 {
			t.Fatalf("HandleProviderWebhook(new secret) = %+v, %v, want one licence issued", res, err)
		}

		audit, err := st.OrganizationAudit(ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		set := 0
		for _, e := range audit {
			if e.Action == licentia.AuditIntegrationWebhookSecretSet {
				set++
				if !strings.Contains(string(e.Data), f.integ) {
					t.Errorf("audit data %s lacks the integration id", e.Data)
				}
			}
			if strings.Contains(string(e.Data), newSecret) || strings.Contains(string(e.Data), "whsec_") {
				t.Errorf("audit entry %s holds a secret: %s", e.Action, e.Data)
			}
		}
		if set != 1 {
			t.Errorf("%s audit entries = %d, want 1", licentia.AuditIntegrationWebhookSecretSet, set)
		}

		if err := f.svc.DisconnectIntegration(ctx, licentia.OperatorActor, f.org.ID, f.integ); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.SetWebhookSecret(ctx, licentia.OperatorActor, f.org.ID, f.integ, newSecret)
		wantCode(t, "SetWebhookSecret(disconnected)", err, licentia.CodeIntegrationNotFound)
	})
}
