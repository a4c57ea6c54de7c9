package console

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/store"
)

var day = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// sampleVisit is an owner of two organizations.
func sampleVisit(role licentia.Role) *visit {
	m := licentia.Member{ID: licentia.NewID(), OrgID: licentia.NewID(), Email: "owner@example.com", Role: role, CreatedAt: day}
	return &visit{
		Session: &licentia.Session{ID: licentia.NewID()}, Account: &licentia.Account{ID: licentia.NewID(), Email: m.Email},
		Member: &m, OrgName: "Acme", OrgSlug: "acme",
		Orgs: []licentia.Membership{{Member: m, OrgName: "Acme", OrgSlug: "acme"}, {Member: licentia.Member{OrgID: licentia.NewID()}, OrgName: "Other", OrgSlug: "other"}},
	}
}

// samplePages is data for every page, as full as the pages can show.
func samplePages() map[string]any {
	lic := licentia.Licence{ID: licentia.NewID(), ProductID: "desk-app", Email: "ada@example.com", IssuedAt: day,
		ExpiresAt: ptr(day.Add(time.Hour)), LimitKind: licentia.LimitSeats, LimitCount: 2, Major: 1, Status: licentia.StatusActive,
		StatusReason: ptr("paid"), Source: licentia.SourceAdmin, ExternalRef: ptr("ref-1"), LiveActivations: 1}
	act := licentia.Activation{ID: licentia.NewID(), LicenceID: lic.ID, MachineID: "m-1", Label: "Laptop", OS: "linux", AppVersion: "1.0", ActivatedAt: day, LastSeenAt: day}
	old := act
	old.DeactivatedAt = ptr(day)
	prod := &admin.ProductView{Product: &licentia.Product{ID: "desk-app", Name: "Desk", KeyPrefix: "DESK", CurrentMajor: 1, MachinesPerSeat: 1,
		CreatedAt: day, Keys: []licentia.ProductKey{{PublicKey: make([]byte, 32), Status: licentia.KeyCurrent, CreatedAt: day}}}, SigningKeyStatus: "ok"}
	ep := &licentia.WebhookEndpoint{ID: licentia.NewID(), URL: "https://hooks.example.com/x", EventTypes: licentia.EventTypes, Enabled: true, CreatedAt: day}
	days, _ := activity(3)
	return map[string]any{
		"error":    errorPage{Status: 404, Message: "Not found.", Issues: []fieldIssue{{Field: "x", Label: "X", Message: "bad"}}},
		"signin":   signInPage{Next: "/console/", Email: "ada@example.com"},
		"forgot":   forgotPage{Email: "ada@example.com", Sent: true},
		"wait":     waitPage{Seconds: 12, Back: "/console/sign-in"},
		"overview": overviewPage{Plan: "business", Usage: []usageRow{{Name: "products", Used: 1, Limit: 5, Percent: 20}}, Counts: &store.LicenceCounts{All: 3}, Chart: newChart(days), Held: 2},
		"held": heldPage{Orders: []heldView{{Order: licentia.HeldOrder{ID: licentia.NewID(), Provider: "stripe", OrderID: ptr("pi_1"),
			Email: ptr("no address"), Reason: licentia.HeldEmailInvalid, Items: []licentia.HeldItem{{ProviderProductID: "prod_1", Quantity: 1}},
			CreatedAt: day}, Why: heldReasons[licentia.HeldEmailInvalid], Form: "release-1"}}},
		"licences": licencesPage{Products: []*admin.ProductView{prod}, Filtered: true, Rows: []licenceRow{{Licence: lic, State: licentia.StateActive, ProductName: "Desk", Machines: "1 of 3"}},
			Query: url.Values{"q": {"ada"}}, Next: "/console/licences?cursor=x", Matched: "order id", Export: "/console/licences/export?q=ada&by=order"},
		"customers": customersPage{Query: "ada", Portal: "/portal/acme/", Prev: "/console/customers?q=ada", Next: "/console/customers?page=2&q=ada",
			Customers: []customerCard{{Email: "ada@example.com", LastIssuedAt: "2026-01-02", Orders: []string{"pi_1"}, Machines: []licentia.Activation{act},
				Licences: []licenceRow{{Licence: lic, State: licentia.StateActive, ProductName: "Desk", Machines: "1 of 3"}}}}},
		"licence": licencePage{View: &admin.LicenceView{Licence: &lic, Key: ptr("DESK-AAAA"), Activations: []licentia.Activation{act, old}},
			State: licentia.StateActive, ProductName: "Desk", Live: []licentia.Activation{act}, Past: []licentia.Activation{old},
			Allowed: 2, Used: 1, StatusOps: []string{"revoke", "expire"},
			History: []historyRow{{At: day, Action: "licence.issued", What: "Licence issued", Who: "owner@example.com", Sentence: "Issued.", Lines: []detailLine{{"a", "1"}}}}},
		"products": productsPage{Products: []*admin.ProductView{prod}},
		"product":  productPage{View: prod, Keys: []productKey{{PublicKey: "ab", Status: "previous", Created: "x"}}},
		"apikeys": apiKeysPage{Keys: []apiKeyRow{{Key: licentia.APIKey{ID: licentia.NewID(), Name: "ci", Prefix: "lic_x", Scopes: []licentia.Scope{licentia.ScopeLicencesRead}, CreatedAt: day}, Live: true}},
			Created: &createdKey{Name: "ci", Prefix: "lic_x", Secret: "lic_x_secret"}},
		"integrations": integrationsPage{Integrations: []admin.IntegrationView{{Integration: &licentia.Integration{ID: licentia.NewID(), Provider: "stripe", Name: "Shop", CreatedAt: day}}}},
		"integration": integrationPage{View: admin.IntegrationView{Integration: &licentia.Integration{ID: licentia.NewID(), Provider: "stripe", Name: "Shop", CreatedAt: day}, WebhookURL: ptr("https://x/v1/providers/1/webhooks")},
			Mappings: []licentia.Mapping{{ProviderProductID: "prod_1", ProductID: "desk-app", LimitKind: licentia.LimitSeats, LimitCount: 1,
				Features: []string{"pro"}, AddsTo: ptr("desk-app")}}, Products: []*admin.ProductView{prod},
			NewMapping: mappingForm{Name: mappingNew, ID: "mapping-new", Values: url.Values{}, Fields: map[string]string{}, Products: []*admin.ProductView{prod}},
			MappingForms: []mappingForm{{Name: mappingEdit + "prod_1", ID: "mapping-prod_1", Mapping: &licentia.Mapping{ProviderProductID: "prod_1", ProductID: "desk-app"},
				Values: url.Values{"features": {"pro"}, "add_on": {"yes"}}, Fields: map[string]string{"features": "Features: are required"}, Refused: true,
				Products: []*admin.ProductView{prod}, Choices: []mappingChoice{{Code: "pro", Name: "Pro tools", Ticked: true}}}}},
		"webhooks": webhooksPage{Endpoints: []licentia.WebhookEndpoint{*ep}, Created: &createdEndpoint{Endpoint: ep, Secret: "whsec_x"}},
		"webhook": webhookPage{Endpoint: ep, Deliveries: []licentia.Delivery{{ID: licentia.NewID(), EventType: licentia.EventLicenceIssued, Status: licentia.DeliveryFailed, CreatedAt: day, LastStatusCode: ptr(500), FailureReason: ptr("http_status")}},
			Next: ptr("d"), Secret: "whsec_y"},
		"audit": auditPage{Rows: []historyRow{{At: day, Action: "member.added", What: "Member added", Who: "operator", LicenceID: ptr("l"), Lines: []detailLine{{"role", "owner"}}}},
			Next: "/console/audit?before=e", Query: url.Values{"action": {"member.added"}}, Actions: []actionChoice{{"member.added", "Member added"}},
			Actors: []actorChoice{{"member:x", "a@example.com"}}},
		"team": teamPage{Places: 3, Used: 2, Members: []teamMember{{Member: licentia.Member{ID: licentia.NewID(), Email: "a@example.com", Role: licentia.RoleOwner, CreatedAt: day}, Self: true},
			{Member: licentia.Member{ID: licentia.NewID(), Email: "b@example.com", Role: licentia.RoleSupport, CreatedAt: day}, Changeable: true}},
			Invitations: []licentia.Invitation{{ID: licentia.NewID(), Email: "c@example.com", Role: licentia.RoleViewer, CreatedAt: day, ExpiresAt: day}}},
		"link": linkPage{View: &admin.LinkView{Kind: admin.LinkInvitation, OrgName: "Acme", Email: "c@example.com", Role: licentia.RoleViewer, HasPassword: true},
			Action: "/console/join/x", Current: true},
		"assistants": assistantsPage{Grants: []licentia.Grant{{ID: licentia.NewID(), ClientID: "C1", ClientName: "Claude <Desktop>", CreatedAt: day}}},
		"consent": consentPage{Client: "Claude <Desktop>", RedirectHost: "127.0.0.1:33418", Params: url.Values{"client_id": {"C1"}, "state": {`"><x`}},
			Orgs:    []licentia.Membership{{Member: licentia.Member{OrgID: "o1", Role: licentia.RoleAdmin}, OrgName: "Acme"}, {Member: licentia.Member{OrgID: "o2", Role: licentia.RoleViewer}, OrgName: "Other"}},
			Current: licentia.Membership{Member: licentia.Member{OrgID: "o1", Role: licentia.RoleAdmin}, OrgName: "Acme"}},
		"branding": brandingPage{Org: &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Branding: licentia.Branding{
			DisplayName: ptr("Acme <Tools>"), SupportEmail: ptr("help@acme.example"), LogoURL: ptr("https://acme.example/logo.png"),
			Accent: ptr("#0a7cff")}}},
		"purchase": purchasePage{Email: "ada@example.com", OrderID: "o-1", Purchase: &purchase.Purchase{OrderID: new("o-1")},
			Licences: []purchaseLicence{{Licence: lic, ProductName: "Desk", Key: "DESK-AAAA", State: licentia.StateActive, Machines: []licentia.Activation{act}}}},
	}
}

// activity is n days of sample activity, today last.
func activity(n int) ([]admin.DayActivity, error) {
	out := make([]admin.DayActivity, n)
	for i := range out {
		out[i] = admin.DayActivity{Day: day.AddDate(0, 0, i-n+1), Issued: int64(i), Revoked: 1, Activated: int64(2 * i)}
	}
	return out, nil
}

// scripted finds what a strict Content-Security-Policy blocks: scripts,
// inline styles and event handlers.
var scripted = regexp.MustCompile(`<script|style=|javascript:|\son[a-z]+=`)

func testServer(t *testing.T) *Server {
	t.Helper()
	ps, err := parsePages()
	if err != nil {
		t.Fatalf("parsePages() error = %v", err)
	}
	return &Server{pages: ps, log: slog.New(slog.DiscardHandler)}
}

// Every page renders with full data, for every role, and holds no script
// and no inline style, which the Content-Security-Policy would block.
func TestPagesRender(t *testing.T) {
	s := testServer(t)
	data := samplePages()
	for name := range s.pages {
		if _, ok := data[name]; !ok {
			t.Errorf("page %s has no sample data", name)
		}
	}
	for name, d := range data {
		for _, role := range licentia.Roles {
			t.Run(name+"/"+string(role), func(t *testing.T) {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "/console/", nil)
				v := &view{Title: name, Visit: sampleVisit(role), Data: d, Notice: "Done."}
				if err := s.render(w, r, http.StatusOK, name, v); err != nil {
					t.Fatalf("render(%s) error = %v", name, err)
				}
				body, _ := io.ReadAll(w.Result().Body)
				if m := scripted.FindString(strings.ToLower(string(body))); m != "" {
					t.Errorf("page %s holds %q", name, m)
				}
			})
		}
	}
}

// A refused form is shown again with its message, each field's problem and
// what was typed.
func TestRefusedFormShownAgain(t *testing.T) {
	s := testServer(t)
	r := httptest.NewRequest(http.MethodPost, "/console/licences", strings.NewReader("email=nope&limit_count=x"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	var is licentia.Issues
	is.Add("/email", "must be an email address")
	is.Add("/limit_count", "must be a whole number")
	p := refusal("issue", r, is.Err())
	w := httptest.NewRecorder()
	v := &view{Title: "Licences", Visit: sampleVisit(licentia.RoleOwner), Data: samplePages()["licences"], problem: p}
	if err := s.render(w, r, http.StatusOK, "licences", v); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", w.Code)
	}
	body := w.Body.String()
	for _, want := range []string{"Check the fields marked below.", "must be an email address", "must be a whole number", `value="nope"`} {
		if !strings.Contains(body, want) {
			t.Errorf("refused form lacks %q", want)
		}
	}
}

func TestDecodeForm(t *testing.T) {
	vals := url.Values{
		"product_id": {"desk-app"}, "email": {" ada@example.com "}, "limit_count": {"three"}, "major": {"2"},
		"expires_at": {"2026-12-31"}, "trial": {"on"}, "external_ref": {""},
	}
	var in admin.NewLicence
	decodeForm(vals, &in)
	want := admin.NewLicence{ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), Major: ptr[int64](2),
		ExpiresAt: ptr(time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)), Trial: ptr(true)}
	want.Unreadable("/limit_count", "must be a whole number")
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("decodeForm() mismatch (-want +got):\n%s", diff)
	}
	var ep admin.CreateWebhookEndpoint
	decodeForm(url.Values{"url": {"https://x.example"}, "event_types": {"licence.issued", "", "licence.revoked"}}, &ep)
	if diff := cmp.Diff([]licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked}, ep.EventTypes); diff != "" {
		t.Errorf("decodeForm() event types mismatch (-want +got):\n%s", diff)
	}
}

func TestParseFormTime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-12-31T23:59", time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), true},
		{"2026-12-31T10:00:30", time.Date(2026, 12, 31, 10, 0, 30, 0, time.UTC), true},
		{"2026-12-31T10:00:00+02:00", time.Date(2026, 12, 31, 8, 0, 0, 0, time.UTC), true},
		{"2026-12-31", time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), true},
		{"31/12/2026", time.Time{}, false},
	} {
		got, ok := parseFormTime(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("parseFormTime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFieldOf(t *testing.T) {
	for in, want := range map[string]string{"/email": "email", "query.q": "q", "/event_types/2": "event_types", "": "", "scopes": "scopes"} {
		if got := fieldOf(in); got != want {
			t.Errorf("fieldOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/console/licences?q=a":        "/console/licences?q=a",
		"/oauth/authorize?client_id=x": "/oauth/authorize?client_id=x",
		"":                             "/console/",
		"https://evil.example/":        "/console/",
		"//evil.example/console/":      "/console/",
		"/\\evil.example":              "/console/",
		"/v1/admin/licences":           "/console/",
		"javascript:alert(1)":          "/console/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestScaleStep checks that the scale's steps are round and reach the
// busiest day in 4 steps, and that an empty month still has a scale.
func TestScaleStep(t *testing.T) {
	for busiest, want := range map[int64]int64{0: 1, 1: 1, 4: 1, 5: 2, 7: 2, 8: 2, 9: 5, 20: 5, 21: 10, 58: 20, 1000: 500} {
		if got := scaleStep(busiest); got != want || got*scaleSteps < busiest {
			t.Errorf("scaleStep(%d) = %d, want %d", busiest, got, want)
		}
	}
}

func TestChart(t *testing.T) {
	days, _ := activity(30)
	c := newChart(days)
	if len(c.Bars) != 90 {
		t.Fatalf("bars = %d, want 3 a day for 30 days", len(c.Bars))
	}
	// The busiest bar is 58: the scale goes to 80 in steps of 20.
	if c.Max != 80 {
		t.Errorf("Max = %d, want 80, the first round scale above the busiest bar, 58", c.Max)
	}
	if len(c.Scale) != 5 || c.Scale[0].Value != 0 || c.Scale[0].Y != c.Base || c.Scale[4].Value != 80 || c.Scale[4].Y != c.Base-chartHeight {
		t.Errorf("scale = %+v, want 0 to 80 in 5 lines from the base to the top", c.Scale)
	}
	for _, b := range c.Bars {
		if b.Y+b.H != c.Base || b.H < 0 || b.H > chartHeight {
			t.Errorf("bar %+v does not stand on the base %d within the chart", b, c.Base)
		}
	}
	// The tallest bar stands at its value on the scale; a day of 1 still
	// shows.
	last := c.Bars[len(c.Bars)-1]
	if want := 58 * chartHeight / 80; last.H != want {
		t.Errorf("tallest bar height = %d, want %d", last.H, want)
	}
	if c.Bars[1].H == 0 {
		t.Errorf("a bar of 1 has no height")
	}
}
