package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A full run of the console, through every kind of secret it handles,
// writes no password, link token, session token, API key, webhook secret,
// email address or order id to the log.
func TestLogsHoldNoSecrets(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		var secrets []string
		setup := e.setupLink(t, e.org.ID, "owner@acme.example")
		secrets = append(secrets, strings.TrimPrefix(setup, "/console/setup/"))
		owner := e.client()
		owner.get(t, setup)
		wantSeeOther(t, "setup", owner.post(t, setup, url.Values{"password": {password}}), "/console/?done=joined")
		secrets = append(secrets, password, owner.sessionCookie().Value, "owner@acme.example")

		_, a := e.signInFrom(t, "198.51.100.40", "stranger@elsewhere.example", "guessed-password-1")
		wantStatus(t, "unknown address", a, http.StatusUnauthorized)
		_, a = e.signInFrom(t, "198.51.100.40", "owner@acme.example", "guessed-password-2")
		wantStatus(t, "wrong password", a, http.StatusUnauthorized)
		secrets = append(secrets, "stranger@elsewhere.example", "guessed-password-1", "guessed-password-2")

		wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
			url.Values{"email": {"new.hire@acme.example"}, "role": {"support"}}), "/console/team?done=invited")
		link := e.mail.link(t, "new.hire@acme.example")
		joiner := e.client()
		wantSeeOther(t, "join", joiner.post(t, link, url.Values{"password": {"another long password"}}), "/console/?done=joined")
		secrets = append(secrets, "new.hire@acme.example", strings.TrimPrefix(link, "/console/join/"), "another long password",
			joiner.sessionCookie().Value)

		a = owner.post(t, "/console/api-keys", url.Values{"name": {"ci"}, "scopes": {"licences:read"}})
		wantStatus(t, "API key", a, http.StatusCreated)
		secrets = append(secrets, newKey.FindStringSubmatch(a.body)[1])
		a = owner.post(t, "/console/webhooks", url.Values{"url": {"https://hooks.example.com/x"}, "event_types": {"licence.issued"}})
		wantStatus(t, "webhook", a, http.StatusCreated)
		secrets = append(secrets, newSecret.FindStringSubmatch(a.body)[1])
		a = owner.post(t, "/console/integrations", url.Values{"provider": {"stripe"}, "name": {"Shop"}, "api_key": {shopKey},
			"webhook_secret": {"whsec_provider_secret_1"}})
		wantStatus(t, "connect", a, http.StatusSeeOther)
		secrets = append(secrets, shopKey, "whsec_provider_secret_1")

		e.product(t, e.org.ID, "desk-app", "DESK")
		l := e.sell(t, "desk-app", "buyer.person@example.com", "ord_secret_77")
		v, _ := e.admin.Licence(t.Context(), e.org.ID, l.ID)
		act := e.activate(t, *v.Key, "machine-1")
		owner.get(t, "/console/licences?q=buyer.person%40example.com")
		owner.get(t, "/console/licences/"+l.ID)
		buyer := e.buyer("198.51.100.41")
		wantStatus(t, "lookup", buyer.post(t, "/console/purchase", url.Values{"email": {"buyer.person@example.com"}, "order_id": {"ord_secret_77"}}), http.StatusOK)
		wantStatus(t, "free", buyer.post(t, "/console/purchase/free", url.Values{"email": {"buyer.person@example.com"},
			"order_id": {"ord_secret_77"}, "activation": {act.ID}}), http.StatusOK)
		wantStatus(t, "mismatch", buyer.post(t, "/console/purchase", url.Values{"email": {"buyer.person@example.com"}, "order_id": {"ord_guess_1"}}), http.StatusNotFound)
		secrets = append(secrets, "buyer.person@example.com", "ord_secret_77", "ord_guess_1", *v.Key)
		wantSeeOther(t, "sign out", owner.post(t, "/console/sign-out", url.Values{}), "/console/sign-in")

		logs := e.logs.String()
		if strings.Count(logs, `"msg":"console request"`) < 15 {
			t.Fatalf("the access log has too few lines:\n%s", logs)
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds %q", s)
			}
		}
		if strings.Contains(logs, "@") {
			t.Errorf("the log holds an address:\n%s", logs)
		}
	})
}
