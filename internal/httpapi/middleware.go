package httpapi

import (
	"context"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	callerKey
)

// requestID returns the request's id.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// middleware wraps every request, in this order: request id and deadline,
// Cache-Control: no-store and X-Content-Type-Options: nosniff, panic
// recovery, access log. Caller identification, rate limits, 401 and scope
// checks are per route (see route.go), after the route is known.
//
// The deadline bounds each request's work by s.timeout. Every store call
// takes the request's context, so with the database frozen (a network
// partition, no reset) a request answers 500 internal_error, or 503 where
// the contract names a dependency, once the deadline passes, instead of
// holding its connection, and the client's, as long as the freeze lasts.
// The id and the deadline go in one copy of the request.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := web.RequestID(r)
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), requestIDKey, id), s.timeout)
		defer cancel()
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("Cache-Control", "no-store")
		// A browser must not guess another type than the JSON declared, such
		// as HTML from a value a client chose.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		s.observed.Serve(w, r, id, next)
	})
}

// dispatch routes a request. Unknown routes answer 404 not_found and a known
// path with another method 405 method_not_allowed with Allow, both in the
// error envelope; the standard mux's plain-text answers never reach a client.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	// The standard mux redirects a path that is not in canonical form (//,
	// /./, /../) with a plain-text answer; such a path names no route.
	if p := r.URL.EscapedPath(); p != cleanPath(p) {
		s.writeError(w, r, licentia.Errorf(licentia.CodeNotFound, "No route matches this path."))
		return
	}
	h, pattern := s.mux.Handler(r)
	web.Matched(w, pattern)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.writeError(w, r, licentia.Errorf(licentia.CodeMethodNotAllowed, "This route does not answer %s.", r.Method))
		return
	}
	s.writeError(w, r, licentia.Errorf(licentia.CodeNotFound, "No route matches this path."))
}

// cleanPath is the canonical form of p, as the standard mux computes it:
// path.Clean, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// clientAddr is the request's client address under the server's trusted
// proxies.
func (s *Server) clientAddr(r *http.Request) string { return web.ClientAddr(r, s.proxies) }

// setRateHeaders writes the X-RateLimit-*-<name> headers. Every request
// of a limited route writes them, so the names of the API's rules are
// spelled once, as http.Header.Set would spell them.
func setRateHeaders(h http.Header, name string, limit, remaining int64, reset time.Duration) {
	keys, ok := rateHeaderKeys[name]
	if !ok {
		keys = newRateKeys(name)
	}
	h[keys.limit] = []string{strconv.FormatInt(limit, 10)}
	h[keys.remaining] = []string{strconv.FormatInt(remaining, 10)}
	h[keys.reset] = []string{strconv.FormatInt(ceilSeconds(reset), 10)}
}

// rateKeys are the rate-limit headers of one rule, in canonical form.
type rateKeys struct{ limit, remaining, reset string }

func newRateKeys(name string) rateKeys {
	return rateKeys{
		limit:     http.CanonicalHeaderKey("X-RateLimit-Limit-" + name),
		remaining: http.CanonicalHeaderKey("X-RateLimit-Remaining-" + name),
		reset:     http.CanonicalHeaderKey("X-RateLimit-Reset-" + name),
	}
}

// rateHeaderKeys holds the keys of the rules the API limits by; it is
// only read once built.
var rateHeaderKeys = map[string]rateKeys{
	ratelimit.Admin.Name:  newRateKeys(ratelimit.Admin.Name),
	ratelimit.Public.Name: newRateKeys(ratelimit.Public.Name),
	ratelimit.Lookup.Name: newRateKeys(ratelimit.Lookup.Name),
}

// ceilSeconds rounds up to whole seconds, at least 1.
func ceilSeconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 1)
}

// probeWriter takes the mux's own answer for an unmatched request, so that
// dispatch can tell a 405 (and its Allow header) from a 404.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(status int)      { p.status = status }
