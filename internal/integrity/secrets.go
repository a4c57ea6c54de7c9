package integrity

import (
	"context"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// secrets checks the recorded master key fingerprint and opens every
// sealed secret: product signing keys (retired ones too: they verify keys
// already sold), webhook secrets and integration credentials. A secret
// that does not open is named by its record, never shown.
func (c *checker) secrets(ctx context.Context) error {
	fp := c.m.Fingerprint()
	recorded, err := c.r.Setting(ctx, store.SettingMasterKeyFingerprint)
	if err != nil {
		return err
	}
	if recorded != "" && recorded != fp {
		c.problem(CheckMasterKey, "setting", store.SettingMasterKeyFingerprint,
			"the database records master key %s, the key given is %s", recorded, fp)
	}
	if err := c.openAll(ctx); err != nil {
		return err
	}
	n := c.report.Checked
	if sealed := n.ProductKeys + n.WebhookSecrets + n.Integrations; recorded == "" && sealed > 0 {
		c.problem(CheckMasterKey, "setting", store.SettingMasterKeyFingerprint,
			"no master key fingerprint is recorded, yet %d records hold sealed secrets", sealed)
	}
	return nil
}

// openAll opens every sealed secret under the master key.
func (c *checker) openAll(ctx context.Context) error {
	keys := signing.NewKeyring(c.m)
	products, err := c.r.AllProducts(ctx)
	if err != nil {
		return err
	}
	for _, p := range products {
		for _, k := range p.Keys {
			c.report.Checked.ProductKeys++
			if c.sealedElsewhere("product_key", k.ID, k.MasterFingerprint) {
				continue
			}
			if _, err := signing.OpenProductKey(c.m, &k); err != nil {
				c.problem(CheckSealedSecret, "product_key", k.ID, "the signing key of product %s does not open under the master key", p.ID)
			}
		}
	}
	secrets, err := c.r.AllWebhookSecrets(ctx)
	if err != nil {
		return err
	}
	for _, ws := range secrets {
		c.report.Checked.WebhookSecrets++
		if c.sealedElsewhere("webhook_secret", ws.ID, ws.MasterFingerprint) {
			continue
		}
		if _, err := webhooks.OpenSecret(keys, &ws); err != nil {
			c.problem(CheckSealedSecret, "webhook_secret", ws.ID, "the secret of webhook endpoint %s does not open under the master key", ws.EndpointID)
		}
	}
	integrations, err := c.r.AllIntegrations(ctx)
	if err != nil {
		return err
	}
	for _, i := range integrations {
		c.report.Checked.Integrations++
		if c.sealedElsewhere("integration", i.ID, i.MasterFingerprint) {
			continue
		}
		if _, err := providers.OpenAPIKey(keys, &i); err != nil {
			c.problem(CheckSealedSecret, "integration", i.ID, "its API key does not open under the master key")
		}
		if len(i.SealedWebhookSecret) == 0 {
			continue
		}
		if _, err := providers.OpenWebhookSecret(keys, &i); err != nil {
			c.problem(CheckSealedSecret, "integration", i.ID, "its webhook secret does not open under the master key")
		}
	}
	return nil
}

// sealedElsewhere reports, as a problem, a record that names another
// master key than the one given: nothing sealed under it opens here.
func (c *checker) sealedElsewhere(kind, id, fp string) bool {
	if fp == c.m.Fingerprint() {
		return false
	}
	c.problem(CheckSealedSecret, kind, id, "sealed under master key %s, not under the key given (%s)", fp, c.m.Fingerprint())
	return true
}
