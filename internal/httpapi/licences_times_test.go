package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// outOfRange is the issue of a time before 1970 or after the year 9999.
const outOfRange = "must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"

// timeBoundaries are times around both ends of the range a client may send,
// offsets that move a time across an end included. want is the issue's
// message, "" for a time in range; a year past 9999 cannot be written in
// RFC 3339 and is refused as unreadable.
var timeBoundaries = []struct {
	name, at, want string
}{
	{"the millisecond before 1970", "1969-12-31T23:59:59.999Z", outOfRange},
	{"the first instant of 1970", "1970-01-01T00:00:00Z", ""},
	{"1970 by its offset, 1969 in UTC", "1970-01-01T00:30:00+01:00", outOfRange},
	{"1969 by its offset, 1970 in UTC", "1969-12-31T23:30:00-01:00", ""},
	{"year 1 by its offset, year 0 in UTC", "0001-01-01T00:00:00+01:00", outOfRange},
	{"the last second of 9999", "9999-12-31T23:59:59Z", ""},
	{"the last millisecond of 9999", "9999-12-31T23:59:59.999Z", ""},
	{"9999 by its offset, 10000 in UTC", "9999-12-31T23:30:00-01:00", outOfRange},
	{"10000 by its offset, 9999 in UTC", "9999-12-31T22:30:00-01:00", ""},
	{"year 10000", "10000-01-01T00:00:00Z", "must be an RFC 3339 time with an offset"},
}

// wantIssue checks that r is 400 validation_failed with one issue, msg at
// path.
func wantIssue(t *testing.T, r *resp, path, msg string) {
	t.Helper()
	if r.status != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400; body %s", r.status, r.body)
	}
	got := r.apiError(t)
	want := map[string]any{"issues": []any{map[string]any{"path": path, "message": msg}}}
	if got.Code != licentia.CodeValidationFailed {
		t.Errorf("code = %q, want validation_failed", got.Code)
	}
	if diff := cmp.Diff(want, got.Details); diff != "" {
		t.Errorf("details mismatch (-want +got):\n%s", diff)
	}
}

// TestTimeRange: every time a client sends, in a body or a query, is
// refused before 1970 and after the year 9999 with 400 validation_failed
// at its path, and nothing is written; times at the ends are accepted and
// answered as sent, in UTC. On SQLite and PostgreSQL.
func TestTimeRange(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: engine == "postgres"}))
			for _, tt := range timeBoundaries {
				t.Run(tt.name, func(t *testing.T) {
					testPatchTime(t, e, tt.at, tt.want)
					testIssueTime(t, e, tt.at, tt.want)
					testCountsSince(t, e, tt.at, tt.want)
				})
			}
		})
	}
}

// testPatchTime sends at as a PATCH's expires_at.
func testPatchTime(t *testing.T, e *licenceEnv, at, want string) {
	t.Helper()
	id := e.seed(t, admin.NewLicence{}).ID
	before := e.state(t, id)
	r := e.send(t, call{method: "PATCH", path: licencePath(id, ""), key: e.allKey, body: map[string]any{"expires_at": at}, invalid: want != ""})
	if want != "" {
		wantIssue(t, r, "/expires_at", want)
		if diff := cmp.Diff(before, e.state(t, id)); diff != "" {
			t.Errorf("a refused PATCH changed the licence (-before +after):\n%s", diff)
		}
		return
	}
	if r.status != http.StatusOK {
		t.Fatalf("PATCH expires_at %s = %d, want 200; body %s", at, r.status, r.body)
	}
	if got, wantAt := decodeStrict[changeView](t, r.body).Licence.ExpiresAt, utcOf(t, at); got == nil || *got != wantAt {
		t.Errorf("PATCH expires_at %s answered %v, want %s", at, orNil(got), wantAt)
	}
}

// testIssueTime sends at as an issue's expires_at. A time in range but
// past is refused by the issue's own rule.
func testIssueTime(t *testing.T, e *licenceEnv, at, want string) {
	t.Helper()
	n := e.licenceCount(t, e.org.ID)
	r := e.send(t, call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: issueBody(map[string]any{"expires_at": at}),
		invalid: want != ""})
	if want == "" && utcOf(t, at) < licentia.FormatTime(e.clock.Now()) {
		want = "must be in the future"
	}
	if want != "" {
		wantIssue(t, r, "/expires_at", want)
		if got := e.licenceCount(t, e.org.ID); got != n {
			t.Errorf("a refused issue left %d licences, want %d", got, n)
		}
		return
	}
	if r.status != http.StatusCreated {
		t.Fatalf("issue expires_at %s = %d, want 201; body %s", at, r.status, r.body)
	}
	if got, wantAt := decodeStrict[issuedView](t, r.body).Licence.ExpiresAt, utcOf(t, at); got == nil || *got != wantAt {
		t.Errorf("issue expires_at %s answered %v, want %s", at, orNil(got), wantAt)
	}
}

// testCountsSince sends at as the counts' since.
func testCountsSince(t *testing.T, e *licenceEnv, at, want string) {
	t.Helper()
	path := "/v1/admin/licences/counts?since=" + url.QueryEscape(at)
	r := e.send(t, call{method: "GET", path: path, key: e.allKey, invalid: want != ""})
	if want != "" {
		wantIssue(t, r, "query.since", want)
		return
	}
	if r.status != http.StatusOK {
		t.Fatalf("counts since %s = %d, want 200; body %s", at, r.status, r.body)
	}
	if got := decodeStrict[countsView](t, r.body).Since; got != utcOf(t, at) {
		t.Errorf("counts since %s answered since %s, want %s", at, got, utcOf(t, at))
	}
}

// utcOf is an RFC 3339 time as answers write it.
func utcOf(t *testing.T, at string) string {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t.Fatalf("time.Parse(%q) error = %v", at, err)
	}
	return licentia.FormatTime(v)
}
