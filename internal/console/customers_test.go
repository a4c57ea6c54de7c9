package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var customerHeading = regexp.MustCompile(`<section class="card customer">\s*<h2>([^<]+)</h2>`)

// customerEmails lists the customers of a Customers page, in order.
func customerEmails(body string) []string {
	var out []string
	for _, m := range customerHeading.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// customerCard is the part of a Customers page about email.
func customerCard(t *testing.T, body, email string) string {
	t.Helper()
	i := strings.Index(body, "<h2>"+email+"</h2>")
	if i < 0 {
		t.Fatalf("no card of %s:\n%s", email, body)
	}
	card := body[i:]
	if j := strings.Index(card, "</section>"); j >= 0 {
		card = card[:j]
	}
	return card
}

// The Customers view groups licences by email whatever its case, newest
// activity first, with each customer's licences (machines as "1 of 6",
// linked), orders, live machines (label first, id shortened) and the
// portal link; it pages, searches by the start of an email, says what to
// do when empty, and never shows another organization's licences.
func TestCustomers(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		empty := c.get(t, "/console/customers")
		wantStatus(t, "empty customers", empty, http.StatusOK)
		if !strings.Contains(empty.body, "No customers yet.") || !strings.Contains(empty.body, `href="/console/customers" aria-current="page">Customers</a>`) {
			t.Errorf("empty Customers page lacks what to do, or the current navigation link:\n%s", empty.body)
		}

		e.product(t, e.org.ID, "desk-app", "DESK")
		e.product(t, e.org.ID, "desk-two", "DESKB")
		other := e.otherOrg(t)
		e.product(t, other.ID, "beta-app", "BETA")
		first := e.issue(t, e.org.ID, "desk-app", "Alice@Example.com")
		e.activate(t, *first.Key, "machine-alice-0123456789")
		e.setProviderOrder(t, first.Licence.ID, "pi_alice_1")
		for i := range 22 {
			e.clock.Advance(time.Second)
			e.issue(t, e.org.ID, "desk-app", "buyer"+string(rune('a'+i))+"@example.com")
		}
		e.clock.Advance(time.Second)
		second := e.issue(t, e.org.ID, "desk-two", "alice@example.com")
		e.setProviderOrder(t, second.Licence.ID, "pi_alice_2")
		// Another organization's newer licence, to the same address.
		e.clock.Advance(time.Second)
		e.issue(t, other.ID, "beta-app", "alice@example.com")
		e.issue(t, other.ID, "beta-app", "zz-beta@example.com")

		page := c.get(t, "/console/customers")
		wantStatus(t, "customers", page, http.StatusOK)
		got := customerEmails(page.body)
		if len(got) != 20 || got[0] != "alice@example.com" || got[1] != "buyerv@example.com" || got[19] != "buyerd@example.com" {
			t.Fatalf("first page = %d customers %v, want 20, alice (newest licence) first, then the buyers newest first", len(got), got)
		}
		card := customerCard(t, page.body, "alice@example.com")
		for _, want := range []string{
			`href="/console/licences/` + first.Licence.ID + `"`, `href="/console/licences/` + second.Licence.ID + `"`,
			`<td data-label="Machines">1 of 6</td>`, `<td data-label="Machines">0 of 6</td>`,
			`<code class="order">pi_alice_2</code>`, `<code class="order">pi_alice_1</code>`,
			`<strong>Laptop machine-alice-0123456789</strong>`,
		} {
			if !strings.Contains(card, want) {
				t.Errorf("alice's card lacks %s:\n%s", want, card)
			}
		}
		if strings.Contains(card, ">machine-alice-0123456789<") {
			t.Errorf("alice's machine id is shown whole, want it shortened:\n%s", card)
		}
		if strings.Index(card, first.Licence.ID) < strings.Index(card, second.Licence.ID) {
			t.Errorf("alice's licences are not newest first:\n%s", card)
		}
		if !strings.Contains(page.body, `href="/portal/acme/"`) || strings.Contains(page.body, "zz-beta@example.com") || strings.Contains(page.body, "beta-app") {
			t.Errorf("customers page lacks the portal link, or shows another organization's licences:\n%s", page.body)
		}
		next := regexp.MustCompile(`<a href="(/console/customers\?page=1)">Older customers</a>`).FindStringSubmatch(page.body)
		if next == nil {
			t.Fatalf("first page has no link to older customers:\n%s", page.body)
		}
		older := c.get(t, next[1])
		if got := customerEmails(older.body); len(got) != 3 || got[0] != "buyerc@example.com" || got[2] != "buyera@example.com" {
			t.Errorf("second page = %v, want the 3 oldest buyers", got)
		}
		if !strings.Contains(older.body, `<a href="/console/customers">Newer customers</a>`) {
			t.Errorf("second page has no link back")
		}

		search := c.get(t, "/console/customers?q=ALI")
		if got := customerEmails(search.body); len(got) != 1 || got[0] != "alice@example.com" {
			t.Errorf("search ALI = %v, want alice only", got)
		}
		none := c.get(t, "/console/customers?q=nobody")
		if got := customerEmails(none.body); len(got) != 0 || !strings.Contains(none.body, "No customer") {
			t.Errorf("search nobody = %v, want none and a way back", got)
		}
		for _, q := range []string{"?page=-3", "?page=x", "?page=999", "?q=" + strings.Repeat("é", 4000)} {
			if a := c.get(t, "/console/customers"+q); a.status != http.StatusOK {
				t.Errorf("customers%s = %d, want 200", q[:min(len(q), 12)], a.status)
			}
		}
	})
}
