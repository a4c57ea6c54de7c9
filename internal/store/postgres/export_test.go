package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store"
)

// Exec runs sql in a transaction of this engine, for tests that need a
// statement no store.Tx method makes.
func Exec(ctx context.Context, t store.Tx, sql string) error {
	_, err := t.(*tx).tx.Exec(ctx, sql)
	return err
}

// MigrationLock is migrationLock, for the test of migrations in several
// schemas at once.
var MigrationLock = migrationLock

// TxAttempts is how many times InTx runs a transaction at most.
const TxAttempts = txAttempts

// SinceSQL is sinceSQL, for the plan tests.
var SinceSQL = sinceSQL

// PendingDeliveriesSQL is pendingDeliveriesSQL, for the plan tests.
const PendingDeliveriesSQL = pendingDeliveriesSQL

// LeasesSQL is leasesSQL, for the plan tests.
const LeasesSQL = leasesSQL

// Setting reads a setting of the session of one of db's connections; with
// pool_max_conns=1, of the connection every statement ran on.
func Setting(ctx context.Context, db *DB, name string) (string, error) {
	var v string
	err := db.pool.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v)
	return v, err
}

// OpenTraced is Open with tracer on every connection.
func OpenTraced(ctx context.Context, url string, tracer pgx.QueryTracer) (*DB, error) {
	return open(ctx, url, tracer)
}

// StatusInFlight is statusInFlight, for the status reads' tests.
const StatusInFlight = statusInFlight

// StatusWaiting is how many status reads of db wait for a group.
func StatusWaiting(db *DB) int { return db.status.group.Waiting() }

// LicenceWithSeatQuery is licenceWithSeatQuery, for the tracers of the
// status reads' tests.
var LicenceWithSeatQuery = licenceWithSeatQuery

// StatusBatchQueries are statusBatchQueries, by size, for the plan and
// tracing tests.
var StatusBatchQueries = statusBatchQueries
