package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// LicenceFilters are the filters of the licence list and its export, each a
// query parameter: every filter of a find, all optional, and the list's
// own.
type LicenceFilters struct {
	FindQuery
	// OrderID is any of a provider's ids of the sale (order, checkout,
	// subscription) or its order number.
	OrderID *string `query:"order_id"`
	// MachineID names a machine activated on the licence, now or before.
	MachineID    *string    `query:"machine_id"`
	IssuedAfter  *time.Time `query:"issued_after"`
	IssuedBefore *time.Time `query:"issued_before"`
}

// ListQuery is a list page's parameters (GET /v1/admin/licences/list).
type ListQuery struct {
	LicenceFilters
	Limit  *int64  `query:"limit" input:"min=1,max=200"`
	Cursor *string `query:"cursor"`
}

// Limits of the list.
const (
	DefaultListLimit = 50
	// MaxOrderID and MaxMachineID are the longest filter values, as long
	// as any id a provider or an application may store.
	MaxOrderID   = 200
	MaxMachineID = 200
)

// Validate reports every problem of the filters.
func (f *LicenceFilters) Validate() licentia.Issues {
	is := f.validateFilters()
	for _, p := range []struct {
		path  string
		value *string
		max   int
	}{{"query.order_id", f.OrderID, MaxOrderID}, {"query.machine_id", f.MachineID, MaxMachineID}} {
		if p.value != nil {
			if n := utf8.RuneCountInString(*p.value); n == 0 || n > p.max {
				is.Add(p.path, "must be 1 to %d characters", p.max)
			}
		}
	}
	return append(is, licentia.CheckFields(f)...)
}

// Validate reports every problem of a list page but the cursor's, which
// only the list can judge (see readCursor).
func (q *ListQuery) Validate() licentia.Issues {
	is := q.LicenceFilters.Validate()
	return append(is, licentia.CheckFields(q).Of("query.limit", "query.cursor")...)
}

// LicencePage is one page of the list, newest first. Next is the cursor
// of the next page, nil on the last.
type LicencePage struct {
	Licences []licentia.Licence
	Next     *string
	// Now is the instant the page was read at, which its states follow.
	Now time.Time
}

// ListLicences lists a page of the caller's licences, newest first
// (issued_at, then id, descending), by keyset: the cursor names the last
// licence of the previous page, so licences issued while a caller pages
// never shift the pages still to come.
func (s *Service) ListLicences(ctx context.Context, orgID string, q ListQuery) (*LicencePage, error) {
	is := q.Validate()
	var after *store.ListPosition
	if q.Cursor != nil && len(is) == 0 {
		after = s.readCursor(&is, orgID, &q.LicenceFilters, *q.Cursor)
	}
	if err := is.Err(); err != nil {
		return nil, err
	}
	f, err := s.listFilter(ctx, orgID, &q.LicenceFilters)
	if err != nil {
		return nil, err
	}
	limit := int(DefaultListLimit)
	if q.Limit != nil {
		limit = int(*q.Limit)
	}
	f.After, f.Limit = after, limit+1
	now := s.now()
	ls, err := s.store.FindLicences(ctx, orgID, f, now)
	if err != nil {
		return nil, err
	}
	page := &LicencePage{Licences: ls, Now: now}
	if len(ls) > limit {
		page.Licences = ls[:limit]
		last := &ls[limit-1]
		next := s.cursor(orgID, &q.LicenceFilters, store.ListPosition{IssuedAt: last.IssuedAt, ID: last.ID})
		page.Next = &next
	}
	return page, nil
}

// listFilter is the store's filter of valid list filters.
func (s *Service) listFilter(ctx context.Context, orgID string, q *LicenceFilters) (store.LicenceFilter, error) {
	f, err := s.findFilter(ctx, orgID, &q.FindQuery)
	if err != nil {
		return f, err
	}
	f.OrderID, f.MachineID, f.IssuedAfter, f.IssuedBefore = q.OrderID, q.MachineID, q.IssuedAfter, q.IssuedBefore
	return f, nil
}

// A cursor is the position of a page's last licence (issued_at in Unix
// milliseconds, then the id's 16 bytes) and a tag over that position, the
// organization and the filters, in unpadded base64url. The tag is made with
// a key derived from the master key, which every process of the service
// holds, so any process accepts another's cursor; a cursor edited, of
// another organization or used with other filters fails it.
const (
	cursorPurpose = "licentia/licence-list-cursor/v1"
	cursorTagSize = 16
	cursorSize    = 8 + 16 + cursorTagSize
)

func (s *Service) cursor(orgID string, f *LicenceFilters, pos store.ListPosition) string {
	b := make([]byte, 8, cursorSize)
	binary.BigEndian.PutUint64(b, uint64(store.Millis(pos.IssuedAt)))
	id, _ := hex.DecodeString(strings.ReplaceAll(pos.ID, "-", ""))
	b = append(b, id...)
	b = append(b, s.cursorTag(orgID, f, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readCursor returns the position a cursor names, or adds the issue at
// query.cursor when it is not one this list gave out for these filters.
func (s *Service) readCursor(is *licentia.Issues, orgID string, f *LicenceFilters, c string) *store.ListPosition {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != cursorSize || !hmac.Equal(b[24:], s.cursorTag(orgID, f, b[:24])) {
		is.Add("query.cursor", "is not a cursor of this list with these filters: take next_cursor from the previous page, with the same filters")
		return nil
	}
	ms := int64(binary.BigEndian.Uint64(b[:8]))
	h := hex.EncodeToString(b[8:24])
	id := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	return &store.ListPosition{IssuedAt: store.FromMillis(ms), ID: id}
}

// cursorTag binds a position to the organization and the filters as given
// (their JSON, the decoding record left out).
func (s *Service) cursorTag(orgID string, f *LicenceFilters, pos []byte) []byte {
	plain := *f
	plain.Decoded = licentia.Decoded{}
	filters, _ := json.Marshal(plain)
	data := slices.Concat([]byte(orgID), []byte{0}, filters, []byte{0}, pos)
	return s.tagKey().Tag(cursorPurpose, data)[:cursorTagSize]
}

// tagKey is the master key, or without one a key of this process only:
// its cursors then work in the process that gave them out.
func (s *Service) tagKey() *signing.MasterKey {
	if s.keys != nil {
		if m, err := s.keys.Master(); err == nil {
			return m
		}
	}
	return s.localTags
}

// newLocalTags returns a random key for tagKey.
func newLocalTags() *signing.MasterKey {
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		panic(err) // the size is right by construction
	}
	return m
}
