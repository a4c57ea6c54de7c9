package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const licenceColumns = `id, org_id, product_id, email, issued_at, expires_at, limit_kind, limit_count, major,
	status, status_reason, status_changed_at, trial_ends_at, source, integration_id, external_ref,
	provider_order_id, provider_subscription_id, provider_customer_id, provider_checkout_id,
	subscription_ended_at, anonymised_at, created_at, updated_at, live_activations, renewal_url,
	provider_order_number, replaces, replaced_by, transfers_per_30_days, max_concurrent, features`

func licenceNotFound() error { return store.NotFound(licentia.CodeLicenceNotFound, "Licence") }

func scanLicence(row pgx.Row) (*licentia.Licence, error) {
	var l licentia.Licence
	var features string
	err := row.Scan(&l.ID, &l.OrgID, &l.ProductID, &l.Email, &l.IssuedAt, &l.ExpiresAt, &l.LimitKind, &l.LimitCount, &l.Major,
		&l.Status, &l.StatusReason, &l.StatusChangedAt, &l.TrialEndsAt, &l.Source, &l.IntegrationID, &l.ExternalRef,
		&l.Provider.OrderID, &l.Provider.SubscriptionID, &l.Provider.CustomerID, &l.Provider.CheckoutID,
		&l.SubscriptionEndedAt, &l.AnonymisedAt, &l.CreatedAt, &l.UpdatedAt, &l.LiveActivations, &l.RenewalURL,
		&l.Provider.OrderNumber, &l.Replaces, &l.ReplacedBy, &l.TransfersPer30Days, &l.MaxConcurrent, &features)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, licenceNotFound()
	}
	if err != nil {
		return nil, err
	}
	l.IssuedAt, l.CreatedAt, l.UpdatedAt = l.IssuedAt.UTC(), l.CreatedAt.UTC(), l.UpdatedAt.UTC()
	l.ExpiresAt, l.StatusChangedAt, l.TrialEndsAt = utcPtr(l.ExpiresAt), utcPtr(l.StatusChangedAt), utcPtr(l.TrialEndsAt)
	l.SubscriptionEndedAt, l.AnonymisedAt = utcPtr(l.SubscriptionEndedAt), utcPtr(l.AnonymisedAt)
	if l.Features, err = store.DecodeGrants(features); err != nil {
		return nil, err
	}
	return &l, nil
}

func (r reader) queryLicences(ctx context.Context, query string, args ...any) ([]licentia.Licence, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanLicence)
}

func (r reader) Licence(ctx context.Context, orgID, id string) (*licentia.Licence, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read licence: %w", licenceNotFound())
	}
	l, err := scanLicence(r.q.QueryRow(ctx, `SELECT `+licenceColumns+` FROM licences WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read licence: %w", err)
	}
	return l, nil
}

func (r reader) LicenceWithSeat(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	machineID, ok := seatKey(licenceID, machineID)
	if !ok {
		return nil, nil, fmt.Errorf("read licence: %w", licenceNotFound())
	}
	return scanLicenceWithSeat(r.q.QueryRow(ctx, licenceWithSeatQuery, licenceID, machineID))
}

// LicenceWithSeat reads as reader's does, its statement sent with the other
// status checks' that wait for it (statusReads).
func (db *DB) LicenceWithSeat(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	machineID, ok := seatKey(licenceID, machineID)
	if !ok {
		return nil, nil, fmt.Errorf("read licence: %w", licenceNotFound())
	}
	return db.status.read(ctx, licenceID, machineID)
}

// seatKey returns the machine id to look a seat up by, and false for a
// licence id no licence has.
func seatKey(licenceID, machineID string) (string, bool) {
	if !isText(machineID) {
		// No machine holds a seat under an id PostgreSQL cannot store.
		machineID = ""
	}
	return machineID, isID(licenceID)
}

func (r reader) LicenceByID(ctx context.Context, id string) (*licentia.Licence, error) {
	if !isID(id) {
		return nil, fmt.Errorf("read licence: %w", licenceNotFound())
	}
	l, err := scanLicence(r.q.QueryRow(ctx, `SELECT `+licenceColumns+` FROM licences WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("read licence: %w", err)
	}
	return l, nil
}

func (r reader) LicenceIDTaken(ctx context.Context, id string) (bool, error) {
	if !isID(id) {
		return false, nil
	}
	var taken bool
	if err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM licences WHERE id = $1)`, id).Scan(&taken); err != nil {
		return false, fmt.Errorf("check licence id: %w", err)
	}
	return taken, nil
}

func (r reader) LicenceByExternalRef(ctx context.Context, orgID, productID, ref string) (*licentia.Licence, error) {
	if !isProduct(orgID, productID) || !isText(ref) {
		return nil, fmt.Errorf("read licence by external ref: %w", licenceNotFound())
	}
	l, err := scanLicence(r.q.QueryRow(ctx, `SELECT `+licenceColumns+` FROM licences
		WHERE org_id = $1 AND product_id = $2 AND external_ref = $3 AND replaced_by IS NULL`, orgID, productID, ref))
	if err != nil {
		return nil, fmt.Errorf("read licence by external ref: %w", err)
	}
	return l, nil
}

// isSearchable reports whether every value f compares with a column can be
// a parameter of that column: text PostgreSQL refuses, or an id that is not
// a UUID, was never stored, so such a filter matches nothing.
func isSearchable(f store.LicenceFilter) bool {
	for _, s := range []*string{f.Email, f.Q, f.ProductID, f.ExternalRef, f.OrderID, f.MachineID} {
		if s != nil && !isText(*s) {
			return false
		}
	}
	return (f.QLicenceID == nil || isID(*f.QLicenceID)) && (f.After == nil || isID(f.After.ID))
}

// FindLicences builds one query of named parameters. A q search is a union
// of index look-ups (email prefix, id, external reference); a q that is not
// a UUID is never compared with the uuid id column, which would fail the
// statement rather than find nothing.
func (r reader) FindLicences(ctx context.Context, orgID string, f store.LicenceFilter, now time.Time) ([]licentia.Licence, error) {
	if !isID(orgID) || !isSearchable(f) {
		return nil, nil
	}
	conds := []string{"org_id = @org"}
	args := pgx.NamedArgs{"org": orgID, "now": ms(now), "limit": f.Limit}
	if f.Email != nil {
		conds = append(conds, "email_search = @email")
		args["email"] = strings.ToLower(*f.Email)
	}
	if f.QLicenceID != nil {
		conds = append(conds, "id = @qid")
		args["qid"] = *f.QLicenceID
	} else if f.Q != nil {
		conds = append(conds, "id IN ("+qUnion(*f.Q, args)+")")
	}
	if f.ProductID != nil {
		conds = append(conds, "product_id = @product")
		args["product"] = *f.ProductID
	}
	if f.ExternalRef != nil {
		conds = append(conds, "external_ref = @ref")
		args["ref"] = *f.ExternalRef
	}
	if f.State != nil {
		conds = append(conds, store.StateSQL(*f.State, "@now"))
	}
	if f.Status != nil {
		conds = append(conds, "status = @status")
		args["status"] = string(*f.Status)
	}
	if f.Term != nil {
		conds = append(conds, store.TermSQL(*f.Term))
	}
	if f.Source != nil {
		conds = append(conds, "source = @source")
		args["source"] = string(*f.Source)
	}
	if f.Feature != nil {
		conds = append(conds, "EXISTS (SELECT 1 FROM licence_features f WHERE f.licence_id = licences.id AND f.code = @feature)")
		args["feature"] = *f.Feature
	}
	conds = listConditions(f, conds, args)
	query := `SELECT ` + licenceColumns + ` FROM licences WHERE ` + strings.Join(conds, " AND ") +
		` ORDER BY issued_at DESC, id DESC LIMIT @limit`
	ls, err := r.queryLicences(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("find licences: %w", err)
	}
	return ls, nil
}

// listConditions adds the list's own filters to a find's: an order or
// machine id, the issue window and the keyset position, a row comparison
// the licences_by_issue index answers in order. An order id is looked up
// in each provider id's own index (a bitmap OR); a machine's licences come
// from the activations_by_machine index.
func listConditions(f store.LicenceFilter, conds []string, args pgx.NamedArgs) []string {
	if f.OrderID != nil {
		conds = append(conds, `(provider_order_id = @order OR provider_checkout_id = @order
			OR provider_subscription_id = @order OR provider_order_number = @order)`)
		args["order"] = *f.OrderID
	}
	if f.MachineID != nil {
		conds = append(conds, "id IN (SELECT licence_id FROM activations WHERE org_id = @org AND machine_id = @machine)")
		args["machine"] = *f.MachineID
	}
	if f.IssuedAfter != nil {
		conds = append(conds, "issued_at >= @issued_after")
		args["issued_after"] = ms(*f.IssuedAfter)
	}
	if f.IssuedBefore != nil {
		conds = append(conds, "issued_at < @issued_before")
		args["issued_before"] = ms(*f.IssuedBefore)
	}
	if f.After != nil {
		conds = append(conds, "(issued_at, id) < (@after_at, @after_id)")
		args["after_at"], args["after_id"] = ms(f.After.IssuedAt), f.After.ID
	}
	return conds
}

// qUnion returns the ids matching q as an email prefix
// (case-insensitively), an id or an external reference, and adds its
// parameters to args.
func qUnion(q string, args pgx.NamedArgs) string {
	low := strings.ToLower(q)
	prefix := "email_search >= @qlow"
	args["qlow"] = low
	if hi := store.EmailPrefixBound(low); hi != "" {
		prefix += " AND email_search < @qhigh"
		args["qhigh"] = hi
	}
	parts := []string{`SELECT id FROM licences WHERE org_id = @org AND ` + prefix}
	if isID(q) {
		parts = append(parts, `SELECT id FROM licences WHERE org_id = @org AND id = @qid`)
		args["qid"] = q
	}
	parts = append(parts, `SELECT id FROM licences WHERE org_id = @org AND external_ref = @qref`)
	args["qref"] = q
	return strings.Join(parts, " UNION ALL ")
}

// LockLicence takes the licence's row lock, which other transactions wait
// for until this one ends. It first takes the sweep lock in shared mode, as
// every change of a licence or its counters does (see lockSweepShared), and
// comes after the organization's lock in the lock order (see DB.InTx).
// FOR NO KEY UPDATE is enough to keep changes of the licence one at a time,
// and lets the FOR KEY SHARE lock of inserts referencing the licence (its
// activations) through.
func (t *tx) LockLicence(ctx context.Context, orgID, id string) (*licentia.Licence, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("lock licence: %w", licenceNotFound())
	}
	if err := t.sweepShared(ctx); err != nil {
		return nil, err
	}
	return t.locked(t.tx.QueryRow(ctx, lockLicence, orgID, id, store.SettingSweepWatermark), orgID, id)
}

// lockLicence locks a licence's row and reads it, with the sweep
// watermark: the sweep lock, held from the statement before, keeps the
// watermark from moving until the transaction ends, and a change of the
// licence's counters needs it.
const lockLicence = `SELECT ` + licenceColumns + `,
	(SELECT value FROM settings WHERE name = $3) FROM licences
	WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`

// locked reads the row of lockLicence and notes what the transaction now
// holds.
func (t *tx) locked(row pgx.Row, orgID, id string) (*licentia.Licence, error) {
	var mark *string
	l, err := scanLicence(store.ScanWith{Row: row, Extra: []any{&mark}})
	if err != nil {
		return nil, fmt.Errorf("lock licence: %w", err)
	}
	t.mark = mark
	if mark == nil {
		t.mark = new(string) // no sweep yet: the epoch
	}
	t.note(l)
	return l, nil
}

// note keeps l, a licence this transaction holds, as it has it stored now.
func (t *tx) note(l *licentia.Licence) {
	if t.licences == nil {
		t.licences = map[[2]string]licentia.Licence{}
	}
	t.licences[[2]string{l.OrgID, l.ID}] = *l
}

// LockSeat sends the licence's lock and its two reads in one round trip.
// Each statement of it sees what was committed before it began, so the
// reads after the lock see the licence as the lock left it, as they would
// one round trip later. The product is the licence's, found by the
// server: a licence's product never changes.
func (t *tx) LockSeat(ctx context.Context, orgID, licenceID, machineID string, product bool) (*store.Locked, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, fmt.Errorf("lock licence: %w", licenceNotFound())
	}
	if err := t.sweepShared(ctx); err != nil {
		return nil, err
	}
	qs := []heldBack{{sql: lockLicence, args: []any{orgID, licenceID, store.SettingSweepWatermark}}}
	seat := isText(machineID)
	if seat {
		qs = append(qs, heldBack{sql: liveActivation, args: []any{orgID, licenceID, machineID}})
	}
	if product {
		qs = append(qs, heldBack{sql: productOfLicence, args: []any{orgID, licenceID}})
	}
	br, err := t.tx.send(ctx, qs...)
	if err != nil {
		return nil, fmt.Errorf("lock licence: %w", err)
	}
	defer br.Close()
	l, err := t.locked(br.QueryRow(), orgID, licenceID)
	if err != nil {
		return nil, err
	}
	out := &store.Locked{Licence: l}
	if seat {
		a, err := scanActivation(br.QueryRow())
		switch {
		case err == nil:
			out.Held = a
		case licentia.ErrorCode(err) != licentia.CodeNotFound:
			return nil, fmt.Errorf("read live activation: %w", err)
		}
	}
	if product {
		rows, err := br.Query()
		if err != nil {
			return nil, fmt.Errorf("read product: %w", err)
		}
		if out.Product, err = collectProduct(rows); err != nil {
			return nil, err
		}
	}
	return out, br.Close()
}

// holdLicence locks a licence, as LockLicence, unless this transaction
// holds it already (the activation service locks it before it calls the
// store's activation changes, which lock it too).
func (t *tx) holdLicence(ctx context.Context, orgID, id string) error {
	if _, held := t.licences[[2]string{orgID, id}]; held {
		return nil
	}
	_, err := t.LockLicence(ctx, orgID, id)
	return err
}

// sweepShared takes the sweep lock shared, once a transaction.
func (t *tx) sweepShared(ctx context.Context) error {
	if t.sweepLocked {
		return nil
	}
	// Held back, it goes with the statement that takes the next lock, in
	// the same round trip and before it.
	t.tx.later(sweepLockShared)
	t.sweepLocked = true
	return nil
}

// CreateLicence inserts with ON CONFLICT DO NOTHING, so a taken id or
// external reference answers conflict without aborting the transaction. It
// counts the licence as stored: times at millisecond precision decide
// whether it is lapsed, as they do for the sweeper and counts.
func (t *tx) CreateLicence(ctx context.Context, l *licentia.Licence) error {
	if err := t.sweepShared(ctx); err != nil {
		return err
	}
	stored, err := t.insertLicence(ctx, l)
	if err != nil {
		return err
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	return t.apply(ctx, deltas{}.add(stored.OrgID, store.KeyOf(stored, w), 1, stored.LiveActivations))
}

// insertLicence writes a new licence row, uncounted, and returns it as
// stored.
func (t *tx) insertLicence(ctx context.Context, l *licentia.Licence) (*licentia.Licence, error) {
	rows, err := t.tx.Query(ctx, `INSERT INTO licences (`+licenceColumns+`, email_search)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26,
			$27, $28, $29, $30, $31, $32, $33)
		ON CONFLICT DO NOTHING RETURNING `+licenceColumns,
		l.ID, l.OrgID, l.ProductID, l.Email, ms(l.IssuedAt), msPtr(l.ExpiresAt), string(l.LimitKind), l.LimitCount, l.Major,
		string(l.Status), l.StatusReason, msPtr(l.StatusChangedAt), msPtr(l.TrialEndsAt), string(l.Source), l.IntegrationID, l.ExternalRef,
		l.Provider.OrderID, l.Provider.SubscriptionID, l.Provider.CustomerID, l.Provider.CheckoutID,
		msPtr(l.SubscriptionEndedAt), msPtr(l.AnonymisedAt), ms(l.CreatedAt), ms(l.UpdatedAt),
		l.LiveActivations, l.RenewalURL, l.Provider.OrderNumber, l.Replaces, l.ReplacedBy, l.TransfersPer30Days, l.MaxConcurrent,
		store.EncodeGrants(l.Features), strings.ToLower(l.Email))
	if err != nil {
		return nil, fmt.Errorf("create licence: %w", err)
	}
	stored, err := collect(rows, scanLicence)
	if err != nil {
		return nil, fmt.Errorf("create licence: %w", err)
	}
	if len(stored) != 1 {
		return nil, licentia.Errorf(licentia.CodeConflict, "The licence id or external reference is taken.")
	}
	if err := t.writeGrants(ctx, &stored[0], nil); err != nil {
		return nil, err
	}
	return &stored[0], nil
}

// UpdateLicence writes after's changeable fields and moves the licence's
// counts from the row it is counted in to the row of its new state. Both are
// computed from the stored licence, read under its row lock, not from the
// caller's before: live_activations may have changed since before was read
// (AnonymiseActivations frees machines in the same transaction), and only
// activation changes write it.
func (t *tx) UpdateLicence(ctx context.Context, after *licentia.Licence) error {
	if !isID(after.OrgID) || !isID(after.ID) {
		return fmt.Errorf("update licence: %w", licenceNotFound())
	}
	stored, err := t.LockLicence(ctx, after.OrgID, after.ID)
	if err != nil {
		return fmt.Errorf("update licence: %w", err)
	}
	updated, err := t.writeLicence(ctx, after, stored.Features)
	if err != nil {
		return err
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	d := deltas{}.add(stored.OrgID, store.KeyOf(stored, w), -1, -stored.LiveActivations)
	return t.apply(ctx, d.add(updated.OrgID, store.KeyOf(updated, w), 1, updated.LiveActivations))
}

// writeLicence writes after's changeable fields, uncounted, its grants
// among them (which were before), and returns the licence as stored. The
// caller holds its row lock.
func (t *tx) writeLicence(ctx context.Context, after *licentia.Licence, before []licentia.FeatureGrant) (*licentia.Licence, error) {
	updated, err := scanLicence(t.tx.QueryRow(ctx, `UPDATE licences SET email = $1, email_search = $2, expires_at = $3,
		status = $4, status_reason = $5, status_changed_at = $6, trial_ends_at = $7, external_ref = $8,
		provider_order_id = $9, provider_subscription_id = $10, provider_customer_id = $11, provider_checkout_id = $12,
		subscription_ended_at = $13, anonymised_at = $14, updated_at = $15, limit_kind = $16, limit_count = $17, major = $18,
		provider_order_number = $19, replaced_by = $20, transfers_per_30_days = $23, max_concurrent = $24, features = $25
		WHERE org_id = $21 AND id = $22 RETURNING `+licenceColumns,
		after.Email, strings.ToLower(after.Email), msPtr(after.ExpiresAt),
		string(after.Status), after.StatusReason, msPtr(after.StatusChangedAt), msPtr(after.TrialEndsAt), after.ExternalRef,
		after.Provider.OrderID, after.Provider.SubscriptionID, after.Provider.CustomerID, after.Provider.CheckoutID,
		msPtr(after.SubscriptionEndedAt), msPtr(after.AnonymisedAt), ms(after.UpdatedAt),
		string(after.LimitKind), after.LimitCount, after.Major, after.Provider.OrderNumber, after.ReplacedBy, after.OrgID, after.ID,
		after.TransfersPer30Days, after.MaxConcurrent, store.EncodeGrants(after.Features)))
	if isUnique(err) {
		return nil, licentia.Errorf(licentia.CodeConflict, "The external reference is taken.")
	}
	if err != nil {
		return nil, fmt.Errorf("update licence: %w", err)
	}
	t.note(updated)
	if err := t.writeGrants(ctx, updated, before); err != nil {
		return nil, err
	}
	return updated, nil
}

// purchaseLicencesQuery finds an order's licences through the partial
// indexes of migrations 0007 and 0014, one look-up each. A licence whose
// key was reissued is left out: its replacement carries the same ids.
const purchaseLicencesQuery = `SELECT ` + licenceColumns + ` FROM licences
	WHERE (provider_order_id = $1 OR provider_checkout_id = $1 OR provider_order_number = $1)
	AND anonymised_at IS NULL AND replaced_by IS NULL
	ORDER BY issued_at, id`

func (r reader) PurchaseLicences(ctx context.Context, orderID string) ([]licentia.Licence, error) {
	ls, err := r.queryLicences(ctx, purchaseLicencesQuery, orderID)
	if err != nil {
		return nil, fmt.Errorf("read purchase licences: %w", err)
	}
	return ls, nil
}
