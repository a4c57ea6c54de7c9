package store

import "time"

// CustomerFilter selects a page of an organization's customers: the
// distinct emails of its licences, compared case-insensitively.
type CustomerFilter struct {
	// Prefix matches the start of the email, case-insensitively.
	Prefix *string
	// Offset and Limit page over the customers in their order (newest
	// activity first, then email): the console's pages are few and short,
	// so an offset is enough.
	Offset, Limit int
}

// Customer is one email's summary. Email is lower-cased, as the
// licences' email_search column keeps it; anonymised licences have no
// customer.
type Customer struct {
	Email string
	// LastIssuedAt is the newest issued_at of the customer's licences.
	LastIssuedAt time.Time
	Licences     int64
}
