package licentia

// Codes the commands answer about the database's storage. No HTTP route
// answers them, so they are not in Codes, which the API document lists;
// docs/operations.md lists them with what to do.
const (
	// CodeDatabaseInUse: the database is held by another process (a serve
	// while migrate-data would move it, or migrate-data while serve would
	// start), or changed while migrate-data copied it.
	CodeDatabaseInUse Code = "database_in_use"
	// CodeDiskFull: opening or migrating the database failed, and the disk
	// holding it has no room left.
	CodeDiskFull Code = "disk_full"
)
