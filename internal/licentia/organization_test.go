package licentia_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

func TestValidateOrganization(t *testing.T) {
	plans := licentia.DefaultPlans()
	for _, tt := range []struct {
		name       string
		org, slug  string
		plan       licentia.PlanID
		email      string
		wantIssues []string // paths
	}{
		{"valid", "Acme", "acme", "free", "owner@acme.example", nil},
		{"valid limits", strings.Repeat("é", 200), "a" + strings.Repeat("-", 62), "business", "o@a.io", nil},
		{"empty name", "", "acme", "free", "owner@acme.example", []string{"name"}},
		{"long name", strings.Repeat("n", 201), "acme", "free", "owner@acme.example", []string{"name"}},
		{"slug upper case", "Acme", "Acme", "free", "owner@acme.example", []string{"slug"}},
		{"slug starts with hyphen", "Acme", "-acme", "free", "owner@acme.example", []string{"slug"}},
		{"slug too long", "Acme", strings.Repeat("a", 64), "free", "owner@acme.example", []string{"slug"}},
		{"slug with space", "Acme", "ac me", "free", "owner@acme.example", []string{"slug"}},
		{"slug empty", "Acme", "", "free", "owner@acme.example", []string{"slug"}},
		{"plan unknown", "Acme", "acme", "gold", "owner@acme.example", []string{"plan"}},
		{"plan upper case", "Acme", "acme", "FREE", "owner@acme.example", []string{"plan"}},
		{"bad email", "Acme", "acme", "free", "owner", []string{"owner_email"}},
		{"everything at once", "", "-", "", "", []string{"name", "slug", "plan", "owner_email"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := licentia.ValidateOrganization(tt.org, tt.slug, tt.plan, plans, tt.email)
			if diff := cmp.Diff(tt.wantIssues, issuePaths(t, err)); diff != "" {
				t.Errorf("ValidateOrganization() issues mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// issuePaths returns the paths of a validation_failed error's issues, or nil
// for no error.
func issuePaths(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != licentia.CodeValidationFailed {
		t.Fatalf("error = %v, want validation_failed", err)
	}
	var paths []string
	for _, is := range e.Details["issues"].([]licentia.Issue) {
		paths = append(paths, is.Path)
	}
	return paths
}
