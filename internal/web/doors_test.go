package web_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path every package of the service starts with.
const module = "github.com/licentia/licentia/internal/"

// doors are the front doors: each decodes what its callers send and answers
// in its own way, over the same operations.
var doors = []string{"httpapi", "console", "oauth", "mcpserver", "portal"}

// TestFrontDoorsImportNoOther: no front door depends on another, directly or
// through a third package, and each takes the plumbing they share from web,
// which depends on none of them. Only cli wires them together (STYLE.md,
// Front doors and the plumbing they share).
func TestFrontDoorsImportNoOther(t *testing.T) {
	deps := listDeps(t, append([]string{"web"}, doors...)...)
	for _, d := range doors {
		if !slices.Contains(deps[d], "web") {
			t.Errorf("%s does not import web: the plumbing front doors share lives there", d)
		}
		if slices.Contains(deps["web"], d) {
			t.Errorf("web depends on %s; it must stay below every front door", d)
		}
		for _, other := range doors {
			if other != d && slices.Contains(deps[d], other) {
				t.Errorf("%s depends on %s; front doors share only what web holds, and cli wires them together", d, other)
			}
		}
	}
}

// listDeps returns, for each named package of the service, the packages of
// the service it depends on, by name below internal/, tests left out.
func listDeps(t *testing.T, names ...string) map[string][]string {
	t.Helper()
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for _, n := range names {
		args = append(args, module+n)
	}
	out, err := exec.CommandContext(t.Context(), "go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		name, _ := strings.CutPrefix(fields[0], module)
		deps[name] = []string{}
		for _, p := range fields[1:] {
			if dep, ok := strings.CutPrefix(p, module); ok {
				deps[name] = append(deps[name], dep)
			}
		}
	}
	for _, n := range names {
		if _, ok := deps[n]; !ok {
			t.Fatalf("go list did not list %s", n)
		}
	}
	return deps
}
