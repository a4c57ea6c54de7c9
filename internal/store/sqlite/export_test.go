package sqlite

import "database/sql"

// StatusConns is the number of connections the status reads have open.
func StatusConns(db *DB) int { return len(db.status.made) }

// Writer is the writer's pool, for tests that store what the service
// never writes.
func Writer(db *DB) *sql.DB { return db.write }

// StatusReaders is the number of the status reads' connections.
var StatusReaders = statusReaders
