package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

var moveLicences = flag.Int("move-licences", 5_000, "licences TestMoveToPostgres loads (3 activations each); 1000000 for the full data set")

// TestMoveToPostgres loads the data set into SQLite with a real signing key
// sealed under a real master key, moves it with licentia migrate-data, and
// finds on PostgreSQL every licence as it was, field by field, the same
// counts and plan count, and every licence's key verifying against the
// moved product through the service's catalogue. CI runs it on 5,000
// licences; the one-million-licence run (BENCHMARKS.md) is
//
//	go test ./tools/dataload -run TestMoveToPostgres -move-licences 1000000 -timeout 60m -v
func TestMoveToPostgres(t *testing.T) {
	to := storetest.PostgresURL(t)
	dir := t.TempDir()
	from := "sqlite:" + filepath.Join(dir, "licentia.db")
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	keyFile := filepath.Join(dir, "master.key")
	if err := os.WriteFile(keyFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}

	src := openTestStore(t, from)
	if err := src.InTx(t.Context(), func(tx store.Tx) error {
		return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, m.Fingerprint())
	}); err != nil {
		t.Fatal(err)
	}
	org, p, priv := createSignedFixture(t, src, m)
	o := options{databaseURL: from, org: org.Slug, product: p.ID, licences: *moveLicences,
		activations: 3 * *moveLicences, seed: 11, batch: 50_000, plans: licentia.DefaultPlans()}
	if _, err := load(t.Context(), o, clock.NewFake(base), io.Discard); err != nil {
		t.Fatalf("load() error = %v", err)
	}

	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"LICENTIA_DATA_DIR": dir, "LICENTIA_MASTER_KEY_FILE": keyFile}[k]
	}}
	if code := cli.RunEnv(t.Context(), []string{"migrate-data", "--from", from, "--to", to}, env); code != 0 {
		t.Fatalf("licentia migrate-data: exit %d, stderr %s", code, stderr.String())
	}
	var sum struct {
		Tables   map[string]int64 `json:"tables"`
		Rows     int64            `json:"rows"`
		Licences int64            `json:"licences"`
		TookMS   int64            `json:"took_ms"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("migrate-data summary %q: %v", stdout.String(), err)
	}
	t.Logf("moved %d rows (%d licences, %d activations) in %d ms, the check included", sum.Rows, sum.Tables["licences"],
		sum.Tables["activations"], sum.TookMS)
	if sum.Licences != int64(o.licences) || sum.Tables["activations"] != int64(o.activations) {
		t.Errorf("migrate-data moved %d licences and %d activations, want %d and %d", sum.Licences, sum.Tables["activations"],
			o.licences, o.activations)
	}

	dst := openTestStore(t, to)
	compareCounts(t, src, dst, org.ID, p.ID)
	compareLicences(t, src, dst, p, priv)
}

// createSignedFixture creates the organization and a product whose signing
// key is sealed under m, as the service creates them.
func createSignedFixture(t *testing.T, st store.Store, m *signing.MasterKey) (*licentia.Organization, *licentia.Product, ed25519.PrivateKey) {
	t.Helper()
	k, err := signing.NewProductKey(m, "dataset", base)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.OpenProductKey(m, k)
	if err != nil {
		t.Fatal(err)
	}
	org, p := createFixtureWithKey(t, st, *k)
	return org, p, priv
}

// compareCounts holds the counts of GET /v1/admin/licences/counts and the
// plan count on PostgreSQL to SQLite's, now and after terms have ended.
func compareCounts(t *testing.T, src, dst store.Store, orgID, productID string) {
	t.Helper()
	for _, now := range []time.Time{base, base.Add(90 * day)} {
		for _, product := range []*string{nil, &productID} {
			want, err := src.CountLicences(t.Context(), orgID, product, now.Add(-30*day), now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dst.CountLicences(t.Context(), orgID, product, now.Add(-30*day), now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("CountLicences(%s) on PostgreSQL differs from SQLite (-sqlite +postgres):\n%s", licentia.FormatTime(now), diff)
			}
		}
		want, err := src.PlanLicenceCount(t.Context(), orgID, now)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dst.PlanLicenceCount(t.Context(), orgID, now)
		if err != nil || got != want {
			t.Errorf("PlanLicenceCount(%s) on PostgreSQL = %d, %v, SQLite %d", licentia.FormatTime(now), got, err, want)
		}
	}
}

// compareLicences reads both databases a page at a time, in id order, and
// holds each licence on PostgreSQL to SQLite's, field by field with its
// live activation rows; every licence's key, derived under the product's
// key on the SQLite side, verifies on the PostgreSQL side.
func compareLicences(t *testing.T, src, dst store.Store, p *licentia.Product, priv ed25519.PrivateKey) {
	t.Helper()
	cat := signing.NewCatalogue(dst, clock.NewFake(base), slog.New(slog.DiscardHandler))
	if err := cat.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	const pageSize = 5000
	var compared, verified atomic.Int64
	err := src.Snapshot(t.Context(), func(sr store.Reader) error {
		return dst.Snapshot(t.Context(), func(dr store.Reader) error {
			after := ""
			for {
				want, err := sr.LicencesAfter(t.Context(), after, pageSize)
				if err != nil {
					return err
				}
				got, err := dr.LicencesAfter(t.Context(), after, pageSize)
				if err != nil {
					return err
				}
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Fatalf("licences after %q on PostgreSQL differ from SQLite (-sqlite +postgres):\n%s", after, diff)
				}
				compared.Add(int64(len(got)))
				verifyKeys(t, cat, p, priv, got, &verified)
				if len(want) < pageSize {
					return nil
				}
				after = want[len(want)-1].ID
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if compared.Load() != int64(*moveLicences) || verified.Load() != compared.Load() {
		t.Errorf("compared %d licences and verified %d keys, want %d of each", compared.Load(), verified.Load(), *moveLicences)
	}
}

// verifyKeys derives and verifies the keys of ls on every core.
func verifyKeys(t *testing.T, cat *signing.Catalogue, p *licentia.Product, priv ed25519.PrivateKey, ls []store.CheckedLicence, verified *atomic.Int64) {
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(ls); i += workers {
				key, err := sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, ls[i].ID)
				if err != nil {
					t.Errorf("SignLicenceKey(%s) error = %v", ls[i].ID, err)
					return
				}
				got, id, err := cat.VerifyLicenceKey(t.Context(), key)
				if err != nil || got == nil || got.ID != p.ID || id != ls[i].ID {
					t.Errorf("the key of licence %s on PostgreSQL: product %v, licence %s, %v", ls[i].ID, got, id, err)
					return
				}
				verified.Add(1)
			}
		})
	}
	wg.Wait()
}
