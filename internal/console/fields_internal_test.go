package console

import (
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// Every kind of issue path becomes the form's field and its words: a
// body path, a list item, a query parameter, and the mapping route's path
// parameter, whose name differs from its form field.
func TestFieldIssuesInWords(t *testing.T) {
	for _, tt := range []struct{ path, field, words string }{
		{"/limit_count", "limit_count", "Limit: must be x"},
		{"/event_types/1", "event_types", "Events: must be x"},
		{"query.from", "from", "From: must be x"},
		{"path.providerProductId", "provider_product_id", "Provider product id: must be x"},
		{"/reason", "reason", "Reason: must be x"},
		{"", "", "must be x"},
	} {
		got := fieldIssues([]licentia.Issue{{Path: tt.path, Message: "must be x"}})[0]
		if got.Field != tt.field || got.String() != tt.words {
			t.Errorf("fieldIssues(%q) = %q, %q; want %q, %q", tt.path, got.Field, got.String(), tt.field, tt.words)
		}
	}
}
