package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store"
)

// Customers groups the organization's licences by email_search, walking
// the licences_by_email index when a prefix is given.
func (r reader) Customers(ctx context.Context, orgID string, f store.CustomerFilter) ([]store.Customer, error) {
	if !isID(orgID) || (f.Prefix != nil && !isText(*f.Prefix)) {
		return nil, nil
	}
	conds := []string{"org_id = @org", "anonymised_at IS NULL"}
	args := pgx.NamedArgs{"org": orgID, "limit": f.Limit, "offset": f.Offset}
	if f.Prefix != nil {
		low := strings.ToLower(*f.Prefix)
		conds = append(conds, "email_search >= @low")
		args["low"] = low
		if hi := store.EmailPrefixBound(low); hi != "" {
			conds = append(conds, "email_search < @high")
			args["high"] = hi
		}
	}
	rows, err := r.q.Query(ctx, `SELECT email_search, MAX(issued_at), COUNT(*) FROM licences
		WHERE `+strings.Join(conds, " AND ")+`
		GROUP BY email_search ORDER BY MAX(issued_at) DESC, email_search LIMIT @limit OFFSET @offset`, args)
	if err != nil {
		return nil, fmt.Errorf("list customers: %w", err)
	}
	defer rows.Close()
	var cs []store.Customer
	for rows.Next() {
		var c store.Customer
		if err := rows.Scan(&c.Email, &c.LastIssuedAt, &c.Licences); err != nil {
			return nil, fmt.Errorf("list customers: %w", err)
		}
		c.LastIssuedAt = c.LastIssuedAt.UTC()
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list customers: %w", err)
	}
	return cs, nil
}
