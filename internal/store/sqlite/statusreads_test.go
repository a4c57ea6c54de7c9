package sqlite

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestStatusGroupReadsByIndexes: a group's statement looks each read up by
// the licence's key and the live machines' index, whatever its size, and
// scans no table.
func TestStatusGroupReadsByIndexes(t *testing.T) {
	db, _ := openWith(t)
	for _, q := range statusGroupQueries {
		n := strings.Count(q, "(?, ?, ?)")
		rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, make([]any, 3*n)...)
		if err != nil {
			t.Fatalf("EXPLAIN QUERY PLAN error = %v", err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"SEARCH l USING INDEX sqlite_autoindex_licences_1 (id=?)",
			"SEARCH a USING INDEX activations_live_machine (licence_id=? AND machine_id=?)"} {
			if !slices.ContainsFunc(plan, func(d string) bool { return strings.HasPrefix(d, want) }) {
				t.Errorf("plan of %d reads %q does not %s", n, plan, want)
			}
		}
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN l") || strings.HasPrefix(d, "SCAN a") {
				t.Errorf("plan of %d reads %q scans a table", n, plan)
			}
		}
	}
}

// TestStatusGroupAnswers: a group's reads, of any size up to the most a
// group carries, each get what the same read alone gets: the licence and
// the machine's seat on that licence (two licences with a machine of the
// same id keep their own), no seat, or licence_not_found.
func TestStatusGroupAnswers(t *testing.T) {
	ctx := t.Context()
	db, _ := openWith(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree, CreatedAt: now}
	p := &licentia.Product{ID: "acme-app", OrgID: o.ID, Name: "Acme", KeyPrefix: "ACME", CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: now, UpdatedAt: now}
	licences := make([]*licentia.Licence, 2)
	for i := range licences {
		licences[i] = &licentia.Licence{ID: licentia.NewID(), OrgID: o.ID, ProductID: p.ID, Email: "a@example.com", IssuedAt: now,
			LimitKind: licentia.LimitMachines, LimitCount: int64(10 + i), Major: 1, Status: licentia.StatusActive,
			Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
	}
	licences[1].ExpiresAt = new(now.Add(24 * time.Hour))
	err := db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrganization(ctx, o); err != nil {
			return err
		}
		if err := tx.CreateProduct(ctx, p); err != nil {
			return err
		}
		for i, l := range licences {
			if err := tx.CreateLicence(ctx, l); err != nil {
				return err
			}
			for m := range 4 - 3*i { // machines 0-3 on the first, 0 on the second
				a := &licentia.Activation{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, MachineID: fmt.Sprintf("machine-%d", m),
					ActivatedAt: now, LastSeenAt: now.Add(time.Duration(m) * time.Second)}
				if err := tx.CreateActivation(ctx, a); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("setting up: %v", err)
	}
	ids := []string{licences[0].ID, licences[1].ID, licentia.NewID()}
	for _, n := range []int{2, 3, 4, 5, 17, statusGroup} {
		group := make([]*statusRead, n)
		for i := range group {
			group[i] = &statusRead{ctx: ctx, licenceID: ids[i%3], machineID: fmt.Sprintf("machine-%d", i%5)}
		}
		db.status.answer(group)
		for _, r := range group {
			l, seat, err := reader{q: db.status.q}.LicenceWithSeat(ctx, r.licenceID, r.machineID)
			if licentia.ErrorCode(r.err) != licentia.ErrorCode(err) || (r.err == nil) != (err == nil) ||
				cmp.Diff(l, r.licence) != "" || cmp.Diff(seat, r.seat) != "" {
				t.Errorf("group of %d: read of (%s, %s) = %+v, %+v, %v; alone %+v, %+v, %v",
					n, r.licenceID, r.machineID, r.licence, r.seat, r.err, l, seat, err)
			}
		}
		// The comparisons above met each kind of answer.
		if n > 2 && (group[0].seat == nil || group[1].seat != nil || licentia.ErrorCode(group[2].err) != licentia.CodeLicenceNotFound) {
			t.Errorf("group of %d: answers %+v, %+v, %+v; want a seat, none, licence_not_found", n, group[0], group[1], group[2])
		}
		// machine-0 of each licence: two seats.
		if n > 6 && (group[6].seat == nil || group[6].seat.ActivationID == group[0].seat.ActivationID) {
			t.Errorf("group of %d: machine-0 of the second licence has seat %+v, want its own", n, group[6].seat)
		}
	}
}
