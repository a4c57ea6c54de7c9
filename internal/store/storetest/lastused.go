package storetest

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testLastUse: a key's and a grant's last use is written when unset or a
// minute old, not within the minute, and reads back with them; of
// concurrent requests in one organization, exactly one writes; an unknown
// or malformed id writes nothing.
func testLastUse(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	k := newAPIKey(o.ID)
	createAPIKeys(t, s, k)
	g := newGrant(o.ID, licentia.NewID(), base)
	tok := newAssistantToken(g, licentia.TokenAccess)
	createGrants(t, s, []*licentia.Grant{g}, tok)

	for _, kind := range []struct {
		name string
		note func(tx store.Tx, id string, at time.Time) (bool, error)
		id   string
		read func() *time.Time
	}{
		{"key", func(tx store.Tx, id string, at time.Time) (bool, error) { return tx.NoteAPIKeyUse(ctx, id, at) }, k.ID,
			func() *time.Time {
				got, err := s.APIKey(ctx, o.ID, k.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got.LastUsedAt
			}},
		{"grant", func(tx store.Tx, id string, at time.Time) (bool, error) { return tx.NoteGrantUse(ctx, id, at) }, g.ID,
			func() *time.Time {
				got, err := s.AssistantToken(ctx, tok.TokenHash)
				if err != nil {
					t.Fatal(err)
				}
				return got.Grant.LastUsedAt
			}},
	} {
		note := func(id string, at time.Time) bool {
			t.Helper()
			var wrote bool
			inTx(t, s, func(tx store.Tx) error {
				var err error
				wrote, err = kind.note(tx, id, at)
				return err
			})
			return wrote
		}
		if got := kind.read(); got != nil {
			t.Errorf("%s: LastUsedAt before any use = %v, want nil", kind.name, got)
		}
		for _, step := range []struct {
			at   time.Time
			want bool
			last time.Time
		}{
			{base, true, base},
			{base.Add(59 * time.Second), false, base},
			{base.Add(time.Minute), true, base.Add(time.Minute)},
			{base.Add(time.Minute + time.Second), false, base.Add(time.Minute)},
		} {
			if got := note(kind.id, step.at); got != step.want {
				t.Errorf("%s: note at %v = %v, want %v", kind.name, step.at, got, step.want)
			}
			if got := kind.read(); got == nil || !got.Equal(step.last) {
				t.Errorf("%s: LastUsedAt after a use at %v = %v, want %v", kind.name, step.at, got, step.last)
			}
		}
		for _, id := range []string{licentia.NewID(), "malformed"} {
			if note(id, base.Add(time.Hour)) {
				t.Errorf("%s: note of unknown id %q wrote", kind.name, id)
			}
		}
		at := base.Add(2 * time.Hour)
		won := race(t, func() (wrote bool, err error) {
			err = s.InTx(ctx, func(tx store.Tx) error {
				wrote, err = kind.note(tx, kind.id, at)
				return err
			})
			return wrote, err
		})
		if won != 1 {
			t.Errorf("%s: concurrent uses that wrote = %d, want exactly 1", kind.name, won)
		}
	}
}
