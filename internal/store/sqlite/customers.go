package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/licentia/licentia/internal/store"
)

// Customers groups the organization's licences by email_search, walking
// the licences_by_email index when a prefix is given.
func (r reader) Customers(ctx context.Context, orgID string, f store.CustomerFilter) ([]store.Customer, error) {
	conds := []string{"org_id = :org", "anonymised_at IS NULL"}
	args := []any{sql.Named("org", orgID), sql.Named("limit", f.Limit), sql.Named("offset", f.Offset)}
	if f.Prefix != nil {
		low := strings.ToLower(*f.Prefix)
		conds = append(conds, "email_search >= :low")
		args = append(args, sql.Named("low", low))
		if hi := store.EmailPrefixBound(low); hi != "" {
			conds = append(conds, "email_search < :high")
			args = append(args, sql.Named("high", hi))
		}
	}
	rows, err := r.q.QueryContext(ctx, `SELECT email_search, MAX(issued_at), COUNT(*) FROM licences
		WHERE `+strings.Join(conds, " AND ")+`
		GROUP BY email_search ORDER BY MAX(issued_at) DESC, email_search LIMIT :limit OFFSET :offset`, args...)
	if err != nil {
		return nil, fmt.Errorf("list customers: %w", err)
	}
	defer rows.Close()
	var cs []store.Customer
	for rows.Next() {
		var c store.Customer
		var last int64
		if err := rows.Scan(&c.Email, &last, &c.Licences); err != nil {
			return nil, fmt.Errorf("list customers: %w", err)
		}
		c.LastIssuedAt = store.FromMillis(last)
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list customers: %w", err)
	}
	return cs, nil
}
