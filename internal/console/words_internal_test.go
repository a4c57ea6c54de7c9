package console

import (
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// A dotted name may break after each dot and nowhere else it would not,
// and what it holds is escaped.
func TestDotted(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{licentia.EventActivationCreated, "activation.<wbr>created"},
		{"endpoint.test", "endpoint.<wbr>test"},
		{"plain", "plain"},
		{"a.<b>&.c", "a.<wbr>&lt;b&gt;&amp;.<wbr>c"},
	} {
		if got := string(dotted(c.in)); got != c.want {
			t.Errorf("dotted(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
