package activation_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/sdk"
)

// hasIssue reports whether err is a validation error with an issue at path
// whose message starts with prefix.
func hasIssue(err error, path, prefix string) bool {
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != licentia.CodeValidationFailed {
		return false
	}
	issues, _ := e.Details["issues"].([]licentia.Issue)
	return slices.ContainsFunc(issues, func(is licentia.Issue) bool { return is.Path == path && strings.HasPrefix(is.Message, prefix) })
}

// grantsOf makes n grants of codes 000-, 001- and so on padded with "x" to
// size characters (at least 4), each until until (nil: none).
func grantsOf(n, size int, until *time.Time) []licentia.FeatureGrant {
	gs := make([]licentia.FeatureGrant, n)
	for i := range gs {
		code := fmt.Sprintf("%03d-", i)
		gs[i] = licentia.FeatureGrant{Code: code + strings.Repeat("x", size-len(code)), ExpiresAt: until}
	}
	return gs
}

// longest returns the longest of ss that check accepts.
func longest(t *testing.T, check func(string) string, ss ...string) string {
	t.Helper()
	best := ""
	for _, s := range ss {
		if check(s) == "" && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		t.Fatal("none accepted")
	}
	return best
}

// TestWorstVerdictBytes: the bound is the exact length of a verdict signed
// with every field at the longest its rule accepts (found here from the
// rules themselves) and every grant in force, whatever the grants.
func TestWorstVerdictBytes(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	machineID := longest(t, activation.CheckMachineID, strings.Repeat("m", 128), strings.Repeat("m", 129), strings.Repeat("m", 200))
	productID := longest(t, licentia.CheckProductID, strings.Repeat("p", 63), strings.Repeat("p", 64))
	state := ""
	for _, s := range []licentia.State{licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked} {
		if len(s) > len(state) {
			state = string(s)
		}
	}
	at := "9999-12-31T23:59:59.999Z"
	id := "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"
	until := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, gs := range [][]licentia.FeatureGrant{nil, grantsOf(1, 4, nil), grantsOf(3, 64, &until), grantsOf(200, 11, nil), grantsOf(90, 64, &until)} {
		v := sdk.Verdict{
			LicenceID: id, ProductID: productID, MachineID: machineID, ActivationID: &id, State: state,
			ExpiresAt: &at, TrialEndsAt: &at, Major: licentia.MaxMajor, LimitKind: string(licentia.LimitMachines),
			LimitCount: licentia.MaxLimitCount, IssuedAt: at, ValidUntil: at,
		}
		for _, g := range gs {
			v.Features = append(v.Features, sdk.VerdictFeature{Code: g.Code, ExpiresAt: licentia.FormatTimePtr(g.ExpiresAt)})
		}
		signed, err := sdk.SignVerdict(priv, "", v)
		if err != nil {
			t.Fatal(err)
		}
		if got := activation.WorstVerdictBytes(gs); got != len(signed) {
			t.Errorf("WorstVerdictBytes(%d grants) = %d, want %d", len(gs), got, len(signed))
		}
	}
}

// TestLargestGrantListFits: the longest list of grants of 64-character
// codes with expiries that passes CheckVerdictFits makes, on a licence
// issued and activated through the service with a machine id, product id,
// major and limit at their longest, a verdict within the format's limit
// that the SDK accepts; one more grant is refused with the size and the
// limit, on issue and on PATCH. Short codes like feature-001 fit 200 to a licence without
// expiries, and as the vectors have them (one in four with an expiry).
func TestLargestGrantListFits(t *testing.T) {
	until := start.Add(365 * 24 * time.Hour)
	fits := func(gs []licentia.FeatureGrant) licentia.Issues {
		var is licentia.Issues
		activation.CheckVerdictFits(&is, "/features", gs)
		return is
	}
	n := 0
	for len(fits(grantsOf(n+1, 64, &until))) == 0 {
		n++
	}
	t.Logf("grants of 64-character codes with expiries that fit: %d", n)
	over := fits(grantsOf(n+1, 64, &until))
	want := fmt.Sprintf("would make verdicts of up to %d bytes, over the format's limit of 16384", activation.WorstVerdictBytes(grantsOf(n+1, 64, &until)))
	if len(over) != 1 || over[0].Path != "/features" || !strings.HasPrefix(over[0].Message, want) {
		t.Errorf("CheckVerdictFits(%d grants) = %v, want one issue at /features starting %q", n+1, over, want)
	}

	short := grantsOf(200, len("feature-001"), nil)
	if is := fits(short); len(is) != 0 {
		t.Errorf("200 short codes without expiries: %v", is)
	}
	for i := range short {
		if i%4 == 0 {
			short[i].ExpiresAt = &until
		}
	}
	if is := fits(short); len(is) != 0 {
		t.Errorf("200 short codes, one in four with an expiry: %v", is)
	}
	all := 0
	for len(fits(grantsOf(all+1, len("feature-001"), &until))) == 0 {
		all++
	}
	t.Logf("short codes, every one with an expiry, that fit: %d", all)

	f := newFixture(t, engines[0].open(t))
	ctx := t.Context()
	productID := strings.Repeat("p", licentia.MaxProductID)
	if _, err := f.admin.CreateProduct(ctx, licentia.OperatorActor, f.org.ID, admin.NewProduct{
		ID: &productID, Name: ptr("Wide"), KeyPrefix: ptr("WIDE"), CurrentMajor: ptr[int64](licentia.MaxMajor),
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.cat.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	gs := grantsOf(n+1, 64, &until)
	reqs := make([]licentia.GrantRequest, len(gs))
	for i, g := range gs {
		if _, err := f.admin.SaveFeature(ctx, licentia.OperatorActor, f.org.ID, productID, g.Code, admin.FeatureSave{Name: ptr("Feature")}); err != nil {
			t.Fatal(err)
		}
		reqs[i] = licentia.GrantRequest{FeatureGrant: g}
	}
	kind := licentia.LimitMachines
	issue := func(reqs []licentia.GrantRequest) (*admin.LicenceView, error) {
		return f.admin.IssueLicence(ctx, licentia.OperatorActor, f.org.ID, admin.NewLicence{
			ProductID: &productID, Email: ptr("ada@example.com"), LimitKind: &kind, LimitCount: ptr[int64](licentia.MaxLimitCount),
			ExpiresAt: ptr(until.Add(time.Hour)), Features: reqs,
		})
	}
	if _, err := issue(reqs); !hasIssue(err, "/features", want) {
		t.Errorf("IssueLicence(%d grants) error = %v, want an issue at /features starting %q", n+1, err, want)
	}
	v, err := issue(reqs[:n])
	if err != nil {
		t.Fatalf("IssueLicence(%d grants) error = %v", n, err)
	}
	if _, err := f.admin.UpdateLicence(ctx, licentia.OperatorActor, f.org.ID, v.Licence.ID, admin.LicenceChange{Features: reqs}); !hasIssue(err, "/features", want) {
		t.Errorf("UpdateLicence(%d grants) error = %v, want an issue at /features starting %q", n+1, err, want)
	}
	a, err := f.svc.Activate(ctx, activate(*v.Key, machine(strings.Repeat("m", activation.MaxMachineID))))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Verdict) > activation.MaxVerdictBytes || len(a.Verdict) > activation.WorstVerdictBytes(gs[:n]) {
		t.Errorf("verdict of %d bytes, want at most %d and at most the bound %d", len(a.Verdict), activation.MaxVerdictBytes, activation.WorstVerdictBytes(gs[:n]))
	}
	p, err := f.st.Product(ctx, f.org.ID, productID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sdk.VerifyVerdict(a.Verdict, signing.VerifierProduct(p))
	if err != nil || len(got.Features) != n {
		t.Fatalf("VerifyVerdict() = %d features, %v; want %d", len(got.Features), err, n)
	}
	t.Logf("verdict: %d bytes, bound %d", len(a.Verdict), activation.WorstVerdictBytes(gs[:n]))
}
