package web

import (
	"net/http"
	"regexp"

	"github.com/licentia/licentia/internal/licentia"
)

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{8,64}$`)

// RequestID is the id of r: the X-Request-Id the client sent when it has
// the contract's shape, and a new one otherwise, so a log line or an answer
// never carries text the client chose freely.
func RequestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	if !requestIDRE.MatchString(id) {
		id = licentia.NewID()
	}
	return id
}
