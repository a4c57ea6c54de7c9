package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// DefaultTimeout bounds connecting to the SMTP server and each exchange
// with it when SMTPOptions.Timeout is zero.
const DefaultTimeout = 15 * time.Second

// SMTPOptions configure an SMTP sender.
type SMTPOptions struct {
	// URL is smtp://user:pass@host:587 (STARTTLS, mandatory) or
	// smtps://user:pass@host:465 (implicit TLS).
	URL string
	// From is the sender address, "Licentia <licences@example.com>".
	From    string
	Timeout time.Duration
	// RootCAs, when set, replaces the system roots the server's
	// certificate is checked against (tests trust their own).
	RootCAs *x509.CertPool
}

// SMTP sends through an SMTP server, always over TLS.
type SMTP struct {
	from string
	opts []gomail.Option
	host string
}

// NewSMTP checks the URL and returns a sender; it does not connect.
func NewSMTP(o SMTPOptions) (*SMTP, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, errors.New("smtp: URL does not parse")
	}
	host := u.Hostname()
	if host == "" {
		return nil, errors.New("smtp: URL has no host")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tlsConfig := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs}
	opts := []gomail.Option{gomail.WithTimeout(timeout), gomail.WithTLSConfig(tlsConfig)}
	var port int
	switch u.Scheme {
	case "smtp":
		port = 587
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("smtp: scheme %q is neither smtp nor smtps", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, errors.New("smtp: URL port is not a port")
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil && u.User.Username() != "" {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	if _, err := build(o.From, Message{To: "check@example.com"}); err != nil {
		return nil, errors.New("smtp: sender address is not valid")
	}
	return &SMTP{from: o.From, opts: opts, host: host}, nil
}

// Send connects, authenticates, hands m over and disconnects.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := build(s.from, m)
	if err != nil {
		return err
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotSent, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return sendError(err)
	}
	return nil
}

// sendError keeps the reason and SMTP code of a failure and drops the
// recipients and server text go-mail's errors carry.
func sendError(err error) error {
	var se *gomail.SendError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: %s (SMTP code %d)", ErrNotSent, se.Reason, se.ErrorCode())
	}
	return fmt.Errorf("%w: %v", ErrNotSent, err)
}
