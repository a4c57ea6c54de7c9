package webhooks_test

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/webhooks"
)

const serviceHost = "licences.example.net"

func TestNormaliseURLAccepts(t *testing.T) {
	for _, tt := range []struct {
		name, raw, want string
	}{
		{"plain", "https://hooks.example.com/x?y=1", "https://hooks.example.com/x?y=1"},
		{"upper-case host and trailing dot", "https://HOOKS.Example.COM./x", "https://hooks.example.com/x"},
		{"upper-case scheme", "HTTPS://hooks.example.com/x", "https://hooks.example.com/x"},
		{"explicit port 443", "https://hooks.example.com:443/x", "https://hooks.example.com/x"},
		{"empty port", "https://hooks.example.com:/x", "https://hooks.example.com/x"},
		{"IDNA", "https://bücher.example/x", "https://xn--bcher-kva.example/x"},
		{"IDNA upper-case", "https://BÜCHER.example/x", "https://xn--bcher-kva.example/x"},
		{"IDNA percent-encoded", "https://b%C3%BCcher.example/x", "https://xn--bcher-kva.example/x"},
		{"punycode kept", "https://xn--bcher-kva.example/x", "https://xn--bcher-kva.example/x"},
		{"no path", "https://hooks.example.com", "https://hooks.example.com"},
		{"query without path", "https://hooks.example.com?a=/b", "https://hooks.example.com?a=/b"},
		{"path kept as given", "https://hooks.example.com/A/./b/../%7Ec/?Q=%2F&q", "https://hooks.example.com/A/./b/../%7Ec/?Q=%2F&q"},
		{"empty query kept", "https://hooks.example.com/x?", "https://hooks.example.com/x?"},
		{"numeric labels before a name", "https://127.0.0.1.example.com/x", "https://127.0.0.1.example.com/x"},
		{"hex-looking name", "https://cafe.de/x", "https://cafe.de/x"},
		{"name like an internal suffix", "https://notlocal.example/x", "https://notlocal.example/x"},
		{"a sibling of the service host", "https://hooks.example.net/x", "https://hooks.example.net/x"},
		{"service host as a label", "https://licences.example.net.example.org/x", "https://licences.example.net.example.org/x"},
		{"2048 characters", "https://hooks.example.com/" + strings.Repeat("a", 2048-len("https://hooks.example.com/")), "https://hooks.example.com/" + strings.Repeat("a", 2048-len("https://hooks.example.com/"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.NormaliseURL(tt.raw, serviceHost)
			if err != nil {
				t.Fatalf("NormaliseURL(%q) error = %v", tt.raw, err)
			}
			if got != tt.want {
				t.Errorf("NormaliseURL(%q) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}

func TestNormaliseURLRefuses(t *testing.T) {
	const (
		ip       = "must not be an IP address"
		internal = "must have a public host name, not "
	)
	for _, tt := range []struct {
		name, raw, message string
	}{
		{"empty", "", "must not be empty"},
		{"not absolute", "hooks.example.com/x", "must be a valid absolute URL"},
		{"scheme-relative", "//hooks.example.com/x", "must be a valid absolute URL"},
		{"one slash", "https:/hooks.example.com/x", "must be a valid absolute URL"},
		{"opaque", "https:hooks.example.com", "must be a valid absolute URL"},
		{"unparsable", "https://hooks.example.com:port/x", "must be a valid absolute URL"},
		{"http", "http://hooks.example.com/x", "must use https"},
		{"ftp", "ftp://hooks.example.com/x", "must use https"},
		{"port 8443", "https://hooks.example.com:8443/x", "must use port 443"},
		{"port 80", "https://hooks.example.com:80/x", "must use port 443"},
		{"port 0443", "https://hooks.example.com:0443/x", "must use port 443"},
		{"user and password", "https://user:pass@hooks.example.com/x", "must not contain a user name or password"},
		{"user", "https://user@hooks.example.com/x", "must not contain a user name or password"},
		{"empty user info", "https://@hooks.example.com/x", "must not contain a user name or password"},
		{"fragment", "https://hooks.example.com/x#frag", "must not contain a fragment"},
		{"empty fragment", "https://hooks.example.com/x#", "must not contain a fragment"},
		{"2049 characters", "https://hooks.example.com/" + strings.Repeat("a", 2049-len("https://hooks.example.com/")), "must be at most 2048 characters"},
		{"longer once punycoded", "https://bücher.example/" + strings.Repeat("a", 2048-len("https://bücher.example/")+1), "must be at most 2048 characters"},
		{"space", "https://hooks.example.com/a b", "must not contain spaces or control characters"},
		{"invalid UTF-8", "https://hooks.example.com/\xff", "must be valid UTF-8"},
		{"no host", "https:///x", "must have a valid host name"},
		{"underscore", "https://my_hooks.example.com/x", "must have a valid host name"},
		{"empty label", "https://hooks..example.com/x", "must have a valid host name"},
		{"two trailing dots", "https://hooks.example.com../x", "must have a valid host name"},
		{"leading dot", "https://.example.com/x", "must have a valid host name"},
		{"long label", "https://" + strings.Repeat("a", 64) + ".example.com/x", "must have a valid host name"},
		{"backslash", `https://hooks.example.com\@evil.example/x`, "must be a valid absolute URL"},
		{"bad punycode", "https://xn--a.example/x", "must have a valid host name"},

		{"dotted IPv4", "https://127.0.0.1/x", ip},
		{"dotted IPv4 with port", "https://127.0.0.1:443/x", ip},
		{"dotted IPv4 trailing dot", "https://127.0.0.1./x", ip},
		{"public IPv4", "https://8.8.8.8/x", ip},
		{"decimal", "https://2130706433/x", ip},
		{"octal", "https://0177.0.0.1/x", ip},
		{"octal whole", "https://017700000001/x", ip},
		{"hex dotted", "https://0x7f.0.0.1/x", ip},
		{"hex upper-case", "https://0X7F.0.0.1/x", ip},
		{"hex whole", "https://0x7f000001/x", ip},
		{"hex prefix alone", "https://0x.0x/x", ip},
		{"short 127.1", "https://127.1/x", ip},
		{"short 10.1", "https://10.1/x", ip},
		{"short three parts", "https://10.0.1/x", ip},
		{"mixed notations", "https://0x7f.0.01/x", ip},
		{"mixed hex and decimal", "https://0xa.1.65535/x", ip},
		{"invalid octal digits", "https://09.1.2.3/x", ip},
		{"numeric last label", "https://hooks.example.123/x", ip},
		{"hex last label", "https://hooks.example.0x1f/x", ip},
		{"full-width digits", "https://１２７.０.０.１/x", ip},
		{"ideographic dots", "https://127。0。0。1/x", ip},
		{"IPv6", "https://[2606:4700:4700::1111]/x", ip},
		{"IPv6 loopback", "https://[::1]/x", ip},
		{"IPv6 with port", "https://[::1]:443/x", ip},
		{"IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]/x", ip},
		{"IPv4-mapped IPv6 hex", "https://[::ffff:7f00:1]/x", ip},
		{"IPv6 zone", "https://[fe80::1%25eth0]/x", ip},
		{"NAT64", "https://[64:ff9b::7f00:1]/x", ip},

		{"localhost", "https://localhost/x", internal + "a name without a dot"},
		{"localhost trailing dot", "https://LOCALHOST./x", internal + "a name without a dot"},
		{"single label", "https://hooks/x", internal + "a name without a dot"},
		{"under .localhost", "https://app.localhost/x", internal + "one under .localhost"},
		{"under .internal", "https://hooks.corp.internal/x", internal + "one under .internal"},
		{"under .local", "https://printer.local/x", internal + "one under .local"},
		{"under .home.arpa", "https://nas.home.arpa/x", internal + "one under .home.arpa"},
		{"home.arpa itself", "https://home.arpa/x", internal + "one under .home.arpa"},
		{"upper-case internal", "https://HOOKS.Internal./x", internal + "one under .internal"},

		{"service host", "https://licences.example.net/x", "must not be the service's own host"},
		{"service host upper-case", "https://LICENCES.example.net./x", "must not be the service's own host"},
		{"under the service host", "https://hooks.licences.example.net/x", "must not be the service's own host"},
		{"deep under the service host", "https://a.b.licences.example.net/x", "must not be the service's own host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.NormaliseURL(tt.raw, serviceHost)
			if err == nil {
				t.Fatalf("NormaliseURL(%q) = %q, want an error", tt.raw, got)
			}
			issues := urlIssues(t, err)
			if len(issues) != 1 || issues[0].Path != "/url" || !strings.HasPrefix(issues[0].Message, tt.message) {
				t.Errorf("NormaliseURL(%q) issues = %+v, want one at /url starting %q", tt.raw, issues, tt.message)
			}
		})
	}
}

// urlIssues returns the issues of a validation_failed error.
func urlIssues(t *testing.T, err error) []licentia.Issue {
	t.Helper()
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != licentia.CodeValidationFailed {
		t.Fatalf("error = %v, want a validation_failed *licentia.Error", err)
	}
	issues, _ := e.Details["issues"].([]licentia.Issue)
	return issues
}

func TestNormaliseURLServiceHostForms(t *testing.T) {
	for _, svc := range []string{
		"licences.example.net",
		"LICENCES.example.net.",
		"licences.example.net:8443",
		"https://licences.example.net",
		"https://licences.example.net:8443/base",
	} {
		_, err := webhooks.NormaliseURL("https://hooks.licences.example.net/x", svc)
		if err == nil {
			t.Errorf("NormaliseURL(under %q) error = nil, want a refusal", svc)
		}
	}
	for _, svc := range []string{"", "127.0.0.1:8080", "[::1]:8080", "localhost"} {
		if _, err := webhooks.NormaliseURL("https://hooks.example.com/x", svc); err != nil {
			t.Errorf("NormaliseURL(service %q) error = %v", svc, err)
		}
	}
}

func TestNormaliseURLIdempotent(t *testing.T) {
	got, err := webhooks.NormaliseURL("https://Bücher.EXAMPLE.:443/a?b#", serviceHost)
	if err == nil {
		t.Fatalf("NormaliseURL() = %q, want the fragment refused", got)
	}
	first, err := webhooks.NormaliseURL("https://Bücher.EXAMPLE.:443/a?b", serviceHost)
	if err != nil {
		t.Fatal(err)
	}
	second, err := webhooks.NormaliseURL(first, serviceHost)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("NormaliseURL(NormaliseURL()) mismatch (-want +got):\n%s", diff)
	}
}

func FuzzNormaliseURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/x?y=1",
		"https://HOOKS.Example.COM./x",
		"https://hooks.example.com:443/x",
		"https://bücher.example/x",
		"http://hooks.example.com/",
		"https://hooks.example.com:8443/",
		"https://user:pass@hooks.example.com/",
		"https://hooks.example.com/#frag",
		"https://2130706433/",
		"https://0177.0.0.1/",
		"https://0x7f.0.0.1/",
		"https://0x7f000001/",
		"https://127.1/",
		"https://[::ffff:127.0.0.1]/",
		"https://[fe80::1%25eth0]/",
		"https://localhost/",
		"https://app.localhost/",
		"https://nas.home.arpa/",
		"https://hooks.licences.example.net/",
		"https://１２７.０.０.１/",
		"https://xn--bcher-kva.example/x",
		"https://a.b。c/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := webhooks.NormaliseURL(raw, serviceHost)
		if err != nil {
			if issues := urlIssues(t, err); len(issues) != 1 || issues[0].Path != "/url" {
				t.Fatalf("NormaliseURL(%q) issues = %+v, want one at /url", raw, issues)
			}
			return
		}
		again, err := webhooks.NormaliseURL(got, serviceHost)
		if err != nil || again != got {
			t.Fatalf("NormaliseURL(%q) = %q, which normalises to %q, %v", raw, got, again, err)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("NormaliseURL(%q) = %q, which does not parse: %v", raw, got, err)
		}
		if u.Scheme != "https" || u.Port() != "" || u.User != nil || u.Fragment != "" {
			t.Fatalf("NormaliseURL(%q) = %q, want https, no port, user or fragment", raw, got)
		}
		if _, err := netip.ParseAddr(u.Hostname()); err == nil || strings.HasPrefix(u.Host, "[") {
			t.Fatalf("NormaliseURL(%q) = %q, whose host is an IP address", raw, got)
		}
		if u.Hostname() != strings.ToLower(u.Hostname()) || !strings.Contains(u.Hostname(), ".") {
			t.Fatalf("NormaliseURL(%q) = %q, whose host is not lower-case with a dot", raw, got)
		}
	})
}
