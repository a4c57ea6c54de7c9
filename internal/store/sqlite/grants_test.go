package sqlite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAssistantTokenReadsByKeys shows that reading a token with its grant,
// done on every request of an AI assistant, searches the two primary keys
// and scans no table.
func TestAssistantTokenReadsByKeys(t *testing.T) {
	db, _ := openWith(t)
	plan := queryPlan(t, db.read, assistantTokenQuery, []byte("hash"))
	want := []string{
		"SEARCH t USING INDEX sqlite_autoindex_assistant_tokens_1 (token_hash=?)",
		"SEARCH g USING INDEX sqlite_autoindex_grants_1 (id=?)",
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("plan mismatch (-want +got):\n%s", diff)
	}
}
