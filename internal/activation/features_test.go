package activation_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// TestVerdictFeatures: a verdict carries the grants in force when signed,
// by code; a grant past its expires_at on the fake clock is left out, and
// so is a feature removed while the machine was offline, at its next
// check, even within the second a verdict may be reused. The SDK reads
// them offline on its own clock. On both engines.
func TestVerdictFeatures(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f := newFixture(t, e.open(t))
			ctx := t.Context()
			for _, code := range []string{"sso", "export-pdf"} {
				if _, err := f.admin.SaveFeature(ctx, licentia.OperatorActor, f.org.ID, "desk-app", code, admin.FeatureSave{Name: ptr(code)}); err != nil {
					t.Fatal(err)
				}
			}
			until := f.clock.Now().Add(time.Hour)
			v, err := f.admin.IssueLicence(ctx, licentia.OperatorActor, f.org.ID, admin.NewLicence{
				ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), Features: []licentia.GrantRequest{
					{FeatureGrant: licentia.FeatureGrant{Code: "sso"}},
					{FeatureGrant: licentia.FeatureGrant{Code: "export-pdf", ExpiresAt: &until}},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			key := *v.Key
			if _, err := f.svc.Activate(ctx, activate(key, machine("ada-laptop"))); err != nil {
				t.Fatal(err)
			}
			got := f.verdict(t, f.status(t, key, "ada-laptop"))
			want := []sdk.VerdictFeature{{Code: "export-pdf", ExpiresAt: ptr(licentia.FormatTime(until))}, {Code: "sso"}}
			if diff := cmp.Diff(want, got.Features); diff != "" {
				t.Errorf("verdict features mismatch (-want +got):\n%s", diff)
			}
			if !got.Feature("export-pdf", until.Add(-time.Second)) || got.Feature("export-pdf", until) || !got.Feature("sso", until.Add(time.Hour)) ||
				got.Feature("audit-log", f.clock.Now()) {
				t.Errorf("Verdict.Feature() answers wrong on the local clock for %+v", got.Features)
			}

			// Past the grant's end the verdict leaves it out.
			f.clock.Advance(time.Hour)
			got = f.verdict(t, f.status(t, key, "ada-laptop"))
			if diff := cmp.Diff([]sdk.VerdictFeature{{Code: "sso"}}, got.Features); diff != "" {
				t.Errorf("verdict features past export-pdf's end mismatch (-want +got):\n%s", diff)
			}

			// Removed while the machine is offline: its next verdict, even
			// within the reuse second, lacks it.
			if _, err := f.admin.UpdateLicence(ctx, licentia.OperatorActor, f.org.ID, v.Licence.ID,
				admin.LicenceChange{Features: []licentia.GrantRequest{}}); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(100 * time.Millisecond)
			got = f.verdict(t, f.status(t, key, "ada-laptop"))
			if len(got.Features) != 0 || got.Feature("sso", f.clock.Now()) {
				t.Errorf("verdict after the feature was removed carries %+v, want none", got.Features)
			}
		})
	}
}
