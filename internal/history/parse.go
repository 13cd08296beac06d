// Package history keeps benchmark results over commits in a database
// (SQLite by default, PostgreSQL for a team) and finds where they
// changed: the logic behind `decodegap history` and `decodegap bisect`.
//
// # Store
//
// Add stores benchfmt files with their provenance: the commit, its date,
// the host, the Go version, the file's configuration lines, and the
// verdict rows of decodegap's verdict table where a file holds them. A
// file is keyed by the SHA-256 of its bytes, so adding it again is a
// no-op; one Add is one transaction, so a bad file leaves the store as it
// was. The tables are in store.go (see docs/guide/history.md).
//
// # Detect
//
// Detect reads each benchmark × unit series in commit order (one point a
// commit: the median of its values), splits it where the host changes,
// and runs E-Divisive means (package edivisive) on each stretch, on ln of
// its values when they are all above 0; each change point gets its
// magnitude (on the values' own scale) with a bootstrap interval, the
// commit range it lies in and the permutation p-value.
package history

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// The configuration keys that carry provenance when a file has them
// (`key: value` lines, as benchfmt configuration).
const (
	KeyCommit     = "commit"
	KeyCommitDate = "commit-date"
	KeyHost       = "host"
	KeyGoVersion  = "go"
	// KeyArm is the arm key decodegap interleave and pr write.
	KeyArm = "arm"
)

// Provenance says where and when a file's results were measured.
type Provenance struct {
	// Commit is the full hash of the measured revision; required.
	Commit string
	// Date is the commit's date: it orders the history.
	Date time.Time
	// Host is the machine's name; GoVersion the toolchain ("go1.26.8").
	Host, GoVersion string
}

// File is one parsed benchfmt file, ready to Add.
type File struct {
	// Name is the file's name as given; SHA256 the hex digest of its
	// bytes, its key in the store.
	Name, SHA256 string
	// Prov is the provenance: what the file's configuration lines say,
	// completed by the caller (see Fill).
	Prov Provenance
	// Configs are the file-level configuration lines in order of first
	// appearance, each key=value pair once.
	Configs []Config
	// Results are the benchmark values, one per result line and unit.
	Results []Value
	// Verdicts are the rows of decodegap's verdict tables in the file.
	Verdicts []Verdict
	// Replaces makes Add remove a stored file of the same Name and other
	// bytes, in the same transaction: Name is then the file's identity
	// (a git note, "REF:COMMIT", that was rewritten or merged), not only
	// a label.
	Replaces bool
}

// Config is one configuration line.
type Config struct{ Key, Value string }

// Value is one value of one result line.
type Value struct {
	// Seq is the result line's index in the file; VSeq the value's
	// index on its line.
	Seq, VSeq int
	// Name is the full benchmark name without "Benchmark"
	// (benchfmt.Name.Full, e.g. "Step/gap=100us-2"); Unit the tidied unit
	// (benchunit.Tidy: "sec/op", not "ns/op") and Value scaled to it.
	Name, Unit string
	Value      float64
	// Iters is the line's iteration count.
	Iters int
	// Arm is the result's `arm:` key ("" when it has none); Config its
	// per-result configuration keys as "k=v" lines.
	Arm, Config string
}

// Verdict is one row of a verdict table (internal/verdicttext) found in
// a file.
type Verdict struct {
	Benchmark, Arm, Metric, Outcome string
	// Ratio is B/A; NaN when the row has none.
	Ratio float64
	// Line is the row as written.
	Line string
}

// InputError is a file the store refuses, with the position of the
// first bad line (Line 0 when the whole file is at fault).
type InputError struct {
	File string
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// IsDuration reports whether unit, a tidied unit (benchunit.Tidy), is a
// time: its numerator has a "sec" part ("sec/op", "cpu-sec/op",
// "p99-sec/op", "sec/token").
func IsDuration(unit string) bool {
	num, _, _ := strings.Cut(unit, "/")
	for _, part := range strings.FieldsFunc(num, func(r rune) bool { return r == '-' || r == '*' || r == '.' }) {
		if part == "sec" {
			return true
		}
	}
	return false
}

// ParseFile parses data, the bytes of the benchfmt file name. It returns
// an *InputError for a malformed result line, a value that is NaN or
// infinite (one would stop every change point search over its series),
// a duration below 0 (IsDuration: no time is negative; 0 is kept, the
// true zero of a wait or of a gap of 0), or a file with no results;
// provenance comes from the file's configuration lines, where present.
func ParseFile(name string, data []byte) (*File, error) {
	sum := sha256.Sum256(data)
	f := &File{Name: name, SHA256: hex.EncodeToString(sum[:])}
	r := benchfmt.NewReader(bytes.NewReader(data), name)
	seen := map[Config]bool{}
	seq := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			_, line := rec.Pos()
			return nil, &InputError{File: name, Line: line, Msg: rec.Msg}
		case *benchfmt.Result:
			var perResult []string
			for _, c := range rec.Config {
				if c.File {
					k := Config{c.Key, string(c.Value)}
					if !seen[k] {
						seen[k] = true
						f.Configs = append(f.Configs, k)
					}
				} else {
					perResult = append(perResult, c.Key+"="+string(c.Value))
				}
			}
			arm := rec.GetConfig(KeyArm)
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					_, line := rec.Pos()
					if v.OrigUnit != "" { // the value as the line writes it
						v.Value, v.Unit = v.OrigValue, v.OrigUnit
					}
					return nil, &InputError{File: name, Line: line, Msg: fmt.Sprintf("%s: %v %s is not a finite number", rec.Name.Full(), v.Value, v.Unit)}
				}
				if v.Value < 0 && IsDuration(v.Unit) { // the Reader tidied v.Unit
					_, line := rec.Pos()
					if v.OrigUnit != "" {
						v.Value, v.Unit = v.OrigValue, v.OrigUnit
					}
					return nil, &InputError{File: name, Line: line, Msg: fmt.Sprintf("%s: %v %s is a duration below 0", rec.Name.Full(), v.Value, v.Unit)}
				}
			}
			for vi, v := range rec.Values {
				factor, unit := benchunit.Tidy(1, v.Unit)
				f.Results = append(f.Results, Value{Seq: seq, VSeq: vi, Name: string(rec.Name.Full()),
					Unit: unit, Value: v.Value * factor, Iters: rec.Iters, Arm: arm, Config: strings.Join(perResult, "\n")})
			}
			seq++
		}
	}
	if err := r.Err(); err != nil {
		return nil, &InputError{File: name, Msg: err.Error()}
	}
	if len(f.Results) == 0 {
		return nil, &InputError{File: name, Msg: "no benchmark results (lines starting with Benchmark): is this `go test -bench` output?"}
	}
	f.Verdicts = parseVerdicts(data)
	for _, c := range f.Configs {
		switch c.Key {
		case KeyCommit:
			f.Prov.Commit = c.Value
		case KeyHost:
			f.Prov.Host = c.Value
		case KeyGoVersion:
			f.Prov.GoVersion = c.Value
		case KeyCommitDate:
			t, err := time.Parse(time.RFC3339, c.Value)
			if err != nil {
				return nil, &InputError{File: name, Msg: fmt.Sprintf("%s: %q is not an RFC 3339 date", KeyCommitDate, c.Value)}
			}
			f.Prov.Date = t
		}
	}
	return f, nil
}

// Fill completes f's provenance: each field the file did not set is
// taken from def. A field the file set and def sets differently is
// overridden by def only when force is true.
func (f *File) Fill(def Provenance, force bool) {
	set := func(dst *string, v string) {
		if v != "" && (*dst == "" || force) {
			*dst = v
		}
	}
	set(&f.Prov.Commit, def.Commit)
	set(&f.Prov.Host, def.Host)
	set(&f.Prov.GoVersion, def.GoVersion)
	if !def.Date.IsZero() && (f.Prov.Date.IsZero() || force) {
		f.Prov.Date = def.Date
	}
}

// Check reports what provenance f still lacks, or a commit git would
// read as an option (OptionLike), as an *InputError. Add checks every
// file so; a caller may check first, before it opens a store.
func (f *File) Check() error {
	switch {
	case f.Prov.Commit == "":
		return &InputError{File: f.Name, Msg: "no commit: the file has no `commit:` line; give -commit"}
	case OptionLike(f.Prov.Commit):
		return &InputError{File: f.Name, Msg: fmt.Sprintf("commit %q: a revision cannot start with '-' (git would read it as an option)", f.Prov.Commit)}
	case f.Prov.Date.IsZero():
		return &InputError{File: f.Name, Msg: "no commit date: the file has no `commit-date:` line; give -date"}
	}
	return nil
}

// outcomes are the verdict words of internal/verdicttext's table.
var outcomes = map[string]bool{"slower": true, "faster": true, "equivalent": true, "undecided": true, "error": true}

// parseVerdicts finds the rows of verdict tables: after a header line
// holding the columns "arm metric verdict B/A", each line whose third
// field from the verdict column's position is an outcome.
func parseVerdicts(data []byte) []Verdict {
	var out []Verdict
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	col := -1 // index of the verdict column in the current table
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		// b.Log prefixes lines with "file.go:NN: "; drop it.
		if i := strings.Index(line, ".go:"); i >= 0 && !strings.HasPrefix(line, "Benchmark") {
			if j := strings.Index(line[i+4:], ": "); j >= 0 {
				line = strings.TrimSpace(line[i+4+j+2:])
			}
		}
		f := strings.Fields(line)
		if i := indexOf(f, "verdict"); i >= 2 && len(f) > i+1 && f[i-2] == "arm" && f[i-1] == "metric" && f[i+1] == "B/A" {
			col = i
			continue
		}
		if col < 0 {
			continue
		}
		if len(f) <= col || !outcomes[f[col]] {
			if len(f) == 0 || len(f) <= col {
				col = -1
			}
			continue
		}
		v := Verdict{Arm: f[col-2], Metric: f[col-1], Outcome: f[col], Ratio: math.NaN(), Line: line}
		if col >= 3 {
			v.Benchmark = strings.Join(f[:col-2], " ")
		}
		if len(f) > col+1 {
			if r, err := strconv.ParseFloat(f[col+1], 64); err == nil {
				v.Ratio = r
			}
		}
		out = append(out, v)
	}
	return out
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}
