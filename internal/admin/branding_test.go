package admin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestSetBranding: owners and admins set the branding, which reads back
// with the organization (blanks unset, the accent in lower case) and is
// audited on the organization; a developer is refused before the form is
// read; every problem of a form is reported at once, at its field.
func TestSetBranding(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o, owner, m := teamFixture(t, st, licentia.PlanBusiness)
		member := func(email string, role licentia.Role) admin.Acting {
			t.Helper()
			if _, err := svc.Invite(t.Context(), owner, admin.Invitation(email, role)); err != nil {
				t.Fatal(err)
			}
			_, mem, err := svc.UseLink(t.Context(), admin.LinkInvitation, m.token(email), "a long enough password")
			if err != nil {
				t.Fatal(err)
			}
			return admin.Acting{OrgID: o.ID, MemberID: mem.ID}
		}
		adminMember, developer := member("admin@team.example", licentia.RoleAdmin), member("dev@team.example", licentia.RoleDeveloper)

		in := admin.BrandingChange{DisplayName: new(" Team Tools "), SupportEmail: new("help@team.example"),
			LogoURL: new("https://team.example/logo.png"), Accent: new("#0A7CFF")}
		got, err := svc.SetBranding(t.Context(), owner, in)
		if err != nil {
			t.Fatalf("SetBranding(owner) error = %v", err)
		}
		want := licentia.Branding{DisplayName: new("Team Tools"), SupportEmail: new("help@team.example"),
			LogoURL: new("https://team.example/logo.png"), Accent: new("#0a7cff")}
		if diff := cmp.Diff(want, got.Branding); diff != "" {
			t.Errorf("branding mismatch (-want +got):\n%s", diff)
		}
		if read, _ := st.Organization(t.Context(), o.ID); cmp.Diff(want, read.Branding) != "" {
			t.Errorf("stored branding = %+v, want %+v", read.Branding, want)
		}

		cleared, err := svc.SetBranding(t.Context(), adminMember, admin.BrandingChange{DisplayName: new(""), Accent: new("  ")})
		if err != nil || cmp.Diff(licentia.Branding{}, cleared.Branding) != "" || cleared.DisplayName() != "Team" {
			t.Errorf("SetBranding(admin, blanks) = %+v, %v, want cleared, shown as the name", cleared, err)
		}

		bad := admin.BrandingChange{DisplayName: new(strings.Repeat("x", 101)), SupportEmail: new("a..b@team.example"),
			LogoURL: new("http://team.example/logo.png"), Accent: new("blue")}
		_, err = svc.SetBranding(t.Context(), developer, bad)
		if licentia.ErrorCode(err) != licentia.CodeInsufficientRole {
			t.Errorf("SetBranding(developer) error = %v, want insufficient_role before the form", err)
		}
		_, err = svc.SetBranding(t.Context(), owner, bad)
		le, ok := errors.AsType[*licentia.Error](err)
		if !ok || le.Code != licentia.CodeValidationFailed {
			t.Fatalf("SetBranding(bad form) error = %v, want validation_failed", err)
		}
		var paths []string
		for _, is := range le.Details["issues"].([]licentia.Issue) {
			paths = append(paths, is.Path)
		}
		if diff := cmp.Diff([]string{"/display_name", "/support_email", "/logo_url", "/accent"}, paths); diff != "" {
			t.Errorf("issues mismatch (-want +got):\n%s", diff)
		}

		audit, err := st.OrganizationAudit(t.Context(), o.ID)
		if err != nil {
			t.Fatal(err)
		}
		var actors []string
		for _, a := range audit {
			if a.Action == licentia.AuditBrandingUpdated {
				actors = append(actors, *a.Actor.ID)
			}
		}
		if diff := cmp.Diff([]string{owner.MemberID, adminMember.MemberID}, actors); diff != "" {
			t.Errorf("organization.branding_updated entries by actor (-want +got):\n%s", diff)
		}
	})
}
