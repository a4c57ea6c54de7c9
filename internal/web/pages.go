package web

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// PagePolicy is the Content-Security-Policy of the pages people see (the
// console and the customer portal): no script at all, styles and images
// from this service only.
const PagePolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// pageHeaders are on every answer of a front door of pages. Pages hold no
// script and no inline style; link paths hold tokens, so no Referer ever
// carries them off.
var pageHeaders = map[string]string{
	"Content-Security-Policy": PagePolicy,
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
}

// PageOrigins refuses forms posted from another site to a front door of
// pages at baseURL, answering them with deny, and reports whether the
// service is served over https (its cookies then take the __Host- prefix).
func PageOrigins(baseURL string, deny http.Handler) (origin *http.CrossOriginProtection, secure bool, err error) {
	origin = http.NewCrossOriginProtection()
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		secure = u.Scheme == "https"
		if err := origin.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, false, err
		}
	}
	origin.SetDenyHandler(deny)
	return origin, secure, nil
}

type pageKey int

const pageRequestID pageKey = iota

// PageRequestID is the id PageMiddleware gave the request of ctx.
func PageRequestID(ctx context.Context) string {
	id, _ := ctx.Value(pageRequestID).(string)
	return id
}

// PageMiddleware wraps every request of a front door of pages, in this
// order: the security headers, a new request id, panic recovery and the
// access log (observed), and the request's deadline. The access log names
// the route pattern, never the path: link paths hold tokens.
func PageMiddleware(observed *Observed, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range pageHeaders {
			w.Header().Set(k, v)
		}
		id := licentia.NewID()
		w.Header().Set("X-Request-Id", id)
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), pageRequestID, id), timeout)
		defer cancel()
		observed.Serve(w, r.WithContext(ctx), id, next)
	})
}
