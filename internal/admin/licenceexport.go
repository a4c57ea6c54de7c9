package admin

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// ExportColumns is the export's header row, always written, in this order.
var ExportColumns = []string{"id", "product_id", "email", "state", "status", "limit_kind", "limit_count",
	"live_machines", "issued_at", "expires_at", "trial_ends_at", "source", "order_id", "external_ref", "features"}

// ExportPage is how many licences each read of an export takes: each page
// is its own short read, so an export of a million licences holds neither
// a transaction nor the rows in memory.
const ExportPage = 1000

// LicenceExport is a checked export of the caller's licences, newest first,
// waiting to be written.
type LicenceExport struct {
	s      *Service
	orgID  string
	filter store.LicenceFilter
}

// ExportLicences checks an export's filters, those of the list. Nothing is
// read until WriteCSV.
func (s *Service) ExportLicences(ctx context.Context, orgID string, q LicenceFilters) (*LicenceExport, error) {
	if err := q.Validate().Err(); err != nil {
		return nil, err
	}
	f, err := s.listFilter(ctx, orgID, &q)
	if err != nil {
		return nil, err
	}
	f.Limit = ExportPage
	return &LicenceExport{s: s, orgID: orgID, filter: f}, nil
}

// WriteCSV writes the export to w as CSV (RFC 4180, UTF-8, CRLF line ends):
// the header row, then a row a licence, a page at a time by keyset, as the
// list pages. Licences issued while it runs are newer than its first page
// and are left out. No licence key is ever written.
//
// Before each page's read it calls next, which gives that read its context
// (each page its own deadline: an export outlasts any one request's) and
// may push what was written so far to the client; an error from next or
// from w ends the export with that error.
func (e *LicenceExport) WriteCSV(w io.Writer, next func() (context.Context, context.CancelFunc, error)) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	row := make([]byte, 0, 1024)
	for i, c := range ExportColumns {
		row = appendCell(row, i, c)
	}
	row = append(row, '\r', '\n')
	if _, err := bw.Write(row); err != nil {
		return err
	}
	f := e.filter
	for {
		if err := bw.Flush(); err != nil {
			return err
		}
		ctx, cancel, err := next()
		if err != nil {
			return err
		}
		now := e.s.now()
		ls, err := e.s.store.FindLicences(ctx, e.orgID, f, now)
		cancel()
		if err != nil {
			return err
		}
		for i := range ls {
			row = appendLicenceRow(row[:0], &ls[i], now)
			if _, err := bw.Write(row); err != nil {
				return err
			}
		}
		if len(ls) < f.Limit {
			return bw.Flush()
		}
		last := &ls[len(ls)-1]
		f.After = &store.ListPosition{IssuedAt: last.IssuedAt, ID: last.ID}
	}
}

// appendLicenceRow appends a licence's row, CRLF included. Null values are
// empty cells; features are the granted codes, in the licence's order (by
// code), joined by ";".
func appendLicenceRow(b []byte, l *licentia.Licence, now time.Time) []byte {
	cells := [...]string{l.ID, l.ProductID, l.Email, string(l.DerivedState(now)), string(l.Status), string(l.LimitKind),
		strconv.FormatInt(l.LimitCount, 10), strconv.FormatInt(l.LiveMachines(now), 10), licentia.FormatTime(l.IssuedAt),
		optionalTime(l.ExpiresAt), optionalTime(l.TrialEndsAt), string(l.Source), orEmpty(l.Provider.OrderID),
		orEmpty(l.ExternalRef), featureCodes(l.Features)}
	for i, c := range cells {
		b = appendCell(b, i, c)
	}
	return append(b, '\r', '\n')
}

func featureCodes(gs []licentia.FeatureGrant) string {
	codes := make([]string, len(gs))
	for i, g := range gs {
		codes[i] = g.Code
	}
	return strings.Join(codes, ";")
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return licentia.FormatTime(*t)
}

// appendCell appends the i-th cell of a row as RFC 4180 says: quoted when
// it holds a comma, a quote or a line break, its quotes doubled. A cell a
// spreadsheet would read as a formula (one starting with =, +, - or @) is
// prefixed with ' so that it reads as text.
func appendCell(b []byte, i int, v string) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	formula := v != "" && strings.ContainsRune("=+-@", rune(v[0]))
	if !strings.ContainsAny(v, ",\"\r\n") {
		if formula {
			b = append(b, '\'')
		}
		return append(b, v...)
	}
	b = append(b, '"')
	if formula {
		b = append(b, '\'')
	}
	for j := 0; j < len(v); j++ {
		if v[j] == '"' {
			b = append(b, '"')
		}
		b = append(b, v[j])
	}
	return append(b, '"')
}
