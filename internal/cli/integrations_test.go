package cli_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/signing"
)

const (
	cliShopKey    = "sk_live_51ShopKeyForCLITestsOnly"
	cliShopSecret = "whsec_ShopWebhookSecretForCLITests"
)

// integrationHarness is a harness whose Stripe is a loopback fake knowing
// cliShopKey, whose Paddle and Lemon Squeezy are fakes knowing other keys,
// with a master key file and a base URL, and an organization acme on the
// free plan; keyFile and secretFile hold the credentials, with the line
// ending an editor adds.
func integrationHarness(t *testing.T) (h *harness, shop *providertest.Stripe, keyFile, secretFile string) {
	t.Helper()
	return integrationHarnessOn(t, "")
}

// integrationHarnessOn is integrationHarness on the database of dbURL, or
// the harness's SQLite file when it is "".
func integrationHarnessOn(t *testing.T, dbURL string) (h *harness, shop *providertest.Stripe, keyFile, secretFile string) {
	t.Helper()
	h = newHarness(t)
	if dbURL != "" {
		h.vars["LICENTIA_DATABASE_URL"] = dbURL
	}
	shop = providertest.NewStripe(t, cliShopKey)
	shop.AccountID = "acct_1CLI"
	h.vars["LICENTIA_STRIPE_API_URL"] = shop.URL()
	h.vars["LICENTIA_PADDLE_API_URL"] = providertest.NewPaddle(t, "pdl_sdbx_apikey_01cli_x").URL()
	h.vars["LICENTIA_LEMONSQUEEZY_API_URL"] = providertest.NewLemonSqueezy(t, "ls_cli_key").URL()
	h.vars["LICENTIA_MASTER_KEY_FILE"] = filepath.Join(h.dir, "master.key")
	writeFile(t, h.vars["LICENTIA_MASTER_KEY_FILE"], rawKey(1))
	h.vars["LICENTIA_BASE_URL"] = "https://licentia.example.org"
	h.org(t, "acme", "free")
	keyFile, secretFile = filepath.Join(h.dir, "stripe.key"), filepath.Join(h.dir, "stripe.whsec")
	writeFile(t, keyFile, []byte(cliShopKey+"\n"))
	writeFile(t, secretFile, []byte(cliShopSecret+"\n"))
	return h, shop, keyFile, secretFile
}

// TestIntegrationCommands connects, lists and disconnects, printing one
// JSON object each and never a credential; the plan's one place is taken,
// then freed.
func TestIntegrationCommands(t *testing.T) {
	h, shop, keyFile, secretFile := integrationHarness(t)
	connect := []string{"integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop",
		"--api-key-file", keyFile, "--webhook-secret-file", secretFile}
	r := h.run(t, connect...)
	if r.code != 0 {
		t.Fatalf("integration connect: exit %d, stderr %s", r.code, r.stderr)
	}
	got := oneObject(t, r.stdout)
	id, _ := got["id"].(string)
	if !timeRE.MatchString(got["created_at"].(string)) {
		t.Errorf("created_at = %v", got["created_at"])
	}
	delete(got, "created_at")
	want := map[string]any{"id": id, "provider": "stripe", "name": "Shop", "account_id": "acct_1CLI", "livemode": true,
		"webhook_url": "https://licentia.example.org/v1/providers/" + id + "/webhooks"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("integration connect output mismatch (-want +got):\n%s", diff)
	}
	if calls, keys := shop.Requests(), shop.Keys(); len(calls) != 1 || calls[0] != "GET /v1/account" || keys[0] != cliShopKey {
		t.Errorf("provider calls = %q, want GET /v1/account with the key, its line ending dropped", calls)
	}
	list := h.ok(t, "integration", "list", "--org", "acme")
	if items, _ := list["integrations"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id {
		t.Errorf("integration list = %v, want the one connected", list)
	}
	h.fail(t, licentia.CodePlanLimitReached, connect...)

	h.ok(t, "integration", "disconnect", "--org", "acme", id)
	list = h.ok(t, "integration", "list", "--org", "acme")
	if items, _ := list["integrations"].([]any); len(items) != 0 {
		t.Errorf("integration list after disconnect = %v, want none", list)
	}
	h.fail(t, licentia.CodeIntegrationNotFound, "integration", "disconnect", "--org", "acme", id)
	h.ok(t, connect...)

	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, cliShopKey) || strings.Contains(out, cliShopSecret) {
			t.Error("a credential was printed")
		}
	}
}

// TestIntegrationConnectRefused: each refusal is one JSON error on stderr,
// without the key.
func TestIntegrationConnectRefused(t *testing.T) {
	h, _, keyFile, secretFile := integrationHarness(t)
	wrongKey := filepath.Join(h.dir, "wrong.key")
	writeFile(t, wrongKey, []byte("sk_test_wrong_key_0000\n"))
	base := func(provider, key string) []string {
		return []string{"integration", "connect", "--org", "acme", "--provider", provider, "--name", "Shop",
			"--api-key-file", key, "--webhook-secret-file", secretFile}
	}
	for _, tt := range []struct {
		name string
		args []string
		code licentia.Code
	}{
		{"key refused", base("stripe", wrongKey), licentia.CodeProviderTokenInvalid},
		{"unknown provider", base("paypal", keyFile), licentia.CodeValidationFailed},
		{"key of another provider", base("paddle", keyFile), licentia.CodeProviderTokenInvalid},
		{"no key file", base("stripe", filepath.Join(h.dir, "missing")), licentia.CodeFileNotFound},
		{"no org", []string{"integration", "list"}, licentia.CodeValidationFailed},
		{"unknown org", []string{"integration", "list", "--org", "nobody"}, licentia.CodeNotFound},
		{"disconnect without id", []string{"integration", "disconnect", "--org", "acme"}, licentia.CodeValidationFailed},
		{"disconnect bad id", []string{"integration", "disconnect", "--org", "acme", "stripe"}, licentia.CodeValidationFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.run(t, tt.args...)
			if r.code == 0 || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q, want a failure", r.code, r.stdout)
			}
			var e struct {
				Error struct {
					Code    licentia.Code  `json:"code"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || e.Error.Code != tt.code {
				t.Errorf("stderr %s, want code %s", r.stderr, tt.code)
			}
			if tt.code == licentia.CodeProviderTokenInvalid && e.Error.Details["reason"] != "token_refused" {
				t.Errorf("details = %v, want reason token_refused", e.Error.Details)
			}
			if strings.Contains(r.stderr, "sk_test_wrong_key") || strings.Contains(r.stderr, cliShopKey) {
				t.Errorf("stderr holds a key: %s", r.stderr)
			}
		})
	}
	if items, _ := h.ok(t, "integration", "list", "--org", "acme")["integrations"].([]any); len(items) != 0 {
		t.Errorf("integrations after refusals = %v, want none", items)
	}
}

// TestMasterKeyRotateReseals: masterkey rotate reseals a connected
// integration's credentials, which then open under the new key only.
func TestMasterKeyRotateReseals(t *testing.T) {
	h, _, keyFile, secretFile := integrationHarness(t)
	got := h.ok(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop",
		"--api-key-file", keyFile, "--webhook-secret-file", secretFile)
	newFile := filepath.Join(t.TempDir(), "new.key")
	writeFile(t, newFile, rawKey(2))
	rot := h.ok(t, "masterkey", "rotate", "--new-key-file", newFile)
	if rot["resealed"] != json.Number("1") {
		t.Errorf("resealed = %v, want 1 (the integration)", rot["resealed"])
	}
	st := h.openStore(t)
	o, err := st.OrganizationBySlug(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	i, err := st.Integration(t.Context(), o.ID, got["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	next := masterKey(t, rawKey(2))
	key, err := providers.OpenAPIKey(signing.NewKeyring(next), i)
	if err != nil || key.Reveal() != cliShopKey {
		t.Errorf("API key under the new master key: opens %v, %v", key.Reveal() == cliShopKey, err)
	}
	secret, err := providers.OpenWebhookSecret(signing.NewKeyring(next), i)
	if err != nil || secret.Reveal() != cliShopSecret {
		t.Errorf("webhook secret under the new master key: opens %v, %v", secret.Reveal() == cliShopSecret, err)
	}
	if _, err := providers.OpenAPIKey(signing.NewKeyring(masterKey(t, rawKey(1))), i); err == nil {
		t.Error("the API key still opens under the old master key")
	}
}

// TestIntegrationCommandsHideCredentials connects one integration of each
// provider, lists them, and has a connect refused and one fail on a provider
// that does not answer: no output on stdout or stderr holds an API key or a
// webhook secret, as given, base64, hex, or without its prefix.
func TestIntegrationCommandsHideCredentials(t *testing.T) {
	h, shop, stripeKeyFile, stripeSecretFile := integrationHarness(t)
	h.org(t, "big", "business")
	const (
		paddleKey    = "pdl_sdbx_apikey_01clileak000000000000000_CLILeakCheckPaddleKey_AQO"
		paddleSecret = "pdl_ntfset_01clileak_CLILeakCheckPaddleSecret00"
		lemonKey     = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.CLILeakCheckLemonKey00"
		lemonSecret  = "CLILeakCheckLemonSqueezySecret00"
	)
	h.vars["LICENTIA_PADDLE_API_URL"] = providertest.NewPaddle(t, paddleKey).URL()
	h.vars["LICENTIA_LEMONSQUEEZY_API_URL"] = providertest.NewLemonSqueezy(t, lemonKey).URL()
	file := func(name, content string) string {
		p := filepath.Join(h.dir, name)
		writeFile(t, p, []byte(content+"\n"))
		return p
	}
	connect := func(provider, keyFile, secretFile string) []string {
		return []string{"integration", "connect", "--org", "big", "--provider", provider, "--name", "Shop " + provider,
			"--api-key-file", keyFile, "--webhook-secret-file", secretFile}
	}
	var outs []result
	for _, args := range [][]string{
		connect("stripe", stripeKeyFile, stripeSecretFile),
		connect("paddle", file("paddle.key", paddleKey), file("paddle.secret", paddleSecret)),
		connect("lemonsqueezy", file("lemon.key", lemonKey), file("lemon.secret", lemonSecret)),
		{"integration", "list", "--org", "big"},
	} {
		r := h.run(t, args...)
		if r.code != 0 {
			t.Fatalf("licentia %s: exit %d, stderr %s", strings.Join(args, " "), r.code, r.stderr)
		}
		outs = append(outs, r)
	}
	if items, _ := oneObject(t, outs[3].stdout)["integrations"].([]any); len(items) != 3 {
		t.Fatalf("integration list = %s, want three integrations", outs[3].stdout)
	}
	refused := h.run(t, connect("paddle", file("wrong.key", paddleKey+"x"), file("paddle2.secret", paddleSecret))...)
	shop.SetOutcome(providertest.ServerError)
	unavailable := h.run(t, connect("stripe", stripeKeyFile, stripeSecretFile)...)
	for r, code := range map[result]licentia.Code{refused: licentia.CodeProviderTokenInvalid, unavailable: licentia.CodeProviderUnavailable} {
		if r.code == 0 || !strings.Contains(r.stderr, `"code":"`+string(code)+`"`) {
			t.Fatalf("connect: exit %d, stderr %s, want %s", r.code, r.stderr, code)
		}
		outs = append(outs, r)
	}
	for _, cred := range []string{cliShopKey, cliShopSecret, paddleKey, paddleKey + "x", paddleSecret, lemonKey, lemonSecret} {
		for _, form := range credentialForms(cred) {
			for i, r := range outs {
				if strings.Contains(r.stdout, form) || strings.Contains(r.stderr, form) {
					t.Errorf("run %d prints %q:\nstdout %s\nstderr %s", i, form, r.stdout, r.stderr)
				}
			}
		}
	}
}

// credentialForms lists the ways a credential could be written out: as
// given, base64 in each alphabet, hex, and without its provider prefix.
func credentialForms(s string) []string {
	forms := []string{s,
		base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s)),
		base64.URLEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)),
		hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
	}
	if i := strings.LastIndex(s, "_"); i >= 0 && len(s)-i > 12 {
		forms = append(forms, s[i+1:])
	}
	return forms
}

// TestIntegrationConnectWithoutBaseURL checks that without LICENTIA_BASE_URL
// connect prints the listen address's webhook_url, its JSON shape
// unchanged, and says on stderr why a provider cannot reach it and which
// variable to set.
func TestIntegrationConnectWithoutBaseURL(t *testing.T) {
	h, _, keyFile, _ := integrationHarness(t)
	delete(h.vars, "LICENTIA_BASE_URL")
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:8181"
	r := h.run(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop", "--api-key-file", keyFile)
	if r.code != 0 {
		t.Fatalf("integration connect: exit %d, stderr %s", r.code, r.stderr)
	}
	got := oneObject(t, r.stdout)
	id, _ := got["id"].(string)
	if want := "http://127.0.0.1:8181/v1/providers/" + id + "/webhooks"; got["webhook_url"] != want {
		t.Errorf("webhook_url = %v, want %s", got["webhook_url"], want)
	}
	if !strings.Contains(r.stderr, "LICENTIA_BASE_URL is unset") || !strings.Contains(r.stderr, "set LICENTIA_BASE_URL") {
		t.Errorf("stderr does not say why the address is local nor what to set:\n%s", r.stderr)
	}
}
