package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/licentia/licentia/internal/store/postgres"
)

// Main runs a package's tests with its PostgreSQL stores reusing migrated
// schemas, and drops those schemas when the tests end. Migrating a schema
// and dropping it again costs a fifth of a second or more on each
// OpenPostgres, more than most tests take; emptying a schema takes
// milliseconds. A package calls it from its TestMain:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
//
// Without it each store gets a schema of its own, dropped at the end.
func Main(m *testing.M) {
	schemas.reuse.Store(true)
	code := m.Run()
	if err := schemas.dropAll(); err != nil {
		fmt.Fprintf(os.Stderr, "storetest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// schemas holds the migrated schemas of this test process that no test
// uses now.
var schemas schemaPool

type schemaPool struct {
	reuse atomic.Bool

	mu    sync.Mutex
	admin *pgxpool.Pool // on PostgresURLVar's URL, opened by the first take, closed by dropAll
	idle  []*migratedSchema
	made  []string // every schema made, idle or not, to drop at the end
}

// migratedSchema is a schema every migration was applied to, with what it
// takes to empty it and to tell that no test changed its tables.
type migratedSchema struct {
	name  string
	url   string // schemaURL's
	shape string // shapeQuery's answer right after the migrations
	empty string // DELETE statements, children before parents, and sequence restarts
}

// postgresStoreURL returns the URL of a schema without rows that no other
// test uses while this one runs: under Main a migrated one, reused, or
// else a new one PostgresURL makes, which the store's Open migrates.
func postgresStoreURL(t testing.TB) string {
	t.Helper()
	if !schemas.reuse.Load() {
		return PostgresURL(t)
	}
	s, err := schemas.take(t.Context(), adminURL(t))
	if err != nil {
		t.Fatalf("storetest: a migrated schema: %v", err)
	}
	// Registered before the store's Close, so it runs after it.
	t.Cleanup(func() {
		if err := schemas.give(s); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return s.url
}

// take returns an idle schema, or migrates a new one.
func (p *schemaPool) take(ctx context.Context, raw string) (*migratedSchema, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	if p.admin == nil {
		admin, err := pgxpool.New(context.WithoutCancel(ctx), raw)
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("connect to %s: %w", PostgresURLVar, err)
		}
		p.admin = admin
	}
	p.mu.Unlock()

	name := newSchemaName()
	if _, err := p.admin.Exec(ctx, createSchema(name)); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.made = append(p.made, name)
	p.mu.Unlock()
	dsn, err := schemaURL(raw, name)
	if err != nil {
		return nil, err
	}
	s := &migratedSchema{name: name, url: dsn}
	db, err := postgres.Open(ctx, s.url)
	if err != nil {
		return nil, err
	}
	db.Close()
	if err := p.admin.QueryRow(ctx, shapeQuery, name).Scan(&s.shape); err != nil {
		return nil, fmt.Errorf("read the shape of %s: %w", name, err)
	}
	if s.empty, err = emptyStatements(ctx, p.admin, name); err != nil {
		return nil, err
	}
	return s, nil
}

// give empties s and keeps it for another test, or drops it when a
// session still works in it or its tables are not as migrated.
func (p *schemaPool) give(s *migratedSchema) error {
	ctx := context.Background()
	emptied, err := p.empty(ctx, s)
	if emptied {
		p.mu.Lock()
		p.idle = append(p.idle, s)
		p.mu.Unlock()
		return nil
	}
	return errors.Join(err, p.drop(ctx, s.name))
}

// empty deletes s's rows and reports whether it did: not while a session
// still works in s, nor once a test changed its tables.
func (p *schemaPool) empty(ctx context.Context, s *migratedSchema) (bool, error) {
	if ended, err := sessionsEnded(ctx, p.admin, s.name); err != nil || !ended {
		return false, err
	}
	var shape string
	if err := p.admin.QueryRow(ctx, shapeQuery, s.name).Scan(&shape); err != nil || shape != s.shape {
		return false, err
	}
	if _, err := p.admin.Exec(ctx, s.empty); err != nil {
		return false, fmt.Errorf("empty %s: %w", s.name, err)
	}
	return true, nil
}

func (p *schemaPool) drop(ctx context.Context, name string) error {
	if _, err := p.admin.Exec(ctx, dropSchema(name)); err != nil {
		return err
	}
	p.mu.Lock()
	p.made = slices.DeleteFunc(p.made, func(n string) bool { return n == name })
	p.idle = slices.DeleteFunc(p.idle, func(s *migratedSchema) bool { return s.name == name })
	p.mu.Unlock()
	return nil
}

// dropAll drops every schema the process made and has not dropped yet,
// and closes the pool's connections.
func (p *schemaPool) dropAll() error {
	p.mu.Lock()
	names, admin := slices.Clone(p.made), p.admin
	p.mu.Unlock()
	if admin == nil {
		return nil
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, p.drop(context.Background(), name))
	}
	admin.Close()
	return errors.Join(errs...)
}

// sessionsEnded waits a moment for the sessions of a closed store to
// leave pg_stat_activity (a backend ends after its client has gone) and
// reports whether none still works in schema.
func sessionsEnded(ctx context.Context, admin *pgxpool.Pool, schema string) (bool, error) {
	for range 40 {
		var n int
		err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, schema).Scan(&n)
		if err != nil || n == 0 {
			return err == nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false, nil
}

// shapeQuery describes a schema's objects, and its tables' columns,
// defaults, constraints, indexes, triggers and rules: whatever a test may
// change that emptying the tables would not undo. It starts from the
// objects that depend on the schema in pg_depend, and reads each catalog
// by its indexed owner, since a test database's catalogs hold many dead
// rows from the schemas made and dropped before and a scan of them takes
// a tenth of a second or more.
const shapeQuery = `
WITH objs AS (
	SELECT classid, objid FROM pg_depend
	WHERE refclassid = 'pg_namespace'::regclass
		AND refobjid = (SELECT oid FROM pg_namespace WHERE nspname = $1)
), rels AS (
	SELECT objid AS oid FROM objs WHERE classid = 'pg_class'::regclass
)
SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), '')) FROM (
	SELECT 'object ' || pg_describe_object(classid, objid, 0) FROM objs
	UNION ALL
	SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || c.relrowsecurity::text || ' ' || coalesce(c.reloptions::text, '')
	FROM pg_class c WHERE c.oid IN (SELECT oid FROM rels)
	UNION ALL
	SELECT 'column ' || a.attrelid::regclass::text || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
		a.attnotnull::text || ' ' || a.attisdropped::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
	FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	WHERE a.attrelid IN (SELECT oid FROM rels) AND a.attnum > 0
	UNION ALL
	SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated::text
	FROM pg_constraint WHERE conrelid IN (SELECT oid FROM rels)
	UNION ALL
	SELECT 'index ' || pg_get_indexdef(indexrelid) || ' ' || indisvalid::text
	FROM pg_index WHERE indrelid IN (SELECT oid FROM rels)
	UNION ALL
	SELECT 'trigger ' || tgrelid::regclass::text || ' ' || tgname || ' ' || tgenabled::text || ' ' || tgfoid::regproc::text
	FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM rels) AND NOT tgisinternal
	UNION ALL
	SELECT 'function ' || oid::regprocedure::text || ' ' || md5(prosrc)
	FROM pg_proc WHERE oid IN (SELECT objid FROM objs WHERE classid = 'pg_proc'::regclass)
	UNION ALL
	SELECT 'rule ' || ev_class::regclass::text || ' ' || rulename
	FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM rels) AND rulename <> '_RETURN'
) shape(x)
`

// versionTable is goose's record of the migrations applied, which
// emptying a schema keeps.
const versionTable = "goose_db_version"

// emptyStatements returns the statements that delete every row of
// schema's tables but goose's, each table before those it refers to, and
// restart its sequences.
func emptyStatements(ctx context.Context, admin *pgxpool.Pool, schema string) (string, error) {
	rows, err := admin.Query(ctx, `
		SELECT c.relname, coalesce(array_agg(DISTINCT p.relname) FILTER (WHERE p.relname IS NOT NULL AND p.relname <> c.relname), '{}')
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'f'
		LEFT JOIN pg_class p ON p.oid = k.confrelid
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
		GROUP BY c.relname`, schema)
	if err != nil {
		return "", err
	}
	parents := map[string][]string{}
	for rows.Next() {
		var table string
		var refs []string
		if err := rows.Scan(&table, &refs); err != nil {
			return "", err
		}
		if table != versionTable {
			parents[table] = refs
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	order, err := childrenFirst(parents)
	if err != nil {
		return "", err
	}
	// One simple query of several statements runs as one transaction.
	var b strings.Builder
	for _, table := range order {
		fmt.Fprintf(&b, "DELETE FROM %s;\n", pgx.Identifier{schema, table}.Sanitize())
	}
	seqs, err := admin.Query(ctx, `
		SELECT s.relname FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace
		WHERE n.nspname = $1 AND s.relkind = 'S' ORDER BY 1`, schema)
	if err != nil {
		return "", err
	}
	names, err := pgx.CollectRows(seqs, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, seq := range names {
		fmt.Fprintf(&b, "ALTER SEQUENCE %s RESTART;\n", pgx.Identifier{schema, seq}.Sanitize())
	}
	return b.String(), nil
}

// childrenFirst orders tables so that each comes before every table it
// refers to (parents maps a table to those).
func childrenFirst(parents map[string][]string) ([]string, error) {
	children := map[string]int{} // how many tables not yet placed refer to each
	for _, refs := range parents {
		for _, p := range refs {
			children[p]++
		}
	}
	var order, ready []string
	for table := range parents {
		if children[table] == 0 {
			ready = append(ready, table)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		table := ready[0]
		ready = ready[1:]
		order = append(order, table)
		for _, p := range parents[table] {
			if children[p]--; children[p] == 0 {
				ready = append(ready, p)
			}
		}
	}
	if len(order) != len(parents) {
		return nil, errors.New("the tables' foreign keys form a cycle")
	}
	return order, nil
}

// newSchemaName returns a random name for a schema.
func newSchemaName() string { return "storetest_" + strings.ToLower(rand.Text()) }

// createSchema is the statement that makes the schema name.
func createSchema(name string) string {
	return "CREATE SCHEMA " + pgx.Identifier{name}.Sanitize()
}

// dropSchema is the statement that drops the schema name with everything
// in it.
func dropSchema(name string) string {
	return "DROP SCHEMA " + pgx.Identifier{name}.Sanitize() + " CASCADE"
}

// schemaURL returns raw's URL for schema: search_path names it, so every
// connection opened with the URL works in it, and so does
// application_name, by which its sessions are found.
func schemaURL(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// adminURL returns PostgresURLVar's URL, skipping the test when it is unset.
func adminURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(PostgresURLVar)
	if raw == "" {
		t.Skipf("%s is not set", PostgresURLVar)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// The URL may hold a password: never print it.
		t.Fatalf("%s is not a postgres:// URL", PostgresURLVar)
	}
	return raw
}

// adminExec runs one statement on a connection of its own to raw.
func adminExec(ctx context.Context, raw, stmt string) error {
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", PostgresURLVar, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}
