package mail_test

import (
	"crypto/x509"
	"errors"
	"io"
	"net"
	stdmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
)

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
			srv := mailtest.StartSMTPWith(t, mailtest.Options{Implicit: tc.implicit})
			if !strings.HasPrefix(srv.URL(), tc.scheme+"://"+mailtest.User+":s3cret%3Apass@") {
				t.Fatalf("server URL %q, want the password's colon escaped", srv.URL())
			}
			s := newSMTP(t, srv.URL(), srv.Roots)
			m := mail.Message{To: "ada@example.org", Subject: "You are invited to Acme", Text: "Follow the link to join.\n"}
			if err := s.Send(t.Context(), m); err != nil {
				t.Fatalf("Send() error = %v", err)
			}
			received := srv.Received()
			if len(received) != 1 {
				t.Fatalf("server got %d messages, want 1", len(received))
			}
			got := received[0]
			if got.From != "licences@example.com" || got.To != "ada@example.org" {
				t.Errorf("envelope = %q -> %q, want licences@example.com -> ada@example.org", got.From, got.To)
			}
			checkMessage(t, got.Data, m)
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
	srv := mailtest.StartSMTP(t)
	s := newSMTP(t, "smtp://"+mailtest.User+":wrong@"+srv.Addr(), srv.Roots)
	err := s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "x"})
	if !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("Send() with a wrong password error = %v, want ErrNotSent", err)
	}
}

func TestSMTPRefused(t *testing.T) {
	srv := mailtest.StartSMTPWith(t, mailtest.Options{Reject: true})
	s := newSMTP(t, srv.URL(), srv.Roots)
	err := s.Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: "secret body"})
	if !errors.Is(err, mail.ErrNotSent) {
		t.Fatalf("Send() to a refusing server error = %v, want ErrNotSent", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ada@example.org") || strings.Contains(msg, "secret body") {
		t.Errorf("error %q names the recipient or the body", msg)
	}
	if n := len(srv.Received()); n != 0 {
		t.Errorf("server kept %d messages, want none", n)
	}
}

// TestSMTPUntrusted: a certificate the sender does not trust is refused.
func TestSMTPUntrusted(t *testing.T) {
	srv := mailtest.StartSMTP(t)
	s := newSMTP(t, srv.URL(), x509.NewCertPool())
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
