package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/history"
)

func init() {
	commands["history"] = command{
		summary: "store benchmark results by commit (SQLite or PostgreSQL), find change points, plot a series",
		run:     runHistory,
	}
}

const historyUsage = `usage: decodegap history <subcommand> [flags] [args]

subcommands:
  add FILE|DIR...   store benchfmt files (every regular file of a DIR) with
                    their commit, date, host, Go version, config lines and
                    verdict rows; the same bytes twice are stored once; one
                    add is one transaction: a bad file stores nothing
  import DIR...     the same as add
  files             list the stored files with their provenance
  detect            change points per benchmark and unit over commit order
                    (E-Divisive means, permutation test); -confirm bisects
                    each one with interleaved, null-calibrated comparisons
  plot BENCH        draw BENCH's series with its change points (PNG or SVG)

The store is -db: a file path (SQLite, default .gapbench/history.db at the
repository's top) or a postgres:// URL (PostgreSQL, for a team's history).
Only add creates a missing SQLite store; the other subcommands refuse one.
Run 'decodegap history <subcommand> -h' for its flags.
`

func runHistory(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, historyUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "add", "import":
		return historyAdd(args[0], args[1:], stdout, stderr)
	case "files":
		return historyFiles(args[1:], stdout, stderr)
	case "detect":
		return historyDetect(args[1:], stdout, stderr)
	case "plot":
		return historyPlot(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "decodegap history: unknown subcommand %q\n", args[0])
	fmt.Fprint(stderr, historyUsage)
	return 2
}

// defaultDB is the SQLite file at the top of the git work tree holding
// the current directory (the current directory outside git).
func defaultDB() string {
	top := "."
	if out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output(); err == nil {
		top = strings.TrimSpace(string(out))
	}
	return filepath.Join(top, history.DefaultPath)
}

// dbFlag adds -db to fs; create says whether the subcommand creates a
// missing store (only add does).
func dbFlag(fs *flag.FlagSet, create bool) *string {
	usage := "history `store`: an SQLite file path or a postgres:// URL; default " + history.DefaultPath + " at the repository's top; "
	if create {
		usage += "created when missing"
	} else {
		usage += "must exist ('decodegap history add' creates one)"
	}
	return fs.String("db", "", usage)
}

// openStore opens -db (or the default): add (create true) creates a
// missing store; every other subcommand reads one that must exist, so a
// mistyped -db is an error, not an empty history. The error names the
// flag.
func openStore(ctx context.Context, db string, create bool) (*history.Store, error) {
	flagged := db != ""
	if !flagged {
		db = defaultDB()
	}
	open := history.OpenExisting
	if create {
		open = history.Open
	}
	s, err := open(ctx, db)
	switch {
	case errors.Is(err, history.ErrNoStore) && flagged:
		return nil, fmt.Errorf("-db %s: no such store ('decodegap history add -db %s' creates one); check the path", db, db)
	case errors.Is(err, history.ErrNoStore):
		return nil, fmt.Errorf("no history store at %s (the default -db): store results first with 'decodegap history add', or give -db", db)
	case err != nil:
		return nil, fmt.Errorf("-db: %w", err)
	}
	return s, nil
}

// newFlagSet makes a subcommand's flag set whose usage prints head.
func newFlagSet(name, head string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, head); fs.PrintDefaults() }
	return fs
}

// parseFlags parses args; status ≥ 0 means stop with it (help: 0, bad: 2).
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return -1
}

const historyAddUsage = `usage: decodegap history add [flags] FILE|DIR...
       decodegap history add -notes REF [flags] [FILE|DIR...]

Stores each benchfmt file (each regular file of a DIR, in name order) in
the history. Provenance comes from the file's own configuration lines
(commit:, commit-date: in RFC 3339, host:, go:) where it has them, else
from the flags; -commit defaults to the current git HEAD, -date to that
commit's committer date, -host to this machine's name, -go to the Go
version decodegap was built with. -force makes the flags win over the
file's lines.

With -notes, every git note of REF (e.g. one CI adds to each main-branch
commit with 'git notes --ref gapbench add -F bench.txt') is a file too:
its commit is the one the note is attached to, its date that commit's
(the note's own commit: and commit-date: lines never override them; a
commit: line naming another commit is counted on stderr), its host -host
or its own host: line, else "notes:REF". Notes already
stored are skipped, as files are; a rewritten or merged note replaces
its earlier version. Notes on commits this clone lacks are skipped and
counted.

flags:
`

func historyAdd(name string, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history "+name, historyAddUsage, stderr)
	db := dbFlag(fs, true)
	commit := fs.String("commit", "", "`revision` the files measured, for files without a commit: line; default git HEAD")
	date := fs.String("date", "", "commit `date` (RFC 3339), for files without a commit-date: line; default the commit's date in git")
	host := fs.String("host", "", "`host` name, for files without a host: line; default this machine's")
	goVersion := fs.String("go", "", "Go `version`, for files without a go: line; default "+runtime.Version())
	force := fs.Bool("force", false, "the flags override the files' own provenance lines")
	notes := fs.String("notes", "", "also store every note of git notes `ref` (\"gapbench\": refs/notes/gapbench), each as a file of the commit it is attached to")
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap history %s: "+format+"\n", append([]any{name}, a...)...)
		return code
	}
	if fs.NArg() == 0 && *notes == "" {
		return fail(2, "give the benchfmt files (or directories of them) to store, or -notes REF")
	}
	// A revision or ref starting with '-' would reach git as an option
	// (-commit --output=FILE wrote FILE); git is also given
	// --end-of-options.
	for _, f := range []struct{ flag, v string }{{"-commit", *commit}, {"-notes", *notes}} {
		if history.OptionLike(f.v) {
			return fail(2, "%s %q: a revision or ref cannot start with '-'", f.flag, f.v)
		}
	}
	if *notes != "" && (*commit != "" || *date != "") {
		return fail(2, "-notes with -commit or -date: a note's commit is the one it is attached to, and its date that commit's")
	}
	ctx, stop := interruptible(0)
	defer stop()
	var noted []noteFile
	if *notes != "" {
		var err error
		var skipped int
		if noted, skipped, err = notesFiles(ctx, *notes); err != nil {
			return fail(2, "-notes: %v; nothing was stored", err)
		}
		if skipped > 0 {
			fmt.Fprintf(stderr, "decodegap history %s: -notes: %d of %d notes skipped: not on a commit of this clone (a shallow clone? git fetch --unshallow)\n", name, skipped, skipped+len(noted))
		}
	}
	paths, err := expandPaths(fs.Args())
	if err != nil {
		return fail(2, "%v", err)
	}
	var files, split []*history.File
	for _, p := range paths {
		data, err := readBenchFile(p)
		if err != nil {
			return fail(2, "%v; nothing was stored", err)
		}
		f, err := history.ParseFile(p, data)
		if err != nil {
			return fail(2, "%v; nothing was stored", err)
		}
		parts, unc, ok := history.SplitRevisions(f, data)
		if !ok {
			files = append(files, f)
			continue
		}
		// A pr or bisect file holds two revisions: each is filed under
		// its own commit, dated in git (unless -date).
		if unc > 0 {
			fmt.Fprintf(stderr, "decodegap history %s: %s: %d of its result lines measured a work tree with uncommitted changes, which no commit holds: not stored\n", name, p, unc)
		}
		for _, part := range parts {
			if *date == "" {
				d, err := commitDate(part.Prov.Commit)
				if err != nil {
					return fail(2, "%s: %v; give -date; nothing was stored", p, err)
				}
				part.Prov.Date = d
			}
			split = append(split, part)
		}
	}
	def, err := defaultProvenance(*commit, *date, *host, *goVersion, files)
	if err != nil {
		return fail(2, "%v; nothing was stored", err)
	}
	for _, f := range files {
		f.Fill(def, *force)
	}
	if len(split) > 0 {
		// Their commits are their own: -commit does not apply, even
		// with -force.
		d := def
		if *commit != "" {
			if d, err = defaultProvenance("", *date, *host, *goVersion, nil); err != nil {
				return fail(2, "%v; nothing was stored", err)
			}
		}
		for _, f := range split {
			d.Commit = f.Prov.Commit
			f.Fill(d, *force)
		}
		files = append(files, split...)
	}
	var mismatched []noteFile
	for _, n := range noted {
		// A note was measured elsewhere (a CI runner), so this machine's
		// name and Go are not its defaults: only -host and -go are, and
		// a note without a host: line is filed under "notes:REF".
		p := n.prov
		p.Host, p.GoVersion = *host, *goVersion
		n.file.Fill(p, *force)
		if n.file.Prov.Host == "" {
			n.file.Prov.Host = "notes:" + *notes
		}
		// The commit a note is attached to is the one it measured: its
		// own commit: line (copied from another run?) never moves it.
		if c := n.file.Prov.Commit; !strings.HasPrefix(n.prov.Commit, strings.ToLower(c)) || len(c) < 4 {
			mismatched = append(mismatched, noteFile{file: n.file, prov: history.Provenance{Commit: c}})
		}
		n.file.Prov.Commit, n.file.Prov.Date = n.prov.Commit, n.prov.Date
		files = append(files, n.file)
	}
	if len(mismatched) > 0 {
		m := mismatched[0]
		fmt.Fprintf(stderr, "decodegap history %s: -notes: %d of %d notes have a commit: line naming another commit (%s says %q); each is stored under the commit it is attached to\n",
			name, len(mismatched), len(noted), m.file.Name, m.prov.Commit)
	}
	for _, f := range files {
		if err := f.Check(); err != nil {
			return fail(2, "%v; nothing was stored", err)
		}
	}
	s, err := openStore(ctx, *db, true)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer s.Close()
	added, err := s.Add(ctx, files)
	if err != nil {
		return fail(1, "%v; nothing was stored", err)
	}
	return writeAdded(stdout, s.Where, added, files)
}

// maxBenchBytes bounds one file add reads: a benchfmt file of a run is
// kilobytes to megabytes; a larger one is not one (or is /dev/zero).
const maxBenchBytes = maxNoteBytes

// readBenchFile reads the regular file path, at most maxBenchBytes. A
// fifo, device, socket or directory is refused without blocking or
// reading it (it is opened non-blocking, then checked).
func readBenchFile(path string) ([]byte, error) {
	return readRegularFile(path, maxBenchBytes, "give benchfmt files or directories of them")
}

// readRegularFile reads the regular file path, at most limit bytes; a
// larger one, or a fifo, device, socket or directory, is refused without
// blocking or reading past the limit (it is opened non-blocking, then
// checked). want ends the refusal of a file that is not regular: what
// the command reads.
func readRegularFile(path string, limit int64, want string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file: %s", path, atomicfile.Kind(fi.Mode()), want)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than a benchfmt file can be (%d)", path, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s: more than %d bytes, more than a benchfmt file can be", path, limit)
	}
	return data, err
}

// commitDate is the committer date of commit in the git repository of
// the current directory.
func commitDate(commit string) (time.Time, error) {
	out, err := exec.Command("git", "show", "-s", "--format=%cI", "--end-of-options", commit+"^{commit}").Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("commit %s: no date from git (not in this clone?)", short(commit))
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
}

// expandPaths replaces each directory by its regular files, in name
// order.
func expandPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(a, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no files in the directory", a)
		}
	}
	return out, nil
}

// defaultProvenance resolves the flags' defaults; git is asked only when
// some file lacks a commit or a date.
func defaultProvenance(commit, date, host, goVersion string, files []*history.File) (history.Provenance, error) {
	p := history.Provenance{Commit: commit, Host: host, GoVersion: goVersion}
	if p.Host == "" {
		p.Host, _ = os.Hostname()
	}
	if p.GoVersion == "" {
		p.GoVersion = runtime.Version()
	}
	needCommit := slices.ContainsFunc(files, func(f *history.File) bool { return f.Prov.Commit == "" })
	needDate := slices.ContainsFunc(files, func(f *history.File) bool { return f.Prov.Date.IsZero() })
	if date != "" {
		t, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return p, fmt.Errorf("-date %q: want RFC 3339, e.g. 2026-12-01T10:00:00Z", date)
		}
		p.Date = t
	}
	if !needCommit && (!needDate || !p.Date.IsZero()) {
		return p, nil
	}
	rev := commit
	if rev == "" {
		rev = "HEAD"
	}
	out, err := exec.Command("git", "show", "-s", "--format=%H %cI", "--end-of-options", rev+"^{commit}").Output()
	if err != nil {
		if commit == "" && needCommit {
			return p, errors.New("a file has no commit: line and git HEAD cannot be read here; give -commit")
		}
		if p.Date.IsZero() {
			return p, fmt.Errorf("no commit date for %q from git; give -date", rev)
		}
		return p, nil
	}
	f := strings.Fields(string(out))
	if len(f) == 2 {
		p.Commit = f[0]
		if p.Date.IsZero() {
			p.Date, _ = time.Parse(time.RFC3339, f[1])
		}
	}
	return p, nil
}

func historyFiles(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history files", "usage: decodegap history files [-db STORE]\n\nflags:\n", stderr)
	db := dbFlag(fs, false)
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	ctx, stop := interruptible(0)
	defer stop()
	s, err := openStore(ctx, *db, false)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history files: %v\n", err)
		return 2
	}
	defer s.Close()
	files, err := s.Files(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history files: %v\n", err)
		return 1
	}
	writeFiles(stdout, s.Where, files)
	return 0
}
