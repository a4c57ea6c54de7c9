package providers_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/providers"
)

// TestEventsToEnableMatchDocs: the events the integration page asks to
// enable are those docs/providers.md lists in each provider's table.
func TestEventsToEnableMatchDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[providers.Name]string{providers.Stripe: "## Stripe", providers.Paddle: "## Paddle",
		providers.LemonSqueezy: "## Lemon Squeezy"}
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\|")
	code := regexp.MustCompile("`([a-z_.]+)`")
	for _, name := range providers.Names {
		text := string(doc)
		start := strings.Index(text, sections[name]+"\n")
		if start < 0 {
			t.Fatalf("docs/providers.md has no section %q", sections[name])
		}
		text = text[start+len(sections[name]):]
		if end := strings.Index(text, "\n## "); end >= 0 {
			text = text[:end]
		}
		var documented []string
		for _, m := range row.FindAllStringSubmatch(text, -1) {
			for _, c := range code.FindAllStringSubmatch(m[1], -1) {
				documented = append(documented, c[1])
			}
		}
		got := slices.Clone(providers.EventsToEnable[name])
		slices.Sort(got)
		slices.Sort(documented)
		if !slices.Equal(got, documented) {
			t.Errorf("%s: EventsToEnable = %v, docs/providers.md lists %v", name, got, documented)
		}
	}
}
