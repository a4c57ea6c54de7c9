package portal

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

var errPanic = errors.New("panic")

// pages are the parsed templates, one per page, each with the layout.
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"time": func(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") },
	"expiry": func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return t.UTC().Format("2 Jan 2006 15:04 UTC")
	},
	// short is the start of a long id, enough to tell machines apart.
	"short": func(s string) string {
		if r := []rune(s); len(r) > 12 {
			return string(r[:12]) + "…"
		}
		return s
	},
}

// parsePages parses each page's template with the layout.
func parsePages() (pages, error) { return web.ParsePages(files, funcs, "portal") }

// brand is what a page shows of the organization.
type brand = web.Brand

var brandOf = web.BrandOf

// view is what every page's template gets.
type view struct {
	Title string
	// Brand is the organization's, nil on a page of no organization.
	Brand *brand
	// Email is the signed-in customer's address, "" when none is.
	Email     string
	Notice    string
	Problem   string
	Data      any
	RequestID string
}

// render writes a page whole, or nothing: a template that fails leaves the
// answer to the error page. A branded page allows its logo's origin in
// img-src, and nothing else beyond the console's policy.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	v.RequestID = requestID(r.Context())
	t, ok := s.pages[page]
	if !ok {
		return fmt.Errorf("render: no page %s", page)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	if v.Brand != nil && v.Brand.LogoURL != "" {
		w.Header().Set("Content-Security-Policy", web.AllowLogo(web.PagePolicy, v.Brand.LogoURL))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

type errorPage struct {
	Status  int
	Message string
}

// fail answers an error with the error page: a contract error with its
// status and message, anything else 500 with a fixed message, its cause
// logged with the request id and never shown.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, b *brand, err error) {
	status, msg := http.StatusInternalServerError, "Something went wrong on our side. Try again in a moment."
	if e, ok := errors.AsType[*licentia.Error](err); ok && e.Code != licentia.CodeInternal {
		status, msg = web.Status(e.Code), e.Message
	}
	if status >= 500 {
		s.log.LogAttrs(r.Context(), slog.LevelError, "portal request failed",
			slog.String("request_id", requestID(r.Context())), slog.String("code", string(licentia.ErrorCode(err))),
			slog.String("error", err.Error()))
	}
	v := &view{Title: http.StatusText(status), Brand: b, Data: errorPage{Status: status, Message: msg}}
	if rerr := s.render(w, r, status, "error", v); rerr != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "portal error page failed",
			slog.String("request_id", requestID(r.Context())), slog.String("error", rerr.Error()))
		http.Error(w, msg, status)
	}
}

type waitPage struct {
	Minutes int64
}

// tooMany answers 429 with a page saying how long to wait.
func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, b *brand, wait time.Duration) error {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return s.render(w, r, http.StatusTooManyRequests, "wait", &view{Title: "Too many sign-in links", Brand: b,
		Data: waitPage{Minutes: (secs + 59) / 60}})
}

// notices are the messages the licences page shows after a change
// redirected to it (?done=freed): fixed texts, never text the request
// chose.
var notices = map[string]string{
	"freed":      "The computer was freed: its place can be used by another.",
	"renamed":    "The computer was renamed.",
	"unchanged":  "Nothing changed: it was already so.",
	"key-mailed": "Your licence key will be in your mailbox in a moment.",
	"reissued":   "Your key was replaced. The new key is shown below; the old one no longer works. Your computers keep their places.",
}

// seeOther redirects after a change to the licences page, with a notice.
func seeOther(w http.ResponseWriter, r *http.Request, b *brand, done string) error {
	http.Redirect(w, r, b.Base()+"?done="+url.QueryEscape(done), http.StatusSeeOther)
	return nil
}
