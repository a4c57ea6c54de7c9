package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// MaxAuditPage is the most audit entries one page of the organization's
// log lists.
const MaxAuditPage = 100

// OrganizationAudit lists a page of the organization's audit log, team
// changes and licence changes alike, newest first, as q filters it and
// starting after the entry q.Before when given; next is the cursor of the following page, or nil on
// the last.
func (s *Service) OrganizationAudit(ctx context.Context, orgID string, q store.AuditQuery) (es []licentia.AuditEntry, next *string, err error) {
	es, err = s.store.AuditPage(ctx, orgID, q, MaxAuditPage+1)
	if err != nil {
		return nil, nil, fmt.Errorf("organization audit: %w", err)
	}
	if len(es) > MaxAuditPage {
		es = es[:MaxAuditPage]
		next = &es[MaxAuditPage-1].ID
	}
	return es, next, nil
}

// DayActivity is what happened on one UTC day, which starts at Day.
type DayActivity struct {
	Day       time.Time
	Issued    int64
	Revoked   int64
	Activated int64
}

// Activity counts the licences issued, licences revoked and machines
// activated on each of the last days UTC days, today last, from the audit
// log: one entry a day, days without any included.
func (s *Service) Activity(ctx context.Context, orgID string, days int) ([]DayActivity, error) {
	now := s.now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	since := today.AddDate(0, 0, 1-days)
	counts, err := s.store.AuditByDay(ctx, orgID,
		[]string{licentia.AuditLicenceIssued, licentia.AuditLicenceRevoked, licentia.AuditActivationCreated}, since)
	if err != nil {
		return nil, fmt.Errorf("activity: %w", err)
	}
	out := make([]DayActivity, days)
	for i := range out {
		out[i].Day = since.AddDate(0, 0, i)
	}
	for _, c := range counts {
		i := int(c.Day.Sub(since) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		switch c.Action {
		case licentia.AuditLicenceIssued:
			out[i].Issued += c.N
		case licentia.AuditLicenceRevoked:
			out[i].Revoked += c.N
		case licentia.AuditActivationCreated:
			out[i].Activated += c.N
		}
	}
	return out, nil
}
