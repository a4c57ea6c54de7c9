package sdk

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameTheModule holds docs/sdk.md to the module an application
// requires: its example go.mod requires the module of ../go.mod, shows the
// replace directive for a checkout, and the import path is the module's
// plus /sdk.
func TestDocsNameTheModule(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("../go.mod has no module line")
	}
	module := string(m[1])
	doc, err := os.ReadFile("../docs/sdk.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nrequire " + module + " v",
		"\n// replace " + module + " => ",
		`"` + module + `/sdk"`,
		"go get " + module + "@v",
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/sdk.md does not show %q", strings.TrimSpace(want))
		}
	}
}
