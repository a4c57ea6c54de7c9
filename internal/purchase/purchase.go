// Package purchase serves the customer's purchase lookup: the licence keys
// of a payment provider's order, found by the buyer's email address and the
// order id or number, or a licence's purchase found by the email address and
// the licence key. Like activation it needs no API key; knowing both is the
// credential, so every mismatch answers alike.
package purchase

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// Service runs the purchase lookup.
type Service struct {
	store store.Reader
	clock clock.Clock
	keys  *signing.Keyring
	cat   *signing.Catalogue
}

// Options are the dependencies of a Service.
type Options struct {
	Store store.Reader
	Clock clock.Clock
	Keys  *signing.Keyring
	// Catalogue verifies the licence keys a lookup by key is given, as the
	// activation routes do.
	Catalogue *signing.Catalogue
}

// New returns a Service.
func New(o Options) *Service {
	return &Service{store: o.Store, clock: o.Clock, keys: o.Keys, cat: o.Catalogue}
}

// MaxOrderID is the longest order id, in characters.
const MaxOrderID = 200

// CheckOrderID returns why id is not an order id, or "": 1 to 200 bytes of
// printable ASCII (0x20 to 0x7E), matched exactly as sent.
func CheckOrderID(id string) string {
	if len(id) < 1 || len(id) > MaxOrderID || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return "must be 1 to 200 printable ASCII characters"
	}
	return ""
}

// Lookup is the body of a lookup: the buyer's email address and either the
// order id (or number) from the receipt or a licence key.
type Lookup struct {
	licentia.Decoded
	Email      *string `json:"email" input:"required"`
	OrderID    *string `json:"order_id"`
	LicenceKey *string `json:"licence_key"`
}

// Validate reports every problem of a lookup's body.
func (in *Lookup) Validate() licentia.Issues {
	return check(licentia.CheckFields(in), in.Before, "", "/", in.Email, in.OrderID, in.LicenceKey)
}

// LookupQuery is a lookup given in the query string, the link a maker puts
// in receipts and success pages.
type LookupQuery struct {
	licentia.Decoded
	Email      *string `query:"email" input:"required"`
	OrderID    *string `query:"order_id"`
	LicenceKey *string `query:"licence_key"`
}

// Validate reports every problem of a lookup's query.
func (in *LookupQuery) Validate() licentia.Issues {
	return check(licentia.CheckFields(in), in.Before, "query", "query.", in.Email, in.OrderID, in.LicenceKey)
}

// check adds the rules of the email, the order id and the licence key, at
// their paths (prefix and the field's name), to what was found before and
// what the fields say of themselves: exactly one of order_id and
// licence_key, reported at whole. The issues never quote a value: a
// validation failure may be logged.
func check(fields, before licentia.Issues, whole, prefix string, email, orderID, key *string) licentia.Issues {
	emailPath, orderPath, keyPath := prefix+"email", prefix+"order_id", prefix+"licence_key"
	is := slices.Clone(before)
	is = append(is, fields.Of(emailPath)...)
	is.CheckString(emailPath, email, licentia.CheckEmail)
	is = append(is, fields.Of(orderPath)...)
	is.CheckString(orderPath, orderID, CheckOrderID)
	is = append(is, fields.Of(keyPath)...)
	is.CheckString(keyPath, key, activation.CheckLicenceKey)
	if given(fields, orderPath, orderID) == given(fields, keyPath, key) {
		is.Add(whole, "give exactly one of order_id and licence_key")
	}
	return is
}

// given reports whether a field was sent: read, or refused for its type.
func given(fields licentia.Issues, path string, v *string) bool {
	return v != nil || len(fields.Of(path)) > 0
}

// Purchase is an order's licences the buyer may see. OrderID is the order
// id or number looked up, or, for a lookup by key, the licence's provider
// order id (nil when it has none, as a licence issued by the maker).
type Purchase struct {
	OrderID  *string
	Licences []Licence
}

// Licence is one licence of a purchase with what the buyer needs of it.
type Licence struct {
	Licence     licentia.Licence
	ProductName string
	Key         string
	State       licentia.State
}

// Lookup finds a purchase from a lookup's body.
func (s *Service) Lookup(ctx context.Context, in Lookup) (*Purchase, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	return s.lookup(ctx, *in.Email, in.OrderID, in.LicenceKey)
}

// LookupQuery finds a purchase from a lookup's query string.
func (s *Service) LookupQuery(ctx context.Context, in LookupQuery) (*Purchase, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	return s.lookup(ctx, *in.Email, in.OrderID, in.LicenceKey)
}

// lookup finds a purchase by order or by key, whichever was given.
func (s *Service) lookup(ctx context.Context, email string, orderID, key *string) (*Purchase, error) {
	if key != nil {
		return s.findByKey(ctx, email, *key)
	}
	return s.find(ctx, email, *orderID)
}

// errNotFound is the one answer to every mismatch: an unknown order or key,
// another email address, an order whose licences were all anonymised or
// reissued. The answer must not tell which, or the lookup would confirm
// order ids, keys and addresses to whoever guesses them.
func errNotFound() error {
	return licentia.Errorf(licentia.CodePurchaseNotFound, "No purchase matches this email address and order id or licence key.")
}

// sameEmail compares two addresses in constant time, as SHA-256 digests of
// their lower-case forms, so the comparison's time depends neither on
// where they differ nor on their lengths.
func sameEmail(want [sha256.Size]byte, email string) bool {
	got := sha256.Sum256([]byte(strings.ToLower(email)))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

// find reads the order's licences in every organization with one query,
// whatever the mismatch will be, and compares the email address with each
// row's in constant time, row by row to the end: a mismatch of the order
// and one of the address cost the same statements and the same work per
// row. Neither value is put into an error: errors reach the log.
func (s *Service) find(ctx context.Context, email, orderID string) (*Purchase, error) {
	ls, err := s.store.PurchaseLicences(ctx, orderID)
	if err != nil {
		return nil, fmt.Errorf("look up purchase: %w", err)
	}
	want := sha256.Sum256([]byte(strings.ToLower(email)))
	var mine []licentia.Licence
	for _, l := range ls {
		if sameEmail(want, l.Email) {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return nil, errNotFound()
	}
	return s.purchase(ctx, &orderID, mine)
}

// purchase shows the licences found, each with its product's name, its key
// and its state now.
func (s *Service) purchase(ctx context.Context, orderID *string, ls []licentia.Licence) (*Purchase, error) {
	now := s.clock.Now().UTC()
	p := &Purchase{OrderID: orderID, Licences: make([]Licence, 0, len(ls))}
	products := map[string]*licentia.Product{}
	for _, l := range ls {
		pr, err := s.product(ctx, products, &l)
		if err != nil {
			return nil, err
		}
		key, err := s.deriveKey(pr, l.ID)
		if err != nil {
			return nil, err
		}
		p.Licences = append(p.Licences, Licence{Licence: l, ProductName: pr.Name, Key: key, State: l.DerivedState(now)})
	}
	return p, nil
}

// product reads a licence's product once per lookup.
func (s *Service) product(ctx context.Context, seen map[string]*licentia.Product, l *licentia.Licence) (*licentia.Product, error) {
	if p, ok := seen[l.ProductID]; ok {
		return p, nil
	}
	p, err := s.store.Product(ctx, l.OrgID, l.ProductID)
	if err != nil {
		return nil, fmt.Errorf("look up purchase: read product %s: %w", l.ProductID, err)
	}
	seen[l.ProductID] = p
	return p, nil
}

// deriveKey signs a licence's key under the product's current signing key,
// as every route that shows a key does; a product that cannot sign answers
// 503 product_unavailable.
func (s *Service) deriveKey(p *licentia.Product, licenceID string) (string, error) {
	priv, err := s.keys.CurrentPrivate(p)
	if err != nil {
		return "", err
	}
	return sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
}

// Machines lists the machines holding a seat on a licence the buyer found
// by a lookup, oldest first. It is read only after a match, so it tells a
// guesser nothing a lookup does not.
func (s *Service) Machines(ctx context.Context, l *Licence) ([]licentia.Activation, error) {
	acts, err := s.store.Activations(ctx, l.Licence.OrgID, l.Licence.ID)
	if err != nil {
		return nil, fmt.Errorf("purchase machines: %w", err)
	}
	live := acts[:0]
	for _, a := range acts {
		if a.IsLive() {
			live = append(live, a)
		}
	}
	return live, nil
}
