package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// CSVSource writes a CSV file a page at a time, calling next before each
// page's read (admin.LicenceExport).
type CSVSource interface {
	WriteCSV(w io.Writer, next func() (context.Context, context.CancelFunc, error)) error
}

// StreamCSV answers src as a CSV file (text/csv; charset=utf-8), written a
// page at a time. Each page's read gets its own deadline of timeout, not
// the request's, which a long export outlasts; the write deadline moves on
// by writeTimeout with each page, so a client that stops reading is still
// cut off. A client gone away (the request's context canceled) ends the
// file at the next page. An error once the answer has begun can only end
// it early: it is returned for the log.
func StreamCSV(w http.ResponseWriter, r *http.Request, src CSVSource, timeout, writeTimeout time.Duration) error {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="licences.csv"`)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	detached := context.WithoutCancel(r.Context())
	return src.WriteCSV(w, func() (context.Context, context.CancelFunc, error) {
		if err := r.Context().Err(); errors.Is(err, context.Canceled) {
			return nil, nil, err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return nil, nil, err
		}
		if err := rc.SetWriteDeadline(clock.Deadline(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return nil, nil, err
		}
		ctx, cancel := context.WithTimeout(detached, timeout)
		return ctx, cancel, nil
	})
}
