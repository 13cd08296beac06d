package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	// The two drivers: pure Go both, so the command stays free of cgo.
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// DefaultPath is the SQLite file a repository's history is kept in when
// no -db is given, relative to the repository's top directory.
const DefaultPath = ".gapbench/history.db"

// SchemaVersion is the version of the tables Open creates.
const SchemaVersion = 1

// Store is a history database: SQLite (a file) or PostgreSQL. Its methods
// are safe for concurrent use, as database/sql's DB is; many processes
// may add to one PostgreSQL store at once (see Add).
type Store struct {
	db *sql.DB
	// pg is true for PostgreSQL: queries are rebound from ? to $n.
	pg bool
	// Where names the store for messages: the file path, or the
	// PostgreSQL DSN without its password.
	Where string
}

// IsPostgres reports whether dsn names a PostgreSQL database (a
// postgres:// or postgresql:// URL).
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// ErrNoStore is the error (wrapped, with the path) of OpenExisting for
// an SQLite file that does not exist; it matches fs.ErrNotExist too.
var ErrNoStore = fmt.Errorf("no history store there: %w", fs.ErrNotExist)

// Open opens the store at dsn, creating it when missing: a postgres://
// URL opens PostgreSQL (pgx), anything else is the path of an SQLite
// file, created with its directory when missing. Either way the tables
// are created when missing. The path is a file name whatever it holds
// ('#', '?', '%', ":memory:"): see sqliteDSN. The caller must Close it.
func Open(ctx context.Context, dsn string) (*Store, error) { return open(ctx, dsn, true) }

// OpenExisting is Open for a store that must already be there: a
// missing SQLite file is an error wrapping ErrNoStore, and nothing is
// created. (A PostgreSQL database is opened as by Open.)
func OpenExisting(ctx context.Context, dsn string) (*Store, error) { return open(ctx, dsn, false) }

func open(ctx context.Context, dsn string, create bool) (*Store, error) {
	s := &Store{}
	var err error
	if IsPostgres(dsn) {
		s.pg, s.Where = true, redact(dsn)
		s.db, err = sql.Open("pgx", dsn)
	} else {
		if dsn == "" {
			return nil, errors.New("history: no database: give a file path or a postgres:// URL")
		}
		s.Where = dsn
		if !create {
			if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("history: %s: %w", dsn, ErrNoStore)
			}
		}
		if err := os.MkdirAll(filepath.Dir(dsn), 0o755); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		var uri string
		if uri, err = sqliteDSN(dsn); err == nil {
			s.db, err = sql.Open("sqlite", uri)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("history: opening %s: %w", s.Where, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("history: %s: %w", s.Where, err)
	}
	return s, nil
}

// sqliteDSN is the driver's DSN for the SQLite file at path: a file: URI
// of the absolute path, so that ":memory:" is a file of that name, with
// '%', '?' and '#' percent-encoded, so that they are part of the name
// (SQLite ends a URI's path at '?' or '#'), and the store's settings as
// its query. busy_timeout lets concurrent writers wait instead of
// failing; _txlock=immediate takes the write lock at BEGIN, so two adds
// never deadlock upgrading a read lock.
func sqliteDSN(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(abs))
	return "file:" + esc + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate", nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// redact removes the passwords from a PostgreSQL URL: the user's
// (user:***@), and the values of the query parameters password and
// sslpassword (the client key's), whose keys pgx also reads
// percent-encoded. When the string is ambiguous (an '@' in a password
// or in the query) it masks more, never less.
func redact(dsn string) string {
	scheme := strings.Index(dsn, "://")
	if scheme < 0 {
		return dsn
	}
	head, rest := dsn[:scheme+3], dsn[scheme+3:]
	// The user's password ends at the last '@' (it may hold an '@'
	// itself); a ':' after the first '/' is no user's.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		colon, slash := strings.Index(rest[:at], ":"), strings.Index(rest, "/")
		if colon >= 0 && (slash < 0 || colon < slash) {
			rest = rest[:colon] + ":***" + rest[at:]
		}
	}
	return head + redactQuery(rest)
}

// redactQuery masks the value of every password= and sslpassword= pair
// of s that follows a '?' or an '&', up to the next '&'.
func redactQuery(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], "?&")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i + 1
		b.WriteString(s[i:j])
		pair := s[j:]
		end := strings.IndexByte(pair, '&')
		if end < 0 {
			end = len(pair)
		}
		key, _, ok := strings.Cut(pair[:end], "=")
		if dec, err := url.QueryUnescape(strings.TrimSpace(key)); err == nil {
			key = dec
		}
		if ok && (strings.EqualFold(key, "password") || strings.EqualFold(key, "sslpassword")) {
			b.WriteString(pair[:strings.IndexByte(pair, '=')+1] + "***")
			i = j + end
			continue
		}
		i = j
	}
	return b.String()
}

// schema is the DDL, with ID standing for the dialect's key column.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS gapbench_schema (version BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS files (
		id ID,
		sha256 TEXT NOT NULL UNIQUE,
		name TEXT NOT NULL,
		commit_hash TEXT NOT NULL,
		commit_time TEXT NOT NULL,
		host TEXT NOT NULL,
		go_version TEXT NOT NULL,
		added_at TEXT NOT NULL,
		results BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS files_commit_time ON files (commit_time, id)`,
	`CREATE TABLE IF NOT EXISTS configs (
		file_id BIGINT NOT NULL REFERENCES files (id),
		seq BIGINT NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		PRIMARY KEY (file_id, seq))`,
	`CREATE TABLE IF NOT EXISTS results (
		file_id BIGINT NOT NULL REFERENCES files (id),
		seq BIGINT NOT NULL,
		vseq BIGINT NOT NULL,
		name TEXT NOT NULL,
		unit TEXT NOT NULL,
		value DOUBLE PRECISION NOT NULL,
		iters BIGINT NOT NULL,
		arm TEXT NOT NULL,
		config TEXT NOT NULL,
		PRIMARY KEY (file_id, seq, vseq))`,
	`CREATE INDEX IF NOT EXISTS results_name_unit ON results (name, unit)`,
	`CREATE TABLE IF NOT EXISTS verdicts (
		file_id BIGINT NOT NULL REFERENCES files (id),
		seq BIGINT NOT NULL,
		benchmark TEXT NOT NULL,
		arm TEXT NOT NULL,
		metric TEXT NOT NULL,
		outcome TEXT NOT NULL,
		ratio DOUBLE PRECISION,
		line TEXT NOT NULL,
		PRIMARY KEY (file_id, seq))`,
}

// migrate creates the tables in one transaction. On PostgreSQL an
// advisory lock serialises runners that start at once, since CREATE
// TABLE IF NOT EXISTS alone races on the catalog.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7274627)`); err != nil {
			return err
		}
	}
	id := "INTEGER PRIMARY KEY AUTOINCREMENT"
	if s.pg {
		id = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	for _, q := range schema {
		if _, err := tx.ExecContext(ctx, strings.Replace(q, "id ID", "id "+id, 1)); err != nil {
			return err
		}
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM gapbench_schema`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO gapbench_schema (version) VALUES (?)`), SchemaVersion); err != nil {
			return err
		}
	case err != nil:
		return err
	case v != SchemaVersion:
		return fmt.Errorf("the tables are at schema version %d; this decodegap reads version %d", v, SchemaVersion)
	}
	return tx.Commit()
}

// q rebinds a query written with ? placeholders for the store's dialect.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// timeText is the fixed-width UTC form times are stored in, so that they
// sort as text in both dialects.
const timeText = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeText) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeText, s) }
