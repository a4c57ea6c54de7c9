// Package store defines how the service keeps its state: the Store and Tx
// interfaces every engine implements, and the helpers engines share. It holds
// no SQL dialect; each engine writes its own.
package store

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Store is the service's state. Reads run outside a transaction; every change
// runs in InTx, so a change, its audit entry and its event commit together or
// not at all.
type Store interface {
	Reader
	// InTx runs fn in one transaction, committed when fn returns nil and
	// rolled back otherwise.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// Reader holds the reads, available both outside and inside a transaction.
// Every read of an organization's data takes its id right after ctx, and
// another organization's row answers exactly like a missing one.
type Reader interface {
	Organization(ctx context.Context, orgID string) (*licentia.Organization, error)
	OrganizationBySlug(ctx context.Context, slug string) (*licentia.Organization, error)
	// APIKeyByPrefix finds a key by its public prefix, in any organization:
	// it is how a caller is identified.
	APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error)
	APIKey(ctx context.Context, orgID, id string) (*licentia.APIKey, error)
	APIKeys(ctx context.Context, orgID string) ([]licentia.APIKey, error)
	// CountLiveAPIKeys counts keys neither revoked nor expired at now.
	CountLiveAPIKeys(ctx context.Context, orgID string, now time.Time) (int64, error)
	// Members lists the team, oldest first.
	Members(ctx context.Context, orgID string) ([]licentia.Member, error)
	// PendingInvitations lists invitations neither accepted, revoked nor
	// expired at now, oldest first.
	PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error)
	// OrganizationAudit lists an organization's audit log, oldest first.
	OrganizationAudit(ctx context.Context, orgID string) ([]licentia.AuditEntry, error)
	// Products lists an organization's products with their key history,
	// oldest first.
	Products(ctx context.Context, orgID string) ([]licentia.Product, error)
	// Product reads one; another organization's answers product_not_found.
	Product(ctx context.Context, orgID, id string) (*licentia.Product, error)
	// AllProducts lists every product of every organization, for the
	// catalogue that verifies licence keys.
	AllProducts(ctx context.Context) ([]licentia.Product, error)
	// CountProducts counts an organization's products, and those created at
	// or after since.
	CountProducts(ctx context.Context, orgID string, since time.Time) (all, createdSince int64, err error)
	// ProductNameUse says whether a product id or key prefix is free, held
	// by a product now (of any organization), or was used before.
	ProductNameUse(ctx context.Context, field ProductField, value string) (NameUse, error)
	// Setting reads a service-wide setting; a missing one is "" and no error.
	Setting(ctx context.Context, name string) (string, error)
}

// Tx is one transaction.
type Tx interface {
	Reader
	// LockOrganization serialises plan checks on one organization until the
	// transaction ends, so of two requests racing for the last place exactly
	// one wins, across processes.
	LockOrganization(ctx context.Context, orgID string) error
	// CreateOrganization answers conflict when the slug is taken.
	CreateOrganization(ctx context.Context, o *licentia.Organization) error
	CreateMember(ctx context.Context, m *licentia.Member) error
	CreateInvitation(ctx context.Context, inv *licentia.Invitation) error
	CreateAPIKey(ctx context.Context, k *licentia.APIKey) error
	// RevokeAPIKey sets revoked_at on a live key and reports whether it changed.
	RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) (bool, error)
	AppendAudit(ctx context.Context, e *licentia.AuditEntry) error
	// CreateProduct writes a product with its keys and records its id and
	// prefix as used forever. A taken id or prefix answers conflict.
	CreateProduct(ctx context.Context, p *licentia.Product) error
	// UpdateProduct writes name, current_major, machines_per_seat and
	// updated_at.
	UpdateProduct(ctx context.Context, p *licentia.Product) error
	AddProductKey(ctx context.Context, k *licentia.ProductKey) error
	// SetProductKeyStatus moves a key to current, previous or retired.
	SetProductKeyStatus(ctx context.Context, productID, keyID string, status licentia.KeyStatus, retiredAt *time.Time) error
	// ResealProductKey replaces a key's sealed private part, for master-key
	// rotation.
	ResealProductKey(ctx context.Context, keyID string, sealed []byte, masterFingerprint string) error
	// DeleteProduct removes a product and its keys; its id and prefix stay
	// used. No route deletes products; operators and tests may.
	DeleteProduct(ctx context.Context, orgID, id string) error
	SetSetting(ctx context.Context, name, value string) error
}

// Setting names.
const (
	SettingMasterKeyFingerprint = "master_key_fingerprint"
)

// NotFound returns the not-found error of a record kind.
func NotFound(code licentia.Code, what string) error {
	return licentia.Errorf(code, "%s not found.", what)
}
