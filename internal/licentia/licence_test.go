package licentia_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// TestStateOf walks every input of the derived-state rule: a stored revoked
// or expired licence keeps its status whatever its dates; a stored-active
// one is expired once lapsed, else trial while in trial, else active.
func TestStateOf(t *testing.T) {
	for _, tt := range []struct {
		status          licentia.Status
		lapsed, inTrial bool
		want            licentia.State
	}{
		{licentia.StatusActive, false, false, licentia.StateActive},
		{licentia.StatusActive, false, true, licentia.StateTrial},
		{licentia.StatusActive, true, false, licentia.StateExpired},
		{licentia.StatusActive, true, true, licentia.StateExpired},
		{licentia.StatusExpired, false, false, licentia.StateExpired},
		{licentia.StatusExpired, false, true, licentia.StateExpired},
		{licentia.StatusExpired, true, false, licentia.StateExpired},
		{licentia.StatusExpired, true, true, licentia.StateExpired},
		{licentia.StatusRevoked, false, false, licentia.StateRevoked},
		{licentia.StatusRevoked, false, true, licentia.StateRevoked},
		{licentia.StatusRevoked, true, false, licentia.StateRevoked},
		{licentia.StatusRevoked, true, true, licentia.StateRevoked},
	} {
		if got := licentia.StateOf(tt.status, tt.lapsed, tt.inTrial); got != tt.want {
			t.Errorf("StateOf(%s, lapsed %t, in trial %t) = %s, want %s", tt.status, tt.lapsed, tt.inTrial, got, tt.want)
		}
	}
}

func TestLiveMachines(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	for _, tt := range []struct {
		name string
		l    licentia.Licence
		want int64
	}{
		{"active", licentia.Licence{Status: licentia.StatusActive, LiveActivations: 2}, 2},
		{"trial", licentia.Licence{Status: licentia.StatusActive, TrialEndsAt: &future, ExpiresAt: &future, LiveActivations: 1}, 1},
		{"lapsed", licentia.Licence{Status: licentia.StatusActive, ExpiresAt: &past, LiveActivations: 2}, 0},
		{"revoked", licentia.Licence{Status: licentia.StatusRevoked, LiveActivations: 3}, 0},
		{"expired", licentia.Licence{Status: licentia.StatusExpired, LiveActivations: 1}, 0},
	} {
		if got := tt.l.LiveMachines(now); got != tt.want {
			t.Errorf("LiveMachines(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}
