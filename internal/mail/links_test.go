package mail_test

import (
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
)

// longLink is an invitation link as the console mails it: longer than a
// quoted-printable line, so that encoding would break it.
const longLink = "https://licentia.example.org/console/join/" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f"

// TestTextPartKeepsLinksWhole: in the text part as written in the message,
// the raw .eml and what the SMTP server receives alike, a link stands
// whole on its own line, so one copied out of the file works.
func TestTextPartKeepsLinksWhole(t *testing.T) {
	m := mail.Message{To: "ada@example.org", Subject: "You are invited to join Zoë's Café",
		Text: "You are invited to join Zoë's Café.\n\nOpen this link to choose your password and join:\n\n" + longLink +
			"\n\n" + strings.Repeat("A sentence of the mail. ", 3) + "\n"}

	dir := t.TempDir()
	if err := mail.NewOutbox(dir, "").Send(t.Context(), m); err != nil {
		t.Fatalf("Outbox.Send() error = %v", err)
	}
	got := mailtest.Outbox(t, dir)
	if len(got) != 1 {
		t.Fatalf("outbox holds %d messages, want 1", len(got))
	}
	got[0].CheckStandalone(t, longLink)
	if !strings.Contains(got[0].Text, "Zoë's Café") {
		t.Errorf("text part = %q, want the name spelt as given", got[0].Text)
	}

	srv := mailtest.StartSMTP(t)
	if err := newSMTP(t, srv.URL(), srv.Roots).Send(t.Context(), m); err != nil {
		t.Fatalf("SMTP.Send() error = %v", err)
	}
	received := srv.Received()
	if len(received) != 1 {
		t.Fatalf("server got %d messages, want 1", len(received))
	}
	mailtest.Parse(t, received[0].Data).CheckStandalone(t, longLink)
}
