package licentia

import (
	"crypto/ed25519"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Product is one of an organization's applications. Its id and key prefix
// are global and never reused, even after the product is gone.
type Product struct {
	ID                   string
	OrgID                string
	Name                 string
	KeyPrefix            string
	CurrentMajor         int64
	MachinesPerSeat      int64
	LicenceSigningDomain string
	VerdictSigningDomain string
	// HeartbeatIntervalSeconds, when set, is how often the product's
	// applications call the status route; a live activation silent for
	// twice that is freed, and its verdicts are valid no longer.
	HeartbeatIntervalSeconds *int64
	// MachineMatch is the rule by which a new machine id's components
	// rebind a live activation of the same licence.
	MachineMatch MachineMatch
	// TransfersPer30Days is how many times in any 30 days a full licence
	// frees its least recently seen machine for a new one; 0 never.
	TransfersPer30Days int64
	// MaxConcurrent is how many machines of a licence may hold a lease at
	// once; nil turns the count off (leases are still granted).
	MaxConcurrent *int64
	// LeaseTTLSeconds is how long a lease lasts without a renewal.
	LeaseTTLSeconds int64
	// MaxBorrowHours is the longest borrowed lease; 0 turns borrowing off.
	MaxBorrowHours int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Keys is the key history, oldest first: exactly one current key, then
	// previous keys still accepted and retired ones.
	Keys []ProductKey
}

// KeyStatus is where a signing key stands.
type KeyStatus string

// Key statuses.
const (
	KeyCurrent  KeyStatus = "current"
	KeyPrevious KeyStatus = "previous"
	KeyRetired  KeyStatus = "retired"
)

// ProductKey is one Ed25519 signing key of a product. The private part is
// stored only sealed under the master key, with the fingerprint of the
// master key that sealed it.
type ProductKey struct {
	ID                string
	ProductID         string
	PublicKey         ed25519.PublicKey
	Fingerprint       string
	Sealed            []byte
	MasterFingerprint string
	Status            KeyStatus
	CreatedAt         time.Time
	RetiredAt         *time.Time
}

// CurrentKey returns the product's current signing key.
func (p *Product) CurrentKey() *ProductKey {
	for i := range p.Keys {
		if p.Keys[i].Status == KeyCurrent {
			return &p.Keys[i]
		}
	}
	return nil
}

// AcceptedKeys returns the keys that verify licence keys: the current one
// first, then previous ones not retired.
func (p *Product) AcceptedKeys() []ProductKey {
	var out []ProductKey
	if c := p.CurrentKey(); c != nil {
		out = append(out, *c)
	}
	for _, k := range p.Keys {
		if k.Status == KeyPrevious {
			out = append(out, k)
		}
	}
	return out
}

// Product field limits.
const (
	MaxMachinesPerSeat     = 1000
	DefaultMachinesPerSeat = 3
	MinHeartbeatInterval   = 60
	MaxHeartbeatInterval   = 2592000
	MaxMajor               = 65535
	// DailyProductCap is how many products one organization may create in a
	// rolling 24 hours, counted from the product rows so it holds across
	// processes.
	DailyProductCap = 5
)

var (
	productIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	keyPrefixRE = regexp.MustCompile(`^[A-Za-z][A-Za-z2-9]{1,7}$`)
)

// MaxProductID is the longest product id, in characters.
const MaxProductID = 63

// CheckProductID returns why id is not a product id, or "".
func CheckProductID(id string) string {
	if !productIDRE.MatchString(id) {
		return "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen"
	}
	return ""
}

// NormaliseKeyPrefix returns the stored (upper-case) form of a key prefix
// and why it is not one, or "".
func NormaliseKeyPrefix(p string) (string, string) {
	if !keyPrefixRE.MatchString(p) {
		return "", "must be 2 to 8 of A-Z and 2-9, starting with a letter"
	}
	return strings.ToUpper(p), ""
}

// CheckName returns why a product name is not acceptable, or "".
func CheckName(name string) string {
	if n := len([]rune(name)); n < 1 || n > 200 {
		return "must be 1 to 200 characters"
	}
	if HasControl(name) {
		return "must not contain control characters"
	}
	return ""
}

// CheckSigningDomain returns why a signing domain is not acceptable, or "":
// 1 to 200 printable ASCII characters.
func CheckSigningDomain(d string) string {
	if len(d) < 1 || len(d) > 200 || strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return "must be 1 to 200 printable ASCII characters"
	}
	return ""
}

// reservedProductNames may never be product ids or key prefixes: they would
// read as the service's own names in URLs, keys and support conversations.
var reservedProductNames = []string{
	"admin", "administrator", "api", "assets", "auth", "billing", "cdn", "console", "dashboard", "docs",
	"help", "internal", "licentia", "login", "mail", "mcp", "oauth", "root", "security", "staff",
	"static", "status", "support", "system", "v1", "webhook", "webhooks", "www",
}

// IsReservedProductName reports whether s (an id or a key prefix, in any
// case) is reserved.
func IsReservedProductName(s string) bool {
	return slices.Contains(reservedProductNames, strings.ToLower(s))
}
