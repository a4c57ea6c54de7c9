package migratedata

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// kind is how a SQLite value becomes a PostgreSQL one.
type kind int

const (
	kindText kind = iota
	kindUUID
	kindTime // SQLite INTEGER milliseconds since the Unix epoch
	kindBool // SQLite INTEGER 0 or 1
	kindInt
	kindBytes
	kindRowID // a PostgreSQL serial key that SQLite keeps as the rowid
)

// column is one column of a table on both engines.
type column struct {
	name string
	kind kind
}

// table is one table to copy, with the columns read from SQLite (in
// order) and written to PostgreSQL.
type table struct {
	name    string
	columns []column
	// serial is the PostgreSQL column whose sequence must move past the
	// copied values; "" when none.
	serial string
}

// skipped tables are each engine's own: the migrations' bookkeeping,
// which the target keeps for itself, and SQLite's sequences.
var skipped = []string{"goose_db_version", "sqlite_sequence"}

type pgColumn struct {
	name, udt string
	serial    bool
}

// plan matches the tables of the PostgreSQL database (at the schema of
// this binary's migrations) with those of the SQLite database, column by
// column, and orders them so that every table comes after those its
// foreign keys name. Any table or column that one engine has and the other
// has not is an error: the two must be at the same migration.
func plan(ctx context.Context, src *sql.Conn, dst pgx.Tx) ([]table, error) {
	pgTables, err := postgresColumns(ctx, dst)
	if err != nil {
		return nil, err
	}
	liteTables, err := sqliteColumns(ctx, src)
	if err != nil {
		return nil, err
	}
	for name := range liteTables {
		if _, ok := pgTables[name]; !ok {
			return nil, fmt.Errorf("table %s is in the SQLite database and not in PostgreSQL: are both at this version's migrations?", name)
		}
	}
	tables := map[string]table{}
	for name, pgCols := range pgTables {
		liteCols, ok := liteTables[name]
		if !ok {
			return nil, fmt.Errorf("table %s is in PostgreSQL and not in the SQLite database: are both at this version's migrations?", name)
		}
		t, err := matchColumns(name, pgCols, liteCols)
		if err != nil {
			return nil, err
		}
		tables[name] = t
	}
	return orderByReferences(ctx, dst, tables)
}

func matchColumns(name string, pgCols []pgColumn, liteCols map[string]string) (table, error) {
	t := table{name: name}
	for _, c := range pgCols {
		liteType, ok := liteCols[c.name]
		delete(liteCols, c.name)
		if !ok {
			// SQLite's rowid orders rows the way PostgreSQL's serial
			// keys do (events.seq).
			if c.serial {
				t.columns = append(t.columns, column{c.name, kindRowID})
				t.serial = c.name
				continue
			}
			return t, fmt.Errorf("column %s.%s is in PostgreSQL and not in the SQLite database", name, c.name)
		}
		k, err := kindOf(c.udt, liteType)
		if err != nil {
			return t, fmt.Errorf("column %s.%s: %w", name, c.name, err)
		}
		if c.serial {
			t.serial = c.name
		}
		t.columns = append(t.columns, column{c.name, k})
	}
	if extra := slices.Sorted(maps.Keys(liteCols)); len(extra) > 0 {
		return t, fmt.Errorf("column %s.%s is in the SQLite database and not in PostgreSQL", name, extra[0])
	}
	return t, nil
}

// kindOf pairs a PostgreSQL type with the SQLite type the migrations give
// the same column.
func kindOf(udt, liteType string) (kind, error) {
	liteType = strings.ToUpper(liteType)
	pairs := map[string]struct {
		lite string
		kind kind
	}{
		"text":        {"TEXT", kindText},
		"uuid":        {"TEXT", kindUUID},
		"timestamptz": {"INTEGER", kindTime},
		"bool":        {"INTEGER", kindBool},
		"int8":        {"INTEGER", kindInt},
		"int4":        {"INTEGER", kindInt},
		"bytea":       {"BLOB", kindBytes},
	}
	p, ok := pairs[udt]
	if !ok {
		return 0, fmt.Errorf("PostgreSQL type %s has no conversion from SQLite", udt)
	}
	if liteType != p.lite {
		return 0, fmt.Errorf("PostgreSQL type %s from SQLite %s, want %s", udt, liteType, p.lite)
	}
	return p.kind, nil
}

func postgresColumns(ctx context.Context, tx pgx.Tx) (map[string][]pgColumn, error) {
	rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.udt_name,
			coalesce(c.column_default LIKE 'nextval(%', false)
		FROM information_schema.columns c
		JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]pgColumn{}
	for rows.Next() {
		var table string
		var c pgColumn
		if err := rows.Scan(&table, &c.name, &c.udt, &c.serial); err != nil {
			return nil, err
		}
		if !slices.Contains(skipped, table) {
			out[table] = append(out[table], c)
		}
	}
	return out, rows.Err()
}

func sqliteColumns(ctx context.Context, conn *sql.Conn) (map[string]map[string]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT m.name, p.name, p.type
		FROM sqlite_schema m JOIN pragma_table_info(m.name) p
		WHERE m.type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			return nil, err
		}
		if slices.Contains(skipped, table) {
			continue
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][col] = typ
	}
	return out, rows.Err()
}

// orderByReferences sorts the tables so that each comes after the tables
// its foreign keys reference, by name among equals so the order is stable.
func orderByReferences(ctx context.Context, tx pgx.Tx, tables map[string]table) ([]table, error) {
	rows, err := tx.Query(ctx, `SELECT c.conrelid::regclass::text, c.confrelid::regclass::text
		FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, err
	}
	needs := map[string][]string{}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			rows.Close()
			return nil, err
		}
		from, to = unqualified(from), unqualified(to)
		if from != to {
			needs[from] = append(needs[from], to)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	slices.Sort(names)
	var order []table
	placed := map[string]bool{}
	for len(order) < len(names) {
		progressed := false
		for _, name := range names {
			if placed[name] || slices.ContainsFunc(needs[name], func(n string) bool { return !placed[n] }) {
				continue
			}
			placed[name], progressed = true, true
			order = append(order, tables[name])
		}
		if !progressed {
			return nil, fmt.Errorf("the tables' foreign keys form a cycle")
		}
	}
	return order, nil
}

// unqualified drops the schema regclass names a table by when the schema
// is not first on the search path.
func unqualified(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, `"`)
}
