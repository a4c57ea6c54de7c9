package auth_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
)

// TestAuthenticateNotesLastUse: a key's first request writes its last use;
// the requests of the following minute leave it, on this process and on
// another; the first a minute later moves it on; a refused request
// (a wrong secret) writes nothing.
func TestAuthenticateNotesLastUse(t *testing.T) {
	st := openStore(t)
	clk := clock.NewFake(start)
	org := createOrg(t, st, "acme")
	key, k := storeKey(t, st, org.ID, []licentia.Scope{licentia.ScopeLicencesRead}, nil)
	one, other := auth.NewAuthenticator(st, clk), auth.NewAuthenticator(st, clk)
	lastUse := func() *time.Time {
		t.Helper()
		got, err := st.APIKey(t.Context(), org.ID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	if _, err := one.Authenticate(t.Context(), "Bearer "+key[:len(key)-1]+"x"); err == nil {
		t.Fatal("Authenticate(wrong secret) error = nil")
	}
	if got := lastUse(); got != nil {
		t.Fatalf("LastUsedAt after a refused request = %v, want nil", got)
	}
	for _, step := range []struct {
		after time.Duration
		a     *auth.Authenticator
		want  time.Time
	}{
		{0, one, start},
		{30 * time.Second, one, start},
		{29 * time.Second, other, start},
		{time.Second, one, start.Add(time.Minute)},
		{59 * time.Second, other, start.Add(time.Minute)},
		{time.Second, other, start.Add(2 * time.Minute)},
	} {
		clk.Advance(step.after)
		if _, err := step.a.Authenticate(t.Context(), "Bearer "+key); err != nil {
			t.Fatalf("Authenticate() error = %v", err)
		}
		if got := lastUse(); got == nil || !got.Equal(step.want) {
			t.Errorf("LastUsedAt at %v = %v, want %v", clk.Now(), got, step.want)
		}
	}
}
