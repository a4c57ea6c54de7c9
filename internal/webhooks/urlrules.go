// Package webhooks owns outgoing webhooks: endpoint URL rules, Standard
// Webhooks signatures and the durable delivery worker.
package webhooks

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/licentia/licentia/internal/licentia"
)

// MaxURLLength is the longest endpoint URL accepted, in characters.
const MaxURLLength = 2048

// hostProfile converts host names to their ASCII (punycode) form. It maps
// as a resolver would (lower case, full-width dots and digits to ASCII) and
// allows only letters, digits and hyphens, so nothing but a DNS name is left.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
)

// internalSuffixes are names that never reach the public internet: anything
// equal to or under them is refused.
var internalSuffixes = []string{"localhost", "internal", "local", "home.arpa"}

// NormaliseURL returns the endpoint URL raw in the form it is stored, or a
// validation_failed error with one issue at /url naming the rule it breaks.
// serviceHost is the host of LICENTIA_BASE_URL (a port or the whole URL is
// fine too); the service's own host and names under it are refused. It never
// looks the host up: addresses are checked on every delivery attempt instead.
//
// The host is lower-cased, loses a trailing dot and is converted to punycode;
// an explicit :443 is dropped. The path and query are kept as given.
func NormaliseURL(raw string, serviceHost string) (string, error) {
	u, reason := normaliseURL(raw, serviceHost)
	if reason != "" {
		var is licentia.Issues
		is.Add("/url", "%s", reason)
		return "", is.Err()
	}
	return u, nil
}

// normaliseURL applies the rules in the order a person would fix them and
// returns the first one broken, or the normalised URL and "".
func normaliseURL(raw, serviceHost string) (string, string) {
	switch {
	case raw == "":
		return "", "must not be empty"
	case !utf8.ValidString(raw):
		return "", "must be valid UTF-8"
	case utf8.RuneCountInString(raw) > MaxURLLength:
		return "", "must be at most 2048 characters"
	case strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "", "must not contain spaces or control characters"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !strings.HasPrefix(raw[len(u.Scheme)+1:], "//") {
		return "", "must be a valid absolute URL such as https://hooks.example.com/licentia"
	}
	switch {
	case u.Scheme != "https":
		return "", "must use https"
	case u.User != nil:
		return "", "must not contain a user name or password"
	case strings.Contains(raw, "#"):
		return "", "must not contain a fragment"
	case u.Port() != "" && u.Port() != "443":
		return "", "must use port 443"
	case strings.HasPrefix(u.Host, "["):
		return "", "must not be an IP address"
	}
	host, reason := checkHost(u.Hostname(), serviceHost)
	if reason != "" {
		return "", reason
	}
	// url.Parse ends the authority at the first / or ? (a # was refused
	// above), so everything from there on is the path and query as given.
	afterScheme := raw[len(u.Scheme)+len("://"):]
	rest := ""
	if i := strings.IndexAny(afterScheme, "/?"); i >= 0 {
		rest = afterScheme[i:]
	}
	out := "https://" + host + rest
	// Punycode is longer than the name it encodes, so the stored form is held
	// to the limit too: what is stored must pass these rules again unchanged.
	if utf8.RuneCountInString(out) > MaxURLLength {
		return "", "must be at most 2048 characters"
	}
	return out, ""
}

// checkHost normalises host and returns it, or why it is refused.
func checkHost(host, serviceHost string) (string, string) {
	host, ok := asciiHost(host)
	if !ok {
		return "", "must have a valid host name"
	}
	switch {
	case isIPLike(host):
		return "", "must not be an IP address"
	case host == "localhost" || !strings.Contains(host, "."):
		return "", "must have a public host name, not a name without a dot"
	}
	for _, s := range internalSuffixes {
		if isUnder(host, s) {
			return "", "must have a public host name, not one under ." + s
		}
	}
	if svc, ok := serviceName(serviceHost); ok && isUnder(host, svc) {
		return "", "must not be the service's own host or a name under it"
	}
	return host, ""
}

// asciiHost lower-cases host, converts it to punycode and removes one
// trailing dot, reporting whether the result is a well-formed DNS name.
func asciiHost(host string) (string, bool) {
	a, err := hostProfile.ToASCII(strings.ToLower(host))
	if err != nil {
		return "", false
	}
	a = strings.TrimSuffix(a, ".")
	// Converting again must change nothing, or a stored URL would not pass
	// the rules it was stored under.
	if again, err := hostProfile.ToASCII(a); err != nil || again != a {
		return "", false
	}
	if a == "" || len(a) > 253 {
		return "", false
	}
	for label := range strings.SplitSeq(a, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
	}
	return a, true
}

// isIPLike reports whether host could be read as an IP address by some
// parser. inet_aton and browsers accept decimal (2130706433), octal
// (0177.0.0.1), hex (0x7f.1), short (127.1) and mixed forms, and browsers
// read any host whose last label is a number as IPv4. No top-level domain is
// numeric, so a host whose last label is numeric is refused; that covers every
// host whose labels are all numeric. Hex needs its 0x prefix: bare hex
// digits are ordinary names (cafe.de).
func isIPLike(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	labels := strings.Split(host, ".")
	return isNumericLabel(labels[len(labels)-1])
}

// isNumericLabel reports whether label is a decimal, octal or 0x hex number.
func isNumericLabel(label string) bool {
	digits, base := label, "0123456789"
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		// "0x" alone is zero to inet_aton and to browsers.
		digits, base = rest, "0123456789abcdef"
	} else if label == "" {
		return false
	}
	return strings.Trim(digits, base) == ""
}

// isUnder reports whether host is name or a name under it.
func isUnder(host, name string) bool {
	return host == name || strings.HasSuffix(host, "."+name)
}

// serviceName returns the normalised host of serviceHost, which may carry a
// port or be the whole base URL, or false when there is none to compare against.
func serviceName(serviceHost string) (string, bool) {
	if serviceHost == "" {
		return "", false
	}
	if u, err := url.Parse(serviceHost); err == nil && u.Host != "" {
		serviceHost = u.Host
	}
	if h, _, err := net.SplitHostPort(serviceHost); err == nil {
		serviceHost = h
	}
	return asciiHost(strings.Trim(serviceHost, "[]"))
}
