package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// timeRE is the one time format of answers: UTC, milliseconds, Z.
var timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// harness runs commands in-process against a database in a temporary
// directory.
type harness struct {
	dir  string
	vars map[string]string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	return &harness{dir: dir, vars: map[string]string{
		"LICENTIA_DATA_DIR":     dir,
		"LICENTIA_DATABASE_URL": "sqlite:" + filepath.Join(dir, "licentia.db"),
	}}
}

func (h *harness) env(stdout, stderr io.Writer) cli.Env {
	return cli.Env{Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return h.vars[k] }}
}

type result struct {
	code           int
	stdout, stderr string
}

func (h *harness) run(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.RunEnv(t.Context(), args, h.env(&stdout, &stderr))
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs a command that must succeed and decodes its one JSON object.
func (h *harness) ok(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := h.run(t, args...)
	if r.code != 0 {
		t.Fatalf("licentia %s: exit %d, stderr %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return oneObject(t, r.stdout)
}

// fail runs a command that must fail with code: a non-zero exit, nothing on
// stdout and one JSON error object on stderr.
func (h *harness) fail(t *testing.T, code licentia.Code, args ...string) map[string]any {
	t.Helper()
	r := h.run(t, args...)
	if r.code == 0 {
		t.Fatalf("licentia %s: exit 0, stdout %s, want failure %s", strings.Join(args, " "), r.stdout, code)
	}
	if r.stdout != "" {
		t.Errorf("licentia %s: stdout %q, want nothing", strings.Join(args, " "), r.stdout)
	}
	obj := oneObject(t, r.stderr)
	e, _ := obj["error"].(map[string]any)
	if e == nil || e["code"] != string(code) {
		t.Errorf("licentia %s: stderr %s, want error code %s", strings.Join(args, " "), r.stderr, code)
		return nil
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("licentia %s: error without a message: %s", strings.Join(args, " "), r.stderr)
	}
	return e
}

// oneObject decodes s, which must hold exactly one JSON object on one line.
func oneObject(t *testing.T, s string) map[string]any {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Fatalf("output %q, want one line", s)
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("output %q: %v", s, err)
	}
	if dec.More() {
		t.Fatalf("output %q holds more than one object", s)
	}
	return obj
}

func (h *harness) openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(h.dir, "licentia.db"))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (h *harness) org(t *testing.T, slug, plan string) map[string]any {
	t.Helper()
	return h.ok(t, "org", "create", "--name", "Org "+slug, "--slug", slug, "--plan", plan, "--owner-email", "owner@"+slug+".example")
}

func TestMigrate(t *testing.T) {
	h := newHarness(t)
	for range 2 {
		if diff := cmp.Diff(map[string]any{"status": "migrated"}, h.ok(t, "migrate")); diff != "" {
			t.Errorf("migrate output mismatch (-want +got):\n%s", diff)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "licentia.db")); err != nil {
		t.Errorf("database file: %v", err)
	}
}

func TestDefaultDatabaseInDataDir(t *testing.T) {
	h := newHarness(t)
	delete(h.vars, "LICENTIA_DATABASE_URL")
	h.ok(t, "migrate")
	if _, err := os.Stat(filepath.Join(h.dir, "licentia.db")); err != nil {
		t.Errorf("database file in the data directory: %v", err)
	}
}

// TestLooseDatabaseFilesWarned: a command that opens a SQLite database
// whose file other users can read makes it 0600 and warns; a directory
// others may write in is warned about and left as it is. A database it
// created itself draws no warning.
func TestLooseDatabaseFilesWarned(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_DATA_DIR"] = filepath.Join(h.dir, "data")
	db := filepath.Join(h.vars["LICENTIA_DATA_DIR"], "licentia.db")
	h.vars["LICENTIA_DATABASE_URL"] = "sqlite:" + db
	if r := h.run(t, "migrate"); r.code != 0 || r.stderr != "" {
		t.Fatalf("first migrate: exit %d, stderr %q; want 0 and no warning", r.code, r.stderr)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(db), 0o777); err != nil {
		t.Fatal(err)
	}
	r := h.run(t, "migrate")
	if r.code != 0 {
		t.Fatalf("migrate: exit %d, stderr %s", r.code, r.stderr)
	}
	var warned []string
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		obj := oneObject(t, line+"\n")
		if obj["level"] != "WARN" {
			t.Errorf("log line %s, want a warning", line)
		}
		warned = append(warned, obj["path"].(string))
	}
	if diff := cmp.Diff([]string{db, filepath.Dir(db)}, warned); diff != "" {
		t.Errorf("warned paths mismatch (-want +got):\n%s", diff)
	}
	for name, want := range map[string]os.FileMode{db: 0o600, filepath.Dir(db): 0o777} {
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s mode = %04o, want %04o", name, got, want)
		}
	}
}

func TestUsage(t *testing.T) {
	h := newHarness(t)
	// The organization exists, so that the apikey commands reach their
	// argument checks (they look the organization up first).
	h.org(t, "acme", "free")
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"org"},
		{"org", "delete"},
		{"org", "create", "--colour", "blue"},
		{"org", "create", "--name", "A", "--slug", "a", "--plan", "free", "--owner-email", "o@a.example", "extra"},
		{"apikey"},
		{"apikey", "create", "--scopes", "licences:read"},
		{"apikey", "list", "--org", "acme", "extra"},
		{"apikey", "revoke", "--org", "acme"},
		{"apikey", "revoke", "--org", "acme", "one", "two"},
		{"apikey", "rotate", "--org", "acme"},
		{"migrate", "--force"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			h.fail(t, licentia.CodeValidationFailed, args...)
		})
	}
	r := h.run(t, "help")
	if r.code != 2 || !strings.Contains(r.stderr, "apikey create") {
		t.Errorf("licentia help: exit %d, stderr %q, want 2 and the usage", r.code, r.stderr)
	}
}

func TestBadConfiguration(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_DATABASE_URL"] = "mysql://db/licentia"
	r := h.run(t, "migrate")
	if r.code == 0 || !strings.Contains(r.stderr, "LICENTIA_DATABASE_URL") {
		t.Errorf("migrate with a bad database URL: exit %d, stderr %q, want a failure naming the variable", r.code, r.stderr)
	}
	oneObject(t, r.stderr)
}

func TestOrgCreate(t *testing.T) {
	h := newHarness(t)
	got := h.org(t, "acme", "indie")
	id, _ := got["id"].(string)
	if _, ok := licentia.ParseUUID(id); !ok {
		t.Errorf("id = %q, want a UUID", id)
	}
	if at, _ := got["created_at"].(string); !timeRE.MatchString(at) {
		t.Errorf("created_at = %q, want the answer time format", at)
	}
	// The owner's one-time setup link, valid 24 hours, at the listen
	// address when no base URL is set.
	setup, _ := got["setup_url"].(string)
	if !setupURL.MatchString(setup) {
		t.Errorf("setup_url = %q, want http://127.0.0.1:8080/console/setup/<43 base62>", setup)
	}
	created, _ := time.Parse(time.RFC3339, got["created_at"].(string))
	if exp, _ := time.Parse(time.RFC3339, fmt.Sprint(got["setup_expires_at"])); exp.Sub(created) < 24*time.Hour || exp.Sub(created) > 24*time.Hour+time.Second {
		t.Errorf("setup_expires_at = %v, created_at %v: want 24 hours after", got["setup_expires_at"], got["created_at"])
	}
	want := map[string]any{"id": id, "name": "Org acme", "slug": "acme", "plan": "indie", "created_at": got["created_at"],
		"setup_url": setup, "setup_expires_at": got["setup_expires_at"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("org create output mismatch (-want +got):\n%s", diff)
	}
	o, err := h.openStore(t).OrganizationBySlug(t.Context(), "acme")
	if err != nil || o.ID != id {
		t.Errorf("stored organization = %+v, %v, want id %s", o, err, id)
	}

	h.fail(t, licentia.CodeConflict, "org", "create", "--name", "Other", "--slug", "acme", "--plan", "free", "--owner-email", "o@other.example")
}

func TestOrgCreateValidation(t *testing.T) {
	h := newHarness(t)
	valid := map[string]string{"name": "Acme", "slug": "acme", "plan": "free", "owner-email": "owner@acme.example"}
	for _, tt := range []struct {
		name   string
		change map[string]string
		paths  []string
	}{
		{"plan", map[string]string{"plan": "gold"}, []string{"plan"}},
		{"plan upper case", map[string]string{"plan": "Free"}, []string{"plan"}},
		{"email", map[string]string{"owner-email": "owner at acme"}, []string{"owner_email"}},
		{"email without a domain dot", map[string]string{"owner-email": "owner@acme"}, []string{"owner_email"}},
		{"email mail cannot be sent to", map[string]string{"owner-email": "owner..acme@acme.example"}, []string{"owner_email"}},
		{"email with an angle bracket", map[string]string{"owner-email": "owner<@acme.example"}, []string{"owner_email"}},
		{"email mailed under another spelling", map[string]string{"owner-email": `"owner"@acme.example`}, []string{"owner_email"}},
		{"slug", map[string]string{"slug": "Acme Inc"}, []string{"slug"}},
		{"name", map[string]string{"name": ""}, []string{"name"}},
		{"all", map[string]string{"name": "", "slug": "-", "plan": "", "owner-email": ""}, []string{"name", "slug", "plan", "owner_email"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"org", "create"}
			for _, f := range []string{"name", "slug", "plan", "owner-email"} {
				v := valid[f]
				if c, ok := tt.change[f]; ok {
					v = c
				}
				args = append(args, "--"+f, v)
			}
			e := h.fail(t, licentia.CodeValidationFailed, args...)
			if diff := cmp.Diff(tt.paths, issuePaths(e)); diff != "" {
				t.Errorf("issues mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func issuePaths(e map[string]any) []string {
	details, _ := e["details"].(map[string]any)
	issues, _ := details["issues"].([]any)
	var paths []string
	for _, is := range issues {
		m, _ := is.(map[string]any)
		p, _ := m["path"].(string)
		paths = append(paths, p)
	}
	return paths
}

func TestAPIKeyCreate(t *testing.T) {
	h := newHarness(t)
	org := h.org(t, "acme", "indie")
	got := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read, audit:read", "--name", "CI")
	key, _ := got["key"].(string)
	prefix, ok := auth.ParseKey(key)
	if !ok {
		t.Fatalf("key = %q, want an API key", key)
	}
	id, _ := got["id"].(string)
	if _, ok := licentia.ParseUUID(id); !ok {
		t.Errorf("id = %q, want a UUID", id)
	}
	want := map[string]any{
		"id": id, "key": key, "prefix": prefix, "name": "CI", "scopes": []any{"licences:read", "audit:read"},
		"expires_at": nil, "created_at": got["created_at"],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("apikey create output mismatch (-want +got):\n%s", diff)
	}

	// The key works: the authenticator finds it, in its organization, with its scopes.
	st := h.openStore(t)
	caller, err := auth.NewAuthenticator(st, clock.System{}).Authenticate(t.Context(), "Bearer "+key)
	if err != nil {
		t.Fatalf("Authenticate(new key) error = %v", err)
	}
	wantCaller := &auth.Caller{
		OrgID: org["id"].(string), Actor: licentia.APIKeyActor(id), KeyID: id, Prefix: prefix,
		Scopes: []licentia.Scope{licentia.ScopeLicencesRead, licentia.ScopeAuditRead},
	}
	if diff := cmp.Diff(wantCaller, caller); diff != "" {
		t.Errorf("Authenticate(new key) mismatch (-want +got):\n%s", diff)
	}

	// An expiry is printed in the answer format, in UTC to the millisecond.
	got = h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:read", "--expires-at", "2099-01-02T05:04:05.123456+02:00")
	if got["expires_at"] != "2099-01-02T03:04:05.123Z" {
		t.Errorf("expires_at = %v, want 2099-01-02T03:04:05.123Z", got["expires_at"])
	}
	// The last millisecond of the year 9999 is the latest expiry a key takes.
	got = h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:read", "--expires-at", "9999-12-31T22:59:59.999-01:00")
	if got["expires_at"] != "9999-12-31T23:59:59.999Z" {
		t.Errorf("expires_at = %v, want 9999-12-31T23:59:59.999Z", got["expires_at"])
	}
}

func TestAPIKeyCreateRefused(t *testing.T) {
	h := newHarness(t)
	h.org(t, "acme", "indie")
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, tt := range []struct {
		name string
		code licentia.Code
		args []string
	}{
		{"members:write", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read,members:write"}},
		{"unknown scope", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read,licences:everything"}},
		{"no scopes", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", ""}},
		{"scopes missing", licentia.CodeValidationFailed, []string{"--org", "acme"}},
		{"expiry in the past", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read", "--expires-at", past}},
		{"expiry without offset", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read", "--expires-at", "2099-01-01T00:00:00"}},
		{"expiry not a time", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read", "--expires-at", "tomorrow"}},
		{"expiry in the year 10000 in UTC", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read", "--expires-at", "9999-12-31T23:30:00-01:00"}},
		{"expiry in the year 10000", licentia.CodeValidationFailed, []string{"--org", "acme", "--scopes", "licences:read", "--expires-at", "10000-01-01T00:00:00Z"}},
		{"unknown organization", licentia.CodeNotFound, []string{"--org", "nobody", "--scopes", "licences:read"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.fail(t, tt.code, append([]string{"apikey", "create"}, tt.args...)...)
		})
	}
	keys, err := h.openStore(t).CountLiveAPIKeys(t.Context(), orgID(t, h, "acme"), time.Now())
	if err != nil || keys != 0 {
		t.Errorf("live keys after refusals = %d, %v, want 0", keys, err)
	}
}

func orgID(t *testing.T, h *harness, slug string) string {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(h.dir, "licentia.db"))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	defer st.Close()
	o, err := st.OrganizationBySlug(t.Context(), slug)
	if err != nil {
		t.Fatalf("OrganizationBySlug(%s) error = %v", slug, err)
	}
	return o.ID
}

func TestAPIKeyPlanLimit(t *testing.T) {
	h := newHarness(t)
	h.org(t, "acme", "free") // 2 API keys
	first := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read")
	h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read")
	e := h.fail(t, licentia.CodePlanLimitReached, "apikey", "create", "--org", "acme", "--scopes", "licences:read")
	want := map[string]any{"plan": "free", "resource": "api_keys", "limit": json.Number("2"), "count": json.Number("2")}
	if diff := cmp.Diff(want, e["details"]); diff != "" {
		t.Errorf("plan_limit_reached details mismatch (-want +got):\n%s", diff)
	}

	got := h.ok(t, "apikey", "revoke", "--org", "acme", first["id"].(string))
	if diff := cmp.Diff(map[string]any{"id": first["id"], "revoked": true, "changed": true}, got); diff != "" {
		t.Errorf("apikey revoke output mismatch (-want +got):\n%s", diff)
	}
	h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read")
	h.fail(t, licentia.CodePlanLimitReached, "apikey", "create", "--org", "acme", "--scopes", "licences:read")

	// Another organization has its own places.
	h.org(t, "other", "free")
	h.ok(t, "apikey", "create", "--org", "other", "--scopes", "licences:read")
}

func TestAPIKeyListAndRevoke(t *testing.T) {
	h := newHarness(t)
	h.org(t, "acme", "indie")
	h.org(t, "other", "indie")
	a := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read", "--name", "a")
	b := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "audit:read,licences:write", "--name", "b", "--expires-at", "2099-01-01T00:00:00Z")
	h.ok(t, "apikey", "create", "--org", "other", "--scopes", "licences:read")

	h.fail(t, licentia.CodeNotFound, "apikey", "revoke", "--org", "acme", licentia.NewID())
	// Another organization's key answers like a missing one.
	h.fail(t, licentia.CodeNotFound, "apikey", "revoke", "--org", "other", a["id"].(string))
	h.fail(t, licentia.CodeValidationFailed, "apikey", "revoke", "--org", "acme", "not-a-uuid")
	h.fail(t, licentia.CodeNotFound, "apikey", "list", "--org", "nobody")

	h.ok(t, "apikey", "revoke", "--org", "acme", a["id"].(string))
	again := h.ok(t, "apikey", "revoke", "--org", "acme", a["id"].(string))
	if again["changed"] != false {
		t.Errorf("second revoke changed = %v, want false", again["changed"])
	}

	r := h.run(t, "apikey", "list", "--org", "acme")
	if r.code != 0 {
		t.Fatalf("apikey list: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, k := range []map[string]any{a, b} {
		key := k["key"].(string)
		if strings.Contains(r.stdout, key) || strings.Contains(r.stdout, key[len("licentia_")+13:]) {
			t.Errorf("apikey list shows a key: %s", r.stdout)
		}
	}
	list, _ := oneObject(t, r.stdout)["api_keys"].([]any)
	if len(list) != 2 {
		t.Fatalf("apikey list = %s, want the organization's 2 keys", r.stdout)
	}
	got := map[string]map[string]any{}
	for _, item := range list {
		m := item.(map[string]any)
		got[m["name"].(string)] = m
		if _, has := m["key"]; has {
			t.Errorf("apikey list item has a key field: %v", m)
		}
	}
	if at, _ := got["a"]["revoked_at"].(string); !timeRE.MatchString(at) {
		t.Errorf("revoked key's revoked_at = %v, want a time", got["a"]["revoked_at"])
	}
	wantB := map[string]any{
		"id": b["id"], "prefix": b["prefix"], "name": "b", "scopes": []any{"audit:read", "licences:write"},
		"expires_at": "2099-01-01T00:00:00.000Z", "revoked_at": nil, "created_at": b["created_at"],
	}
	if diff := cmp.Diff(wantB, got["b"]); diff != "" {
		t.Errorf("listed key b mismatch (-want +got):\n%s", diff)
	}

	// A revoked key is refused at once.
	_, err := auth.NewAuthenticator(h.openStore(t), clock.System{}).Authenticate(t.Context(), "Bearer "+a["key"].(string))
	if licentia.ErrorCode(err) != licentia.CodeUnauthorized {
		t.Errorf("Authenticate(revoked key) error = %v, want unauthorized", err)
	}
}

// TestOperatorAudit checks that every operator change records an audit
// entry whose actor is {"type":"operator","id":null}.
func TestOperatorAudit(t *testing.T) {
	h := newHarness(t)
	org := h.org(t, "acme", "indie")
	k := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "licences:read")
	h.ok(t, "apikey", "revoke", "--org", "acme", k["id"].(string))

	entries, err := h.openStore(t).OrganizationAudit(t.Context(), org["id"].(string))
	if err != nil {
		t.Fatalf("OrganizationAudit() error = %v", err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
		actor, err := json.Marshal(e.Actor)
		if err != nil || string(actor) != `{"type":"operator","id":null}` {
			t.Errorf("%s actor = %s, want {\"type\":\"operator\",\"id\":null}", e.Action, actor)
		}
	}
	want := []string{licentia.AuditOrganizationCreated, licentia.AuditMemberAdded, licentia.AuditMemberLoginLinkCreated,
		licentia.AuditAPIKeyCreated, licentia.AuditAPIKeyRevoked}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("audit actions mismatch (-want +got):\n%s", diff)
	}
}

// TestServe starts the service on a free port, checks /healthz, then cancels
// its context while a request is in flight: the request completes and Run
// returns without error.
func TestServe(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	var logs bytes.Buffer
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, &logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	t.Cleanup(func() { app.Close() })

	entered, release := make(chan struct{}), make(chan struct{})
	app.WrapHandler(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-Hold") != "" {
				close(entered)
				<-release
			}
			next.ServeHTTP(w, r)
		})
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()

	base := "http://" + app.Addr()
	client := &http.Client{Timeout: 5 * time.Second}
	poll(t, "the service answers /healthz", func() bool {
		resp, err := client.Get(base + "/healthz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz error = %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), `{"status":"ok",`) {
		t.Errorf("GET /healthz = %d %s, want 200 {\"status\":\"ok\",...}", resp.StatusCode, body)
	}

	type answer struct {
		status int
		body   string
		err    error
	}
	held := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/healthz", nil)
		req.Header.Set("X-Test-Hold", "1")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			held <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		held <- answer{status: resp.StatusCode, body: strings.TrimSpace(string(b)), err: err}
	}()
	<-entered

	cancel()
	// Shutdown has begun once the listener is closed.
	poll(t, "the listener closes", func() bool {
		c, err := net.DialTimeout("tcp", app.Addr(), time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case err := <-done:
		t.Fatalf("Run() returned %v while a request was in flight", err)
	default:
	}

	close(release)
	a := <-held
	if a.err != nil || a.status != http.StatusOK || !strings.HasPrefix(a.body, `{"status":"ok",`) {
		t.Errorf("request in flight during shutdown = %d %q, %v, want 200 {\"status\":\"ok\",...}", a.status, a.body, a.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() error = %v, want nil after a graceful shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return after the request in flight completed")
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) {
		t.Errorf("logs lack the shutdown line:\n%s", logs.String())
	}
}

// poll checks cond until it holds, for at most 10 seconds.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeBadListen(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:notaport"
	var stderr bytes.Buffer
	if _, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr)); err == nil {
		t.Error("NewApp() with a bad address error = nil, want one")
	}
	r := h.run(t, "serve")
	if r.code == 0 {
		t.Errorf("serve with a bad address: exit 0")
	}
}

// TestServeDebugListener shows the profiler answering on its own loopback
// address only, and stopping with the service.
func TestServeDebugListener(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	h.vars["LICENTIA_DEBUG_LISTEN"] = "127.0.0.1:0"
	var logs bytes.Buffer
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, &logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	t.Cleanup(func() { app.Close() })
	if app.DebugAddr() == "" || app.DebugAddr() == app.Addr() {
		t.Fatalf("DebugAddr() = %q, want an address of its own (API on %s)", app.DebugAddr(), app.Addr())
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	poll(t, "the profiler answers", func() bool {
		code, _ := get("http://" + app.DebugAddr() + "/debug/pprof/cmdline")
		return code == http.StatusOK
	})
	if code, body := get("http://" + app.DebugAddr() + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/ on the debug address = %d, want 200 and the profile index", code)
	}
	if code, _ := get("http://" + app.Addr() + "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ on the API address = %d, want 404", code)
	}
	if !strings.Contains(logs.String(), `"msg":"profiler listening: keep this address private"`) {
		t.Errorf("logs lack the profiler warning:\n%s", logs.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() error = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return")
	}
	if c, err := net.DialTimeout("tcp", app.DebugAddr(), time.Second); err == nil {
		c.Close()
		t.Error("the profiler still accepts connections after Run returned")
	}
}

// TestServeGCPercent: serve raises the collector's target to 200 unless the
// operator set GOGC, which it leaves alone.
func TestServeGCPercent(t *testing.T) {
	unset := func(string) string { return "" }
	if got := cli.GCPercent(unset); got != 200 {
		t.Errorf("gcPercent(GOGC unset) = %d, want 200", got)
	}
	for _, v := range []string{"100", "off", "50"} {
		set := func(name string) string {
			if name == "GOGC" {
				return v
			}
			return ""
		}
		if got := cli.GCPercent(set); got != -1 {
			t.Errorf("gcPercent(GOGC=%s) = %d, want -1 (left as set)", v, got)
		}
	}
}

// TestDebugListenBoundAddress: whatever the name given, the profiler keeps
// a listener only on a loopback address.
func TestDebugListenBoundAddress(t *testing.T) {
	if err := cli.DebugListen("127.0.0.1:0"); err != nil {
		t.Errorf("DebugListen(127.0.0.1:0) error = %v", err)
	}
	err := cli.DebugListen("0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("DebugListen(0.0.0.0:0) error = %v, want not a loopback address", err)
	}
}

// TestServeLogToFile: with its log going to a file, as a process's stderr
// does, the service's lines go out in batches, and every access-log line
// of the requests it answered is in the file once Close returns.
func TestServeLogToFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	app := newHarness(t).newApp(t, f)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	const requests = 50
	client := &http.Client{Timeout: 5 * time.Second}
	for range requests {
		resp, err := client.Get("http://" + app.Addr() + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz error = %v", err)
		}
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if err := app.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	raw, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(raw)) {
		var entry struct {
			Msg, Pattern string
			Status       int
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q is not whole JSON: %v", line, err)
		}
		if entry.Pattern == "GET /healthz" && entry.Status == http.StatusOK {
			n++
		}
	}
	if n != requests {
		t.Errorf("the log holds %d lines of GET /healthz answered 200, want %d:\n%s", n, requests, raw)
	}
	if !strings.Contains(string(raw), `"msg":"shutting down"`) {
		t.Errorf("the log lacks the line written at shutdown:\n%s", raw)
	}
}
