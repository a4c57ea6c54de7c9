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

// RotateMasterKey re-encrypts every product key and webhook secret from old
// to next and records next's fingerprint, in one transaction: a key or
// secret that does not open under old changes nothing. recorded is the
// fingerprint the database named when the caller checked old against it
// ("" for none); if another rotation has changed it since, nothing changes
// either. It returns how many keys and secrets it resealed.
func RotateMasterKey(ctx context.Context, st store.Store, recorded string, old, next *MasterKey,
	resealSecret ResealSecretFunc) (int, error) {
	resealed := 0
	err := st.InTx(ctx, func(tx store.Tx) error {
		resealed = 0
		// Locked first: a product key or webhook secret being created
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
			sealed, err := resealSecret(old, next, &ws)
			if err != nil {
				return fmt.Errorf("reseal webhook secret %s: %w", ws.ID, err)
			}
			if err := tx.ResealWebhookSecret(ctx, ws.ID, sealed, next.Fingerprint()); err != nil {
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
