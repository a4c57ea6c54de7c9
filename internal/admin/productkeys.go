package admin

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// RotateKey is the body of a signing-key rotation.
type RotateKey struct {
	licentia.Decoded
	// KeepPrevious keeps the old key accepted for existing licence keys;
	// true when not given.
	KeepPrevious *bool `json:"keep_previous"`
}

// Validate reports every problem of a rotation.
func (in *RotateKey) Validate() licentia.Issues {
	return append(slices.Clone(in.Before), licentia.CheckFields(in)...)
}

// RotateSigningKey makes a new current key. The old one stays accepted for
// existing licence keys unless keepPrevious is false, when it is retired.
func (s *Service) RotateSigningKey(ctx context.Context, actor licentia.Actor, orgID, id string, in RotateKey) (*ProductView, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	keepPrevious := deref(in.KeepPrevious, true)
	now := s.now()
	var p *licentia.Product
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if p, err = tx.Product(ctx, orgID, id); err != nil {
			return err
		}
		master, err := s.sealingKey(ctx, tx)
		if err != nil {
			return err
		}
		k, err := signing.NewProductKey(master, p.ID, now)
		if err != nil {
			return err
		}
		old := p.CurrentKey()
		status, retiredAt := licentia.KeyPrevious, (*time.Time)(nil)
		if !keepPrevious {
			status, retiredAt = licentia.KeyRetired, &now
		}
		if old != nil {
			if err := tx.SetProductKeyStatus(ctx, p.ID, old.ID, status, retiredAt); err != nil {
				return err
			}
			old.Status, old.RetiredAt = status, retiredAt
		}
		if err := tx.AddProductKey(ctx, k); err != nil {
			return err
		}
		p.Keys = append(p.Keys, *k)
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductSigningKeyRotated, Actor: actor, At: now},
			map[string]any{"product_id": p.ID, "public_key": hex.EncodeToString(k.PublicKey), "keep_previous": keepPrevious})
	})
	if err != nil {
		return nil, fmt.Errorf("rotate signing key: %w", err)
	}
	s.productChanged(ctx)
	return s.view(p), nil
}

// RetireKey is the body of a public-key retirement.
type RetireKey struct {
	licentia.Decoded
	PublicKey *string `json:"public_key" input:"required"`
}

// Validate reports every problem of a retirement: the key is 32 bytes in
// hexadecimal.
func (in *RetireKey) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/public_key", in.PublicKey, func(pub string) string {
		if raw, err := hex.DecodeString(pub); err != nil || len(raw) != 32 {
			return "must be 64 hexadecimal characters"
		}
		return ""
	})
	return is
}

// RetirePublicKey stops a previous key from verifying licence keys. The
// current key cannot be retired (409 conflict); a key the product does not
// accept answers 404 public_key_not_found. Hex is read in either case.
func (s *Service) RetirePublicKey(ctx context.Context, actor licentia.Actor, orgID, id string, in RetireKey) (*ProductView, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(*in.PublicKey)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var p *licentia.Product
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if p, err = tx.Product(ctx, orgID, id); err != nil {
			return err
		}
		var k *licentia.ProductKey
		for i := range p.Keys {
			if string(p.Keys[i].PublicKey) == string(raw) {
				k = &p.Keys[i]
			}
		}
		switch {
		case k == nil || k.Status == licentia.KeyRetired:
			return licentia.Errorf(licentia.CodePublicKeyNotFound, "The product does not accept this public key.")
		case k.Status == licentia.KeyCurrent:
			return licentia.Errorf(licentia.CodeConflict, "The current signing key cannot be retired; rotate it first.")
		}
		if err := tx.SetProductKeyStatus(ctx, p.ID, k.ID, licentia.KeyRetired, &now); err != nil {
			return err
		}
		k.Status, k.RetiredAt = licentia.KeyRetired, &now
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductPublicKeyRetired, Actor: actor, At: now},
			map[string]any{"product_id": p.ID, "public_key": hex.EncodeToString(raw)})
	})
	if err != nil {
		return nil, fmt.Errorf("retire public key: %w", err)
	}
	s.productChanged(ctx)
	return s.view(p), nil
}
