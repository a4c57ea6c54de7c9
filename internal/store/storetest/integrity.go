package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// allLicences reads every licence through LicencesAfter in pages of size.
func allLicences(t *testing.T, r store.Reader, size int) []store.CheckedLicence {
	t.Helper()
	var out []store.CheckedLicence
	after := ""
	for {
		page, err := r.LicencesAfter(t.Context(), after, size)
		if err != nil {
			t.Fatalf("LicencesAfter(%q, %d) error = %v", after, size, err)
		}
		out = append(out, page...)
		if len(page) < size {
			return out
		}
		after = page[len(page)-1].ID
	}
}

// testIntegrityReads holds the reads of the integrity check: pages of
// every organization's licences in id order with their live activation
// rows, the counters, the rows whose parent is missing, and one snapshot.
func testIntegrityReads(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	var want []string
	var ls []*licentia.Licence
	for i := range 5 {
		l := newLicence(o.ID, p.ID, "a@example.com", base)
		if i == 4 {
			l = newLicence(other.ID, theirs.ID, "b@example.com", base)
		}
		ls = append(ls, l)
		want = append(want, l.ID)
	}
	createLicences(t, s, ls...)
	slices.Sort(want)
	live, freed := newActivation(ls[0], "m1"), newActivation(ls[0], "m2")
	onSecond := newActivation(ls[1], "m3")
	createActivations(t, s, live, freed, onSecond)
	inTx(t, s, func(tx store.Tx) error {
		_, _, err := tx.DeactivateActivation(ctx, freed.OrgID, freed.ID, base.Add(time.Minute))
		return err
	})

	got := allLicences(t, s, 2)
	var ids []string
	rows := map[string]int64{}
	for _, l := range got {
		ids = append(ids, l.ID)
		rows[l.ID] = l.LiveRows
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("LicencesAfter() pages mismatch (-want +got):\n%s", diff)
	}
	if rows[ls[0].ID] != 1 || rows[ls[1].ID] != 1 || rows[ls[2].ID] != 0 {
		t.Errorf("LicencesAfter() live rows = %v, want 1 for %s and %s, 0 for the others", rows, ls[0].ID, ls[1].ID)
	}

	stats, err := s.LicenceStats(ctx)
	if err != nil {
		t.Fatalf("LicenceStats() error = %v", err)
	}
	var n, liveN int64
	for _, row := range stats {
		n += row.N
		liveN += row.Live
		if row.OrgID != o.ID && row.OrgID != other.ID {
			t.Errorf("LicenceStats() row of organization %s, want %s or %s", row.OrgID, o.ID, other.ID)
		}
	}
	if n != 5 || liveN != 2 {
		t.Errorf("LicenceStats() sums n = %d, live = %d, want 5, 2", n, liveN)
	}

	if orphans, err := s.Orphans(ctx, 10); err != nil || len(orphans) != 0 {
		t.Errorf("Orphans() = %v, %v, want none", orphans, err)
	}
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	d := newDelivery(ep, ev, base)
	createDeliveries(t, s, d)
	Tamper(t, s,
		"DELETE FROM products WHERE id = '"+theirs.ID+"'",
		"DELETE FROM licences WHERE id = '"+ls[1].ID+"'",
		"DELETE FROM events WHERE id = '"+ev.ID+"'")
	orphans, err := s.Orphans(ctx, 10)
	if err != nil {
		t.Fatalf("Orphans() error = %v", err)
	}
	wantOrphans := []store.Orphan{
		{Kind: store.OrphanLicence, ID: ls[4].ID, ParentID: theirs.ID},
		{Kind: store.OrphanActivation, ID: onSecond.ID, ParentID: ls[1].ID},
		{Kind: store.OrphanDelivery, ID: d.ID, ParentID: ev.ID},
	}
	if diff := cmp.Diff(wantOrphans, orphans); diff != "" {
		t.Errorf("Orphans() mismatch (-want +got):\n%s", diff)
	}

	// A licence committed after a snapshot's first read is not in it.
	err = s.Snapshot(ctx, func(r store.Reader) error {
		before := len(allLicences(t, r, 100))
		createLicences(t, s, newLicence(o.ID, p.ID, "late@example.com", base))
		if after := len(allLicences(t, r, 100)); after != before {
			t.Errorf("Snapshot() saw %d licences, then %d after a commit, want the same", before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Snapshot() error = %v", err)
	}
	// Five issued, one deleted by hand, one issued during the snapshot.
	if got := len(allLicences(t, s, 100)); got != 5 {
		t.Errorf("LicencesAfter() after the snapshot = %d licences, want 5", got)
	}
}
