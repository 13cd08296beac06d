package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PGEnv is the environment variable holding the PostgreSQL DSN the tests
// run against (scripts/pg-test.sh sets it).
const PGEnv = "GAPBENCH_PG_DSN"

// stores returns the stores every store test runs on: a new SQLite file,
// and a new schema of the PostgreSQL server named by $GAPBENCH_PG_DSN.
// Under CI=true a missing DSN fails the test: CI must test PostgreSQL.
func stores(t *testing.T) map[string]*Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*Store{}
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "sub", "history.db"))
	require.NoError(t, err)
	t.Cleanup(func() { lite.Close() })
	out["sqlite"] = lite
	dsn := os.Getenv(PGEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but $%s is unset: PostgreSQL must be tested in CI (run the tests through scripts/pg-test.sh, as make test does)", PGEnv)
		}
		t.Logf("$%s unset: PostgreSQL not tested here (scripts/pg-test.sh starts a server and sets it)", PGEnv)
		return out
	}
	out["postgres"] = pgStore(t, dsn)
	return out
}

// pgStore opens a store in a new schema of the server at dsn, dropped
// when the test ends.
func pgStore(t *testing.T, dsn string) *Store {
	t.Helper()
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	schemaName := fmt.Sprintf("t_%d", time.Now().UnixNano())
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schemaName)
	require.NoError(t, err, "creating a schema on %s", redact(dsn))
	t.Cleanup(func() { admin.ExecContext(ctx, "DROP SCHEMA "+schemaName+" CASCADE") })
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, err := Open(ctx, dsn+sep+"search_path="+schemaName)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

const benchA = `goos: linux
goarch: amd64
pkg: example.com/m
cpu: Test CPU
commit: 1111111111111111111111111111111111111111
commit-date: 2026-11-30T10:00:00Z
host: runner-1
go: go1.26.8
BenchmarkStep-2   	    1000	      2000 ns/op	  64 B/op
BenchmarkStep-2   	    1000	      2200 ns/op	  64 B/op
BenchmarkStep-2   	    1000	      2100 ns/op	  64 B/op
    bench_test.go:12: arm   metric   verdict     B/A    95% CI        δ / MDE  rounds  benchstat
    bench_test.go:12: new   sec/op   slower      1.050  1.020–1.080   ±2.0%    10      +5.00% p=0.000
PASS
`

func countFiles(t *testing.T, s *Store) int {
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM files`).Scan(&n))
	return n
}

func TestAddIsIdempotentAndKeepsProvenance(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f, err := ParseFile("a.txt", []byte(benchA))
			require.NoError(t, err)
			got, err := s.Add(ctx, []*File{f})
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.True(t, got[0].New)
			assert.Equal(t, 6, got[0].Results) // 3 lines × (sec/op, B/op)
			assert.Equal(t, 1, got[0].Verdicts)

			again, err := ParseFile("renamed.txt", []byte(benchA))
			require.NoError(t, err)
			got, err = s.Add(ctx, []*File{again})
			require.NoError(t, err)
			assert.False(t, got[0].New, "the same bytes under another name are the same file")
			assert.Equal(t, 1, countFiles(t, s))

			files, err := s.Files(ctx)
			require.NoError(t, err)
			require.Len(t, files, 1)
			sf := files[0]
			assert.Equal(t, "a.txt", sf.Name)
			assert.Equal(t, Provenance{Commit: strings.Repeat("1", 40), Date: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
				Host: "runner-1", GoVersion: "go1.26.8"}, sf.Prov)
			assert.Contains(t, sf.Configs, Config{"cpu", "Test CPU"})
			assert.Contains(t, sf.Configs, Config{"pkg", "example.com/m"})
			require.Len(t, sf.Verdicts, 1)
			assert.Equal(t, "slower", sf.Verdicts[0].Outcome)
			assert.Equal(t, "sec/op", sf.Verdicts[0].Metric)
			assert.InDelta(t, 1.05, sf.Verdicts[0].Ratio, 1e-12)

			ser, err := s.Series(ctx, Filter{Units: []string{"sec/op"}})
			require.NoError(t, err)
			require.Len(t, ser, 1)
			assert.Equal(t, "Step-2", ser[0].Benchmark)
			require.Len(t, ser[0].Points, 1)
			assert.InDelta(t, 2100e-9, ser[0].Points[0].Value, 1e-15, "the median of the commit's values, in seconds")
			assert.Equal(t, 3, ser[0].Points[0].N)
		})
	}
}

func TestAddBadInputLeavesStoreUnchanged(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			good, err := ParseFile("good.txt", []byte(benchA))
			require.NoError(t, err)

			_, err = ParseFile("bad.txt", []byte("commit: abc\nBenchmarkX-2 100 12 ns/op extra\n"))
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, 2, ie.Line)
			assert.Regexp(t, `^bad\.txt:2: `, err.Error())

			_, err = ParseFile("empty.txt", []byte("goos: linux\nPASS\n"))
			assert.ErrorContains(t, err, "empty.txt: no benchmark results")

			noCommit, err := ParseFile("nocommit.txt", []byte("BenchmarkX-2 100 12 ns/op\n"))
			require.NoError(t, err)
			_, err = s.Add(ctx, []*File{good, noCommit})
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), "give -commit")
			assert.Equal(t, 0, countFiles(t, s), "one bad file of an add stores none")

			// A failure inside the transaction (here a cancelled context
			// after the first file) also leaves nothing.
			noCommit.Fill(Provenance{Commit: "c2", Date: time.Unix(1, 0)}, false)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err = s.Add(cctx, []*File{good, noCommit})
			require.Error(t, err)
			assert.Equal(t, 0, countFiles(t, s))

			_, err = s.Add(ctx, []*File{good, noCommit})
			require.NoError(t, err)
			assert.Equal(t, 2, countFiles(t, s))
		})
	}
}

func TestConcurrentAddsStoreOnce(t *testing.T) {
	// Many runners adding the same file at once: one row.
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			news := make([]bool, 6)
			errs := make([]error, 6)
			for i := range news {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f, err := ParseFile("a.txt", []byte(benchA))
					if err != nil {
						errs[i] = err
						return
					}
					got, err := s.Add(context.Background(), []*File{f})
					errs[i] = err
					if err == nil {
						news[i] = got[0].New
					}
				}()
			}
			wg.Wait()
			n := 0
			for i := range news {
				require.NoError(t, errs[i])
				if news[i] {
					n++
				}
			}
			assert.Equal(t, 1, n)
			assert.Equal(t, 1, countFiles(t, s))
		})
	}
}

func TestSeriesOrderHostsAndArms(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var files []*File
			// Added out of order: Series sorts by commit date.
			for _, i := range []int{2, 0, 1, 3} {
				host := "h1"
				if i == 3 {
					host = "h2"
				}
				text := fmt.Sprintf("BenchmarkStep-2 100 %d ns/op\nBenchmarkOther 10 5 ns/op\n", 1000+i)
				if i == 1 {
					text += "arm: base\nBenchmarkStep-2 100 9999 ns/op\n"
				}
				f, err := ParseFile(fmt.Sprintf("r%d.txt", i), []byte(text))
				require.NoError(t, err)
				f.Fill(Provenance{Commit: fmt.Sprintf("c%d", i), Date: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC), Host: host}, false)
				files = append(files, f)
			}
			_, err := s.Add(ctx, files)
			require.NoError(t, err)
			ser, err := s.Series(ctx, Filter{Bench: regexp.MustCompile(`^Step`)})
			require.NoError(t, err)
			require.Len(t, ser, 1)
			var commits []string
			for _, p := range ser[0].Points {
				commits = append(commits, p.Commit)
				assert.False(t, math.IsNaN(p.Value))
			}
			assert.Equal(t, []string{"c0", "c1", "c2", "c3"}, commits)
			assert.InDelta(t, 1001e-9, ser[0].Points[1].Value, 1e-15, "the arm: base line is not part of the history")
			assert.Equal(t, []Stretch{{0, 3, "h1"}, {3, 4, "h2"}}, Stretches(ser[0].Points))
		})
	}
}

func TestOpenRejectsOtherSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	_, err = s.db.Exec(`UPDATE gapbench_schema SET version = 99`)
	require.NoError(t, err)
	s.Close()
	_, err = Open(context.Background(), path)
	assert.ErrorContains(t, err, "schema version 99")
	assert.False(t, errors.Is(err, os.ErrNotExist))
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db": "postgres://u:***@h:5432/db",
		"postgres://u@h/db":             "postgres://u@h/db",
		// A password as a query parameter (issue 39 item 4), also
		// percent-encoded, and sslpassword, the client key's.
		"postgres://u@h/db?password=secret":                        "postgres://u@h/db?password=***",
		"postgresql://h/db?sslmode=require&password=secret&x=1":    "postgresql://h/db?sslmode=require&password=***&x=1",
		"postgres://u@h/db?sslpassword=secret":                     "postgres://u@h/db?sslpassword=***",
		"postgres://u@h/db?pass%77ord=secret":                      "postgres://u@h/db?pass%77ord=***",
		"postgres://u@h/db?PASSWORD=secret":                        "postgres://u@h/db?PASSWORD=***",
		"postgres://u:pw@h/db?password=se?cret&sslpassword=s&cret": "postgres://u:***@h/db?password=***&sslpassword=***&cret",
		"postgres://u@h/db?options=a@b&password=secret":            "postgres://u@h/db?options=a@b&password=***",
		"postgres://u:p@ss@h/db?application_name=x":                "postgres://u:***@h/db?application_name=x",
		"postgres://h/db?passwordless=1":                           "postgres://h/db?passwordless=1",
	} {
		got := redact(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "secret", in)
	}
}

// A file with Replaces set removes the stored files of its name with
// other bytes in the same transaction (a git note rewritten or merged:
// its old lines are not counted twice); without it both are kept.
func TestAddReplacesByName(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			parse := func(fname, body string, replaces bool) *File {
				f, err := ParseFile(fname, []byte("commit: "+strings.Repeat("2", 40)+"\ncommit-date: 2026-11-30T10:00:00Z\n"+body))
				require.NoError(t, err)
				f.Replaces = replaces
				return f
			}
			got, err := s.Add(ctx, []*File{parse("n:c", "BenchmarkStep-2 1 1000 ns/op\n", true)})
			require.NoError(t, err)
			assert.Equal(t, 0, got[0].Replaced)
			got, err = s.Add(ctx, []*File{parse("n:c", "BenchmarkStep-2 1 1000 ns/op\nBenchmarkStep-2 1 3000 ns/op\n", true)})
			require.NoError(t, err)
			assert.True(t, got[0].New)
			assert.Equal(t, 1, got[0].Replaced)
			assert.Equal(t, 1, countFiles(t, s))
			ser, err := s.Series(ctx, Filter{Units: []string{"sec/op"}})
			require.NoError(t, err)
			require.Len(t, ser, 1)
			assert.Equal(t, 2, ser[0].Points[0].N, "the merged note's two values, not three")
			var n int
			require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM results`).Scan(&n))
			assert.Equal(t, 2, n)

			// The same bytes again: nothing new, nothing removed.
			got, err = s.Add(ctx, []*File{parse("n:c", "BenchmarkStep-2 1 1000 ns/op\nBenchmarkStep-2 1 3000 ns/op\n", true)})
			require.NoError(t, err)
			assert.False(t, got[0].New)
			assert.Equal(t, 1, countFiles(t, s))
			// Files are not replaced by name unless asked.
			_, err = s.Add(ctx, []*File{parse("n:c", "BenchmarkStep-2 1 5000 ns/op\n", false)})
			require.NoError(t, err)
			assert.Equal(t, 2, countFiles(t, s))
		})
	}
}

// Census runs the same SQL on every store (PostgreSQL's boolean and
// SQLite's 0/1 for arm <> ”), and counts what Series would use.
func TestCensusOnEveryStore(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		f, err := ParseFile("a.txt", []byte(benchA))
		require.NoError(t, err)
		_, err = s.Add(ctx, []*File{f})
		require.NoError(t, err, name)
		c, err := s.Census(ctx, Filter{})
		require.NoError(t, err, name)
		assert.Positive(t, c.Values, name)
		assert.Equal(t, c.Values, c.Used+c.Armed+c.OtherBench+c.OtherUnit, name)
		assert.NotEmpty(t, c.Units, name)
	}
}
