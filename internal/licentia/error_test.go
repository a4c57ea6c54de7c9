package licentia_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

func TestIssuesErr(t *testing.T) {
	var none licentia.Issues
	if err := none.Err(); err != nil {
		t.Errorf("Issues(nil).Err() = %v, want nil", err)
	}
	if err := (licentia.Issues{}).Err(); err != nil {
		t.Errorf("Issues{}.Err() = %v, want nil", err)
	}

	var is licentia.Issues
	is.Add("/limit_count", "must be at least %d", 1)
	is.Add("query.email", "must be an email address")
	err := is.Err()
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok {
		t.Fatalf("Err() = %T %v, want a *licentia.Error", err, err)
	}
	want := &licentia.Error{
		Code:    licentia.CodeValidationFailed,
		Message: "The request is not valid.",
		Details: map[string]any{"issues": []licentia.Issue{
			{Path: "/limit_count", Message: "must be at least 1"},
			{Path: "query.email", Message: "must be an email address"},
		}},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Err() mismatch (-want +got):\n%s", diff)
	}
}

func TestErrorCode(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want licentia.Code
	}{
		{"licentia error", licentia.Errorf(licentia.CodeConflict, "taken"), licentia.CodeConflict},
		{"wrapped", fmt.Errorf("create: %w", licentia.Errorf(licentia.CodeNotFound, "gone")), licentia.CodeNotFound},
		{"foreign", errors.New("disk full"), licentia.CodeInternal},
		{"nil-free foreign wrap", fmt.Errorf("x: %w", errors.New("y")), licentia.CodeInternal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := licentia.ErrorCode(tt.err); got != tt.want {
				t.Errorf("ErrorCode(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	cause := errors.New("constraint failed")
	err := &licentia.Error{Code: licentia.CodeInternal, Message: "Something failed.", Err: cause}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(%v, cause) = false, want true", err)
	}
}

func TestCodesUnique(t *testing.T) {
	seen := map[licentia.Code]bool{}
	for _, c := range licentia.Codes {
		if seen[c] {
			t.Errorf("Codes lists %q twice", c)
		}
		seen[c] = true
	}
}

func TestPlanLimit(t *testing.T) {
	e := licentia.PlanLimit(licentia.PlanFree, "api_keys", 2, 2)
	want := map[string]any{"plan": "free", "resource": "api_keys", "limit": int64(2), "count": int64(2)}
	if e.Code != licentia.CodePlanLimitReached {
		t.Errorf("PlanLimit().Code = %q, want %q", e.Code, licentia.CodePlanLimitReached)
	}
	if diff := cmp.Diff(want, e.Details); diff != "" {
		t.Errorf("PlanLimit().Details mismatch (-want +got):\n%s", diff)
	}
}

func TestAPIKeyIsLive(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	for _, tt := range []struct {
		name string
		key  licentia.APIKey
		want bool
	}{
		{"no expiry", licentia.APIKey{}, true},
		{"expires later", licentia.APIKey{ExpiresAt: &later}, true},
		{"expires now", licentia.APIKey{ExpiresAt: &now}, false},
		{"expired", licentia.APIKey{ExpiresAt: &earlier}, false},
		{"revoked", licentia.APIKey{RevokedAt: &earlier}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key.IsLive(now); got != tt.want {
				t.Errorf("IsLive() = %v, want %v", got, tt.want)
			}
		})
	}
}
