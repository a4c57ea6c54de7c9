package cli

import (
	"errors"
	"strings"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// holdDatabase holds the lock file of serve's SQLite database, shared with
// the other serve processes on it, and returns the function that lets it
// go. While serve holds it, migrate-data refuses to move the database,
// since the writes serve acknowledged after the copy began would be lost;
// while migrate-data holds it, serve does not start. PostgreSQL needs
// none: migrate-data moves only SQLite databases.
func holdDatabase(cfg config.Config) (func() error, error) {
	path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:")
	if !ok {
		return func() error { return nil }, nil
	}
	lock, err := sqlite.LockShared(path, "serve")
	if inUse, ok := errors.AsType[*sqlite.InUseError](err); ok {
		return nil, licentia.Errorf(licentia.CodeDatabaseInUse, "The SQLite database %s is in use by %s, which moves it. "+
			"Start serve once it is done, on the database it moved to (LICENTIA_DATABASE_URL).", path, inUse.Who())
	}
	if err != nil {
		return nil, err
	}
	return lock.Close, nil
}
