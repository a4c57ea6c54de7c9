package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

var rowEmail = regexp.MustCompile(`<td data-label="Email"><a href="/console/licences/[0-9a-f-]{36}">([^<]+)</a>`)

// rows lists the emails of a Licences page's rows, in order.
func rows(body string) []string {
	var out []string
	for _, m := range rowEmail.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// The Licences page is a list: newest first with no search, machines as
// used of allowed, filters, a search that finds an order or a machine id,
// a page link that goes on, the current filter's CSV, and empty states
// that say what to do; another organization's licences never show.
func TestLicencesList(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		empty := c.get(t, "/console/licences")
		wantStatus(t, "empty list", empty, http.StatusOK)
		if !strings.Contains(empty.body, "No licences yet. Issue one below") {
			t.Errorf("empty list lacks what to do:\n%s", empty.body)
		}
		e.product(t, e.org.ID, "desk-app", "DESK")
		e.product(t, e.org.ID, "desk-two", "DESKB")
		other := e.otherOrg(t)
		e.product(t, other.ID, "beta-app", "BETA")
		e.issue(t, other.ID, "beta-app", "beta@example.com")
		var emails []string
		for i := range 52 {
			e.clock.Advance(time.Second)
			email := "buyer" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "@example.com"
			e.issue(t, e.org.ID, "desk-app", email)
			emails = append([]string{email}, emails...)
		}
		e.clock.Advance(time.Second)
		two := e.issue(t, e.org.ID, "desk-two", "zed@example.com")
		e.activate(t, *two.Key, "machine-zed")
		e.setProviderOrder(t, two.Licence.ID, "pi_777")

		first := c.get(t, "/console/licences")
		wantStatus(t, "list", first, http.StatusOK)
		got := rows(first.body)
		if len(got) != 50 || got[0] != "zed@example.com" || got[1] != emails[0] {
			t.Fatalf("first page = %d rows starting %v, want 50 newest first", len(got), got[:min(3, len(got))])
		}
		if !strings.Contains(first.body, `<td data-label="Machines">1 of 6</td>`) || strings.Contains(first.body, "beta@example.com") {
			t.Errorf("first page lacks zed's machines as 1 of 6 (2 seats of 3 machines), or shows another organization's licence")
		}
		next := regexp.MustCompile(`<a href="(/console/licences\?cursor=[^"]+)">Older licences</a>`).FindStringSubmatch(first.body)
		if next == nil {
			t.Fatalf("first page has no link to older licences")
		}
		older := c.get(t, strings.ReplaceAll(next[1], "&amp;", "&"))
		if got := rows(older.body); len(got) != 3 || got[2] != emails[51] {
			t.Errorf("second page = %v, want the 3 oldest", got)
		}

		for _, tt := range []struct {
			query   url.Values
			want    []string
			matched string
		}{
			{url.Values{"q": {"pi_777"}}, []string{"zed@example.com"}, "Matched by order id."},
			{url.Values{"q": {"machine-zed"}}, []string{"zed@example.com"}, "Matched by machine id."},
			{url.Values{"q": {*two.Key}}, []string{"zed@example.com"}, ""},
			{url.Values{"q": {"buyeraa"}}, []string{"buyeraa@example.com"}, ""},
			{url.Values{"product_id": {"desk-two"}, "state": {"active"}, "term": {"perpetual"}, "source": {"admin"}}, []string{"zed@example.com"}, ""},
			{url.Values{"product_id": {"beta-app"}}, nil, ""},
		} {
			a := c.get(t, "/console/licences?"+tt.query.Encode())
			wantStatus(t, "filtered list", a, http.StatusOK)
			if got := rows(a.body); strings.Join(got, ",") != strings.Join(tt.want, ",") || !strings.Contains(a.body, tt.matched) {
				t.Errorf("list?%s = %v, want %v and %q", tt.query.Encode(), got, tt.want, tt.matched)
			}
			if tt.want == nil && !strings.Contains(a.body, "No licence matches.") {
				t.Errorf("list?%s lacks the empty state:\n%s", tt.query.Encode(), a.body)
			}
		}

		export := c.get(t, "/console/licences/export?"+url.Values{"q": {"pi_777"}, "by": {"order"}}.Encode())
		wantStatus(t, "export", export, http.StatusOK)
		if ct := export.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("export Content-Type = %q", ct)
		}
		lines := strings.Split(strings.TrimSuffix(export.body, "\r\n"), "\r\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], two.Licence.ID+",desk-two,zed@example.com,active") {
			t.Errorf("export of the order = %q, want its header and zed's row", export.body)
		}
		if strings.Contains(export.body, *two.Key) {
			t.Errorf("export holds a licence key")
		}
		if a := e.client().get(t, "/console/licences/export"); a.status == http.StatusOK {
			t.Errorf("export without a session = %d, want a refusal", a.status)
		}
	})
}

// setProviderOrder sets a licence's provider order id, as a sale would.
func (e *env) setProviderOrder(t *testing.T, id, order string) {
	t.Helper()
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		before, err := tx.LockLicence(t.Context(), e.org.ID, id)
		if err != nil {
			return err
		}
		after := *before
		after.Provider = licentia.ProviderRefs{OrderID: &order}
		return tx.UpdateLicence(t.Context(), &after)
	})
	if err != nil {
		t.Fatal(err)
	}
}
