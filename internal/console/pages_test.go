package console_test

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// Products from the console: create (a refusal shows the form again),
// edit, rotate the signing key keeping the old one, retire the old one.
func TestProducts(t *testing.T) {
	e := newEnv(t, envOptions{})
	dev := e.member(t, e.org.ID, "dev@acme.example", licentia.RoleDeveloper)
	c := e.signUp(t, e.org.ID, "dev@acme.example")
	a := c.post(t, "/console/products", url.Values{"id": {"Bad Id"}, "name": {"Desk"}, "key_prefix": {"d"}, "current_major": {"1"}})
	wantStatus(t, "create with bad fields", a, http.StatusBadRequest)
	if !strings.Contains(a.body, `value="Bad Id"`) || !strings.Contains(a.body, `<span class="field-error">Key prefix: `) || strings.Contains(a.body, "/key_prefix") {
		t.Errorf("refused create does not show the form again with its problems:\n%s", a.body)
	}
	wantSeeOther(t, "create", c.post(t, "/console/products", url.Values{"id": {"desk-app"}, "name": {"Desk"},
		"key_prefix": {"desk"}, "current_major": {"2"}}), "/console/products/desk-app?done=product-created")
	wantMemberActor(t, e, licentia.AuditProductCreated, dev.ID)
	wantStatus(t, "create a taken id", c.post(t, "/console/products", url.Values{"id": {"desk-app"}, "name": {"Desk"},
		"key_prefix": {"DESK2"}, "current_major": {"2"}}), http.StatusConflict)

	wantSeeOther(t, "edit", c.post(t, "/console/products/desk-app", url.Values{"name": {"Desk Pro"}, "current_major": {"3"},
		"machines_per_seat": {"2"}}), "/console/products/desk-app?done=product-updated")
	p, err := e.store.Product(t.Context(), e.org.ID, "desk-app")
	if err != nil || p.Name != "Desk Pro" || p.CurrentMajor != 3 || p.MachinesPerSeat != 2 || p.KeyPrefix != "DESK" {
		t.Fatalf("product after edit = %+v, %v", p, err)
	}
	if p.HeartbeatIntervalSeconds != nil {
		t.Fatalf("heartbeat interval after an edit without it = %d, want off", *p.HeartbeatIntervalSeconds)
	}
	form := url.Values{"name": {"Desk Pro"}, "current_major": {"3"}, "machines_per_seat": {"2"}, "heartbeat_interval_seconds": {"59"}}
	if a := c.post(t, "/console/products/desk-app", form); a.status != http.StatusBadRequest || !strings.Contains(a.body, "must be an integer from 60 to 2592000") {
		t.Errorf("edit with a heartbeat interval of 59: %d\n%s", a.status, a.body)
	}
	form.Set("heartbeat_interval_seconds", "600")
	wantSeeOther(t, "edit the heartbeat interval", c.post(t, "/console/products/desk-app", form), "/console/products/desk-app?done=product-updated")
	if page := c.get(t, "/console/products/desk-app"); !strings.Contains(page.body, "600 seconds") || !strings.Contains(page.body, `value="600"`) {
		t.Errorf("product page does not show the heartbeat interval:\n%s", page.body)
	}
	form.Set("heartbeat_interval_seconds", "")
	wantSeeOther(t, "turn heartbeats off", c.post(t, "/console/products/desk-app", form), "/console/products/desk-app?done=product-updated")
	if p, err = e.store.Product(t.Context(), e.org.ID, "desk-app"); err != nil || p.HeartbeatIntervalSeconds != nil {
		t.Fatalf("product after clearing the heartbeat interval = %+v, %v", p, err)
	}
	old := hex.EncodeToString(p.CurrentKey().PublicKey)
	wantSeeOther(t, "rotate", c.post(t, "/console/products/desk-app/rotate-signing-key", url.Values{"keep_previous": {"true"}}),
		"/console/products/desk-app?done=rotated")
	page := c.get(t, "/console/products/desk-app")
	if !strings.Contains(page.body, old) || !strings.Contains(page.body, "/retire-public-key") {
		t.Fatalf("product page lacks the previous key and its retire form:\n%s", page.body)
	}
	wantSeeOther(t, "retire", c.post(t, "/console/products/desk-app/retire-public-key", url.Values{"public_key": {old}}),
		"/console/products/desk-app?done=retired")
	p, _ = e.store.Product(t.Context(), e.org.ID, "desk-app")
	for _, k := range p.Keys {
		if hex.EncodeToString(k.PublicKey) == old && k.Status != licentia.KeyRetired {
			t.Errorf("old key status = %s, want retired", k.Status)
		}
	}
	wantStatus(t, "another organization's product", c.get(t, "/console/products/nope"), http.StatusNotFound)
}

var newSecret = regexp.MustCompile(`id="new-secret">([^<]+)<`)

// Webhook endpoints: added with a secret shown once, deliveries listed and
// retried, the secret replaced (shown once), edited, deleted.
func TestWebhooks(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.as(t, licentia.RoleDeveloper)
	a := c.post(t, "/console/webhooks", url.Values{"url": {"http://hooks.example.com/x"}, "event_types": {"licence.issued"}})
	wantStatus(t, "add an http endpoint", a, http.StatusBadRequest)
	a = c.post(t, "/console/webhooks", url.Values{"url": {"https://hooks.example.com/x"}, "description": {"CRM"},
		"event_types": {"licence.issued", "licence.revoked"}})
	wantStatus(t, "add", a, http.StatusCreated)
	m := newSecret.FindStringSubmatch(a.body)
	if m == nil || !strings.HasPrefix(m[1], "whsec_") {
		t.Fatalf("the new endpoint's secret is not shown:\n%s", a.body)
	}
	es, err := e.store.WebhookEndpoints(t.Context(), e.org.ID)
	if err != nil || len(es) != 1 {
		t.Fatalf("WebhookEndpoints() = %v, %v", es, err)
	}
	ep := es[0]
	if list := c.get(t, "/console/webhooks"); strings.Contains(list.body, m[1]) {
		t.Error("the list shows the secret again")
	}

	e.product(t, e.org.ID, "desk-app", "DESK")
	e.issue(t, e.org.ID, "desk-app", "ada@example.com")
	ds, err := e.store.Deliveries(t.Context(), e.org.ID, ep.ID, nil, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries() = %v, %v; want the licence.issued delivery", ds, err)
	}
	page := c.get(t, "/console/webhooks/"+ep.ID)
	if !strings.Contains(page.body, "licence.issued") || !strings.Contains(page.body, "/deliveries/"+ds[0].ID+"/retry") {
		t.Fatalf("endpoint page lacks the delivery and its retry:\n%s", page.body)
	}
	wantSeeOther(t, "retry", c.post(t, "/console/webhooks/"+ep.ID+"/deliveries/"+ds[0].ID+"/retry", url.Values{}),
		"/console/webhooks/"+ep.ID+"?done=retried")

	a = c.post(t, "/console/webhooks/"+ep.ID+"/rotate-secret", url.Values{})
	wantStatus(t, "rotate", a, http.StatusOK)
	if m2 := newSecret.FindStringSubmatch(a.body); m2 == nil || m2[1] == m[1] {
		t.Errorf("the replaced secret is not shown, or is the old one:\n%s", a.body)
	}
	wantSeeOther(t, "edit", c.post(t, "/console/webhooks/"+ep.ID, url.Values{"url": {"https://hooks.example.com/y"},
		"description": {""}, "event_types": {"licence.revoked"}, "enabled": {"false"}}), "/console/webhooks/"+ep.ID+"?done=endpoint-updated")
	got, _ := e.store.WebhookEndpoint(t.Context(), e.org.ID, ep.ID)
	if got.URL != "https://hooks.example.com/y" || got.Description != "" || got.Enabled || len(got.EventTypes) != 1 {
		t.Errorf("endpoint after edit = %+v", got)
	}
	wantSeeOther(t, "delete", c.post(t, "/console/webhooks/"+ep.ID+"/delete", url.Values{}), "/console/webhooks?done=endpoint-deleted")
	if _, err := e.store.WebhookEndpoint(t.Context(), e.org.ID, ep.ID); licentia.ErrorCode(err) != licentia.CodeWebhookEndpointNotFound {
		t.Errorf("endpoint after delete: %v, want webhook_endpoint_not_found", err)
	}
}

var integrationPath = regexp.MustCompile(`^/console/integrations/([0-9a-f-]{36})$`)

// Integrations: an admin connects with the provider's key and webhook
// secret, is shown the webhook address to paste, sets the secret, maps a
// provider product, and disconnects.
func TestIntegrations(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.product(t, e.org.ID, "desk-app", "DESK")
	c := e.as(t, licentia.RoleAdmin)
	a := c.post(t, "/console/integrations", url.Values{"provider": {"stripe"}, "name": {"Shop"}, "api_key": {"sk_test_wrong"}})
	if a.status < 400 || a.status >= 500 || strings.Contains(a.body, "sk_test_wrong") {
		t.Fatalf("connect with a refused key = %d, want a refusal that does not show the key:\n%s", a.status, a.body)
	}
	a = c.post(t, "/console/integrations", url.Values{"provider": {"stripe"}, "name": {"Shop"}, "api_key": {shopKey},
		"webhook_secret": {"whsec_shop"}})
	m := integrationPath.FindStringSubmatch(a.location())
	if a.status != http.StatusSeeOther || m == nil {
		t.Fatalf("connect = %d to %q, want 303 to the integration:\n%s", a.status, a.location(), a.body)
	}
	id := m[1]
	page := c.get(t, a.location())
	if !strings.Contains(page.body, baseURL+"/v1/providers/"+id+"/webhooks") || strings.Contains(page.body, shopKey) {
		t.Fatalf("integration page lacks the webhook address, or shows the key:\n%s", page.body)
	}
	wantSeeOther(t, "set secret", c.post(t, "/console/integrations/"+id+"/webhook-secret", url.Values{"webhook_secret": {"whsec_new"}}),
		"/console/integrations/"+id+"?done=secret-set")
	wantSeeOther(t, "map", c.post(t, "/console/integrations/"+id+"/mappings", url.Values{"provider_product_id": {"prod_basic"},
		"product_id": {"desk-app"}, "limit_kind": {"seats"}, "limit_count": {"2"}, "on_refund": {"revoke"}, "on_subscription_end": {"expire"},
		"send_key_mail": {"no"}}),
		"/console/integrations/"+id+"?done=mapping-saved")
	a = c.post(t, "/console/integrations/"+id+"/mappings", url.Values{"provider_product_id": {"bad id!"}, "product_id": {"desk-app"}})
	wantStatus(t, "map a bad provider product", a, http.StatusBadRequest)
	if !strings.Contains(a.body, "must be 1 to 100 of A-Z a-z 0-9 _ -") {
		t.Errorf("refused mapping lacks the rule:\n%s", a.body)
	}
	page = c.get(t, "/console/integrations/"+id)
	if !strings.Contains(page.body, "prod_basic") || !strings.Contains(page.body, "2 seats") || !strings.Contains(page.body, "not mailed") {
		t.Errorf("integration page lacks the mapping, key mail off:\n%s", page.body)
	}
	wantSeeOther(t, "delete mapping", c.post(t, "/console/integrations/"+id+"/mappings/prod_basic/delete", url.Values{}),
		"/console/integrations/"+id+"?done=mapping-deleted")
	wantSeeOther(t, "disconnect", c.post(t, "/console/integrations/"+id+"/disconnect", url.Values{}), "/console/integrations?done=disconnected")
	wantStatus(t, "a disconnected integration", c.get(t, "/console/integrations/"+id), http.StatusNotFound)
}
