package mail_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	stdmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/licentia/licentia/internal/mail"
)

const (
	testUser = "licentia"
	testPass = "s3cret:pass"
)

// captured is one message the test server accepted.
type captured struct {
	from, to string
	data     []byte
}

// server is a loopback SMTP server that checks AUTH PLAIN and keeps what it
// is given, or refuses every message with reject.
type server struct {
	mu       sync.Mutex
	messages []captured
	reject   bool
}

func (s *server) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{srv: s}, nil }

type session struct {
	srv      *server
	authed   bool
	from, to string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if user != testUser || pass != testPass {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.srv.reject {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = to
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	s.srv.messages = append(s.srv.messages, captured{from: s.from, to: s.to, data: b})
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// startServer serves SMTP on loopback: implicit TLS when implicit, else
// plain with STARTTLS offered. It returns the address and the roots to trust.
func startServer(t *testing.T, be *server, implicit bool) (string, *x509.CertPool) {
	t.Helper()
	cert, pool := selfSigned(t)
	s := smtp.NewServer(be)
	s.Domain = "localhost"
	s.ReadTimeout = 10 * time.Second
	s.WriteTimeout = 10 * time.Second
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	var ln net.Listener
	var err error
	if implicit {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", s.TLSConfig)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), pool
}

func newSMTP(t *testing.T, url string, pool *x509.CertPool) *mail.SMTP {
	t.Helper()
	s, err := mail.NewSMTP(mail.SMTPOptions{URL: url, From: "Licentia <licences@example.com>", Timeout: 5 * time.Second, RootCAs: pool})
	if err != nil {
		t.Fatalf("NewSMTP(%q) error = %v", url, err)
	}
	return s
}

func TestSMTPSends(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scheme   string
		implicit bool
	}{
		{"starttls", "smtp", false},
		{"implicit tls", "smtps", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &server{}
			addr, pool := startServer(t, be, tc.implicit)
			s := newSMTP(t, tc.scheme+"://"+testUser+":s3cret%3Apass@"+addr, pool)
			m := mail.Message{To: "ada@example.org", Subject: "You are invited to Acme", Text: "Follow the link to join.\n"}
			if err := s.Send(t.Context(), m); err != nil {
				t.Fatalf("Send() error = %v", err)
			}
			be.mu.Lock()
			defer be.mu.Unlock()
			if len(be.messages) != 1 {
				t.Fatalf("server got %d messages, want 1", len(be.messages))
			}
			got := be.messages[0]
			if got.from != "licences@example.com" || got.to != "ada@example.org" {
				t.Errorf("envelope = %q -> %q, want licences@example.com -> ada@example.org", got.from, got.to)
			}
			checkMessage(t, got.data, m)
		})
	}
}

// checkMessage parses data as RFC 5322 and compares it with m.
func checkMessage(t *testing.T, data []byte, m mail.Message) {
	t.Helper()
	parsed, err := stdmail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, data)
	}
	from, err := parsed.Header.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Address != "licences@example.com" && from[0].Address != "licentia@localhost" {
		t.Errorf("From = %q (%v)", parsed.Header.Get("From"), err)
	}
	to, err := parsed.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != m.To {
		t.Errorf("To = %q (%v), want %s", parsed.Header.Get("To"), err, m.To)
	}
	if got := parsed.Header.Get("Subject"); got != m.Subject {
		t.Errorf("Subject = %q, want %q", got, m.Subject)
	}
	if parsed.Header.Get("Date") == "" || parsed.Header.Get("Message-Id") == "" {
		t.Errorf("Date or Message-ID missing:\n%s", data)
	}
	body, _ := io.ReadAll(parsed.Body)
	if got := strings.ReplaceAll(string(body), "\r\n", "\n"); !strings.Contains(got, strings.TrimSpace(m.Text)) {
		t.Errorf("body = %q, want it to hold %q", got, m.Text)
	}
}

func TestSMTPWrongPassword(t *testing.T) {
	be := &server{}
	addr, pool := startServer(t, be, false)
	s := newSMTP(t, "smtp://"+testUser+":wrong@"+addr, pool)
	err := s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "x"})
	if !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("Send() with a wrong password error = %v, want ErrNotSent", err)
	}
}

func TestSMTPRefused(t *testing.T) {
	be := &server{reject: true}
	addr, pool := startServer(t, be, false)
	s := newSMTP(t, "smtp://"+testUser+":s3cret%3Apass@"+addr, pool)
	err := s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "secret body"})
	if !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("Send() to a refusing server error = %v, want ErrNotSent", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ada@example.org") || strings.Contains(msg, "secret body") {
		t.Errorf("error %q names the recipient or the body", msg)
	}
	if len(be.messages) != 0 {
		t.Errorf("server kept %d messages, want none", len(be.messages))
	}
}

// TestSMTPUntrusted: a certificate the sender does not trust is refused.
func TestSMTPUntrusted(t *testing.T) {
	be := &server{}
	addr, _ := startServer(t, be, false)
	s := newSMTP(t, "smtp://"+testUser+":s3cret%3Apass@"+addr, x509.NewCertPool())
	if err := s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "x"}); !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("Send() to an untrusted server error = %v, want ErrNotSent", err)
	}
}

// TestSMTPUnreachable: a port that never answers fails within the timeout.
func TestSMTPUnreachable(t *testing.T) {
	// A listener that never accepts: connecting succeeds at the TCP level
	// but no greeting ever comes, the worst case for a timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	for _, addr := range []string{ln.Addr().String(), closedAddr} {
		s, err := mail.NewSMTP(mail.SMTPOptions{URL: "smtp://" + addr, From: "licences@example.com", Timeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "x"})
		if !errors.Is(err, mail.ErrNotSent) {
			t.Errorf("Send() to %s error = %v, want ErrNotSent", addr, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Send() to %s took %v, want it bounded by the 500ms timeout", addr, d)
		}
	}
}

func TestNewSMTPRefuses(t *testing.T) {
	for _, o := range []mail.SMTPOptions{
		{URL: "http://mail.example.com", From: "a@example.com"},
		{URL: "smtp://", From: "a@example.com"},
		{URL: "smtp://mail.example.com:notaport", From: "a@example.com"},
		{URL: "smtp://mail.example.com", From: "not an address"},
	} {
		if _, err := mail.NewSMTP(o); err == nil {
			t.Errorf("NewSMTP(%+v) error = nil, want one", o)
		}
	}
}
