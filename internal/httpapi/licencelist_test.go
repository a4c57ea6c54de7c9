package httpapi_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// listedView is a list item: a licence object with live_machines.
type listedView struct {
	licenceView
	LiveMachines int64 `json:"live_machines"`
}

type listView struct {
	Licences   []listedView `json:"licences"`
	NextCursor *string      `json:"next_cursor"`
}

func (e *licenceEnv) list(t *testing.T, key, query string) listView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/list?" + query, key: key}, wantStatus: http.StatusOK})
	return decodeStrict[listView](t, r.body)
}

func listedIDs(ls []listedView) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// engines runs a test on SQLite and on PostgreSQL.
func engines(t *testing.T, run func(t *testing.T, e *licenceEnv)) {
	t.Run("sqlite", func(t *testing.T) { run(t, newLicenceEnv(t)) })
	t.Run("postgres", func(t *testing.T) { run(t, licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: true}))) })
}

// TestListLicences: every licence newest first with live_machines, each
// filter of the list, and another organization's licences, product, order
// and machine never listed.
func TestListLicences(t *testing.T) {
	engines(t, func(t *testing.T, e *licenceEnv) {
		e.createProduct(t, e.allKey, productBody("desk-two", "DESKB", nil))
		other, _ := e.otherOrg(t, "other", "their-app", "THEIR")
		seed := func(product, email string) *licentia.Licence {
			e.clock.Advance(time.Minute)
			return e.seedIn(t, e.org.ID, product, admin.NewLicence{Email: &email})
		}
		a := seed("desk-app", "ada@example.com")
		b := seed("desk-two", "bob@example.com")
		c := seed("desk-app", "cy@example.com")
		cutoff := e.clock.Now()
		d := seed("desk-app", "dee@example.com")
		e.setProvider(t, e.org.ID, b.ID, licentia.ProviderRefs{OrderID: ptr("pi_123"), OrderNumber: ptr("R-77")})
		e.activate(t, e.org.ID, c.ID, "machine-c")
		e.activate(t, e.org.ID, d.ID, "machine-d")
		e.change(t, d.ID, "revoke", "refund")
		e.clock.Advance(time.Minute)
		theirs := e.seedIn(t, other.ID, "their-app", admin.NewLicence{Email: ptr("ada@example.com")})
		e.setProvider(t, other.ID, theirs.ID, licentia.ProviderRefs{OrderID: ptr("pi_theirs")})
		e.activate(t, other.ID, theirs.ID, "machine-theirs")

		all := e.list(t, e.allKey, "")
		if diff := cmp.Diff([]string{d.ID, c.ID, b.ID, a.ID}, listedIDs(all.Licences)); diff != "" || all.NextCursor != nil {
			t.Errorf("list ids mismatch (-want +got), next_cursor %v:\n%s", all.NextCursor, diff)
		}
		machines := map[string]int64{}
		for _, l := range all.Licences {
			machines[l.ID] = l.LiveMachines
			if diff := cmp.Diff(e.read(t, l.ID).Licence, l.licenceView); diff != "" {
				t.Errorf("listed licence differs from its read (-read +listed):\n%s", diff)
			}
		}
		// d's machine is live but d is revoked: it is no live machine.
		if want := map[string]int64{a.ID: 0, b.ID: 0, c.ID: 1, d.ID: 0}; !cmp.Equal(want, machines) {
			t.Errorf("live_machines = %v, want %v", machines, want)
		}
		for _, tt := range []struct {
			query string
			want  []string
		}{
			{q("order_id", "pi_123"), []string{b.ID}},
			{q("order_id", "R-77"), []string{b.ID}},
			{q("order_id", "pi_theirs"), nil},
			{q("machine_id", "machine-c"), []string{c.ID}},
			{q("machine_id", "machine-theirs"), nil},
			{q("issued_after", licentia.FormatTime(c.IssuedAt)), []string{d.ID, c.ID}},
			{q("issued_before", licentia.FormatTime(c.IssuedAt)), []string{b.ID, a.ID}},
			{q("issued_after", licentia.FormatTime(b.IssuedAt), "issued_before", licentia.FormatTime(cutoff.Add(time.Millisecond))), []string{c.ID, b.ID}},
			{q("product_id", "desk-two"), []string{b.ID}},
			{q("product_id", "their-app"), nil},
			{q("state", "revoked"), []string{d.ID}},
			{q("q", "c"), []string{c.ID}},
			{q("email", "ADA@example.com"), []string{a.ID}},
			{q("source", "provider"), nil},
		} {
			if diff := cmp.Diff(append([]string{}, tt.want...), listedIDs(e.list(t, e.allKey, tt.query).Licences)); diff != "" {
				t.Errorf("list?%s ids mismatch (-want +got):\n%s", tt.query, diff)
			}
		}
	})
}

// TestListPagingWhileIssuing pages by two while other callers issue
// licences concurrently between pages: every licence that existed at the
// first page is listed exactly once, in order, and the cursor works on
// another server sharing the database and the master key.
func TestListPagingWhileIssuing(t *testing.T) {
	engines(t, func(t *testing.T, e *licenceEnv) {
		var existing []string
		for i := range 9 {
			if i%3 != 0 {
				e.clock.Advance(time.Millisecond) // some share an instant
			}
			existing = append([]string{e.seed(t, admin.NewLicence{}).ID}, existing...)
		}
		// Same-instant licences come by id, descending.
		want := e.list(t, e.allKey, q("limit", "200")).Licences
		second := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: e.master})
		seen := map[string]int{}
		var order []string
		query := q("limit", "2")
		for page := 0; ; page++ {
			server := e.testEnv
			if page%2 == 1 {
				server = second
			}
			r := server.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/list?" + query, key: e.allKey}, wantStatus: http.StatusOK})
			got := decodeStrict[listView](t, r.body)
			for _, l := range got.Licences {
				seen[l.ID]++
				order = append(order, l.ID)
			}
			if got.NextCursor == nil {
				break
			}
			query = q("limit", "2", "cursor", *got.NextCursor)
			e.clock.Advance(time.Millisecond)
			e.concurrently(t, 3, func(int) call {
				return call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: issueBody(nil)}
			})
			if page > 20 {
				t.Fatal("paging did not end")
			}
		}
		var listed []string
		for _, id := range order {
			if seen[id] != 1 {
				t.Errorf("licence %s listed %d times, want once", id, seen[id])
			}
			for _, x := range existing {
				if x == id {
					listed = append(listed, id)
				}
			}
		}
		if diff := cmp.Diff(listedIDs(want), listed); diff != "" {
			t.Errorf("existing licences as paged (-want +got):\n%s", diff)
		}
	})
}

// TestListCursorRefused: an edited cursor, another organization's, one
// given with other filters and one made under another master key answer
// 400 at query.cursor.
func TestListCursorRefused(t *testing.T) {
	e := newLicenceEnv(t)
	other, otherKey := e.otherOrg(t, "other", "their-app", "THEIR")
	for range 3 {
		e.clock.Advance(time.Second)
		e.seed(t, admin.NewLicence{})
		e.seedIn(t, other.ID, "their-app", admin.NewLicence{})
	}
	cursor := *e.list(t, e.allKey, q("limit", "1", "state", "active")).NextCursor
	theirs := *e.list(t, otherKey, q("limit", "1", "state", "active")).NextCursor
	edited := []byte(cursor)
	edited[10] ^= 1
	if edited[10] == '_' || edited[10] == '-' {
		edited[10] = 'A'
	}
	elsewhere := newTestEnvWith(t, envOptions{shareStore: e.testEnv})
	const refused = "is not a cursor of this list with these filters: take next_cursor from the previous page, with the same filters"
	for _, tt := range []struct {
		name  string
		env   *testEnv
		query string
	}{
		{"edited", e.testEnv, q("state", "active", "cursor", string(edited))},
		{"another organization's", e.testEnv, q("state", "active", "cursor", theirs)},
		{"other filters", e.testEnv, q("state", "trial", "cursor", cursor)},
		{"filters dropped", e.testEnv, q("cursor", cursor)},
		{"not base64", e.testEnv, q("state", "active", "cursor", "!!!")},
		{"truncated", e.testEnv, q("state", "active", "cursor", cursor[:20])},
		{"another master key", elsewhere, q("state", "active", "cursor", cursor)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.env.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/list?" + tt.query, key: e.allKey},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.cursor", refused)})
		})
	}
	// The limit is no filter: a cursor goes on with another page size.
	if got := e.list(t, e.allKey, q("limit", "5", "state", "active", "cursor", cursor)).Licences; len(got) != 2 {
		t.Errorf("next page with another limit = %d licences, want 2", len(got))
	}
}

// TestListRefused: each value checked, every problem at once, and the
// usual 401 and 403.
func TestListRefused(t *testing.T) {
	e := newLicenceEnv(t)
	for _, tt := range []struct {
		name, query string
		issues      []string
	}{
		{"limit 0", q("limit", "0"), []string{"query.limit", "must be an integer from 1 to 200"}},
		{"limit 201", q("limit", "201"), []string{"query.limit", "must be an integer from 1 to 200"}},
		{"limit past int64", q("limit", "99999999999999999999"), []string{"query.limit", "must be an integer from 1 to 200"}},
		{"limit not an integer", q("limit", "1.5"), []string{"query.limit", "must be an integer"}},
		{"issued_after not a time", q("issued_after", "yesterday"), []string{"query.issued_after", "must be an RFC 3339 time with an offset"}},
		{"empty order_id", q("order_id", ""), []string{"query.order_id", "must be 1 to 200 characters"}},
		{"long machine_id", q("machine_id", strings.Repeat("m", 201)), []string{"query.machine_id", "must be 1 to 200 characters"}},
		{"unknown parameter", q("colour", "red"), []string{"query.colour", "unknown parameter"}},
		{"external_ref without product", q("external_ref", "x"), []string{"query.product_id", "is required with external_ref"}},
		{"every problem at once", q("limit", "0", "state", "x", "order_id", ""), []string{
			"query.state", "must be one of [active trial expired revoked]", "query.order_id", "must be 1 to 200 characters",
			"query.limit", "must be an integer from 1 to 200"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := call{method: "GET", path: "/v1/admin/licences/list?" + tt.query, key: e.allKey, invalid: true}
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
		})
	}
	noScope := e.key(t, e.org.ID, licentia.ScopeProductsRead)
	for _, tt := range []struct{ path, limitIssue string }{
		{"/v1/admin/licences/list", "must be an integer"},
		{"/v1/admin/licences/export", "unknown parameter"}, // an export has no pages
	} {
		e.run(t, scenario{call: call{method: "GET", path: tt.path, invalid: true}, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
		e.run(t, scenario{call: call{method: "GET", path: tt.path, key: noScope}, wantStatus: http.StatusForbidden,
			wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"licences:read"}}})
		issue := []string{"query.limit", tt.limitIssue, "query.order_id", "must be 1 to 200 characters"}
		if tt.limitIssue != "unknown parameter" {
			issue = []string{"query.order_id", "must be 1 to 200 characters", "query.limit", tt.limitIssue}
		}
		e.run(t, scenario{call: call{method: "GET", path: tt.path + "?" + q("limit", "x", "order_id", ""), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(issue...)})
	}
}

// exportOf reads an export's answer: its CSV records, checked for CRLF
// line ends, the content type and the header row.
func (e *licenceEnv) exportOf(t *testing.T, key, query string) (raw string, records [][]string) {
	t.Helper()
	r := e.send(t, call{method: "GET", path: "/v1/admin/licences/export?" + query, key: key})
	if r.status != http.StatusOK {
		t.Fatalf("export status = %d, want 200; body %s", r.status, r.body)
	}
	if got := r.header.Get("Content-Type"); got != "text/csv; charset=utf-8" {
		t.Errorf("export Content-Type = %q, want text/csv; charset=utf-8", got)
	}
	raw = string(r.body)
	header := "id,product_id,email,state,status,limit_kind,limit_count,live_machines,issued_at,expires_at,trial_ends_at,source,order_id,external_ref,features\r\n"
	if !strings.HasPrefix(raw, header) || !strings.HasSuffix(raw, "\r\n") {
		t.Errorf("export = %q..., want the header row and CRLF line ends", raw[:min(len(raw), 200)])
	}
	records, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v", err)
	}
	return raw, records[1:]
}

// TestExportLicences: one row a licence in the list's order, cells as
// the API writes them, formula cells made text, quotes, commas and
// non-ASCII text kept, no licence key, another organization's licences
// never exported, and more than one page read.
func TestExportLicences(t *testing.T) {
	engines(t, func(t *testing.T, e *licenceEnv) {
		other, _ := e.otherOrg(t, "other", "their-app", "THEIR")
		e.seedIn(t, other.ID, "their-app", admin.NewLicence{Email: ptr("theirs@example.com")})
		e.clock.Advance(time.Minute)
		formula := e.seed(t, admin.NewLicence{Email: ptr(`=HYPERLINK("x,y")@example.com`), ExternalRef: ptr("@SUM(1)")})
		e.clock.Advance(time.Minute)
		exp := e.clock.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		zoe := e.seed(t, admin.NewLicence{Email: ptr("zoë@例え.jp"), ExternalRef: ptr(`say "hi", -1`), ExpiresAt: ptr(mustTime(t, exp))})
		e.setProvider(t, e.org.ID, zoe.ID, licentia.ProviderRefs{OrderID: ptr("+pi_1"), CheckoutID: ptr("cs_1")})
		e.activate(t, e.org.ID, zoe.ID, "machine-z")
		keys := []string{*e.read(t, formula.ID).LicenceKey, *e.read(t, zoe.ID).LicenceKey}

		raw, rows := e.exportOf(t, e.allKey, "")
		for _, k := range keys {
			if strings.Contains(raw, k[5:]) {
				t.Errorf("export holds a licence key")
			}
		}
		if strings.Contains(raw, "theirs@example.com") {
			t.Errorf("export holds another organization's licence")
		}
		z := e.read(t, zoe.ID).Licence
		want := [][]string{
			{zoe.ID, "desk-app", "zoë@例え.jp", "active", "active", z.LimitKind, "1", "1", z.IssuedAt, *z.ExpiresAt, "", "admin", "'+pi_1", `say "hi", -1`, ""},
			{formula.ID, "desk-app", `'=HYPERLINK("x,y")@example.com`, "active", "active", z.LimitKind, "1", "0", licentia.FormatTime(formula.IssuedAt), "", "", "admin", "", "'@SUM(1)", ""},
		}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("export rows mismatch (-want +got):\n%s", diff)
		}
		if _, rows := e.exportOf(t, e.allKey, q("order_id", "cs_1")); len(rows) != 1 || rows[0][0] != zoe.ID {
			t.Errorf("export?order_id=cs_1 = %v, want zoe's licence only", rows)
		}
		if _, rows := e.exportOf(t, e.allKey, q("state", "revoked")); len(rows) != 0 {
			t.Errorf("export?state=revoked = %d rows, want the header alone", len(rows))
		}

		// More than a page: every licence once, newest first.
		for range admin.ExportPage + 1 {
			e.clock.Advance(time.Millisecond)
			e.seed(t, admin.NewLicence{})
		}
		listed := e.list(t, e.allKey, q("limit", "200")).Licences
		_, rows = e.exportOf(t, e.allKey, "")
		if len(rows) != admin.ExportPage+3 {
			t.Fatalf("export = %d rows, want %d", len(rows), admin.ExportPage+3)
		}
		for i, l := range listed {
			if rows[i][0] != l.ID {
				t.Fatalf("export row %d = %s, want %s as listed", i, rows[i][0], l.ID)
			}
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r[0]] {
				t.Errorf("licence %s exported twice", r[0])
			}
			seen[r[0]] = true
		}
	})
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
