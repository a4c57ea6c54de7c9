package mcpserver_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// seedLicences stores n licences of desk in one transaction, a
// millisecond apart: fast enough for a cut export.
func (e *env) seedLicences(t *testing.T, n int) {
	t.Helper()
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		for i := range n {
			at := start.Add(-time.Duration(i) * time.Millisecond)
			l := &licentia.Licence{ID: licentia.NewID(), OrgID: e.org.ID, ProductID: "desk", Email: "buyer@example.com", IssuedAt: at,
				LimitKind: licentia.LimitMachines, LimitCount: 1, Major: 1, Status: licentia.StatusActive, Source: licentia.SourceAdmin,
				CreatedAt: at, UpdatedAt: at}
			if err := tx.CreateLicence(t.Context(), l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed licences: %v", err)
	}
}

// TestListAndExportTools: list_licences answers as its route, a page and
// the next through its cursor; export_licences gives the route's CSV as
// text, whole up to 10,000 rows, then cut after 10,000 saying so.
func TestListAndExportTools(t *testing.T) {
	e := newEnv(t, nil)
	e.fixtures(t)
	tok := e.token(t, "owner@acme.example")
	cs := e.session(t, tok)
	e.seedLicences(t, 3)

	first := sameAsAPI(t, e, cs, tok, "list_licences", map[string]any{"limit": 2, "state": "active"}, "GET",
		"/v1/admin/licences/list?limit=2&state=active", nil)
	cursor, _ := field(t, first.structured, "next_cursor").(string)
	if cursor == "" {
		t.Fatalf("list_licences next_cursor = %v, want one", field(t, first.structured, "next_cursor"))
	}
	sameAsAPI(t, e, cs, tok, "list_licences", map[string]any{"limit": 2, "state": "active", "cursor": cursor}, "GET",
		"/v1/admin/licences/list?limit=2&state=active&cursor="+cursor, nil)

	whole := call(t, cs, "export_licences", map[string]any{"state": "active"})
	api := e.api(t, "GET", "/v1/admin/licences/export?state=active", tok, nil)
	if whole.isError || whole.text != string(api.body)+"\r\n" && whole.text != string(api.body) {
		t.Errorf("export_licences = %q, want the route's CSV %q", whole.text, api.body)
	}
	if strings.Contains(whole.text, "Cut at") {
		t.Errorf("export_licences of 3 licences says it was cut")
	}

	e.seedLicences(t, 10_000)
	cut := call(t, cs, "export_licences", nil)
	csvText, note, ok := strings.Cut(cut.text, "\nCut at 10000 rows")
	if !ok || cut.isError {
		t.Fatalf("export_licences of 10,003+ licences ends %q, want the cut note", cut.text[max(0, len(cut.text)-200):])
	}
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil || len(rows) != 10_001 {
		t.Errorf("cut export = %d lines, %v, want the header and 10,000 rows", len(rows), err)
	}
	if !strings.Contains(note, "Narrow the filters") {
		t.Errorf("cut note = %q, want it to say how to export the rest", note)
	}
}
