package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const licenceColumns = `id, org_id, product_id, email, issued_at, expires_at, limit_kind, limit_count, major,
	status, status_reason, status_changed_at, trial_ends_at, source, integration_id, external_ref,
	provider_order_id, provider_subscription_id, provider_customer_id, provider_checkout_id,
	subscription_ended_at, anonymised_at, created_at, updated_at, live_activations, renewal_url,
	provider_order_number, replaces, replaced_by, transfers_per_30_days, max_concurrent, features`

// scanLicence scans nullable columns into sql.Null and named string types
// into strings: database/sql fills a **string or a *licentia.Status
// through reflection, which is slow on the status path. The destinations
// share one struct, so they cost one allocation, not one each.
func scanLicence(row interface{ Scan(...any) error }) (*licentia.Licence, error) {
	var l licentia.Licence
	var c struct {
		limitKind, status, source                     string
		issued, created, updated                      int64
		expires, changed, trial, subEnded, anonymised sql.Null[int64]
		reason, integration, ref, renewal             sql.Null[string]
		order, subscription, customer, checkout       sql.Null[string]
		orderNumber, replaces, replacedBy             sql.Null[string]
		features                                      string
	}
	err := row.Scan(&l.ID, &l.OrgID, &l.ProductID, &l.Email, &c.issued, &c.expires, &c.limitKind, &l.LimitCount, &l.Major,
		&c.status, &c.reason, &c.changed, &c.trial, &c.source, &c.integration, &c.ref,
		&c.order, &c.subscription, &c.customer, &c.checkout,
		&c.subEnded, &c.anonymised, &c.created, &c.updated, &l.LiveActivations, &c.renewal,
		&c.orderNumber, &c.replaces, &c.replacedBy, &l.TransfersPer30Days, &l.MaxConcurrent, &c.features)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeLicenceNotFound, "Licence")
		}
		return nil, err
	}
	l.LimitKind, l.Status, l.Source = licentia.LimitKind(c.limitKind), licentia.Status(c.status), licentia.Source(c.source)
	l.StatusReason, l.IntegrationID, l.ExternalRef, l.RenewalURL = ptr(c.reason), ptr(c.integration), ptr(c.ref), ptr(c.renewal)
	l.Provider = licentia.ProviderRefs{OrderID: ptr(c.order), SubscriptionID: ptr(c.subscription), CustomerID: ptr(c.customer),
		CheckoutID: ptr(c.checkout), OrderNumber: ptr(c.orderNumber)}
	l.Replaces, l.ReplacedBy = ptr(c.replaces), ptr(c.replacedBy)
	l.IssuedAt, l.CreatedAt, l.UpdatedAt = store.FromMillis(c.issued), store.FromMillis(c.created), store.FromMillis(c.updated)
	l.ExpiresAt, l.StatusChangedAt, l.TrialEndsAt = instant(c.expires), instant(c.changed), instant(c.trial)
	l.SubscriptionEndedAt, l.AnonymisedAt = instant(c.subEnded), instant(c.anonymised)
	if l.Features, err = store.DecodeGrants(c.features); err != nil {
		return nil, err
	}
	return &l, nil
}

// ptr is a nullable column's value, or nil.
func ptr[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	return &n.V
}

// instant is a nullable stored time, or nil.
func instant(n sql.Null[int64]) *time.Time {
	if !n.Valid {
		return nil
	}
	t := store.FromMillis(n.V)
	return &t
}

func (r reader) queryLicences(ctx context.Context, query string, args ...any) ([]licentia.Licence, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []licentia.Licence
	for rows.Next() {
		l, err := scanLicence(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

func (r reader) Licence(ctx context.Context, orgID, id string) (*licentia.Licence, error) {
	l, err := scanLicence(r.q.QueryRowContext(ctx, `SELECT `+licenceColumns+` FROM licences WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read licence: %w", err)
	}
	return l, nil
}

// licenceWithSeatQuery reads what a status check uses of a licence, and the
// machine's live seat, found by one look-up in its partial index.
var licenceWithSeatQuery = `SELECT ` + store.Qualified(store.StatusColumns, "l") + `, a.id, a.last_seen_at
	FROM licences l LEFT JOIN activations a ON a.licence_id = l.id AND a.machine_id = ? AND a.deactivated_at IS NULL
	WHERE l.id = ?`

func (r reader) LicenceWithSeat(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	// A look-up of one row by its key, with no lock to wait for, is never
	// long enough to stop part way. A context that can end would cost the
	// driver and database/sql a goroutine each, watching it for the
	// query's length.
	ctx = context.WithoutCancel(ctx)
	var row statusRow
	err := r.q.QueryRowContext(ctx, licenceWithSeatQuery, machineID, licenceID).Scan(row.targets()...)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeLicenceNotFound, "Licence")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	return row.licence()
}

// LicenceWithSeat reads as reader's does, on the status reads' own
// connections (statusReads).
func (db *DB) LicenceWithSeat(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	return db.status.read(context.WithoutCancel(ctx), licenceID, machineID)
}

// statusRow is a row of licenceWithSeatQuery as SQLite holds it.
type statusRow struct {
	id, org, product, status, limitKind, features string
	major, limitCount                             int64
	expires, trial, seen                          sql.Null[int64]
	seat                                          sql.Null[string]
}

// targets are the row's fields in the query's order of columns.
func (c *statusRow) targets() []any {
	return []any{&c.id, &c.org, &c.product, &c.status, &c.expires, &c.trial, &c.major, &c.limitKind,
		&c.limitCount, &c.features, &c.seat, &c.seen}
}

// fill sets the row from the values the driver read, in the same order.
func (c *statusRow) fill(values []driver.Value) error {
	targets := c.targets()
	if len(values) != len(targets) {
		return fmt.Errorf("%d columns, want %d", len(values), len(targets))
	}
	for i, t := range targets {
		if err := assignValue(t, values[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// assignValue sets target, a field of statusRow, from a value the driver
// read. A value of another type than the column's is an error, not
// converted: every column of the query holds one type.
func assignValue(target any, v driver.Value) error {
	switch t := target.(type) {
	case *string:
		if s, ok := v.(string); ok {
			*t = s
			return nil
		}
	case *int64:
		if n, ok := v.(int64); ok {
			*t = n
			return nil
		}
	case *sql.Null[int64]:
		if v == nil {
			*t = sql.Null[int64]{}
			return nil
		}
		if n, ok := v.(int64); ok {
			*t = sql.Null[int64]{V: n, Valid: true}
			return nil
		}
	case *sql.Null[string]:
		if v == nil {
			*t = sql.Null[string]{}
			return nil
		}
		if s, ok := v.(string); ok {
			*t = sql.Null[string]{V: s, Valid: true}
			return nil
		}
	}
	return fmt.Errorf("a value of type %T for %T", v, target)
}

// licence is the licence's part a status check uses, and the seat, nil
// when the machine holds none.
func (c *statusRow) licence() (*licentia.Licence, *store.Seat, error) {
	l := &licentia.Licence{ID: c.id, OrgID: c.org, ProductID: c.product, Status: licentia.Status(c.status),
		ExpiresAt: instant(c.expires), TrialEndsAt: instant(c.trial), Major: c.major,
		LimitKind: licentia.LimitKind(c.limitKind), LimitCount: c.limitCount}
	var err error
	if l.Features, err = store.DecodeGrants(c.features); err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	if !c.seat.Valid || !c.seen.Valid {
		return l, nil, nil
	}
	return l, &store.Seat{ActivationID: c.seat.V, LastSeenAt: store.FromMillis(c.seen.V)}, nil
}

func (r reader) LicenceIDTaken(ctx context.Context, id string) (bool, error) {
	var n int
	if err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM licences WHERE id = ?`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("check licence id: %w", err)
	}
	return n > 0, nil
}

func (r reader) LicenceByExternalRef(ctx context.Context, orgID, productID, ref string) (*licentia.Licence, error) {
	l, err := scanLicence(r.q.QueryRowContext(ctx, `SELECT `+licenceColumns+` FROM licences
		WHERE org_id = ? AND product_id = ? AND external_ref = ? AND replaced_by IS NULL`, orgID, productID, ref))
	if err != nil {
		return nil, fmt.Errorf("read licence by external ref: %w", err)
	}
	return l, nil
}

// FindLicences builds one query of named parameters. A q search starts from
// a union of three index look-ups (email prefix, id, external reference).
func (r reader) FindLicences(ctx context.Context, orgID string, f store.LicenceFilter, now time.Time) ([]licentia.Licence, error) {
	conds := []string{"org_id = :org"}
	args := []any{sql.Named("org", orgID), sql.Named("now", store.Millis(now)), sql.Named("limit", f.Limit)}
	from := "licences"
	if f.Email != nil {
		conds = append(conds, "email_search = :email")
		args = append(args, sql.Named("email", strings.ToLower(*f.Email)))
	}
	if f.QLicenceID != nil {
		conds = append(conds, "id = :qid")
		args = append(args, sql.Named("qid", *f.QLicenceID))
	} else if f.Q != nil {
		q := strings.ToLower(*f.Q)
		prefix := "email_search >= :qlow"
		if hi := store.EmailPrefixBound(q); hi != "" {
			prefix += " AND email_search < :qhigh"
			args = append(args, sql.Named("qhigh", hi))
		}
		// The matches drive the query (CROSS JOIN keeps them the outer
		// loop): as an IN condition, SQLite walked the organization's
		// licences in issue order and tested each, a scan of a million
		// rows for a prefix that matches a hundred.
		from = `(SELECT id AS match_id FROM licences WHERE org_id = :org AND ` + prefix + `
			UNION SELECT id FROM licences WHERE org_id = :org AND id = :qid
			UNION SELECT id FROM licences WHERE org_id = :org AND external_ref = :qref) AS q
			CROSS JOIN licences ON licences.id = q.match_id`
		args = append(args, sql.Named("qlow", q), sql.Named("qid", *f.Q), sql.Named("qref", *f.Q))
	}
	if f.ProductID != nil {
		conds = append(conds, "product_id = :product")
		args = append(args, sql.Named("product", *f.ProductID))
	}
	if f.ExternalRef != nil {
		conds = append(conds, "external_ref = :ref")
		args = append(args, sql.Named("ref", *f.ExternalRef))
	}
	if f.State != nil {
		conds = append(conds, store.StateSQL(*f.State, ":now"))
	}
	if f.Status != nil {
		conds = append(conds, "status = :status")
		args = append(args, sql.Named("status", string(*f.Status)))
	}
	if f.Term != nil {
		conds = append(conds, store.TermSQL(*f.Term))
	}
	if f.Source != nil {
		conds = append(conds, "source = :source")
		args = append(args, sql.Named("source", string(*f.Source)))
	}
	if f.Feature != nil {
		conds = append(conds, "EXISTS (SELECT 1 FROM licence_features f WHERE f.licence_id = licences.id AND f.code = :feature)")
		args = append(args, sql.Named("feature", *f.Feature))
	}
	conds, args = listConditions(f, conds, args)
	query := `SELECT ` + licenceColumns + ` FROM ` + from + ` WHERE ` + strings.Join(conds, " AND ") +
		` ORDER BY issued_at DESC, id DESC LIMIT :limit`
	ls, err := r.queryLicences(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find licences: %w", err)
	}
	return ls, nil
}

// listConditions adds the list's own filters to a find's: an order or
// machine id, the issue window and the keyset position. An order id is
// looked up in each provider id's own index (SQLite's OR optimisation);
// a machine's licences come from the activations_by_machine index.
func listConditions(f store.LicenceFilter, conds []string, args []any) ([]string, []any) {
	if f.OrderID != nil {
		conds = append(conds, `(provider_order_id = :order OR provider_checkout_id = :order
			OR provider_subscription_id = :order OR provider_order_number = :order)`)
		args = append(args, sql.Named("order", *f.OrderID))
	}
	if f.MachineID != nil {
		conds = append(conds, "licences.id IN (SELECT licence_id FROM activations WHERE org_id = :org AND machine_id = :machine)")
		args = append(args, sql.Named("machine", *f.MachineID))
	}
	if f.IssuedAfter != nil {
		conds = append(conds, "issued_at >= :issued_after")
		args = append(args, sql.Named("issued_after", store.Millis(*f.IssuedAfter)))
	}
	if f.IssuedBefore != nil {
		conds = append(conds, "issued_at < :issued_before")
		args = append(args, sql.Named("issued_before", store.Millis(*f.IssuedBefore)))
	}
	if f.After != nil {
		conds = append(conds, "(issued_at, licences.id) < (:after_at, :after_id)")
		args = append(args, sql.Named("after_at", store.Millis(f.After.IssuedAt)), sql.Named("after_id", f.After.ID))
	}
	return conds, args
}

// LockLicence reads the licence: SQLite's one writer already holds every
// transaction apart.
func (t *tx) LockLicence(ctx context.Context, orgID, id string) (*licentia.Licence, error) {
	return t.Licence(ctx, orgID, id)
}

func (t *tx) LockSeat(ctx context.Context, orgID, licenceID, machineID string, product bool) (*store.Locked, error) {
	return store.LockSeatInTurn(ctx, t, orgID, licenceID, machineID, product)
}

// CreateLicence counts the licence as stored: times at millisecond
// precision decide whether it is lapsed, as they do for the sweeper and
// counts.
func (t *tx) CreateLicence(ctx context.Context, l *licentia.Licence) error {
	stored, err := scanLicence(t.tx.QueryRowContext(ctx, `INSERT INTO licences (`+licenceColumns+`, email_search)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+licenceColumns,
		l.ID, l.OrgID, l.ProductID, l.Email, store.Millis(l.IssuedAt), store.MillisPtr(l.ExpiresAt), l.LimitKind, l.LimitCount, l.Major,
		l.Status, l.StatusReason, store.MillisPtr(l.StatusChangedAt), store.MillisPtr(l.TrialEndsAt), l.Source, l.IntegrationID, l.ExternalRef,
		l.Provider.OrderID, l.Provider.SubscriptionID, l.Provider.CustomerID, l.Provider.CheckoutID,
		store.MillisPtr(l.SubscriptionEndedAt), store.MillisPtr(l.AnonymisedAt), store.Millis(l.CreatedAt), store.Millis(l.UpdatedAt),
		l.LiveActivations, l.RenewalURL, l.Provider.OrderNumber, l.Replaces, l.ReplacedBy, l.TransfersPer30Days, l.MaxConcurrent,
		store.EncodeGrants(l.Features), strings.ToLower(l.Email)))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The licence id or external reference is taken.")
	}
	if err != nil {
		return fmt.Errorf("create licence: %w", err)
	}
	if err := t.writeGrants(ctx, stored, nil); err != nil {
		return err
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	return t.bump(ctx, stored.OrgID, store.KeyOf(stored, w), 1, stored.LiveActivations)
}

// UpdateLicence writes after's changeable fields and moves the licence's
// counts from the row it is counted in to the row of its new state. Both are
// computed from the stored licence, not from the caller's before:
// live_activations may have changed since before was read
// (AnonymiseActivations frees machines in the same transaction), and only
// activation changes write it.
func (t *tx) UpdateLicence(ctx context.Context, after *licentia.Licence) error {
	stored, err := t.Licence(ctx, after.OrgID, after.ID)
	if err != nil {
		return fmt.Errorf("update licence: %w", err)
	}
	updated, err := scanLicence(t.tx.QueryRowContext(ctx, `UPDATE licences SET email = ?, email_search = ?, expires_at = ?, status = ?,
		status_reason = ?, status_changed_at = ?, trial_ends_at = ?, external_ref = ?,
		provider_order_id = ?, provider_subscription_id = ?, provider_customer_id = ?, provider_checkout_id = ?,
		subscription_ended_at = ?, anonymised_at = ?, updated_at = ?, limit_kind = ?, limit_count = ?, major = ?,
		provider_order_number = ?, replaced_by = ?, transfers_per_30_days = ?, max_concurrent = ?, features = ?
		WHERE org_id = ? AND id = ? RETURNING `+licenceColumns,
		after.Email, strings.ToLower(after.Email), store.MillisPtr(after.ExpiresAt), after.Status,
		after.StatusReason, store.MillisPtr(after.StatusChangedAt), store.MillisPtr(after.TrialEndsAt), after.ExternalRef,
		after.Provider.OrderID, after.Provider.SubscriptionID, after.Provider.CustomerID, after.Provider.CheckoutID,
		store.MillisPtr(after.SubscriptionEndedAt), store.MillisPtr(after.AnonymisedAt), store.Millis(after.UpdatedAt),
		after.LimitKind, after.LimitCount, after.Major, after.Provider.OrderNumber, after.ReplacedBy, after.TransfersPer30Days, after.MaxConcurrent,
		store.EncodeGrants(after.Features),
		after.OrgID, after.ID))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The external reference is taken.")
	}
	if err != nil {
		return fmt.Errorf("update licence: %w", err)
	}
	if err := t.writeGrants(ctx, updated, stored.Features); err != nil {
		return err
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	return t.move(ctx, stored.OrgID, store.KeyOf(stored, w), stored.LiveActivations, store.KeyOf(updated, w), updated.LiveActivations)
}

func (r reader) LicenceAudit(ctx context.Context, orgID, licenceID string) ([]licentia.AuditEntry, error) {
	return r.audit(ctx, `WHERE org_id = ? AND licence_id = ?`, orgID, licenceID)
}

func (t *tx) RewriteLicenceAudit(ctx context.Context, orgID, licenceID string, fn func([]byte) []byte) error {
	entries, err := t.LicenceAudit(ctx, orgID, licenceID)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := t.tx.ExecContext(ctx, `UPDATE audit_log SET data = ? WHERE id = ?`, string(fn(e.Data)), e.ID); err != nil {
			return fmt.Errorf("rewrite audit: %w", err)
		}
	}
	return nil
}

// watermark reads the sweep watermark (the epoch before any sweep).
func (r reader) watermark(ctx context.Context) (time.Time, error) {
	v, err := r.Setting(ctx, store.SettingSweepWatermark)
	if err != nil {
		return time.Time{}, err
	}
	return store.ParseWatermark(v)
}

func (r reader) LicenceByID(ctx context.Context, id string) (*licentia.Licence, error) {
	l, err := scanLicence(r.q.QueryRowContext(ctx, `SELECT `+licenceColumns+` FROM licences WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("read licence: %w", err)
	}
	return l, nil
}

// purchaseLicencesQuery finds an order's licences through the partial
// indexes of migrations 0007 and 0014, one look-up each. A licence whose
// key was reissued is left out: its replacement carries the same ids.
const purchaseLicencesQuery = `SELECT ` + licenceColumns + ` FROM licences
	WHERE (provider_order_id = ?1 OR provider_checkout_id = ?1 OR provider_order_number = ?1)
	AND anonymised_at IS NULL AND replaced_by IS NULL
	ORDER BY issued_at, id`

func (r reader) PurchaseLicences(ctx context.Context, orderID string) ([]licentia.Licence, error) {
	ls, err := r.queryLicences(ctx, purchaseLicencesQuery, orderID)
	if err != nil {
		return nil, fmt.Errorf("read purchase licences: %w", err)
	}
	return ls, nil
}
