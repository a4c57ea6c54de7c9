package cli_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

var jobStart = time.Date(2026, 11, 22, 1, 16, 13, 250_000_000, time.UTC)

func openJobStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestServeJobs checks the jobs serve runs and how often.
func TestServeJobs(t *testing.T) {
	h := newHarness(t)
	app := h.newApp(t, io.Discard)
	want := map[string]time.Duration{
		"catalogue": signing.RefreshInterval, "licence sweep": time.Minute,
		"webhook deliveries": time.Second, "customer mail": time.Second, "event clean-up": time.Hour, "session clean-up": time.Hour,
		"portal clean-up":             time.Hour,
		"authorization code clean-up": time.Hour, "idempotency key clean-up": time.Hour, "lease sweep": 30 * time.Second,
		"idempotency key settling": time.Second, "floating lease sweep": time.Minute,
	}
	if diff := cmp.Diff(want, app.JobIntervals()); diff != "" {
		t.Errorf("jobs mismatch (-want +got):\n%s", diff)
	}
}

// TestEventCleanupJob runs the clean-up step with a fake clock: an event
// is deleted once it is more than 30 days old, and one exactly 30 days old
// is kept.
func TestEventCleanupJob(t *testing.T) {
	st := openJobStore(t)
	clk := clock.NewFake(jobStart)
	step := cli.JobSteps(st, clk)["event clean-up"]
	cutoff := jobStart.Add(-licentia.EventRetention)
	ages := []struct {
		name string
		at   time.Time
	}{
		{"a year old", jobStart.AddDate(-1, 0, 0)},
		{"older by a millisecond", cutoff.Add(-time.Millisecond)},
		{"exactly 30 days", cutoff},
		{"younger by a millisecond", cutoff.Add(time.Millisecond)},
		{"just now", jobStart},
	}
	names := map[string]string{}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		for _, a := range ages {
			id := events.NewID()
			names[id] = a.name
			e := &licentia.Event{ID: id, OrgID: "org", Type: licentia.EventLicenceIssued, At: a.at, Body: []byte(`{}`)}
			if err := tx.InsertEvent(t.Context(), e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("InsertEvent() error = %v", err)
	}
	kept := func() []string {
		t.Helper()
		es, err := st.OrganizationEvents(t.Context(), "org")
		if err != nil {
			t.Fatalf("OrganizationEvents() error = %v", err)
		}
		var out []string
		for _, e := range es {
			out = append(out, names[e.ID])
		}
		return out
	}

	for _, tt := range []struct {
		advance time.Duration
		want    []string
	}{
		{0, []string{"exactly 30 days", "younger by a millisecond", "just now"}},
		{time.Millisecond, []string{"younger by a millisecond", "just now"}},
		{time.Millisecond, []string{"just now"}},
		{licentia.EventRetention - 2*time.Millisecond, []string{"just now"}},
		{time.Millisecond, nil},
	} {
		clk.Advance(tt.advance)
		if err := step(t.Context()); err != nil {
			t.Fatalf("clean-up step error = %v", err)
		}
		if diff := cmp.Diff(tt.want, kept()); diff != "" {
			t.Errorf("at %v: kept events mismatch (-want +got):\n%s", clk.Now(), diff)
		}
	}
}

// TestLicenceSweepJob runs the sweep step with a fake clock: it moves
// licences whose expiry passed and brings the watermark to now.
func TestLicenceSweepJob(t *testing.T) {
	st := openJobStore(t)
	clk := clock.NewFake(jobStart)
	step := cli.JobSteps(st, clk)["licence sweep"]
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(masterKey(t, rawKey(1))), Logger: slog.New(slog.DiscardHandler)})
	o, err := svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanIndie, OwnerEmail: "owner@acme.example",
	})
	if err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	createProduct(t, svc, o.ID, "photo-editor", "PHOTO")
	for _, d := range []time.Duration{time.Hour, 2 * time.Hour, 48 * time.Hour} {
		expires, product, email := jobStart.Add(d), "photo-editor", "customer@example.com"
		_, err := svc.IssueLicence(t.Context(), licentia.OperatorActor, o.ID,
			admin.NewLicence{ProductID: &product, Email: &email, ExpiresAt: &expires})
		if err != nil {
			t.Fatalf("IssueLicence() error = %v", err)
		}
	}

	for _, advance := range []time.Duration{0, 90 * time.Minute, 3 * time.Hour, 72 * time.Hour} {
		clk.Advance(advance)
		if err := step(t.Context()); err != nil {
			t.Fatalf("sweep step error = %v", err)
		}
		w, err := st.Setting(t.Context(), store.SettingSweepWatermark)
		if err != nil {
			t.Fatalf("Setting() error = %v", err)
		}
		if want := strconv.FormatInt(clk.Now().UnixMilli(), 10); w != want {
			t.Errorf("at %v: watermark = %s, want %s (now)", clk.Now(), w, want)
		}
		counts, err := st.CountLicences(t.Context(), o.ID, nil, jobStart, clk.Now())
		if err != nil {
			t.Fatalf("CountLicences() error = %v", err)
		}
		expired := 0
		for _, d := range []time.Duration{time.Hour, 2 * time.Hour, 48 * time.Hour} {
			if !jobStart.Add(d).After(clk.Now()) {
				expired++
			}
		}
		if counts.Expired != int64(expired) || counts.Active != int64(3-expired) {
			t.Errorf("at %v: counts active %d, expired %d, want %d, %d", clk.Now(), counts.Active, counts.Expired, 3-expired, expired)
		}
	}
}

// TestRunJobs runs jobs on their tickers in a bubble: each runs at once and
// then every interval, a failure is logged and tried again, and cancelling
// the context stops them all.
func TestRunJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs lockedBuffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		var mu sync.Mutex
		runs := map[string]int{}
		step := func(name string, err error) func(context.Context) error {
			return func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				runs[name]++
				return err
			}
		}
		counts := func() map[string]int {
			mu.Lock()
			defer mu.Unlock()
			return map[string]int{"minute": runs["minute"], "hour": runs["hour"], "failing": runs["failing"]}
		}

		ctx, cancel := context.WithCancel(t.Context())
		wait := cli.RunJobs(ctx, log, []cli.Job{
			{Name: "minute", Every: time.Minute, Step: step("minute", nil)},
			{Name: "hour", Every: time.Hour, Step: step("hour", nil)},
			{Name: "failing", Every: 10 * time.Minute, Step: step("failing", errors.New("database away"))},
		})
		synctest.Wait()
		if diff := cmp.Diff(map[string]int{"minute": 1, "hour": 1, "failing": 1}, counts()); diff != "" {
			t.Errorf("runs at start mismatch (-want +got):\n%s", diff)
		}

		time.Sleep(time.Hour + time.Second)
		synctest.Wait()
		if diff := cmp.Diff(map[string]int{"minute": 61, "hour": 2, "failing": 7}, counts()); diff != "" {
			t.Errorf("runs after an hour mismatch (-want +got):\n%s", diff)
		}
		if n := strings.Count(logs.String(), `"msg":"background job failed","job":"failing","error":"database away"`); n != 7 {
			t.Errorf("log has %d failures of the failing job, want 7:\n%s", n, logs.String())
		}

		cancel()
		wait()
		stopped := counts()
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if diff := cmp.Diff(stopped, counts()); diff != "" {
			t.Errorf("jobs ran after the context was cancelled (-want +got):\n%s", diff)
		}
	})
}

// TestClose checks that Close releases the address of a service that never
// ran, and that it succeeds after Run.
func TestClose(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	addr := app.Addr()
	if err := app.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Close", addr)
	}

	app, err = cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := app.Run(ctx); err != nil {
		t.Errorf("Run() error = %v", err)
	}
	if err := app.Close(); err != nil {
		t.Errorf("Close() after Run error = %v", err)
	}
}

// TestSessionCleanupJob: the step deletes console sessions idle for 12
// hours or past their 7 days, and keeps the others.
func TestSessionCleanupJob(t *testing.T) {
	st := openJobStore(t)
	clk := clock.NewFake(jobStart)
	a := &licentia.Account{ID: licentia.NewID(), Email: "ada@example.com", CreatedAt: jobStart, UpdatedAt: jobStart}
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanIndie, CreatedAt: jobStart}
	idle := &licentia.Session{ID: licentia.NewID(), TokenHash: []byte("idle"), AccountID: a.ID, OrgID: o.ID,
		CreatedAt: jobStart, LastSeenAt: jobStart, ExpiresAt: jobStart.Add(7 * 24 * time.Hour)}
	live := *idle
	live.ID, live.TokenHash, live.LastSeenAt = licentia.NewID(), []byte("live"), jobStart.Add(time.Hour)
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateOrganization(t.Context(), o); err != nil {
			return err
		}
		if err := tx.CreateAccount(t.Context(), a); err != nil {
			return err
		}
		if err := tx.CreateSession(t.Context(), idle); err != nil {
			return err
		}
		return tx.CreateSession(t.Context(), &live)
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(jobStart.Add(12*time.Hour + time.Millisecond))
	if err := cli.JobSteps(st, clk)["session clean-up"](t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionByToken(t.Context(), []byte("idle")); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("the idle session: %v, want not_found", err)
	}
	if _, err := st.SessionByToken(t.Context(), []byte("live")); err != nil {
		t.Errorf("the live session: %v, want it kept", err)
	}
}

// TestAuthorizationCodeCleanupJob: the step deletes authorization codes
// past their 10 minutes, and keeps live ones.
func TestAuthorizationCodeCleanupJob(t *testing.T) {
	st := openJobStore(t)
	clk := clock.NewFake(jobStart)
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanIndie, CreatedAt: jobStart}
	c := &licentia.OAuthClient{ID: "CLIENT", Name: "Claude Desktop", RedirectURIs: []string{"http://127.0.0.1:1/cb"}, CreatedAt: jobStart}
	g := &licentia.Grant{ID: licentia.NewID(), OrgID: o.ID, MemberID: licentia.NewID(), ClientID: c.ID, ClientName: c.Name, CreatedAt: jobStart}
	code := func(hash string, expires time.Time) *licentia.AuthorizationCode {
		return &licentia.AuthorizationCode{CodeHash: []byte(hash), ClientID: c.ID, RedirectURI: c.RedirectURIs[0], CodeChallenge: "x",
			Resource: "http://127.0.0.1:1/mcp", OrgID: o.ID, MemberID: g.MemberID, GrantID: g.ID, ExpiresAt: expires, CreatedAt: jobStart}
	}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		for _, err := range []error{tx.CreateOrganization(t.Context(), o), tx.CreateOAuthClient(t.Context(), c), tx.CreateGrant(t.Context(), g),
			tx.CreateAuthorizationCode(t.Context(), code("old", jobStart.Add(10*time.Minute))),
			tx.CreateAuthorizationCode(t.Context(), code("live", jobStart.Add(20*time.Minute)))} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(jobStart.Add(10 * time.Minute))
	if err := cli.JobSteps(st, clk)["authorization code clean-up"](t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AuthorizationCode(t.Context(), []byte("old")); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("the expired code: %v, want not_found", err)
	}
	if _, err := st.AuthorizationCode(t.Context(), []byte("live")); err != nil {
		t.Errorf("the live code: %v, want it kept", err)
	}
}

// TestIdempotencyKeyCleanupJob: the step deletes Idempotency-Keys past
// their 24 hours, and keeps live ones.
func TestIdempotencyKeyCleanupJob(t *testing.T) {
	st := openJobStore(t)
	clk := clock.NewFake(jobStart)
	key := func(name string, created time.Time) *store.IdempotencyKey {
		return &store.IdempotencyKey{Subject: "key:K", Key: name, RequestHash: []byte("h"), Token: name, CreatedAt: created,
			ExpiresAt: created.Add(24 * time.Hour), LeaseUntil: created.Add(time.Minute)}
	}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		for _, k := range []*store.IdempotencyKey{key("old", jobStart), key("live", jobStart.Add(time.Hour))} {
			if _, _, err := tx.ClaimIdempotencyKey(t.Context(), k, k.CreatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(jobStart.Add(24 * time.Hour))
	if err := cli.JobSteps(st, clk)["idempotency key clean-up"](t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IdempotencyKey(t.Context(), "key:K", "old"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("the expired key: %v, want not_found", err)
	}
	if _, err := st.IdempotencyKey(t.Context(), "key:K", "live"); err != nil {
		t.Errorf("the live key: %v, want it kept", err)
	}
}
