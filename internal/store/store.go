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
// but a lease's renewal runs in InTx, so a change, its audit entry and its
// event commit together or not at all.
type Store interface {
	Reader
	// InTx runs fn in one transaction, committed when fn returns nil and
	// rolled back otherwise. An engine may run fn again, in a new
	// transaction, when the database ended the first as a deadlock victim
	// or a serialization failure: fn sets everything it hands out afresh
	// on each run.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// RenewLease reads the licence licenceID (licence_not_found when there
	// is none) and, when it is of product productID and neither revoked
	// nor expired at now, moves the end of its lease leaseID, in use at now
	// and held by machineID's live activation, to until unless it already
	// ends later. lease is nil when nothing was renewed: no such lease in
	// use, or a licence that may not hold one.
	//
	// It is the one change outside InTx: one statement, its own
	// transaction, because a renewal changes no count, writes no audit
	// entry and no event, and is the write a fleet in floating use makes
	// most often. On PostgreSQL its commit does not wait for the WAL flush
	// (docs/floating.md, "Durability of a renewal").
	RenewLease(ctx context.Context, productID, licenceID, machineID, leaseID string, now, until time.Time) (l *licentia.Licence, lease *FloatingLease, err error)
	// Ping reports whether the database answers; on SQLite, whether its
	// disk has room for writes too.
	Ping(ctx context.Context) error
	// Snapshot runs fn with reads that all see the database as of one
	// instant, without blocking writers, so that a check made of many reads
	// (a counter and the rows it counts) holds while the service runs.
	Snapshot(ctx context.Context, fn func(r Reader) error) error
	Close() error
}

// Setting names.
const (
	SettingMasterKeyFingerprint = "master_key_fingerprint"
	// SettingSweepWatermark is the time up to which licence expiries have
	// been moved to their lapsed counters, in Unix milliseconds.
	SettingSweepWatermark = "licence_sweep_watermark"
)

// NotFound returns the not-found error of a record kind.
func NotFound(code licentia.Code, what string) error {
	return licentia.Errorf(code, "%s not found.", what)
}
