package licentia_test

import (
	"testing"

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
