package backup

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store"
)

// pgDumpMagic opens every archive pg_dump writes in its custom format.
const pgDumpMagic = "PGDMP"

// Dump is what a pg_dump archive of the service holds, read without
// restoring it.
type Dump struct {
	Contents
	// Schema is the schema the archive's tables were dumped from, and the
	// one pg_restore creates them in.
	Schema string
	// Tables are the names of the tables the archive creates.
	Tables []string
}

// InspectDump reads the pg_dump archive at path with pg_restore: its table
// of contents, then the rows of its settings, products and licences as
// pg_restore would load them. Nothing is written to any database.
func InspectDump(ctx context.Context, path string) (*Dump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	head := make([]byte, len(pgDumpMagic))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head) != pgDumpMagic {
		return nil, fmt.Errorf("backup file %s is not a pg_dump archive in the custom format (pg_dump --format=custom)", path)
	}
	list, err := pgRestoreOutput(ctx, "--list", path)
	if err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	d := &Dump{}
	schemas := map[string]bool{}
	for line := range strings.Lines(string(list)) {
		// 250; 1259 27384 TABLE schema name owner
		fields := strings.Fields(line)
		if len(fields) < 6 || strings.HasPrefix(line, ";") || fields[3] != "TABLE" || fields[4] == "DATA" {
			continue
		}
		schemas[fields[4]] = true
		d.Tables = append(d.Tables, fields[5])
		if fields[5] == "settings" {
			d.Schema = fields[4]
		}
	}
	if len(schemas) > 1 {
		names := make([]string, 0, len(schemas))
		for s := range schemas {
			names = append(names, s)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("backup file %s holds the tables of several schemas (%s): dump the service's alone with pg_dump --schema", path, strings.Join(names, ", "))
	}
	if d.Schema == "" || !slices.Contains(d.Tables, "licences") {
		return nil, fmt.Errorf("backup file %s is not a database of this service: it holds no settings and licences tables", path)
	}
	if err := d.readRows(ctx, path); err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	return d, nil
}

// readRows streams the COPY data of the settings, products and licences
// tables: one line a row, ended by `\.`.
func (d *Dump) readRows(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, "pg_restore", "--data-only", "--schema="+d.Schema,
		"--table=settings", "--table=products", "--table=licences", "--file=-", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pg_restore: %w", err)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	var table string
	for {
		line, err := r.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case table == "" && strings.HasPrefix(line, "COPY "):
			table = copyTable(line)
		case table == "":
		case line == `\.`:
			table = ""
		case table == "licences":
			d.Licences++
		case table == "products":
			d.Products++
		case table == "settings":
			// COPY's text format escapes tabs and newlines inside values, so
			// a tab always parts the name from the value.
			if name, value, ok := strings.Cut(line, "\t"); ok && name == store.SettingMasterKeyFingerprint {
				d.MasterKeyFingerprint = value
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pg_restore: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// copyTable is the table a COPY line of pg_restore loads, unqualified:
// "COPY schema.licences (id, ...) FROM stdin;" is "licences".
func copyTable(line string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(line, "COPY "), " ")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, `"`)
}

func pgRestoreOutput(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "pg_restore", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pg_restore: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Target is what a PostgreSQL database holds in the schema a dump would
// be restored into.
type Target struct {
	// Tables are the tables already in the schema.
	Tables []string
	// Full names the tables that hold a row, other than goose_db_version
	// and settings: what a restore must never overwrite.
	Full []string
}

// InspectTarget reads, over a connection to rawURL, the tables the schema
// holds and which of them hold data. A database only migrated (or started
// once, recording its master key) holds no data.
func InspectTarget(ctx context.Context, rawURL, schema string) (*Target, error) {
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = $1 ORDER BY table_name`, schema)
	if err != nil {
		return nil, err
	}
	var t Target
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		t.Tables = append(t.Tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range t.Tables {
		if name == "goose_db_version" || name == "settings" {
			continue
		}
		var found bool
		q := `SELECT EXISTS (SELECT 1 FROM ` + pgx.Identifier{schema, name}.Sanitize() + `)`
		if err := conn.QueryRow(ctx, q).Scan(&found); err != nil {
			return nil, errors.Join(fmt.Errorf("table %s.%s", schema, name), err)
		}
		if found {
			t.Full = append(t.Full, name)
		}
	}
	return &t, nil
}
