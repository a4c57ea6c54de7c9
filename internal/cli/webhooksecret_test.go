package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/signing"
)

// postStripe sends body to the integration's webhook URL, signed now with
// secret, and returns the status and the error code of the answer, if any.
func postStripe(t *testing.T, base, integ, secret string, body []byte) (int, licentia.Code) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/providers/"+integ+"/webhooks", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", providertest.StripeSignature(body, secret, time.Now()))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct {
			Code licentia.Code `json:"code"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out.Error.Code
}

// TestIntegrationSetWebhookSecret connects without a webhook secret: the
// provider's webhooks are refused as badly signed until set-webhook-secret
// gives the secret the provider showed for the endpoint, then the same
// event signed with it is accepted. The command prints the integration,
// never the secret, and refuses what it should.
func TestIntegrationSetWebhookSecret(t *testing.T) {
	h, shop, keyFile, secretFile := integrationHarness(t)
	connected := h.run(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop", "--api-key-file", keyFile)
	if connected.code != 0 {
		t.Fatalf("integration connect without a webhook secret: exit %d, stderr %s", connected.code, connected.stderr)
	}
	id, _ := oneObject(t, connected.stdout)["id"].(string)
	shop.AddCheckout("cs_cli_1", providers.Item{ProductID: "prod_unmapped", Quantity: 1})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_cli_1", SessionID: "cs_cli_1",
		PaymentIntent: "pi_cli_1", Customer: "cus_cli_1", Email: "buyer@example.com"}, time.Now())

	_, base := h.serve(t, io.Discard)
	for _, secret := range []string{cliShopSecret, ""} {
		if status, code := postStripe(t, base, id, secret, body); status != http.StatusBadRequest || code != licentia.CodeWebhookSignatureInvalid {
			t.Errorf("webhook before the secret is set: %d %s, want 400 %s", status, code, licentia.CodeWebhookSignatureInvalid)
		}
	}

	empty := filepath.Join(h.dir, "empty.whsec")
	writeFile(t, empty, []byte("\n"))
	var outs []result
	for _, tt := range []struct {
		name string
		args []string
		code licentia.Code
	}{
		{"no id", []string{"--webhook-secret-file", secretFile}, licentia.CodeValidationFailed},
		{"bad id", []string{"--webhook-secret-file", secretFile, "stripe"}, licentia.CodeValidationFailed},
		{"no file", []string{id}, licentia.CodeValidationFailed},
		{"empty file", []string{"--webhook-secret-file", empty, id}, licentia.CodeValidationFailed},
		{"unknown integration", []string{"--webhook-secret-file", secretFile, licentia.NewID()}, licentia.CodeIntegrationNotFound},
	} {
		r := h.run(t, append([]string{"integration", "set-webhook-secret", "--org", "acme"}, tt.args...)...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, `"code":"`+string(tt.code)+`"`) {
			t.Errorf("%s: exit %d, stdout %q, stderr %s, want %s", tt.name, r.code, r.stdout, r.stderr, tt.code)
		}
		outs = append(outs, r)
	}
	if r := h.run(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Other",
		"--api-key-file", keyFile, "--webhook-secret-file", empty); r.code == 0 || !strings.Contains(r.stderr, string(licentia.CodeValidationFailed)) {
		t.Errorf("connect with an empty webhook secret file: exit %d, stderr %s, want validation_failed", r.code, r.stderr)
	}

	set := h.run(t, "integration", "set-webhook-secret", "--org", "acme", "--webhook-secret-file", secretFile, id)
	if set.code != 0 {
		t.Fatalf("integration set-webhook-secret: exit %d, stderr %s", set.code, set.stderr)
	}
	got := oneObject(t, set.stdout)
	if got["id"] != id || got["webhook_url"] != "https://licentia.example.org/v1/providers/"+id+"/webhooks" || got["account_id"] != "acct_1CLI" {
		t.Errorf("integration set-webhook-secret printed %v", got)
	}
	if status, code := postStripe(t, base, id, cliShopSecret, body); status != http.StatusOK {
		t.Errorf("webhook signed with the secret set: %d %s, want 200", status, code)
	}
	for _, r := range append(outs, connected, set) {
		for _, cred := range []string{cliShopKey, cliShopSecret} {
			for _, form := range credentialForms(cred) {
				if strings.Contains(r.stdout, form) || strings.Contains(r.stderr, form) {
					t.Errorf("a credential was printed: stdout %s, stderr %s", r.stdout, r.stderr)
				}
			}
		}
	}
}

// TestMasterKeyRotateWithoutWebhookSecret: an integration connected without
// a webhook secret does not stop masterkey rotate, which reseals its API
// key and leaves it without a secret.
func TestMasterKeyRotateWithoutWebhookSecret(t *testing.T) {
	h, _, keyFile, secretFile := integrationHarness(t)
	h.org(t, "big", "business")
	without := h.ok(t, "integration", "connect", "--org", "big", "--provider", "stripe", "--name", "Later", "--api-key-file", keyFile)
	h.ok(t, "integration", "connect", "--org", "big", "--provider", "stripe", "--name", "Now", "--api-key-file", keyFile, "--webhook-secret-file", secretFile)
	newFile := filepath.Join(t.TempDir(), "new.key")
	writeFile(t, newFile, rawKey(2))
	if rot := h.ok(t, "masterkey", "rotate", "--new-key-file", newFile); rot["resealed"] != json.Number("2") {
		t.Errorf("resealed = %v, want 2 (the integrations)", rot["resealed"])
	}
	st := h.openStore(t)
	o, err := st.OrganizationBySlug(t.Context(), "big")
	if err != nil {
		t.Fatal(err)
	}
	i, err := st.Integration(t.Context(), o.ID, without["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	next := signing.NewKeyring(masterKey(t, rawKey(2)))
	if key, err := providers.OpenAPIKey(next, i); err != nil || key.Reveal() != cliShopKey {
		t.Errorf("API key under the new master key: opens %v, %v", key.Reveal() == cliShopKey, err)
	}
	if _, err := providers.OpenWebhookSecret(next, i); !errors.Is(err, providers.ErrNoWebhookSecret) {
		t.Errorf("OpenWebhookSecret() error = %v, want ErrNoWebhookSecret", err)
	}
	h.vars["LICENTIA_MASTER_KEY_FILE"] = newFile
	set := h.run(t, "integration", "set-webhook-secret", "--org", "big", "--webhook-secret-file", secretFile, i.ID)
	if set.code != 0 {
		t.Fatalf("set-webhook-secret after rotation: exit %d, stderr %s", set.code, set.stderr)
	}
	if i, err = st.Integration(t.Context(), o.ID, i.ID); err != nil {
		t.Fatal(err)
	}
	if secret, err := providers.OpenWebhookSecret(next, i); err != nil || secret.Reveal() != cliShopSecret {
		t.Errorf("webhook secret under the new master key: opens %v, %v", secret.Reveal() == cliShopSecret, err)
	}
}
