package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTP user and password the server takes; the password holds a colon,
// which a URL must escape.
const (
	User     = "licentia"
	Password = "s3cret:pass"
)

// Received is one message the server accepted.
type Received struct {
	From, To string
	Data     []byte
}

// Server is a real SMTP server on loopback, offering STARTTLS with a
// certificate its Roots trust and taking AUTH PLAIN. It can be stopped and
// started again on the same address, as a mail server that goes down.
type Server struct {
	addr  string
	opts  Options
	Roots *x509.CertPool
	cert  tls.Certificate

	mu       sync.Mutex
	srv      *smtp.Server
	ln       net.Listener
	received []Received
}

// Options change how a server behaves.
type Options struct {
	// Implicit serves TLS from the first byte (smtps://) instead of
	// offering STARTTLS.
	Implicit bool
	// Reject refuses every recipient, as a mailbox that does not exist.
	Reject bool
}

// StartSMTP starts a server, stopped when the test ends.
func StartSMTP(t testing.TB) *Server {
	t.Helper()
	return StartSMTPWith(t, Options{})
}

// StartSMTPWith starts a server behaving as o says, stopped when the test
// ends.
func StartSMTPWith(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{opts: o}
	s.cert, s.Roots = selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// URL is the LICENTIA_SMTP_URL of the server.
func (s *Server) URL() string {
	scheme := "smtp"
	if s.opts.Implicit {
		scheme = "smtps"
	}
	return (&url.URL{Scheme: scheme, User: url.UserPassword(User, Password), Host: s.addr}).String()
}

// Addr is the server's address, host and port.
func (s *Server) Addr() string { return s.addr }

// Received returns the messages accepted so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Stop closes the server and every connection: from then on, sending
// fails to connect.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.srv, s.ln = nil, nil
	s.mu.Unlock()
	// The listener is closed here too: Serve may not have taken it yet,
	// and a server closed before then would serve it all the same.
	if ln != nil {
		ln.Close()
	}
	if srv != nil {
		srv.Close()
	}
}

// Start serves again on the address the server had.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

func (s *Server) serve(ln net.Listener) {
	srv := smtp.NewServer(backend{s})
	srv.Domain = "localhost"
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{s.cert}}
	if s.opts.Implicit {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go srv.Serve(ln)
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s        *Server
	authed   bool
	from, to string
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != User || pass != Password {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.s.opts.Reject {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	ss.to = to
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	ss.s.received = append(ss.s.received, Received{From: ss.from, To: ss.to, Data: b})
	return nil
}

func (ss *session) Reset()        {}
func (ss *session) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1, valid for this century,
// and a pool trusting it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
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
