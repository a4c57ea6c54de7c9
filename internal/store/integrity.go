package store

import "github.com/licentia/licentia/internal/licentia"

// The reads below serve licentia verify, which checks a whole database:
// they walk every organization's rows, so no route calls them.

// CheckedLicence is a licence with the live activations its activation rows
// hold, counted apart from its live_activations counter.
type CheckedLicence struct {
	licentia.Licence
	LiveRows int64
}

// StatsRow is one licence_stats row: an organization's counters of the
// licences of one StatsKey.
type StatsRow struct {
	OrgID string
	StatsKey
	N, Live int64
}

// Kinds of rows whose parent row is missing, for Orphans.
const (
	OrphanLicence    = "licence"    // its product is missing
	OrphanActivation = "activation" // its licence is missing
	OrphanDelivery   = "delivery"   // its event is missing
)

// Orphan is a row whose parent row is missing. Foreign keys keep the
// service from writing one; a database restored or edited without them
// may hold some.
type Orphan struct {
	Kind     string
	ID       string
	ParentID string
}
