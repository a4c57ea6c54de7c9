package licentia

// Codes of operator mistakes on the command line: a file, a directory or a
// master key that the command or its configuration names and that is not
// there; and of the state of the database's storage that a command meets
// (a database in use by another process, a full disk). Each has a code of
// its own and a message saying what to do, so an operator who mistyped a
// path is not sent to the logs by internal_error. No HTTP route answers
// them, so they are not in Codes, which the OpenAPI document lists;
// docs/errors.md lists them under "Operator commands".
const (
	// CodeMasterKeyNotFound: no file at the master key's path
	// (LICENTIA_MASTER_KEY_FILE, or master.key in the data directory).
	CodeMasterKeyNotFound Code = "master_key_not_found"
	// CodeMasterKeyInvalid: the master key's file is there but cannot be
	// read, or does not hold a key of 32 bytes.
	CodeMasterKeyInvalid Code = "master_key_invalid"
	// CodeFileNotFound: a file named by a flag (--from, --api-key-file,
	// --webhook-secret-file, --new-key-file) or by LICENTIA_PLANS_FILE
	// does not exist.
	CodeFileNotFound Code = "file_not_found"
	// CodeDirectoryNotFound: the directory a file is to be written in
	// (backup --to) does not exist.
	CodeDirectoryNotFound Code = "directory_not_found"
	// CodeDatabaseNotFound: the configured SQLite database does not exist
	// where a command only reads it (backup).
	CodeDatabaseNotFound Code = "database_not_found"
	// CodeDatabaseInUse: the SQLite database is held by another process (a
	// serve while migrate-data would move it, or migrate-data while serve
	// would start), or changed while migrate-data copied it.
	CodeDatabaseInUse Code = "database_in_use"
	// CodeDiskFull: opening or migrating the SQLite database failed, and
	// the disk holding it has no room left.
	CodeDiskFull Code = "disk_full"
)

// OperatorCodes lists the codes of operator mistakes.
var OperatorCodes = []Code{
	CodeMasterKeyNotFound, CodeMasterKeyInvalid, CodeFileNotFound, CodeDirectoryNotFound, CodeDatabaseNotFound,
	CodeDatabaseInUse, CodeDiskFull,
}
