package httpapi_test

import (
	"testing"

	"github.com/licentia/licentia/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
