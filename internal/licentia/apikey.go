package licentia

import "time"

// APIKey is an administration key's stored record. The key itself is never
// stored: only its prefix and a SHA-256 hash of the whole key.
type APIKey struct {
	ID        string
	OrgID     string
	Name      string
	Prefix    string
	Hash      []byte
	Scopes    []Scope
	ExpiresAt *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// IsLive reports whether the key is neither revoked nor expired at now.
func (k *APIKey) IsLive(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}
