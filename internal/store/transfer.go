package store

import "time"

// Transfer records a live activation freed for a new machine on a full
// licence.
type Transfer struct {
	ID           string
	OrgID        string
	LicenceID    string
	ActivationID string
	At           time.Time
}
