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
	rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+assistantTokenQuery, []byte("hash"))
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN error = %v", err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SEARCH t USING INDEX sqlite_autoindex_assistant_tokens_1 (token_hash=?)",
		"SEARCH g USING INDEX sqlite_autoindex_grants_1 (id=?)",
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("plan mismatch (-want +got):\n%s", diff)
	}
}
