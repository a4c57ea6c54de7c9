package sqlite_test

import (
	"testing"

	"github.com/licentia/licentia/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.OpenSQLite)
}
