package admin

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

// TestAppendCell holds the export's cells to RFC 4180 and to the formula
// guard: a cell that a spreadsheet would run reads as text, and a reader
// of the standard gets every value back as written (but for the guard).
func TestAppendCell(t *testing.T) {
	for _, tt := range []struct{ in, raw, back string }{
		{"plain", "plain", "plain"},
		{"", "", ""},
		{"=1+2", "'=1+2", "'=1+2"},
		{"+cmd", "'+cmd", "'+cmd"},
		{"-2", "'-2", "'-2"},
		{"@SUM(A1)", "'@SUM(A1)", "'@SUM(A1)"},
		{"a=b", "a=b", "a=b"},
		{`say "hi"`, `"say ""hi"""`, `say "hi"`},
		{"a,b", `"a,b"`, "a,b"},
		{"two\nlines", "\"two\nlines\"", "two\nlines"},
		// encoding/csv reads a quoted CRLF back as LF; the bytes written
		// keep it.
		{"cr\r\nlf", "\"cr\r\nlf\"", "cr\nlf"},
		{`=HYPERLINK("http://x","y")`, `"'=HYPERLINK(""http://x"",""y"")"`, `'=HYPERLINK("http://x","y")`},
		{"Zoë 日本 🎉", "Zoë 日本 🎉", "Zoë 日本 🎉"},
	} {
		got := string(appendCell(nil, 0, tt.in))
		if got != tt.raw {
			t.Errorf("appendCell(%q) = %q, want %q", tt.in, got, tt.raw)
		}
		rec, err := csv.NewReader(strings.NewReader(got + ",end\r\n")).Read()
		if err != nil || len(rec) != 2 || rec[0] != tt.back {
			t.Errorf("csv.Read(appendCell(%q)) = %q, %v, want %q", tt.in, rec, err, tt.back)
		}
	}
}

// TestLicenceRow checks a row's cells: nulls empty, times as the API
// writes them, order_id the provider's order id, no key anywhere.
func TestLicenceRow(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	exp := now.Add(48 * time.Hour)
	l := licentia.Licence{ID: "0b9a4f4e-1c1d-4f55-9b9f-6f1f3e1a0c01", ProductID: "app", Email: "-bob@example.com",
		IssuedAt: now.Add(-time.Hour), ExpiresAt: &exp, LimitKind: licentia.LimitMachines, LimitCount: 3,
		Status: licentia.StatusActive, Source: licentia.SourceProvider, LiveActivations: 2,
		Provider: licentia.ProviderRefs{OrderID: new("pi_9"), CheckoutID: new("cs_9")}, ExternalRef: new("a,b")}
	got := string(appendLicenceRow(nil, &l, now))
	want := "0b9a4f4e-1c1d-4f55-9b9f-6f1f3e1a0c01,app,'-bob@example.com,active,active,machines,3,2," +
		"2026-05-01T11:00:00.000Z,2026-05-03T12:00:00.000Z,,provider,pi_9,\"a,b\",\r\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appendLicenceRow() mismatch (-want +got):\n%s", diff)
	}
	rec, err := csv.NewReader(strings.NewReader(got)).Read()
	if err != nil || len(rec) != len(ExportColumns) {
		t.Errorf("csv.Read(row) = %d cells, %v, want %d", len(rec), err, len(ExportColumns))
	}
}
