package courier_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
	"github.com/licentia/licentia/internal/store"
)

// TestSendsKeyMail: a queued key mail goes out once, branded, through the
// SMTP server and the outbox alike, each key and the link on a line of
// its own in the text part as written; the row says sent and holds
// neither address nor key.
func TestSendsKeyMail(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		err := e.st.InTx(t.Context(), func(tx store.Tx) error {
			return tx.SetBranding(t.Context(), e.org.ID, licentia.Branding{DisplayName: new("Acme Photo Tools"),
				SupportEmail: new("help@acme.example"), Accent: new("#0a7cff")})
		})
		if err != nil {
			t.Fatal(err)
		}
		a, b := e.issue(t, "photo", "ada@example.org"), e.issue(t, "sync", "ada@example.org")
		m := e.queue(t, a, b)
		if n := runOnce(t, e.worker(e.st, e.sender)); n != 1 {
			t.Fatalf("RunOnce() claimed %d, want 1", n)
		}
		outbox := filepath.Join(t.TempDir(), "outbox")
		e.queue(t, a, b)
		if n := runOnce(t, e.worker(e.st, mail.NewOutbox(outbox, "Licentia <licences@service.example>"))); n != 1 {
			t.Fatalf("RunOnce() to the outbox claimed %d, want 1", n)
		}
		got := e.smtp.Received()
		if len(got) != 1 || got[0].To != "ada@example.org" {
			t.Fatalf("SMTP server received %+v, want one mail to ada@example.org", got)
		}
		raws := append([]mailtest.Raw{mailtest.Parse(t, got[0].Data)}, mailtest.Outbox(t, outbox)...)
		if len(raws) != 2 {
			t.Fatalf("outbox holds %d mails, want 1", len(raws)-1)
		}
		for _, raw := range raws {
			raw.CheckStandalone(t, *a.Key, *b.Key, publicURL+"/portal/"+e.org.Slug+"/")
			if from, err := raw.Header.AddressList("From"); err != nil || from[0].Name != "Acme Photo Tools" {
				t.Errorf("From = %q, want the display name", raw.Header.Get("From"))
			}
			if !strings.Contains(raw.Header.Get("Reply-To"), "help@acme.example") {
				t.Errorf("Reply-To = %q, want the support address", raw.Header.Get("Reply-To"))
			}
			if !strings.Contains(raw.Text, "Photo Studio") || !strings.Contains(raw.Text, "3 seats") {
				t.Errorf("text part lacks the product or its limit:\n%s", raw.Text)
			}
		}
		sent := e.mail(t, m.ID)
		if sent.Status != licentia.MailSent || sent.Attempts != 1 || sent.FailureReason != nil || sent.NextAttemptAt != nil {
			t.Errorf("mail after sending = %+v, want sent after 1 attempt", sent)
		}
		if n := runOnce(t, e.worker(e.st, e.sender)); n != 0 || len(e.smtp.Received()) != 1 {
			t.Errorf("RunOnce() after sending claimed %d, server has %d mails, want 0 and 1", n, len(e.smtp.Received()))
		}
	})
}

// dyingSender stands for a process killed while it hands a mail over: the
// attempt never ends, and nothing is recorded.
type dyingSender struct{ kill context.CancelFunc }

func (d dyingSender) Send(ctx context.Context, _ mail.Message) error {
	d.kill()
	<-ctx.Done()
	return ctx.Err()
}

// TestDiesBeforeSending: a worker that claims a mail and dies before it is
// handed over loses no mail: once the lease has run out, a worker of
// another process sends it, exactly once.
func TestDiesBeforeSending(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		l := e.issue(t, "photo", "ada@example.org")
		m := e.queue(t, l)
		ctx, kill := context.WithCancel(t.Context())
		if n, err := e.worker(e.st, dyingSender{kill}).RunOnce(ctx); n != 1 || err != nil {
			t.Fatalf("RunOnce() of the dying worker = %d, %v, want 1 claimed", n, err)
		}
		other := e.worker(e.reopen(t), e.sender)
		if n := runOnce(t, other); n != 0 {
			t.Fatalf("RunOnce() within the lease claimed %d, want 0", n)
		}
		e.clk.Advance(courier.Lease)
		if n := runOnce(t, other); n != 1 {
			t.Fatalf("RunOnce() after the lease claimed %d, want 1", n)
		}
		e.clk.Advance(24 * time.Hour)
		runOnce(t, other)
		runOnce(t, e.worker(e.st, e.sender))
		if got := e.received(t, *l.Key); got[*l.Key] != 1 {
			t.Errorf("the key was mailed %d times, want once", got[*l.Key])
		}
		if got := e.mail(t, m.ID); got.Status != licentia.MailSent || got.Attempts != 1 {
			t.Errorf("mail = %+v, want sent after 1 recorded attempt", got)
		}
	})
}

// TestRolledBackSendsNone: an issue whose transaction rolls back after
// its licence and key mail were written sends no mail.
func TestRolledBackSendsNone(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		errLater := errors.New("a later step of the change failed")
		now := e.clk.Now()
		l := &licentia.Licence{ID: licentia.NewID(), OrgID: e.org.ID, ProductID: "photo", Email: "ada@example.org", IssuedAt: now,
			LimitKind: licentia.LimitSeats, LimitCount: 1, Major: 1, Status: licentia.StatusActive, Source: licentia.SourceAdmin,
			CreatedAt: now, UpdatedAt: now}
		err := e.st.InTx(t.Context(), func(tx store.Tx) error {
			if err := tx.CreateLicence(t.Context(), l); err != nil {
				return err
			}
			if err := tx.CreateMail(t.Context(), &licentia.Mail{ID: licentia.NewID(), OrgID: e.org.ID, Kind: licentia.MailKey,
				LicenceIDs: []string{l.ID}, Status: licentia.MailQueued, NextAttemptAt: &now, CreatedAt: now}); err != nil {
				return err
			}
			return errLater
		})
		if !errors.Is(err, errLater) {
			t.Fatalf("InTx() error = %v, want the change's", err)
		}
		e.clk.Advance(time.Hour)
		if n := runOnce(t, e.worker(e.reopen(t), e.sender)); n != 0 || len(e.smtp.Received()) != 0 {
			t.Errorf("RunOnce() claimed %d, server has %d mails, want none", n, len(e.smtp.Received()))
		}
		if _, err := e.st.Licence(t.Context(), e.org.ID, l.ID); licentia.ErrorCode(err) != licentia.CodeLicenceNotFound {
			t.Errorf("Licence() after the rollback error = %v, want licence_not_found", err)
		}
	})
}

// TestSMTPDownForAnHour: mails queued while the mail server is down are
// retried on schedule and all delivered, once each, after it comes back.
func TestSMTPDownForAnHour(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		e.smtp.Stop()
		var keys []string
		var ms []*licentia.Mail
		for _, email := range []string{"ada@example.org", "grace@example.org", "alan@example.org"} {
			l := e.issue(t, "photo", email)
			keys, ms = append(keys, *l.Key), append(ms, e.queue(t, l))
		}
		w := e.worker(e.st, e.sender)
		down := e.clk.Now()
		for e.clk.Now().Sub(down) < time.Hour {
			runOnce(t, w)
			e.clk.Advance(5 * time.Minute)
		}
		for _, m := range ms {
			got := e.mail(t, m.ID)
			if got.Status != licentia.MailQueued || got.Attempts < 3 || *got.FailureReason != licentia.MailFailureNotHandedOver {
				t.Errorf("mail after an hour down = %+v, want queued after several attempts", got)
			}
		}
		e.smtp.Start(t)
		for range 30 {
			runOnce(t, w)
			e.clk.Advance(5 * time.Minute)
		}
		got := e.received(t, keys...)
		for _, k := range keys {
			if got[k] != 1 {
				t.Errorf("key %s... mailed %d times, want once", k[:10], got[k])
			}
		}
		for _, m := range ms {
			if got := e.mail(t, m.ID); got.Status != licentia.MailSent {
				t.Errorf("mail after the server came back = %+v, want sent", got)
			}
		}
	})
}

// TestGivesUpAfterEightAttempts: a mail the server never takes ends
// failed after 8 attempts, about a day after it was queued.
func TestGivesUpAfterEightAttempts(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		e.smtp.Stop()
		m := e.queue(t, e.issue(t, "photo", "ada@example.org"))
		w := e.worker(e.st, e.sender)
		queued := e.clk.Now()
		for i := range courier.MaxAttempts {
			if n := runOnce(t, w); n != 1 {
				t.Fatalf("attempt %d: RunOnce() claimed %d, want 1", i+1, n)
			}
			if got := e.mail(t, m.ID); got.NextAttemptAt != nil {
				e.clk.Set(*got.NextAttemptAt)
			}
		}
		got := e.mail(t, m.ID)
		if got.Status != licentia.MailFailed || got.Attempts != 8 || got.FailureReason == nil ||
			*got.FailureReason != licentia.MailFailureNotHandedOver || got.NextAttemptAt != nil {
			t.Errorf("mail after 8 failed attempts = %+v, want failed", got)
		}
		if d := got.LastAttemptAt.Sub(queued); d < 20*time.Hour || d > 26*time.Hour {
			t.Errorf("the last attempt came %v after the mail was queued, want about a day", d)
		}
		e.smtp.Start(t)
		e.clk.Advance(48 * time.Hour)
		if n := runOnce(t, w); n != 0 || len(e.smtp.Received()) != 0 {
			t.Errorf("RunOnce() of a failed mail claimed %d, want 0", n)
		}
	})
}

// TestWorkersRace: two workers of two processes sharing the queue send
// each mail exactly once.
func TestWorkersRace(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		const total = 20
		var keys []string
		for i := range total {
			l := e.issue(t, "photo", "buyer"+string(rune('a'+i))+"@example.org")
			keys = append(keys, *l.Key)
			e.queue(t, l)
		}
		workers := []*courier.Worker{e.worker(e.st, e.sender), e.worker(e.reopen(t), e.sender)}
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				for {
					n, err := w.RunOnce(t.Context())
					if err != nil {
						t.Errorf("RunOnce() error = %v", err)
						return
					}
					if n == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		got := e.received(t, keys...)
		for _, k := range keys {
			if got[k] != 1 {
				t.Errorf("key %s... mailed %d times, want once", k[:10], got[k])
			}
		}
	})
}

// TestLicenceGoneBeforeSending: a licence anonymised before its mail is
// sent is never mailed, and the mail says why without naming anyone; one
// revoked meanwhile is not mailed either; of an order's licences, those
// still in force are.
func TestLicenceGoneBeforeSending(t *testing.T) {
	engines(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		e := newEnv(t, open)
		gone, revoked, kept := e.issue(t, "photo", "ada@example.org"), e.issue(t, "photo", "ada@example.org"), e.issue(t, "sync", "ada@example.org")
		anonymisedMail, revokedMail, orderMail := e.queue(t, gone), e.queue(t, revoked), e.queue(t, gone, kept)
		if _, err := e.svc.AnonymiseLicence(t.Context(), licentia.OperatorActor, e.org.ID, gone.Licence.ID,
			admin.Anonymise{Confirm: new(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.RevokeLicence(t.Context(), licentia.OperatorActor, e.org.ID, revoked.Licence.ID, admin.Reason("refund")); err != nil {
			t.Fatal(err)
		}
		runOnce(t, e.worker(e.st, e.sender))
		for _, tt := range []struct {
			m      *licentia.Mail
			status licentia.MailStatus
			reason string
		}{
			{anonymisedMail, licentia.MailFailed, licentia.MailFailureAnonymised},
			{revokedMail, licentia.MailFailed, licentia.MailFailureNotInForce},
			{orderMail, licentia.MailSent, ""},
		} {
			got := e.mail(t, tt.m.ID)
			if got.Status != tt.status || (tt.reason != "" && (got.FailureReason == nil || *got.FailureReason != tt.reason)) {
				t.Errorf("mail = %+v, want %s (%s)", got, tt.status, tt.reason)
			}
		}
		received := e.smtp.Received()
		if len(received) != 1 {
			t.Fatalf("server got %d mails, want 1", len(received))
		}
		raw := mailtest.Parse(t, received[0].Data)
		raw.CheckStandalone(t, *kept.Key)
		if strings.Contains(raw.Text, *gone.Key) {
			t.Errorf("the anonymised licence's key was mailed")
		}
	})
}
