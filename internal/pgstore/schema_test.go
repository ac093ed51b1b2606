package pgstore_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// notInPostgres are the SQLite tables PostgreSQL does not have, and why: the shadow tables SQLite
// keeps for its FTS5 full-text index.
var notInPostgres = map[string]string{
	"version_text_config":  "FTS5 shadow table",
	"version_text_content": "FTS5 shadow table",
	"version_text_data":    "FTS5 shadow table",
	"version_text_docsize": "FTS5 shadow table",
	"version_text_idx":     "FTS5 shadow table",
}

// pgType is the PostgreSQL type each SQLite declared type maps to (docs/schema.md, "PostgreSQL").
// otherInPostgres are the SQLite tables whose PostgreSQL counterpart has other columns, and why:
// version_text is an FTS5 virtual table in SQLite, a table with a tsvector column in PostgreSQL
// (migration 0006), holding the same texts.
var otherInPostgres = map[string]string{
	"version_text": "FTS5 table; a tsvector table in PostgreSQL",
}

var pgType = map[string]string{
	"INTEGER": "bigint",
	"REAL":    "double precision",
	"TEXT":    "text",
	"BLOB":    "bytea",
}

type column struct {
	name    string
	typ     string
	notNull bool
	pk      bool
}

// TestSchemaMatchesSQLite reads the SQLite schema at head and the PostgreSQL schema as Open leaves
// it, and demands every SQLite table, column, index, trigger and view in PostgreSQL with the mapped
// type, nullability and primary key. A SQLite migration without its PostgreSQL counterpart fails
// here.
func TestSchemaMatchesSQLite(t *testing.T) {
	lite := sqliteSchema(t)
	db, err := pgstore.Open(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Version(t.Context()); err != nil || v != pgstore.SchemaVersion() {
		t.Fatalf("version %d, %v; want %d", v, err, pgstore.SchemaVersion())
	}
	pg := postgresSchema(t, db)

	for table, cols := range lite.tables {
		if notInPostgres[table] != "" {
			if _, ok := pg.tables[table]; ok {
				t.Errorf("table %s is in PostgreSQL although notInPostgres says it is not (%s)", table, notInPostgres[table])
			}
			continue
		}
		pcols, ok := pg.tables[table]
		if !ok {
			t.Errorf("SQLite table %s has no PostgreSQL counterpart: add a migration to internal/pgstore/migrations", table)
			continue
		}
		if otherInPostgres[table] != "" {
			continue
		}
		for _, c := range cols {
			i := slices.IndexFunc(pcols, func(p column) bool { return p.name == c.name })
			if i < 0 {
				t.Errorf("column %s.%s (%s) has no PostgreSQL counterpart", table, c.name, c.typ)
				continue
			}
			p := pcols[i]
			if want := pgType[c.typ]; p.typ != want {
				t.Errorf("column %s.%s: PostgreSQL type %s, want %s for SQLite's %s", table, c.name, p.typ, want, c.typ)
			}
			// SQLite lets a primary key column other than a row id be NULL; PostgreSQL does not, and
			// strata never stores one.
			if p.notNull != (c.notNull || c.pk) {
				t.Errorf("column %s.%s: PostgreSQL NOT NULL %v, SQLite %v", table, c.name, p.notNull, c.notNull)
			}
			// due's key carries DESC columns, which a PostgreSQL primary key cannot: a unique index is
			// its key there (checked with the indexes below).
			if p.pk != c.pk && table != "due" {
				t.Errorf("column %s.%s: in the PostgreSQL primary key %v, in SQLite's %v", table, c.name, p.pk, c.pk)
			}
		}
		for _, p := range pcols {
			if !slices.ContainsFunc(cols, func(c column) bool { return c.name == p.name }) {
				t.Errorf("PostgreSQL column %s.%s is not in SQLite's schema", table, p.name)
			}
		}
	}
	for table := range pg.tables {
		// The fleet's tables (leases, workers, their versions) have no SQLite counterpart: a SQLite
		// database has one process.
		if _, ok := lite.tables[table]; !ok && table != "schema_version" && !strings.HasPrefix(table, "fleet_") {
			t.Errorf("PostgreSQL table %s is not in SQLite's schema", table)
		}
	}
	for kind, names := range map[string][]string{"index": lite.indexes, "trigger": lite.triggers, "view": lite.views} {
		for _, n := range names {
			if !slices.Contains(pg.objects[kind], n) {
				t.Errorf("SQLite %s %s has no PostgreSQL counterpart", kind, n)
			}
		}
	}
	if !slices.Contains(pg.objects["index"], "due_key") {
		t.Error("PostgreSQL has no due_key, the unique index that is due's key")
	}
}

type schema struct {
	tables  map[string][]column
	indexes []string
	// triggers and views are SQLite's; objects holds PostgreSQL's by kind.
	triggers, views []string
	objects         map[string][]string
}

func sqliteSchema(t *testing.T) schema {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strata.db")
	sdb, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	lite, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	s := schema{tables: map[string][]column{}}
	rows, err := lite.QueryContext(t.Context(), "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "table":
			tables = append(tables, name)
		case "index":
			s.indexes = append(s.indexes, name)
		case "trigger":
			s.triggers = append(s.triggers, name)
		case "view":
			s.views = append(s.views, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, table := range tables {
		if notInPostgres[table] != "" || otherInPostgres[table] != "" {
			s.tables[table] = nil
			continue
		}
		rows, err := lite.QueryContext(t.Context(), "SELECT name, upper(type), \"notnull\", pk FROM pragma_table_info(?)", table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c column
			var pk int
			if err := rows.Scan(&c.name, &c.typ, &c.notNull, &pk); err != nil {
				t.Fatal(err)
			}
			c.pk = pk > 0
			if _, ok := pgType[c.typ]; !ok {
				t.Errorf("column %s.%s: SQLite type %q has no PostgreSQL mapping in this test", table, c.name, c.typ)
			}
			s.tables[table] = append(s.tables[table], c)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if len(s.tables) < 20 {
		t.Fatalf("read %d SQLite tables; the schema has more than 20", len(s.tables))
	}
	return s
}

func postgresSchema(t *testing.T, db *pgstore.DB) schema {
	t.Helper()
	ctx := t.Context()
	s := schema{tables: map[string][]column{}, objects: map[string][]string{}}
	rows, err := db.Pool().Query(ctx, `
		SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO',
			EXISTS (SELECT 1 FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
				WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
				AND tc.table_name = c.table_name AND k.column_name = c.column_name)
		FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table string
		var c column
		if err := rows.Scan(&table, &c.name, &c.typ, &c.notNull, &c.pk); err != nil {
			t.Fatal(err)
		}
		s.tables[table] = append(s.tables[table], c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for kind, q := range map[string]string{
		"index":   "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()",
		"trigger": "SELECT DISTINCT trigger_name FROM information_schema.triggers WHERE trigger_schema = current_schema()",
		"view":    "SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()",
	} {
		rows, err := db.Pool().Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		s.objects[kind] = names
	}
	return s
}

// TestOpenMigratesOnce opens a database twice, the second time finding it at the latest version,
// and refuses one that a newer strata migrated.
func TestOpenMigratesOnce(t *testing.T) {
	url := pgtest.URL(t)
	for range 2 {
		db, err := pgstore.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	db, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(t.Context(), "UPDATE schema_version SET version = version + 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = pgstore.Open(t.Context(), url)
	if !errors.Is(err, pgstore.ErrNewerSchema) {
		t.Fatalf("opening a newer schema: %v, want ErrNewerSchema", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:secret@127.0.0.1:5432/db", "postgres://u:xxxxx@127.0.0.1:5432/db"},
		{"postgres://u@127.0.0.1/db?password=secret&sslmode=disable", "postgres://u@127.0.0.1/db?password=xxxxx&sslmode=disable"},
		{"postgres://127.0.0.1/db", "postgres://127.0.0.1/db"},
		{"host=x password=secret", "(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := pgstore.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestDueTriggers checks the PL/pgSQL port of SQLite's due triggers: a URL is in due exactly when
// it is active, its tick has come and no trap rule holds it.
func TestDueTriggers(t *testing.T) {
	db, err := pgstore.Open(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	due := func() []int64 {
		t.Helper()
		rows, err := db.Pool().Query(ctx, "SELECT id FROM due ORDER BY host, prio DESC, level DESC, id")
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	steps := []struct {
		name string
		sql  string
		want []int64
	}{
		{"insert due and waiting", `INSERT INTO urls (id, url, host, level, due_tick, added_at) VALUES
			(1, 'http://a.test/', 'a.test', 2, 0, 'x'), (2, 'http://a.test/b', 'a.test', 1, 0, 'x'),
			(3, 'http://a.test/c', 'a.test', 1, 5, 'x')`, []int64{1, 2}},
		{"tick comes", "UPDATE urls SET due_tick = 1 WHERE id = 3", []int64{1, 2, 3}},
		{"gone", "UPDATE urls SET state = 'gone' WHERE id = 1", []int64{2, 3}},
		{"prio reorders", "UPDATE urls SET prio = 5 WHERE id = 3", []int64{3, 2}},
		{"rule holds", `INSERT INTO trap_rules (id, domain, unit) VALUES (1, 'a.test', '/c');
			INSERT INTO trap_holds (url_id, rule_id) VALUES (3, 1)`, []int64{2}},
		{"held stays out", "UPDATE urls SET level = 3 WHERE id = 3", []int64{2}},
		{"probe released", "UPDATE trap_holds SET released = 1 WHERE url_id = 3", []int64{3, 2}},
		{"hold ends", "DELETE FROM trap_holds; UPDATE urls SET due_tick = 9 WHERE id = 3", []int64{2}},
		{"rule deleted frees", `INSERT INTO trap_holds (url_id, rule_id) VALUES (2, 1); DELETE FROM trap_rules`, []int64{2}},
		{"url deleted", "DELETE FROM urls WHERE id = 2", nil},
	}
	for _, s := range steps {
		exec(s.sql)
		if got := due(); !slices.Equal(got, s.want) {
			t.Errorf("%s: due %v, want %v", s.name, got, s.want)
		}
	}
	var fr int64
	if err := db.Pool().QueryRow(ctx, "SELECT fr FROM url_fr WHERE id = 3").Scan(&fr); err != nil || fr != 8 {
		t.Errorf("url_fr of a URL due at tick 9 at tick 1: %d, %v; want 8", fr, err)
	}
}
