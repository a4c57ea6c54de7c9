package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/store"
)

// A time before 1970 or after the year 9999, in any form that takes one
// (issue, change, API key), is refused next to its field with the API's
// message and writes nothing; the last day of 9999 is taken.
func TestFormTimeRange(t *testing.T) {
	const outOfRange = `<span class="field-error">Expires: must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z</span>`
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		c := e.owner(t)
		a := c.post(t, "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"}, "expires_at": {"9999-12-31"}})
		m := licencePath.FindStringSubmatch(a.location())
		if m == nil {
			t.Fatalf("issue until 9999-12-31 = %d to %q, want 303 to the licence:\n%s", a.status, a.location(), a.body)
		}
		id := m[1]
		for _, at := range []string{"1969-12-31", "1970-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00"} {
			t.Run(at, func(t *testing.T) {
				for _, f := range []struct {
					name, path string
					form       url.Values
				}{
					{"issue", "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"bob@example.com"}, "expires_at": {at}}},
					{"change", "/console/licences/" + id + "/change", url.Values{"expires_at": {at}}},
					{"API key", "/console/api-keys", url.Values{"name": {"deploy"}, "scopes": {"licences:read"}, "expires_at": {at}}},
				} {
					a := c.post(t, f.path, f.form)
					wantStatus(t, f.name, a, http.StatusBadRequest)
					if !strings.Contains(a.body, outOfRange) {
						t.Errorf("%s until %s: the form does not show the range next to the field:\n%s", f.name, at, a.body)
					}
				}
			})
		}
		ls, err := e.store.FindLicences(t.Context(), e.org.ID, store.LicenceFilter{Limit: 10}, e.clock.Now())
		if err != nil || len(ls) != 1 || ls[0].ExpiresAt == nil || ls[0].ExpiresAt.Year() != 9999 {
			t.Errorf("licences after the refusals = %+v, %v; want the one until 9999", ls, err)
		}
		if ks, err := e.store.APIKeys(t.Context(), e.org.ID); err != nil || len(ks) != 0 {
			t.Errorf("API keys after the refusals = %d, %v; want none", len(ks), err)
		}
	})
}
