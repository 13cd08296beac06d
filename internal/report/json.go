package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/nullband"
)

// Schema names the JSON format WriteJSON writes; its fields are listed in
// docs/guide/json.md. A reader must refuse a schema it does not know: a
// change that removes or redefines a field gets a new version.
const Schema = "gapbench.report/v1"

// Num is a float in JSON: a number, null for NaN (unknown), or the
// strings "+Inf" and "-Inf" (unbounded), which encoding/json cannot write
// as numbers.
type Num float64

// MarshalJSON writes n as a number, null or "±Inf".
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte("null"), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *Num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*n = Num(math.NaN())
		return nil
	case `"+Inf"`:
		*n = Num(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = Num(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("report: %s: want a number, null, \"+Inf\" or \"-Inf\"", b)
	}
	*n = Num(f)
	return nil
}

// Doc is a JSON report: what the command was, and every row.
type Doc struct {
	// Schema is the format's name and version, Schema.
	Schema string `json:"schema"`
	// Command is the route that judged: "compare", "interleave",
	// "calibrate", "ort", "pr", "merge".
	Command string `json:"command"`
	// Created is when the report was written (RFC 3339, UTC).
	Created string `json:"created"`
	// Revisions are the two revisions compared, for the routes that
	// compare revisions (pr, merge); nil (omitted) for the others.
	Revisions *Revisions `json:"revisions,omitempty"`
	// Rows are the verdicts, in the order the text table prints them.
	Rows []JSONRow `json:"rows"`
	// AACheck is CheckOf(rows): "ran", "not-run" (some null-check row
	// has no interval yet: the run ended before the A/A check could flag
	// the host) or "none" (no null arm).
	AACheck string `json:"aa_check"`
}

// Revisions are the base and head a report compares.
type Revisions struct {
	Base Revision `json:"base"`
	Head Revision `json:"head"`
}

// Revision is one side of a comparison of revisions.
type Revision struct {
	// Ref is the revision as given (-base, -head); "" for the work tree.
	Ref string `json:"ref"`
	// Commit is its full hash: for the work tree HEAD's when the tree
	// is clean, "" when it has uncommitted changes (then no commit
	// holds what was measured).
	Commit string `json:"commit"`
	// Dirty is true for a work tree with uncommitted changes.
	Dirty bool `json:"dirty"`
}

// JSONRow is a Row in JSON: its identity, the verdict's numbers with
// their enumerated outcome and reasons, the rounds judged and benchstat's
// view. Ratios are Arm/Base; below 1 means the arm is faster (or uses
// less CPU, for a cpu- unit).
type JSONRow struct {
	Bench  string `json:"bench"`
	Pkg    string `json:"pkg,omitempty"`
	Arm    string `json:"arm"`
	Base   string `json:"base"`
	Unit   string `json:"unit"`
	Kind   string `json:"kind"`
	Weight Num    `json:"weight"`
	Level  Num    `json:"level"`
	Error  string `json:"error,omitempty"`

	Outcome string   `json:"outcome"`
	Reasons []string `json:"reasons"`

	Ratio        Num `json:"ratio"`
	Lo           Num `json:"lo"`
	Hi           Num `json:"hi"`
	Confidence   Num `json:"confidence"`
	P            Num `json:"p"`
	EqLo         Num `json:"eq_lo"`
	EqHi         Num `json:"eq_hi"`
	EqConfidence Num `json:"eq_confidence"`
	Delta        Num `json:"delta"`

	Null JSONNull `json:"null"`

	MDE            Num `json:"mde"`
	RoundsToDecide int `json:"rounds_to_decide"`
	NeedRounds     int `json:"need_rounds"`
	Used           int `json:"used"`
	Quarantined    int `json:"quarantined"`
	Given          int `json:"given"`
	Looks          int `json:"looks"`
	SpreadLimit    Num `json:"spread_limit"`

	FamilySize  int `json:"family_size"`
	FamilyAlpha Num `json:"family_alpha"`

	Rounds    []JSONRound   `json:"rounds"`
	Stalled   []int         `json:"stalled"`
	Relieved  bool          `json:"relieved"`
	Benchstat JSONBenchstat `json:"benchstat"`
}

// JSONNull is the null arm's check inside a row: A'/A with its interval.
type JSONNull struct {
	Ratio      Num `json:"ratio"`
	Lo         Num `json:"lo"`
	Hi         Num `json:"hi"`
	P          Num `json:"p"`
	Confidence Num `json:"confidence"`
}

// JSONRound is one round as the verdict saw it.
type JSONRound struct {
	Label       int    `json:"label"`
	A           Num    `json:"a"`
	B           Num    `json:"b"`
	Null        Num    `json:"null"`
	Ratio       Num    `json:"ratio"`
	Spread      Num    `json:"spread"`
	Quarantined bool   `json:"quarantined"`
	Cause       string `json:"cause,omitempty"`
}

// JSONBenchstat is benchstat's view of every round of the row.
type JSONBenchstat struct {
	Base  Num `json:"base"`
	Arm   Num `json:"arm"`
	BaseN int `json:"base_n"`
	ArmN  int `json:"arm_n"`
	P     Num `json:"p"`
	Alpha Num `json:"alpha"`
}

// ToJSON returns r as a JSONRow.
func ToJSON(r Row) JSONRow {
	v := r.Verdict
	j := JSONRow{
		Bench: r.Bench, Pkg: r.Pkg, Arm: r.Arm, Base: r.Base, Unit: r.Unit, Kind: r.Kind.String(),
		Weight: Num(r.Weight), Level: Num(r.Level), Error: r.Err,
		Outcome: v.Outcome.String(), Reasons: []string{},
		Ratio: Num(v.Ratio), Lo: Num(v.Lo), Hi: Num(v.Hi), Confidence: Num(v.Confidence), P: Num(v.P),
		EqLo: Num(v.EqLo), EqHi: Num(v.EqHi), EqConfidence: Num(v.EqConfidence), Delta: Num(v.Delta),
		Null: JSONNull{Ratio: Num(v.NullRatio), Lo: Num(v.NullLo), Hi: Num(v.NullHi), P: Num(v.NullP), Confidence: Num(v.NullConfidence)},
		MDE:  Num(v.MDE), RoundsToDecide: v.RoundsToDecide, NeedRounds: v.NeedRounds,
		Used: v.Used, Quarantined: v.Quarantined, Given: v.Given, Looks: v.Looks, SpreadLimit: Num(v.SpreadLimit),
		FamilySize: v.FamilySize, FamilyAlpha: Num(v.FamilyAlpha),
		Rounds: []JSONRound{}, Stalled: []int{}, Relieved: r.Relieved,
		Benchstat: JSONBenchstat{Base: Num(r.Benchstat.Base), Arm: Num(r.Benchstat.Arm), BaseN: r.Benchstat.BaseN,
			ArmN: r.Benchstat.ArmN, P: Num(r.Benchstat.P), Alpha: Num(r.Benchstat.Alpha)},
	}
	for _, x := range v.Reasons {
		j.Reasons = append(j.Reasons, x.String())
	}
	for _, x := range v.Rounds {
		j.Rounds = append(j.Rounds, JSONRound{Label: x.Label, A: Num(x.A), B: Num(x.B), Null: Num(x.Null),
			Ratio: Num(x.Ratio), Spread: Num(x.Spread), Quarantined: x.Quarantined, Cause: x.Cause.String()})
	}
	j.Stalled = append(j.Stalled, r.Stalled...)
	return j
}

// WriteJSON writes rows as one JSON document of command's, indented, with
// Created set from now.
func WriteJSON(w io.Writer, command string, now time.Time, rows []Row) error {
	return WriteJSONRevisions(w, command, now, nil, rows)
}

// WriteJSONRevisions is WriteJSON with the revisions compared (rev nil:
// none, as WriteJSON).
func WriteJSONRevisions(w io.Writer, command string, now time.Time, rev *Revisions, rows []Row) error {
	d := Doc{Schema: Schema, Command: command, Created: now.UTC().Format(time.RFC3339), Revisions: rev, Rows: []JSONRow{}, AACheck: CheckOf(rows).String()}
	for _, r := range rows {
		d.Rows = append(d.Rows, ToJSON(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// MaxJSONBytes and MaxRows bound the document ReadJSON reads: a run of
// 1,000 benchmarks judged in 5 units, each with its null check, is 10,000
// rows of a few kilobytes each. A row costs about 2 KB once read, so the
// bounds keep a hostile document (10^6 rows took 2 GB) under 250 MB.
const (
	MaxJSONBytes = 64 << 20
	MaxRows      = 50_000
)

// ErrTooLarge is wrapped by ReadJSON's error for a document of more than
// MaxJSONBytes bytes or MaxRows rows.
var ErrTooLarge = errors.New("report: document too large")

// ReadJSON reads a document WriteJSON wrote. A document of another schema
// is refused, naming it; one of more than MaxJSONBytes or MaxRows is
// refused with an error wrapping ErrTooLarge, before the rest is read.
// The rows are decoded one at a time. A field WriteJSON would not have
// written is a *FieldError naming the row and the field: one missing
// (a number left out would read as 0), given twice, an unknown outcome,
// reason, kind or cause, reversed interval ends, a negative count, a row
// given twice; so is anything after the document.
func ReadJSON(r io.Reader) (Doc, error) {
	lr := &io.LimitedReader{R: r, N: MaxJSONBytes + 1}
	d, err := readJSON(json.NewDecoder(lr))
	if lr.N <= 0 {
		return Doc{}, fmt.Errorf("%w: more than %d bytes (report.MaxJSONBytes): not a report gapbench wrote", ErrTooLarge, MaxJSONBytes)
	}
	if err != nil {
		return Doc{}, err
	}
	if d.Schema != Schema {
		return Doc{}, schemaError(d.Schema)
	}
	if d.Rows == nil {
		return Doc{}, errors.New("report: no rows field")
	}
	return d, nil
}

func schemaError(s string) error {
	return fmt.Errorf("report: schema %q, want %q: read it with the gapbench version that wrote it", s, Schema)
}

// readJSON decodes one document from dec: its fields, and its rows one
// by one.
func readJSON(dec *json.Decoder) (Doc, error) {
	var d Doc
	dec.DisallowUnknownFields()
	wrap := func(err error) error { return fmt.Errorf("report: reading JSON: %w", err) }
	delim := func(want json.Delim) error {
		tok, err := dec.Token()
		if err != nil {
			return wrap(err)
		}
		if tok != want {
			return wrap(fmt.Errorf("%v at offset %d, want %v", tok, dec.InputOffset(), want))
		}
		return nil
	}
	if err := delim('{'); err != nil {
		return Doc{}, err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Doc{}, wrap(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return Doc{}, &FieldError{Field: key, Msg: "given twice"}
		}
		seen[key] = true
		var dst any
		switch key {
		case "schema":
			dst = &d.Schema
		case "command":
			dst = &d.Command
		case "created":
			dst = &d.Created
		case "revisions":
			dst = &d.Revisions
		case "aa_check":
			dst = &d.AACheck
		case "rows":
			if err := readRows(dec, &d); err != nil {
				return Doc{}, err
			}
			continue
		default:
			return Doc{}, wrap(fmt.Errorf("json: unknown field %q", key))
		}
		if err := dec.Decode(dst); err != nil {
			return Doc{}, wrap(err)
		}
		if key == "schema" && d.Schema != Schema { // before rows of a format not this one
			return Doc{}, schemaError(d.Schema)
		}
	}
	if err := delim('}'); err != nil {
		return Doc{}, err
	}
	for _, k := range []string{"schema", "command", "created", "rows", "aa_check"} {
		if !seen[k] {
			return Doc{}, &FieldError{Field: k, Msg: "missing"}
		}
	}
	if d.AACheck != CheckRan.String() && d.AACheck != CheckNotRun.String() && d.AACheck != NoCheck.String() {
		return Doc{}, &FieldError{Field: "aa_check", Msg: fmt.Sprintf("%q: want %s, %s or %s", d.AACheck, CheckRan, CheckNotRun, NoCheck)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Doc{}, &FieldError{Field: "(end)", Msg: fmt.Sprintf("more after the document, at byte %d: a file holds one report", dec.InputOffset())}
	}
	return d, nil
}

// readRows decodes the rows array into d.Rows, at most MaxRows.
func readRows(dec *json.Decoder, d *Doc) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("report: reading JSON: %w", err)
	}
	if tok == nil {
		return nil // "rows": null, refused as no rows
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("report: reading JSON: rows: %v, want an array", tok)
	}
	d.Rows = []JSONRow{}
	rowType := reflect.TypeFor[JSONRow]()
	first := map[rowKey]int{}
	for dec.More() {
		if len(d.Rows) == MaxRows {
			return fmt.Errorf("%w: more than %d rows (report.MaxRows): not a report gapbench wrote", ErrTooLarge, MaxRows)
		}
		n := len(d.Rows) + 1
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("report: reading JSON: row %d: %w", n, err)
		}
		var row JSONRow
		rd := json.NewDecoder(bytes.NewReader(raw))
		rd.DisallowUnknownFields()
		if err := rd.Decode(&row); err != nil {
			return fmt.Errorf("report: reading JSON: row %d: %w", n, err)
		}
		if m := requiredFields(rowType, raw, ""); m != "" {
			return &FieldError{Row: n, Bench: row.Bench, Arm: row.Arm, Base: row.Base, Unit: row.Unit, Field: m, Msg: "missing (a number left out would read as 0, not as null's NaN)"}
		}
		if err := checkRow(n, &row); err != nil {
			return err
		}
		k := rowKey{row.Bench, row.Pkg, row.Arm, row.Base, row.Unit, row.Kind}
		if i, ok := first[k]; ok {
			return &FieldError{Row: n, Bench: row.Bench, Arm: row.Arm, Base: row.Base, Unit: row.Unit, Field: "bench", Msg: fmt.Sprintf("the row of row %d again (same bench, pkg, arm, base, unit and kind)", i)}
		}
		first[k] = n
		d.Rows = append(d.Rows, row)
	}
	_, err = dec.Token() // ']'
	if err != nil {
		return fmt.Errorf("report: reading JSON: %w", err)
	}
	return nil
}

// The enumerations a JSONRow's strings come from, for a reader that
// checks them: every Outcome, Reason and Cause identifier.
var (
	Outcomes = enumStrings(64, func(i int) string { return nullband.Outcome(i).String() })
	Reasons  = enumStrings(64, func(i int) string { return nullband.Reason(i).String() })
	Causes   = enumStrings(64, func(i int) string { return nullband.Cause(i).String() })
)

// enumStrings lists the known identifiers among f(0…n−1): those that are
// not empty and not the "Type(N)" of an unknown value.
func enumStrings(n int, f func(int) string) []string {
	var out []string
	for i := range n {
		if s := f(i); s != "" && !strings.Contains(s, "(") {
			out = append(out, s)
		}
	}
	return out
}
