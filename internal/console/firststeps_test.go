package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

var stepItem = regexp.MustCompile(`<li class="(done|todo)">[^<]*<span class="tick"[^>]*>[^<]*</span>\s*<div><strong>([^<]+)</strong>`)

// steps reads the overview's first steps as title → done.
func steps(t *testing.T, c *client) map[string]bool {
	t.Helper()
	a := c.get(t, "/console/")
	wantStatus(t, "overview", a, http.StatusOK)
	out := map[string]bool{}
	for _, m := range stepItem.FindAllStringSubmatch(a.body, -1) {
		out[m[2]] = m[1] == "done"
	}
	return out
}

// TestFirstSteps follows a new organization through its first steps on the
// overview: each is ticked once done, whoever did it; the SDK's when the
// first machine is activated, and still after it is freed; with every step
// done the list is gone.
func TestFirstSteps(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		const product, key, licence, sdk = "Create a product", "Create an API key or connect a payment provider",
			"Issue a first licence", "Add the SDK to your app"
		want := map[string]bool{product: false, key: false, licence: false, sdk: false}
		check := func(when string) {
			t.Helper()
			if got := steps(t, c); len(got) != 4 || got[product] != want[product] || got[key] != want[key] ||
				got[licence] != want[licence] || got[sdk] != want[sdk] {
				t.Errorf("%s: steps = %v, want %v", when, got, want)
			}
		}
		check("new organization")

		e.product(t, e.org.ID, "desk-app", "DESK")
		want[product] = true
		check("after a product")

		if _, _, err := e.admin.CreateAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewAPIKey{
			Name: "backend", Scopes: []licentia.Scope{licentia.ScopeLicencesRead}}); err != nil {
			t.Fatal(err)
		}
		want[key] = true
		check("after an API key")

		l := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		want[licence] = true
		check("after a licence")

		a := e.activate(t, *l.Key, "m-1")
		if _, err := e.admin.DeactivateActivation(t.Context(), licentia.OperatorActor, e.org.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		if got := steps(t, c); len(got) != 0 {
			t.Errorf("every step done, yet the overview lists %v", got)
		}
		if a := c.get(t, "/console/"); strings.Contains(a.body, "Getting started") {
			t.Error("every step done, yet the overview shows Getting started")
		}
	})
}

// TestOverviewChartScale checks that the chart has a scale from 0 to a
// round number above the busiest day, each number drawn, and says its
// totals in words a screen reader reads.
func TestOverviewChartScale(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.owner(t)
	e.product(t, e.org.ID, "desk-app", "DESK")
	for range 7 {
		e.issue(t, e.org.ID, "desk-app", "x@example.com")
	}
	a := c.get(t, "/console/")
	wantStatus(t, "overview", a, http.StatusOK)
	// 7 issued on the busiest day: steps of 2 up to 8.
	for _, want := range []string{
		"on a scale of 0 to 8</title>",
		"In all: 7 licences issued, 0 revoked and 0 machines activated.",
		"licences issued: 7",
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	for _, n := range []string{"0", "2", "4", "6", "8"} {
		if !regexp.MustCompile(`<text class="scale"[^>]*>` + n + `</text>`).MatchString(a.body) {
			t.Errorf("the scale lacks %s", n)
		}
	}
}
