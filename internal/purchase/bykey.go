package purchase

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// noLicence is the id read when a key names no licence: no licence has it
// (ids are random version 4 or 7 UUIDs), so the read finds nothing, as for
// a genuine key of a licence the service does not know.
const noLicence = "00000000-0000-0000-0000-000000000000"

// findByKey finds the purchase of the licence a whole pasted key names,
// issued through a provider or by the maker. The key is read as the
// activation routes read it (any case, dashes or not, surrounding
// whitespace; signed by a current or previous key of its product). Every
// mismatch costs the same: a key that does not verify still reads a
// licence (one that does not exist), and the address is compared in
// constant time with whatever was read. A licence anonymised, or whose key
// was reissued, is never found: its replacement's key finds the purchase,
// never the old one, which may be the leaked one.
func (s *Service) findByKey(ctx context.Context, email, key string) (*Purchase, error) {
	id, productID := noLicence, ""
	p, licenceID, err := s.cat.VerifyLicenceKey(ctx, key)
	switch code := licentia.ErrorCode(err); {
	case err == nil:
		id, productID = licenceID, p.ID
	case code != licentia.CodeLicenceKeyInvalid && code != licentia.CodeLicenceWrongProduct:
		return nil, fmt.Errorf("look up purchase by key: %w", err)
	}
	l, err := s.store.LicenceByID(ctx, id)
	if err != nil && licentia.ErrorCode(err) != licentia.CodeLicenceNotFound {
		return nil, fmt.Errorf("look up purchase by key: %w", err)
	}
	var stored licentia.Licence
	if l != nil {
		stored = *l
	}
	match := sameEmail(sha256.Sum256([]byte(strings.ToLower(email))), stored.Email)
	if !match || l == nil || l.ProductID != productID || l.AnonymisedAt != nil || l.ReplacedBy != nil {
		return nil, errNotFound()
	}
	return s.purchase(ctx, l.Provider.OrderID, []licentia.Licence{*l})
}
