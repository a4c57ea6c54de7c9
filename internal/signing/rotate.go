package signing

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// ResealSecretFunc re-encrypts a webhook secret from one master key to
// another. The webhooks package owns how its secrets are bound to their
// endpoint (and imports this one), so rotation is given its function.
type ResealSecretFunc func(from, to *MasterKey, s *licentia.WebhookSecret) ([]byte, error)

// ResealIntegrationFunc re-encrypts an integration's API key and webhook
// secret from one master key to another; the providers package owns how
// they are bound to their integration.
type ResealIntegrationFunc func(from, to *MasterKey, i *licentia.Integration) (apiKey, webhookSecret []byte, err error)

// Resealers re-encrypt the secrets that other packages seal.
type Resealers struct {
	WebhookSecret ResealSecretFunc
	Integration   ResealIntegrationFunc
}

// RotateMasterKey re-encrypts every product key, webhook secret and
// integration's credentials (disconnected integrations' too) from old to
// next and records next's fingerprint, in one transaction: a key or secret
// that does not open under old changes nothing. recorded is the
// fingerprint the database named when the caller checked old against it
// ("" for none); if another rotation has changed it since, nothing changes
// either. It returns how many keys, secrets and integrations it resealed.
func RotateMasterKey(ctx context.Context, st store.Store, recorded string, old, next *MasterKey, r Resealers) (int, error) {
	resealed := 0
	err := st.InTx(ctx, func(tx store.Tx) error {
		resealed = 0
		// Locked first: a product key, webhook secret or integration being created
		// meanwhile is either in what is read below or waits, then
		// seals under the new key.
		current, err := tx.LockSetting(ctx, store.SettingMasterKeyFingerprint, true)
		if err != nil {
			return err
		}
		if current != recorded {
			return fmt.Errorf("the database's master key changed to %s meanwhile", current)
		}
		products, err := tx.AllProducts(ctx)
		if err != nil {
			return err
		}
		for _, p := range products {
			for _, k := range p.Keys {
				sealed, err := Reseal(old, next, &k)
				if err != nil {
					return err
				}
				if err := tx.ResealProductKey(ctx, k.ID, sealed, next.Fingerprint()); err != nil {
					return err
				}
				resealed++
			}
		}
		secrets, err := tx.AllWebhookSecrets(ctx)
		if err != nil {
			return err
		}
		for _, ws := range secrets {
			sealed, err := r.WebhookSecret(old, next, &ws)
			if err != nil {
				return fmt.Errorf("reseal webhook secret %s: %w", ws.ID, err)
			}
			if err := tx.ResealWebhookSecret(ctx, ws.ID, sealed, next.Fingerprint()); err != nil {
				return err
			}
			resealed++
		}
		integrations, err := tx.AllIntegrations(ctx)
		if err != nil {
			return err
		}
		for _, i := range integrations {
			apiKey, webhookSecret, err := r.Integration(old, next, &i)
			if err != nil {
				return fmt.Errorf("reseal integration %s: %w", i.ID, err)
			}
			if err := tx.ResealIntegration(ctx, i.ID, apiKey, webhookSecret, next.Fingerprint()); err != nil {
				return err
			}
			resealed++
		}
		return tx.SetSetting(ctx, store.SettingMasterKeyFingerprint, next.Fingerprint())
	})
	if err != nil {
		return 0, err
	}
	return resealed, nil
}
