package cli_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// verifyReport is the summary line of licentia verify.
type verifyReport struct {
	OK       bool             `json:"ok"`
	Checked  map[string]int64 `json:"checked"`
	Problems []struct {
		Check, Kind, ID, Message string
	} `json:"problems"`
}

// runVerify runs licentia verify and decodes its one line on stdout; the
// stderr of a run off a terminal must stay empty.
func runVerify(t *testing.T, h *harness) (int, verifyReport) {
	t.Helper()
	r := h.run(t, "verify")
	if r.stderr != "" {
		t.Errorf("licentia verify: stderr %q, want nothing off a terminal", r.stderr)
	}
	oneObject(t, r.stdout)
	var rep verifyReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("licentia verify: %v", err)
	}
	return r.code, rep
}

func TestVerify(t *testing.T) {
	for _, engine := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", storetest.OpenPostgres}} {
		t.Run(engine.name, func(t *testing.T) {
			st := engine.open(t)
			h := newHarness(t)
			h.vars["LICENTIA_DATABASE_URL"] = storetest.DatabaseURL(t, st)
			raw := make([]byte, signing.MasterKeySize)
			rand.Read(raw)
			keyFile := filepath.Join(h.dir, "master.key")
			if err := os.WriteFile(keyFile, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			h.vars["LICENTIA_MASTER_KEY_FILE"] = keyFile
			m, err := signing.NewMasterKey(raw)
			if err != nil {
				t.Fatal(err)
			}
			orgID := h.org(t, "acme", "indie")["id"].(string)
			licences := seedLicences(t, st, m, orgID, 3)

			code, rep := runVerify(t, h)
			if code != 0 || !rep.OK || len(rep.Problems) != 0 {
				t.Fatalf("licentia verify on a clean database: exit %d, %+v, want 0 and ok", code, rep)
			}
			if rep.Checked["licences"] != 3 || rep.Checked["product_keys"] != 1 {
				t.Errorf("licentia verify checked %v, want 3 licences and 1 product key", rep.Checked)
			}

			k := store.KeyOf(licences[0], store.FromMillis(0))
			storetest.Tamper(t, st, fmt.Sprintf(`UPDATE licence_stats SET n = n + 5 WHERE org_id = '%s' AND shard = %d
				AND status = '%s' AND term = '%s'`, orgID, k.Shard, k.Status, k.Term))
			code, rep = runVerify(t, h)
			if code == 0 || rep.OK {
				t.Fatalf("licentia verify on an altered counter: exit %d, ok %v, want failure", code, rep.OK)
			}
			if len(rep.Problems) != 1 || rep.Problems[0].Check != "licence_counters" || rep.Problems[0].Kind != "licence_stats" {
				t.Errorf("licentia verify problems = %+v, want one licence_counters problem", rep.Problems)
			}

			os.Remove(keyFile)
			e := h.fail(t, licentia.CodeMasterKeyNotFound, "verify")
			if msg, _ := e["message"].(string); !strings.Contains(msg, keyFile) || !strings.Contains(msg, "LICENTIA_MASTER_KEY_FILE") {
				t.Errorf("licentia verify without its key: %q, want the key's path and LICENTIA_MASTER_KEY_FILE named", msg)
			}
		})
	}
}

// seedLicences stores a product whose key is sealed under m and n
// perpetual licences of it, as the service would.
func seedLicences(t *testing.T, st store.Store, m *signing.MasterKey, orgID string, n int) []*licentia.Licence {
	t.Helper()
	ctx := t.Context()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &licentia.Product{ID: "acme-app", OrgID: orgID, Name: "App", KeyPrefix: "ACME", CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: now, UpdatedAt: now}
	key, err := signing.NewProductKey(m, p.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	p.Keys = []licentia.ProductKey{*key}
	var ls []*licentia.Licence
	err = st.InTx(ctx, func(tx store.Tx) error {
		if err := tx.SetSetting(ctx, store.SettingMasterKeyFingerprint, m.Fingerprint()); err != nil {
			return err
		}
		if err := tx.CreateProduct(ctx, p); err != nil {
			return err
		}
		for range n {
			l := &licentia.Licence{ID: licentia.NewID(), OrgID: orgID, ProductID: p.ID, Email: "c@example.com",
				IssuedAt: now, LimitKind: licentia.LimitMachines, LimitCount: 3, Major: 1, Status: licentia.StatusActive,
				Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
			if err := tx.CreateLicence(ctx, l); err != nil {
				return err
			}
			ls = append(ls, l)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed licences: %v", err)
	}
	return ls
}
