package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

var (
	errTooLarge = licentia.Errorf(licentia.CodePayloadTooLarge, "The form is over 65,536 bytes.")
	errBadForm  = licentia.Errorf(licentia.CodeValidationFailed, "The form could not be read.")
	errPanic    = errors.New("panic")
)

// pages are the parsed templates, one per page, each with the layout.
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"failure": failureWords,
	"time":    formatTime,
	"timep":   func(t *time.Time) string { return formatTimePtr(t, "never") },
	"str": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
	"join": func(sep string, vs any) string {
		switch v := vs.(type) {
		case []licentia.Scope:
			return joinStrings(v, sep)
		case []licentia.EventType:
			return joinStrings(v, sep)
		}
		return fmt.Sprint(vs)
	},
	"list":            func(vs ...string) []string { return vs },
	"plural":          plural,
	"dotted":          dotted,
	"counted":         counted,
	"short":           shortID,
	"add":             func(a, b int) int { return a + b },
	"sub":             func(a, b int) int { return a - b },
	"roles":           func() []licentia.Role { return licentia.Roles[:len(licentia.Roles)-1] },
	"keyScopes":       keyScopes,
	"eventTypes":      func() []licentia.EventType { return licentia.EventTypes },
	"productFloating": productFloating,
	"licenceFloating": licenceFloating,
}

func joinStrings[S ~string](vs []S, sep string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, sep)
}

// keyScopes are the scopes an API key may hold, in the contract's order.
func keyScopes() []licentia.Scope {
	var out []licentia.Scope
	for _, s := range licentia.Scopes {
		if licentia.IsKeyScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// formatTime shows a time to the minute, in UTC, as every form takes it.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func formatTimePtr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return formatTime(*t)
}

// parsePages parses each page's template with the layout.
func parsePages() (pages, error) { return web.ParsePages(files, funcs, "console") }

// view is what every page's template gets: the signed-in member (nil on
// the pages that need none), the page's own data, and the problems of a
// form the operation refused, shown again with what was typed.
type view struct {
	Title   string
	Section string
	Visit   *visit
	// Customer is set on the pages a customer sees, which carry the
	// organization's branding rather than the console's.
	Customer  *web.Brand
	Notice    string
	Data      any
	RequestID string
	// Base is the service's public address, and BaseDefaulted whether it
	// is only the listen address, for the pages that show it.
	Base          string
	BaseDefaulted bool
	problem       *problem
}

// Can reports whether the member's role holds scope, so a page shows only
// the forms the member may use.
func (v *view) Can(scope string) bool {
	return v.Visit != nil && v.Visit.Member.Role.HasScope(licentia.Scope(scope))
}

// CanManageAPIKeys reports whether the member may see and change API keys.
func (v *view) CanManageAPIKeys() bool {
	return v.Visit != nil && v.Visit.Member.Role.CanManageAPIKeys()
}

// CanConnect reports whether the member may connect and disconnect
// integrations and set their webhook secrets.
func (v *view) CanConnect() bool {
	return v.Visit != nil && v.Visit.Member.Role.CanConnectIntegrations()
}

// CanChangeBranding reports whether the member may change what customers
// see of the organization.
func (v *view) CanChangeBranding() bool {
	return v.Visit != nil && v.Visit.Member.Role.CanChangeBranding()
}

// Problem is the refusal of the form named form, or nil.
func (v *view) Problem(form string) *problem {
	if v.problem != nil && v.problem.Form == form {
		return v.problem
	}
	return nil
}

// Value is what was typed in a field of the refused form named form.
func (v *view) Value(form, field string) string {
	if p := v.Problem(form); p != nil {
		return p.Values.Get(field)
	}
	return ""
}

// Values is everything typed in a field of the refused form named form.
func (v *view) Values(form, field string) []string {
	if p := v.Problem(form); p != nil {
		return p.Values[field]
	}
	return nil
}

// Checked reports whether value was among a refused form's field values.
func (v *view) Checked(form, field, value string) bool {
	for _, got := range v.Values(form, field) {
		if got == value {
			return true
		}
	}
	return false
}

// FieldError is the problem of one field of the refused form named form.
func (v *view) FieldError(form, field string) string {
	if p := v.Problem(form); p != nil {
		return p.Fields[field]
	}
	return ""
}

// problem is a form an operation refused: the contract's message, each
// issue by field, and the values typed, to fill the form again.
type problem struct {
	Form    string
	Status  int
	Message string
	Issues  []fieldIssue
	Fields  map[string]string
	Values  url.Values
}

// refusal returns the problem err makes of the form named form, or nil
// when err is no refusal of the request (a server error, which the error
// page shows).
func refusal(form string, r *http.Request, err error) *problem {
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok {
		return nil
	}
	status := web.Status(e.Code)
	if status >= 500 {
		return nil
	}
	p := &problem{Form: form, Status: status, Message: e.Message, Fields: map[string]string{}, Values: r.PostForm}
	if issues, ok := e.Details["issues"].([]licentia.Issue); ok {
		p.Message = "Check the fields marked below."
		p.Issues = fieldIssues(issues)
		for _, is := range p.Issues {
			if _, seen := p.Fields[is.Field]; !seen {
				p.Fields[is.Field] = is.String()
			}
		}
	}
	return p
}

// render writes a page whole, or nothing: a template that fails leaves the
// answer to the error page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	v.RequestID = requestID(r.Context())
	v.Base, v.BaseDefaulted = s.base, s.baseDefaulted
	if v.problem != nil {
		status = v.problem.Status
	}
	var buf bytes.Buffer
	t, ok := s.pages[page]
	if !ok {
		return fmt.Errorf("render: no page %s", page)
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	if v.Customer != nil && v.Customer.LogoURL != "" {
		w.Header().Set("Content-Security-Policy", web.AllowLogo(web.PagePolicy, v.Customer.LogoURL))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// errorPage is the error page's data.
type errorPage struct {
	Status  int
	Message string
	Issues  []fieldIssue
}

// fail answers an error with the error page: a contract error with its
// status and message, anything else 500 with a fixed message, its cause
// logged with the request id and never shown.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, vis *visit, err error) {
	status, msg := http.StatusInternalServerError, "Something went wrong on our side. Try again in a moment."
	var issues []fieldIssue
	if e, ok := errors.AsType[*licentia.Error](err); ok && e.Code != licentia.CodeInternal {
		status, msg = web.Status(e.Code), e.Message
		is, _ := e.Details["issues"].([]licentia.Issue)
		issues = fieldIssues(is)
	}
	if status >= 500 {
		s.log.LogAttrs(r.Context(), slog.LevelError, "console request failed",
			slog.String("request_id", requestID(r.Context())), slog.String("code", string(licentia.ErrorCode(err))),
			slog.String("error", err.Error()))
	}
	v := &view{Title: http.StatusText(status), Visit: vis, Data: errorPage{Status: status, Message: msg, Issues: issues}}
	if rerr := s.render(w, r, status, "error", v); rerr != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "console error page failed",
			slog.String("request_id", requestID(r.Context())), slog.String("error", rerr.Error()))
		http.Error(w, msg, status)
	}
}

// notices are the messages a page shows after a change redirected to it,
// named in its query (?done=revoked): fixed texts, never text the request
// chose.
var notices = map[string]string{
	"issued":             "The licence was issued.",
	"revoked":            "The licence was revoked.",
	"reissued":           "The key was reissued: this licence replaces the old one, whose key no longer works.",
	"expired":            "The licence was expired.",
	"reinstated":         "The licence was reinstated.",
	"anonymised":         "The licence was anonymised.",
	"licence-changed":    "The licence was changed.",
	"features-changed":   "The licence's features were saved; machines get them with their next check.",
	"freed":              "The machine was freed.",
	"unchanged":          "Nothing changed: it was already so.",
	"product-created":    "The product was created.",
	"product-updated":    "The product was saved.",
	"rotated":            "A new signing key is current.",
	"retired":            "The public key was retired.",
	"feature-added":      "The feature was added.",
	"feature-renamed":    "The feature was renamed.",
	"feature-deleted":    "The feature was deleted.",
	"key-revoked":        "The API key was revoked.",
	"disconnected":       "The integration was disconnected.",
	"secret-set":         "The webhook secret was saved.",
	"mapping-saved":      "The mapping was saved.",
	"mapping-deleted":    "The mapping was deleted.",
	"endpoint-updated":   "The endpoint was saved.",
	"endpoint-deleted":   "The endpoint was deleted.",
	"retried":            "The delivery will be sent again now.",
	"test-queued":        "A test event is on its way; its delivery shows below.",
	"invited":            "The invitation was sent.",
	"invitation-revoked": "The invitation was revoked; its link no longer works.",
	"role-changed":       "The role was changed.",
	"removed":            "The member was removed.",
	"switched":           "You are now looking at this organization.",
	"joined":             "You are signed in. Welcome!",
	"grant-revoked":      "The AI assistant's access was ended.",
	"branding-saved":     "The branding was saved; customers see it from their next mail.",
	"key-mailed":         "The key will be mailed to the customer in a moment.",
	"held-released":      "The order was released: its licences were issued and the buyer will be mailed.",
	"held-dropped":       "The order was dropped; it will not be issued.",
}

// notice is the fixed message a page's query names, or "".
func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// seeOther redirects after a change, to a page that shows a notice.
func seeOther(w http.ResponseWriter, r *http.Request, to, done string) error {
	if done != "" {
		to += "?done=" + url.QueryEscape(done)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}
