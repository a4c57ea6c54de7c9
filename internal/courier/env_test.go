package courier_test

import (
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

const publicURL = "https://licences.example.org"

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// engines runs fn on SQLite and on PostgreSQL.
func engines(t *testing.T, fn func(t *testing.T, open func(t *testing.T) store.Store)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, storetest.OpenSQLite) })
	t.Run("postgres", func(t *testing.T) { fn(t, storetest.OpenPostgres) })
}

// env is a database with an organization, a product and a licence, a
// real SMTP server on loopback and a sender to it.
type env struct {
	st     store.Store
	clk    *clock.Fake
	keys   *signing.Keyring
	svc    *admin.Service
	org    *licentia.Organization
	smtp   *mailtest.Server
	sender mail.Sender
}

func newEnv(t *testing.T, open func(t *testing.T) store.Store) *env {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	master, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{st: open(t), clk: clock.NewFake(start), keys: signing.NewKeyring(master), smtp: mailtest.StartSMTP(t)}
	e.svc = admin.New(admin.Options{Store: e.st, Clock: e.clk, Plans: licentia.DefaultPlans(), Keys: e.keys,
		PublicURL: publicURL, Logger: slog.New(slog.DiscardHandler)})
	e.org, err = e.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	for _, p := range []struct{ id, name, prefix string }{{"photo", "Photo Studio", "PHOTO"}, {"sync", "Sync", "SYNC"}} {
		major := int64(1)
		if _, err := e.svc.CreateProduct(t.Context(), licentia.OperatorActor, e.org.ID,
			admin.NewProduct{ID: &p.id, Name: &p.name, KeyPrefix: &p.prefix, CurrentMajor: &major}); err != nil {
			t.Fatalf("CreateProduct() error = %v", err)
		}
	}
	e.sender, err = mail.NewSMTP(mail.SMTPOptions{URL: e.smtp.URL(), From: "Licentia <licences@service.example>",
		Timeout: 5 * time.Second, RootCAs: e.smtp.Roots})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// worker is a worker on st, as another process would run, sending through
// sender.
func (e *env) worker(st store.Store, sender mail.Sender) *courier.Worker {
	return courier.New(courier.Options{Store: st, Clock: e.clk, Keys: e.keys, Sender: sender, PublicURL: publicURL,
		Logger: slog.New(slog.DiscardHandler)})
}

// reopen opens the database behind e.st again, through a pool of its own,
// as a second process would.
func (e *env) reopen(t *testing.T) store.Store {
	t.Helper()
	url := storetest.DatabaseURL(t, e.st)
	var st store.Store
	var err error
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		st, err = sqlite.Open(t.Context(), path)
	} else {
		st, err = postgres.Open(t.Context(), url)
	}
	if err != nil {
		t.Fatalf("open the database again: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// issue issues a licence of product to email.
func (e *env) issue(t *testing.T, product, email string) *admin.LicenceView {
	t.Helper()
	seats := int64(3)
	v, err := e.svc.IssueLicence(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewLicence{ProductID: &product, Email: &email,
		LimitCount: &seats})
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	return v
}

// queue queues a key mail of the licences in its own transaction.
func (e *env) queue(t *testing.T, licences ...*admin.LicenceView) *licentia.Mail {
	t.Helper()
	now := licentia.TruncateMillis(e.clk.Now())
	m := &licentia.Mail{ID: licentia.NewID(), OrgID: e.org.ID, Kind: licentia.MailKey, Status: licentia.MailQueued,
		NextAttemptAt: &now, CreatedAt: now}
	for _, l := range licences {
		m.LicenceIDs = append(m.LicenceIDs, l.Licence.ID)
	}
	if err := e.st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateMail(t.Context(), m) }); err != nil {
		t.Fatalf("CreateMail() error = %v", err)
	}
	return m
}

// mail reads a mail back.
func (e *env) mail(t *testing.T, id string) *licentia.Mail {
	t.Helper()
	m, err := e.st.Mail(t.Context(), e.org.ID, id)
	if err != nil {
		t.Fatalf("Mail() error = %v", err)
	}
	return m
}

// runOnce runs one step of w and returns how many mails it claimed.
func runOnce(t *testing.T, w *courier.Worker) int {
	t.Helper()
	n, err := w.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce() error = %v", err)
	}
	return n
}

// received counts the messages the SMTP server accepted for each licence
// key: a key mailed twice counts twice.
func (e *env) received(t *testing.T, keys ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range e.smtp.Received() {
		raw := mailtest.Parse(t, r.Data)
		for _, k := range keys {
			if strings.Contains(raw.Text, k) {
				out[k]++
			}
		}
	}
	return out
}
