package admin

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// ProductView is a product with whether it can sign now.
type ProductView struct {
	Product *licentia.Product
	// SigningKeyStatus is "ok" or "unavailable".
	SigningKeyStatus string
}

func (s *Service) view(p *licentia.Product) *ProductView {
	return &ProductView{Product: p, SigningKeyStatus: s.keys.Status(p)}
}

// Products lists the caller's products, oldest first.
func (s *Service) Products(ctx context.Context, orgID string) ([]*ProductView, error) {
	ps, err := s.store.Products(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]*ProductView, len(ps))
	for i := range ps {
		out[i] = s.view(&ps[i])
	}
	return out, nil
}

// Product reads one of the caller's products; another organization's
// answers product_not_found like a missing one.
func (s *Service) Product(ctx context.Context, orgID, id string) (*ProductView, error) {
	p, err := s.store.Product(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return s.view(p), nil
}

// NewProduct is what creates a product; nil fields were not given.
type NewProduct struct {
	licentia.Decoded
	ID                   *string `json:"id" input:"required"`
	Name                 *string `json:"name" input:"required"`
	KeyPrefix            *string `json:"key_prefix" input:"required"`
	CurrentMajor         *int64  `json:"current_major" input:"required,min=1,max=65535"`
	MachinesPerSeat      *int64  `json:"machines_per_seat" input:"min=1,max=1000"`
	LicenceSigningDomain *string `json:"licence_signing_domain"`
	VerdictSigningDomain *string `json:"verdict_signing_domain"`
	// HeartbeatIntervalSeconds turns heartbeat leases on; null or absent
	// leaves them off.
	HeartbeatIntervalSeconds *int64 `json:"heartbeat_interval_seconds" input:"nullable,min=60,max=2592000"`
	// MachineMatch is exact (the default), two, most or any.
	MachineMatch *string `json:"machine_match"`
	// TransfersPer30Days defaults to 0, no transfers.
	TransfersPer30Days *int64 `json:"transfers_per_30_days" input:"min=0,max=100"`
	// MaxConcurrent limits the machines of a licence in use at once; null
	// or absent leaves the count off.
	MaxConcurrent   *int64 `json:"max_concurrent" input:"nullable,min=1,max=100000"`
	LeaseTTLSeconds *int64 `json:"lease_ttl_seconds" input:"min=60,max=86400"`
	// MaxBorrowHours defaults to 0, borrowing off.
	MaxBorrowHours *int64 `json:"max_borrow_hours" input:"min=0,max=720"`
}

// Validate reports every problem of a new product: first each field's own,
// then the rules, each on a field that has no problem yet.
func (in *NewProduct) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	var rules licentia.Issues
	rules.CheckString("/id", in.ID, licentia.CheckProductID)
	rules.CheckString("/name", in.Name, licentia.CheckName)
	rules.CheckString("/key_prefix", in.KeyPrefix, func(p string) string { _, msg := licentia.NormaliseKeyPrefix(p); return msg })
	rules.CheckString("/licence_signing_domain", in.LicenceSigningDomain, licentia.CheckSigningDomain)
	rules.CheckString("/verdict_signing_domain", in.VerdictSigningDomain, licentia.CheckSigningDomain)
	rules.CheckString("/machine_match", in.MachineMatch, licentia.CheckMachineMatch)
	is.Merge(rules)
	return is
}

// CreateProduct creates a product with a new signing key, in the contract's
// order of checks: 400, 409 (taken, reserved, used before), 402 plan, 429
// daily cap, 503 signing keys.
func (s *Service) CreateProduct(ctx context.Context, actor licentia.Actor, orgID string, in NewProduct) (*ProductView, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	prefix, _ := licentia.NormaliseKeyPrefix(*in.KeyPrefix)
	p := &licentia.Product{
		ID: *in.ID, OrgID: orgID, Name: *in.Name, KeyPrefix: prefix, CurrentMajor: *in.CurrentMajor,
		MachinesPerSeat:          deref(in.MachinesPerSeat, licentia.DefaultMachinesPerSeat),
		LicenceSigningDomain:     deref(in.LicenceSigningDomain, ""),
		VerdictSigningDomain:     deref(in.VerdictSigningDomain, ""),
		HeartbeatIntervalSeconds: in.HeartbeatIntervalSeconds,
		MachineMatch:             licentia.MachineMatch(deref(in.MachineMatch, string(licentia.MatchExact))),
		TransfersPer30Days:       deref(in.TransfersPer30Days, 0),
		MaxConcurrent:            in.MaxConcurrent,
		LeaseTTLSeconds:          deref(in.LeaseTTLSeconds, licentia.DefaultLeaseTTLSeconds),
		MaxBorrowHours:           deref(in.MaxBorrowHours, 0),
		CreatedAt:                now, UpdatedAt: now,
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		org, err := lockOrganization(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := checkProductNames(ctx, tx, p); err != nil {
			return err
		}
		if err := s.checkPlan(ctx, tx, org, resourceProducts, now); err != nil {
			return err
		}
		if err := checkDailyProductCap(ctx, tx, orgID, now); err != nil {
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
		p.Keys = []licentia.ProductKey{*k}
		if err := tx.CreateProduct(ctx, p); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductCreated, Actor: actor, At: now},
			map[string]any{"product_id": p.ID, "key_prefix": p.KeyPrefix, "public_key": hex.EncodeToString(k.PublicKey)})
	})
	if err != nil {
		return nil, dependencyDown(fmt.Errorf("create product: %w", err))
	}
	s.productChanged(ctx)
	return s.view(p), nil
}

// checkProductNames refuses reserved words (409 product_reserved), names
// another product holds (409 conflict, never naming the holder) and names
// used before (409 product_reserved): ids and prefixes are global.
func checkProductNames(ctx context.Context, tx store.Tx, p *licentia.Product) error {
	for _, f := range []struct {
		field store.ProductField
		value string
	}{{store.FieldID, p.ID}, {store.FieldKeyPrefix, p.KeyPrefix}} {
		if licentia.IsReservedProductName(f.value) {
			return reserved(f.field, "is reserved")
		}
		use, err := tx.ProductNameUse(ctx, f.field, f.value)
		if err != nil {
			return err
		}
		switch use {
		case store.NameTaken:
			return licentia.Errorf(licentia.CodeConflict, "The product %s is taken.", strings.ReplaceAll(string(f.field), "_", " "))
		case store.NameUsedBefore:
			return reserved(f.field, "was used before and is never reused")
		}
	}
	return nil
}

func reserved(field store.ProductField, why string) error {
	return &licentia.Error{
		Code:    licentia.CodeProductReserved,
		Message: fmt.Sprintf("The product %s %s.", strings.ReplaceAll(string(field), "_", " "), why),
		Details: map[string]any{"field": string(field)},
	}
}

// checkDailyProductCap applies the daily cap on product creation, counted
// from the product rows so it holds across processes. The cap's 429 carries
// no Retry-After.
//
// The cap counts products created in the 24 hours before now: one created
// exactly 24 hours ago has left the window. CountProducts counts from since
// on, and times are kept to the millisecond, so since is 24 hours less 1 ms
// ago.
func checkDailyProductCap(ctx context.Context, tx store.Tx, orgID string, now time.Time) error {
	_, recent, err := tx.CountProducts(ctx, orgID, now.Add(-24*time.Hour+time.Millisecond))
	if err != nil {
		return err
	}
	if recent >= licentia.DailyProductCap {
		return licentia.Errorf(licentia.CodeRateLimited, "At most %d products may be created in 24 hours.", licentia.DailyProductCap)
	}
	return nil
}

// dependencyDown turns a failure without a contract code (the database
// gone, say) into 503 service_unavailable, as the contract asks of product
// creation.
func dependencyDown(err error) error {
	if _, ok := errors.AsType[*licentia.Error](err); ok {
		return err
	}
	return &licentia.Error{Code: licentia.CodeServiceUnavailable, Message: "A dependency is unavailable; retry later.", Err: err}
}

// ProductPatch changes a product; nil fields stay.
type ProductPatch struct {
	licentia.Decoded
	Name            *string `json:"name"`
	CurrentMajor    *int64  `json:"current_major" input:"min=1,max=65535"`
	MachinesPerSeat *int64  `json:"machines_per_seat" input:"min=1,max=1000"`
	// HeartbeatIntervalSeconds sets the interval; null turns heartbeat
	// leases off.
	HeartbeatIntervalSeconds *int64  `json:"heartbeat_interval_seconds" input:"nullable,min=60,max=2592000"`
	MachineMatch             *string `json:"machine_match"`
	TransfersPer30Days       *int64  `json:"transfers_per_30_days" input:"min=0,max=100"`
	// MaxConcurrent sets the limit; null turns the count off.
	MaxConcurrent   *int64 `json:"max_concurrent" input:"nullable,min=1,max=100000"`
	LeaseTTLSeconds *int64 `json:"lease_ttl_seconds" input:"min=60,max=86400"`
	MaxBorrowHours  *int64 `json:"max_borrow_hours" input:"min=0,max=720"`
}

// concurrentPath is max_concurrent's path, as Decoded.Null records it.
const concurrentPath = "/max_concurrent"

// changesLeases reports whether the patch gives any lease setting.
func (in *ProductPatch) changesLeases() bool {
	return in.MaxConcurrent != nil || in.Null[concurrentPath] || in.LeaseTTLSeconds != nil || in.MaxBorrowHours != nil
}

// heartbeatPath is the interval's path, as Decoded.Null records it.
const heartbeatPath = "/heartbeat_interval_seconds"

// Validate reports every problem of a patch; at least one field is needed.
// A field that was sent but could not be read counts as given: it is
// already an issue of its own.
func (in *ProductPatch) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	if in.Name == nil && in.CurrentMajor == nil && in.MachinesPerSeat == nil && in.HeartbeatIntervalSeconds == nil &&
		!in.Null[heartbeatPath] && in.MachineMatch == nil && in.TransfersPer30Days == nil && !in.changesLeases() && len(in.Unread) == 0 {
		is.Add("", "give at least one of name, current_major, machines_per_seat, heartbeat_interval_seconds, machine_match, transfers_per_30_days, "+
			"max_concurrent, lease_ttl_seconds, max_borrow_hours")
	}
	var rules licentia.Issues
	rules.CheckString("/name", in.Name, licentia.CheckName)
	rules.CheckString("/machine_match", in.MachineMatch, licentia.CheckMachineMatch)
	is.Merge(rules)
	return is
}

// UpdateProduct applies a patch. Lowering machines_per_seat evicts nobody.
func (s *Service) UpdateProduct(ctx context.Context, actor licentia.Actor, orgID, id string, in ProductPatch) (*ProductView, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var p *licentia.Product
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if p, err = tx.Product(ctx, orgID, id); err != nil {
			return err
		}
		changes := map[string]any{}
		if in.Name != nil && *in.Name != p.Name {
			p.Name, changes["name"] = *in.Name, *in.Name
		}
		if in.CurrentMajor != nil && *in.CurrentMajor != p.CurrentMajor {
			p.CurrentMajor, changes["current_major"] = *in.CurrentMajor, *in.CurrentMajor
		}
		if in.MachinesPerSeat != nil && *in.MachinesPerSeat != p.MachinesPerSeat {
			p.MachinesPerSeat, changes["machines_per_seat"] = *in.MachinesPerSeat, *in.MachinesPerSeat
		}
		switch hb := in.HeartbeatIntervalSeconds; {
		case hb != nil && (p.HeartbeatIntervalSeconds == nil || *hb != *p.HeartbeatIntervalSeconds):
			p.HeartbeatIntervalSeconds, changes["heartbeat_interval_seconds"] = hb, *hb
		case hb == nil && in.Null[heartbeatPath] && p.HeartbeatIntervalSeconds != nil:
			p.HeartbeatIntervalSeconds, changes["heartbeat_interval_seconds"] = nil, nil
		}
		if in.MachineMatch != nil && licentia.MachineMatch(*in.MachineMatch) != p.MachineMatch {
			p.MachineMatch, changes["machine_match"] = licentia.MachineMatch(*in.MachineMatch), *in.MachineMatch
		}
		if in.TransfersPer30Days != nil && *in.TransfersPer30Days != p.TransfersPer30Days {
			p.TransfersPer30Days, changes["transfers_per_30_days"] = *in.TransfersPer30Days, *in.TransfersPer30Days
		}
		applyLeaseSettings(p, in, changes)
		if len(changes) == 0 {
			return nil
		}
		p.UpdatedAt = now
		if err := tx.UpdateProduct(ctx, p); err != nil {
			return err
		}
		changes["product_id"] = p.ID
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditProductUpdated, Actor: actor, At: now}, changes)
	})
	if err != nil {
		return nil, fmt.Errorf("update product: %w", err)
	}
	s.productChanged(ctx)
	return s.view(p), nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// sealingKey returns the master key to seal new secrets under: the one the
// database records, so a process follows a master-key rotation. The record
// stays locked until tx ends, so a rotation either ran before (and this
// seals under the new key) or waits for tx (and reseals what it wrote).
func (s *Service) sealingKey(ctx context.Context, tx store.Tx) (*signing.MasterKey, error) {
	recorded, err := tx.LockSetting(ctx, store.SettingMasterKeyFingerprint, false)
	if err != nil {
		return nil, err
	}
	return s.keys.SealingKey(recorded)
}

// applyLeaseSettings applies the patch's lease settings to p and records
// each change.
func applyLeaseSettings(p *licentia.Product, in ProductPatch, changes map[string]any) {
	if (in.MaxConcurrent != nil || in.Null[concurrentPath]) && !equalCounts(in.MaxConcurrent, p.MaxConcurrent) {
		p.MaxConcurrent, changes["max_concurrent"] = in.MaxConcurrent, in.MaxConcurrent
	}
	if in.LeaseTTLSeconds != nil && *in.LeaseTTLSeconds != p.LeaseTTLSeconds {
		p.LeaseTTLSeconds, changes["lease_ttl_seconds"] = *in.LeaseTTLSeconds, *in.LeaseTTLSeconds
	}
	if in.MaxBorrowHours != nil && *in.MaxBorrowHours != p.MaxBorrowHours {
		p.MaxBorrowHours, changes["max_borrow_hours"] = *in.MaxBorrowHours, *in.MaxBorrowHours
	}
}
