package webhooks

import (
	"net/url"
	"strings"
)

// HostOf returns the lower-case host of a base URL, without port or
// trailing dot, or "" when there is none.
func HostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}
