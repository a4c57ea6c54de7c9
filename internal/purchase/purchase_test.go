package purchase_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
)

// TestCheckOrderID holds order ids to 1 to 200 bytes of printable ASCII,
// 0x20 to 0x7E, at both ends of each range.
func TestCheckOrderID(t *testing.T) {
	for _, tt := range []struct {
		name string
		id   string
		ok   bool
	}{
		{"one character", "1", true},
		{"200 characters", strings.Repeat("a", 200), true},
		{"space and tilde", " pi_1 ~", true},
		{"empty", "", false},
		{"201 characters", strings.Repeat("a", 201), false},
		{"control character", "pi\x1f1", false},
		{"DEL", "pi\x7f1", false},
		{"not ASCII", "pi_é", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := purchase.CheckOrderID(tt.id) == ""; got != tt.ok {
				t.Errorf("CheckOrderID(%q) accepted = %v, want %v", tt.id, got, tt.ok)
			}
		})
	}
}

// TestValidate: the body's and the query's issues, at their own paths,
// each field's own first, never quoting a value.
func TestValidate(t *testing.T) {
	bad, long := "not-an-email", strings.Repeat("x", 201)
	body := purchase.Lookup{Email: &bad, OrderID: &long}
	want := licentia.Issues{
		{Path: "/email", Message: "must contain exactly one @"},
		{Path: "/order_id", Message: "must be 1 to 200 printable ASCII characters"},
	}
	if diff := cmp.Diff(want, body.Validate()); diff != "" {
		t.Errorf("Lookup.Validate() mismatch (-want +got):\n%s", diff)
	}
	query := purchase.LookupQuery{}
	want = licentia.Issues{
		{Path: "query.email", Message: "is required"},
		{Path: "query", Message: "give exactly one of order_id and licence_key"},
	}
	if diff := cmp.Diff(want, query.Validate()); diff != "" {
		t.Errorf("LookupQuery.Validate() mismatch (-want +got):\n%s", diff)
	}
	good, id, key := "buyer@example.com", "pi_1", "DESK_1"
	if is := (&purchase.Lookup{Email: &good, OrderID: &id}).Validate(); len(is) != 0 {
		t.Errorf("Lookup.Validate() = %v, want no issues", is)
	}
	if is := (&purchase.Lookup{Email: &good, LicenceKey: &key}).Validate(); len(is) != 0 {
		t.Errorf("Lookup.Validate(licence key) = %v, want no issues", is)
	}
	both := purchase.Lookup{Email: &good, OrderID: &id, LicenceKey: &key}
	if diff := cmp.Diff(licentia.Issues{{Path: "", Message: "give exactly one of order_id and licence_key"}}, both.Validate()); diff != "" {
		t.Errorf("Lookup.Validate(both) mismatch (-want +got):\n%s", diff)
	}
}
