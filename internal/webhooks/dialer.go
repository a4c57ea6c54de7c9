package webhooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"
)

// AttemptTimeout is the contract's budget for one delivery attempt: the
// receiver must answer within 5 seconds, counting the look-up, the connection
// and the status line. The delivery worker applies it with
// context.WithTimeout around Client.Do (cut shorter when the claim left
// less of its lease); the client's own timeouts are only backstops.
const AttemptTimeout = 5 * time.Second

// ErrAddressRefused is the cause of every refused connection. The delivery
// worker records it as failure address_refused.
var ErrAddressRefused = errors.New("address refused")

// AddressRefusedError names the address that made the dialer refuse a host.
// It unwraps to ErrAddressRefused.
type AddressRefusedError struct {
	Host string // the host dialed: a name, or the address itself
	Addr netip.Addr
}

func (e *AddressRefusedError) Error() string {
	return fmt.Sprintf("address refused: %s resolves to %s, which is not a public address", e.Host, e.Addr)
}

func (e *AddressRefusedError) Unwrap() error { return ErrAddressRefused }

// Resolver looks host names up. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer connects the delivery worker to receivers. It resolves a host once,
// refuses it when any of its addresses is not public (the contract's
// address_refused), then connects only to the addresses it checked, never
// looking the name up again: a second answer from DNS could differ from the
// first. Each socket is checked once more before it connects, against
// anything unexpected. The zero Dialer uses net.DefaultResolver.
type Dialer struct {
	// Resolver looks hosts up; nil means net.DefaultResolver.
	Resolver Resolver
	// Pins maps a host name to the "addr:port" it connects to instead, for
	// tests only (LICENTIA_WEBHOOK_RESOLVE, see ParsePins). A pinned host
	// skips the public-address check, and only it does.
	Pins map[string]string

	// dial replaces the network in tests of which addresses are tried.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// DialContext connects to addr ("host:port") over network, which must be
// tcp, tcp4 or tcp6. Its signature is http.Transport.DialContext's.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	pin, addrs, err := d.resolve(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if pin != "" {
		return d.connect(ctx, network, pin, false)
	}
	_, port, _ := net.SplitHostPort(addr)
	var errs []error
	for _, a := range addrs {
		conn, err := d.connect(ctx, network, net.JoinHostPort(a.Unmap().String(), port), true)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("dial %s: %w", addr, errors.Join(errs...))
}

// check resolves addr ("host:port") as a dial would and refuses it, with
// an error wrapping ErrAddressRefused, when any of its addresses is not
// public. It connects to nothing. The delivery client calls it before every
// request, so that an attempt sent over a connection kept from an earlier
// attempt still resolves and checks the host again, as the contract says.
func (d *Dialer) check(ctx context.Context, addr string) error {
	_, _, err := d.resolve(ctx, "tcp", addr)
	return err
}

// resolve returns where addr leads: the target of its pin, or else its
// addresses, every one of them public.
func (d *Dialer) resolve(ctx context.Context, network, addr string) (pin string, addrs []netip.Addr, err error) {
	family, ok := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	if !ok {
		return "", nil, fmt.Errorf("dial %s: network %q is not allowed", addr, network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	// Pins follow curl's --connect-to: they apply to host:443 only.
	if pin, ok := d.Pins[strings.TrimSuffix(strings.ToLower(host), ".")]; ok && port == "443" {
		return pin, nil, nil
	}
	addrs, err = d.lookup(ctx, family, host)
	if err != nil {
		return "", nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	for _, a := range addrs {
		if !IsPublic(a) {
			return "", nil, &AddressRefusedError{Host: host, Addr: a}
		}
	}
	return "", addrs, nil
}

// lookup returns the addresses of host: host itself when it is an address,
// else the resolver's answer, which must not be empty.
func (d *Dialer) lookup(ctx context.Context, family, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	var r Resolver = net.DefaultResolver
	if d.Resolver != nil {
		r = d.Resolver
	}
	addrs, err := r.LookupNetIP(ctx, family, host)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("look up %s: no addresses", host)
	}
	return addrs, nil
}

// connect dials one address; checked sockets are refused at Control time
// unless their address is public.
func (d *Dialer) connect(ctx context.Context, network, address string, checked bool) (net.Conn, error) {
	if d.dial != nil {
		return d.dial(ctx, network, address)
	}
	nd := net.Dialer{}
	if checked {
		nd.Control = checkSocket
	}
	return nd.DialContext(ctx, network, address)
}

// checkSocket is the second line: it runs just before each socket connects,
// so an address that reached the dialer without passing IsPublic still
// cannot be connected to.
func checkSocket(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read socket address %q", ErrAddressRefused, address)
	}
	if !IsPublic(ap.Addr()) {
		return &AddressRefusedError{Host: ap.Addr().String(), Addr: ap.Addr()}
	}
	return nil
}

// ParsePins reads LICENTIA_WEBHOOK_RESOLVE entries, each host:443:addr:port
// as curl's --connect-to writes them (an IPv6 address in brackets), into
// Dialer.Pins. The target must be an IP address, so a pinned host is never
// looked up. Endpoint URLs use port 443 only, so only 443 can be pinned.
// Every bad entry is reported.
func ParsePins(entries []string) (map[string]string, error) {
	pins := map[string]string{}
	var errs []error
	for _, e := range entries {
		host, target, err := parsePin(strings.TrimSpace(e))
		if err == nil && pins[host] != "" {
			err = fmt.Errorf("host %s is pinned twice", host)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("LICENTIA_WEBHOOK_RESOLVE entry %q: %w", e, err))
			continue
		}
		pins[host] = target
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return pins, nil
}

// parsePin reads one host:443:addr:port entry.
func parsePin(e string) (host, target string, err error) {
	const want = "want host:443:addr:port"
	var rest string
	if after, ok := strings.CutPrefix(e, "["); ok {
		var found bool
		if host, rest, found = strings.Cut(after, "]"); !found {
			return "", "", fmt.Errorf("unclosed [: %s", want)
		}
		if rest, found = strings.CutPrefix(rest, ":"); !found {
			return "", "", errors.New(want)
		}
	} else if host, rest, err = cut(e, ":", want); err != nil {
		return "", "", err
	}
	port, addrPort, err := cut(rest, ":", want)
	if err != nil {
		return "", "", err
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case host == "":
		return "", "", fmt.Errorf("empty host: %s", want)
	case port != "443":
		return "", "", fmt.Errorf("port %q: only 443 can be pinned, as endpoint URLs use port 443", port)
	}
	ap, err := netip.ParseAddrPort(addrPort)
	if err != nil || ap.Port() == 0 {
		return "", "", fmt.Errorf("target %q is not an IP address and port (IPv6 in brackets)", addrPort)
	}
	return host, ap.String(), nil
}

// cut is strings.Cut that fails with msg when sep is missing.
func cut(s, sep, msg string) (string, string, error) {
	before, after, found := strings.Cut(s, sep)
	if !found {
		return "", "", errors.New(msg)
	}
	return before, after, nil
}

// LoadCAFile returns the system roots plus the PEM certificates in path, for
// LICENTIA_WEBHOOK_CA_FILE. A file without a certificate is an error, since
// it would silently trust nothing more.
func LoadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load webhook CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("load webhook CA file %s: no PEM certificate found", path)
	}
	return pool, nil
}

// UserAgent returns the User-Agent of deliveries: Licentia-Webhooks/1.0
// followed by the service's address in parentheses.
func UserAgent(baseURL string) string {
	return "Licentia-Webhooks/1.0 (" + baseURL + ")"
}

// NewHTTPClient returns the client for deliveries. It connects through d
// (nil means the zero Dialer), never through a proxy, and follows no
// redirect: the receiver rules make a redirect a failure, so Do returns the
// 3xx answer itself. Every request is https and carries UserAgent(baseURL).
//
// extraRoots, when not nil, replaces the trusted roots; build it with LoadCAFile,
// which starts from the system roots. nil means the system roots.
//
// The caller bounds each attempt with a context of AttemptTimeout, which
// covers the look-up, the connection and the status line; the TLS handshake
// and response header timeouts here are backstops.
//
// Connections are kept between attempts to the same host, since a TLS
// handshake per delivery cost more than the delivery itself. That keeps
// every check: each connection is dialed through d, so it goes only to an
// address checked when it was dialed, and a later answer from DNS cannot
// move it; and before every request the host is resolved and checked
// again, so an attempt to a host that now resolves to a
// non-public address is refused although a connection to its old address
// is still open. Idle connections are bounded in number and in age.
func NewHTTPClient(d *Dialer, extraRoots *x509.CertPool, baseURL string) *http.Client {
	if d == nil {
		d = &Dialer{}
	}
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: extraRoots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    AttemptTimeout,
		ResponseHeaderTimeout:  AttemptTimeout,
		MaxIdleConns:           MaxIdleConns,
		MaxIdleConnsPerHost:    MaxIdleConnsPerHost,
		IdleConnTimeout:        IdleConnTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: &deliveryTransport{userAgent: UserAgent(baseURL), dialer: d, next: t},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Bounds on the connections the delivery client keeps open between
// attempts: in all, per receiver host, and how long one may stay idle.
const (
	MaxIdleConns        = 128
	MaxIdleConnsPerHost = 64
	IdleConnTimeout     = 30 * time.Second
)

// deliveryTransport refuses anything but https, checks the host's
// addresses before every request and sets the User-Agent.
type deliveryTransport struct {
	userAgent string
	dialer    *Dialer
	next      *http.Transport
}

func (t *deliveryTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, fmt.Errorf("deliver to %s: only https is allowed", r.URL.Redacted())
	}
	port := r.URL.Port()
	if port == "" {
		port = "443"
	}
	if err := t.dialer.check(r.Context(), net.JoinHostPort(r.URL.Hostname(), port)); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", t.userAgent)
	return t.next.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the transport.
func (t *deliveryTransport) CloseIdleConnections() { t.next.CloseIdleConnections() }
