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
	// LastUsedAt is when the key last authenticated a request, to the
	// minute (see LastUseEvery); nil when never.
	LastUsedAt *time.Time
}

// LastUseEvery is how often a key's or grant's last use is written: a
// use within a minute of the one written changes nothing, so the hot
// path writes at most once a minute per key.
const LastUseEvery = time.Minute

// IsLive reports whether the key is neither revoked nor expired at now.
func (k *APIKey) IsLive(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}
