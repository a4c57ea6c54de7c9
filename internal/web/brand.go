package web

import (
	"net/url"
	"strings"
)

// AllowLogo widens policy's img-src to the origin of an organization's
// logo, so a page a customer sees can show it and nothing else from
// outside: logos are https (checked when branding is set), and any other
// address leaves policy as it is.
func AllowLogo(policy, logoURL string) string {
	u, err := url.Parse(logoURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return policy
	}
	return strings.Replace(policy, "img-src 'self'", "img-src 'self' https://"+u.Host, 1)
}
