package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// fill returns a JSON object of the fields head and then as many entries
// made by entry(i) as fit in web.MaxBody bytes, padded to exactly that.
func fill(head string, entry func(i int) string) string {
	var b strings.Builder
	b.WriteString("{" + head)
	for i := 0; ; i++ {
		e := entry(i)
		if b.Len()+len(e)+4 > web.MaxBody {
			break
		}
		b.WriteString(e)
	}
	return paddedBody(strings.TrimSuffix(b.String(), ",")+"}}", web.MaxBody)
}

// TestWorstBodies: bodies of the largest size the routes read, made of
// what the decoders like least, answer one short list of issues each and
// change nothing: thousands of bad components, eight components whose
// hashes fill the body, a lease id and a machine id as long as the body.
func TestWorstBodies(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, map[string]any{"max_concurrent": 1})
	issued := e.issue(t, e.allKey, issueBody(nil))
	key := issued.LicenceKey
	head := fmt.Sprintf(`"licence_key":%q,"machine_id":"m1","label":"l","os":"o","app_version":"v","components":{`, key)
	many := fill(head, func(i int) string { return fmt.Sprintf(`"Bad Name %d":"zz",`, i) })
	long := strings.Repeat("A", (web.MaxBody-len(head)-200)/8)
	eight := fill(head, func(i int) string {
		if i >= 8 {
			return strings.Repeat("x", web.MaxBody)
		}
		return fmt.Sprintf(`"part_%d":"%s",`, i, long)
	})
	hashMsg := "must be 64 lower-case hexadecimal characters"
	var eightIssues []string
	for i := range 8 {
		eightIssues = append(eightIssues, fmt.Sprintf("/components/part_%d", i), hashMsg)
	}
	for _, tt := range []struct {
		name    string
		c       call
		details map[string]any
	}{
		{"thousands of bad components", activateCall(many), issues("/components", "must have 1 to 8 components")},
		{"eight hashes filling the body", activateCall(eight), issues(eightIssues...)},
		{"a lease id as long as the body", call{method: "POST", path: "/v1/leases/renew",
			body: paddedBody(fmt.Sprintf(`{"licence_key":%q,"machine_id":"m1","lease_id":"%s"}`, key, strings.Repeat("f", web.MaxBody-len(key)-60)), web.MaxBody)},
			issues("/lease_id", "must be a UUID")},
		{"a machine id as long as the body", call{method: "POST", path: "/v1/leases",
			body: paddedBody(fmt.Sprintf(`{"licence_key":%q,"machine_id":"%s","borrow_hours":1e300}`, key, strings.Repeat("m", web.MaxBody-len(key)-80)), web.MaxBody)},
			issues("/machine_id", "must be 1 to 128 of A-Z a-z 0-9 . _ : -", "/borrow_hours", "must be an integer")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if b, ok := tt.c.body.(string); !ok || len(b) != web.MaxBody {
				t.Fatalf("body of %d bytes, want %d", len(tt.c.body.(string)), web.MaxBody)
			}
			tt.c.invalid = true
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)
			e.run(t, scenario{call: tt.c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.details})
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
		})
	}
}
