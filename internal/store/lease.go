package store

// Lease names a live activation of a product with heartbeat leases whose
// lease has run out: not seen for twice its product's interval.
type Lease struct {
	OrgID        string
	LicenceID    string
	ActivationID string
}
