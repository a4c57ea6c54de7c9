package mail_test

import (
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
)

const (
	keyA = "PHOTO_048RD-0129X-KJJ1R-BFN7H-X31A9-SNSYF-AT3HZ-9PBAF-7X6K4-C733Y-AS6HZ-TE8J9-27CNP-9AA14-VM2DD-7MR15-1EMD0-QX8D6-YPZG2-V3HXW-XXM8V-WKB07-W5VXJ-JX7QW-X7MG6-3Q917-0DT08-AA004-E2G"
	keyB = "SYNC_0A8RD-0129X-KJJ1R-BFN7H-X31A9-SNSYF-AT3HZ-9PBAF-7X6K4-C733Y-AS6HZ-TE8J9-27CNP-9AA14-VM2DD-7MR15-1EMD0-QX8D6-YPZG2-V3HXW-XXM8V-WKB07-W5VXJ-JX7QW-X7MG6-3Q917-0DT08-AA004-E2G"
)

func keyMail() mail.KeyMail {
	return mail.KeyMail{
		To: "ada@example.org",
		Brand: mail.Brand{Name: "Zoë's Photo Tools", LogoURL: "https://zoe.example/logo.png", Accent: "#0a7cff",
			SupportEmail: "help@zoe.example"},
		Licences: []mail.KeyLicence{
			{Product: "Photo Studio", Key: keyA, Limit: "3 seats", Expiry: "Does not expire."},
			{Product: "Sync <Pro>", Key: keyB, Limit: "1 machine", Expiry: "Expires on 2 January 2027 at 15:04 UTC."},
		},
		KeysURL: "https://licences.zoe.example/console/purchase?order_id=" + strings.Repeat("pi_3Nabc", 8),
	}
}

// TestKeyMail: the key mail carries the maker's branding, names Licentia
// only in its "powered by" line, and every key and link stands whole on a
// line of its own in the text part as written.
func TestKeyMail(t *testing.T) {
	k := keyMail()
	m, err := k.Message()
	if err != nil {
		t.Fatalf("Message() error = %v", err)
	}
	if m.FromName != "Zoë's Photo Tools" || m.ReplyTo != "help@zoe.example" || m.To != k.To {
		t.Errorf("Message() From name %q, Reply-To %q, To %q", m.FromName, m.ReplyTo, m.To)
	}
	if m.Subject != "Your licence keys from Zoë's Photo Tools" {
		t.Errorf("Subject = %q", m.Subject)
	}
	for _, part := range []struct{ name, body string }{{"text", m.Text}, {"html", m.HTML}} {
		if n := strings.Count(part.body, "Licentia"); n != 1 || !strings.Contains(part.body, "Powered by Licentia") {
			t.Errorf("%s part names Licentia %d times, want only in its powered-by line:\n%s", part.name, n, part.body)
		}
	}
	for _, want := range []string{`src="https://zoe.example/logo.png"`, "#0a7cff", "Sync &lt;Pro&gt;", keyA, "mailto:help@zoe.example"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("HTML part lacks %q:\n%s", want, m.HTML)
		}
	}
	if strings.Contains(m.HTML, "ZgotmplZ") {
		t.Errorf("HTML part has a value the template refused:\n%s", m.HTML)
	}

	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "Licentia <licences@service.example>").Send(t.Context(), m); err != nil {
		t.Fatalf("Send() error = %v", err)
	}
	raw := mailtest.Outbox(t, dir)
	if len(raw) != 1 {
		t.Fatalf("outbox holds %d messages, want 1", len(raw))
	}
	got := raw[0]
	got.CheckStandalone(t, keyA, keyB, k.KeysURL, "Sync <Pro>", "Limit: 3 seats", "help@zoe.example")
	for _, h := range []string{"User-Agent", "X-Mailer"} {
		if v := got.Header.Get(h); v != "" {
			t.Errorf("%s = %q, want none: a customer's mail names the maker only", h, v)
		}
	}
	from, err := got.Header.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != "Zoë's Photo Tools" || from[0].Address != "licences@service.example" {
		t.Errorf("From = %q (%v), want the display name at the service's address", got.Header.Get("From"), err)
	}
	if rt := got.Header.Get("Reply-To"); !strings.Contains(rt, "help@zoe.example") {
		t.Errorf("Reply-To = %q, want the support address", rt)
	}
	if got.HTML == "" {
		t.Errorf("message has no HTML part")
	}
}

// TestKeyMailWithoutBranding: with only a name, the mail still renders,
// in the default colour, without a logo or a support line.
func TestKeyMailWithoutBranding(t *testing.T) {
	k := keyMail()
	k.Brand = mail.Brand{Name: "Acme"}
	k.Licences = k.Licences[:1]
	m, err := k.Message()
	if err != nil {
		t.Fatalf("Message() error = %v", err)
	}
	if m.ReplyTo != "" || strings.Contains(m.HTML, "<img") || strings.Contains(m.Text, "Questions?") {
		t.Errorf("unbranded mail has a Reply-To %q, a logo or a support line:\n%s", m.ReplyTo, m.Text)
	}
	if !strings.Contains(m.HTML, mail.DefaultAccent) || m.Subject != "Your licence key for Photo Studio" {
		t.Errorf("unbranded mail: subject %q, default accent missing", m.Subject)
	}
	if _, err := (mail.KeyMail{To: "a@example.org", Brand: mail.Brand{Name: "Acme"}}).Message(); err == nil {
		t.Errorf("Message() of a key mail without licences error = nil, want one")
	}
}

// TestInvitationMail: the invitation's link stands whole on its own line
// in the raw message, which quoted-printable used to cut.
func TestInvitationMail(t *testing.T) {
	i := mail.InvitationMail{To: "ada@example.org", Brand: mail.Brand{Name: "Zoë's Café"}, Role: "developer",
		Link: longLink, Expires: "9 March 2026 at 12:00 UTC"}
	m, err := i.Message()
	if err != nil {
		t.Fatalf("Message() error = %v", err)
	}
	if m.Subject != "You are invited to join Zoë's Café on Licentia" || m.FromName != "" {
		t.Errorf("Subject = %q, FromName %q", m.Subject, m.FromName)
	}
	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "").Send(t.Context(), m); err != nil {
		t.Fatalf("Send() error = %v", err)
	}
	raw := mailtest.Outbox(t, dir)
	if len(raw) != 1 {
		t.Fatalf("outbox holds %d messages, want 1", len(raw))
	}
	raw[0].CheckStandalone(t, longLink)
	if !strings.Contains(raw[0].HTML, `href="`+longLink+`"`) {
		t.Errorf("HTML part does not link %s:\n%s", longLink, raw[0].HTML)
	}
}

// TestLongLineFallsBack: a text line longer than 8bit carries is written
// quoted-printable, and still reads back whole.
func TestLongLineFallsBack(t *testing.T) {
	long := strings.Repeat("x", 1200)
	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "").Send(t.Context(), mail.Message{To: "ada@example.org", Subject: "x", Text: long + "\n"}); err != nil {
		t.Fatalf("Send() error = %v", err)
	}
	got := mailtest.Outbox(t, dir)[0]
	if !strings.EqualFold(got.TextCTE, "quoted-printable") || !strings.Contains(got.Text, long) {
		t.Errorf("text part %s, decoded %d bytes, want quoted-printable holding the line", got.TextCTE, len(got.Text))
	}
}

// TestSignInMail: the portal's sign-in mail comes from the organization's
// display name, and its link stands whole on its own line in the raw
// message.
func TestSignInMail(t *testing.T) {
	link := "https://licences.zoe.example/portal/zoe-photo/sign-in/" + strings.Repeat("Ab_9-", 9)
	s := mail.SignInMail{To: "ada@example.org", Brand: mail.Brand{Name: "Zoë's Photo Tools", SupportEmail: "help@zoe.example"},
		Link: link, Expires: "1 March 2026 at 12:15 UTC"}
	m, err := s.Message()
	if err != nil {
		t.Fatalf("Message() error = %v", err)
	}
	if m.Subject != "Sign in to Zoë's Photo Tools" || m.FromName != "Zoë's Photo Tools" || m.ReplyTo != "help@zoe.example" {
		t.Errorf("Subject = %q, FromName %q, ReplyTo %q", m.Subject, m.FromName, m.ReplyTo)
	}
	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "").Send(t.Context(), m); err != nil {
		t.Fatalf("Send() error = %v", err)
	}
	raw := mailtest.Outbox(t, dir)
	if len(raw) != 1 {
		t.Fatalf("outbox holds %d messages, want 1", len(raw))
	}
	raw[0].CheckStandalone(t, link)
	if !strings.Contains(raw[0].HTML, `href="`+link+`"`) || strings.Count(raw[0].Text, "Licentia") != 1 {
		t.Errorf("HTML part does not link %s, or the text names Licentia more than once:\n%s", link, raw[0].Text)
	}
}
