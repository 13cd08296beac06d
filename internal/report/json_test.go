package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/nullband"
)

func sampleRows(t *testing.T) []Row {
	t.Helper()
	s := nullband.Samples{
		Base:      []float64{100, 101, 99, 100, 102, 98, 100, 101},
		Candidate: []float64{105, 106, 104, 105, 107, 103, 105, 106},
		Null:      []float64{100, 100, 100, 101, 101, 99, 100, 100},
	}
	v, err := nullband.Judge(s, nullband.Options{})
	require.NoError(t, err)
	few, err := nullband.Judge(nullband.Samples{Base: []float64{1, 2}, Candidate: []float64{1, math.NaN()}}, nullband.Options{})
	require.NoError(t, err)
	return []Row{
		{Bench: "Step-2", Arm: "b", Base: "a", Unit: "sec/op", Weight: 2, Level: 0.975, Verdict: v,
			Benchstat: Benchstat{Base: 100, Arm: 105, BaseN: 8, ArmN: 8, P: 0.001, Alpha: 0.05}, Stalled: []int{3}},
		{Bench: "Step-2", Arm: "null", Base: "a", Unit: "cpu-sec/op", Kind: NullCheck, Weight: 1, Level: 0.95, Verdict: few,
			Benchstat: Benchstat{Base: math.NaN(), Arm: math.NaN(), P: math.NaN(), Alpha: 0.05}, Relieved: true},
		{Bench: "Broken", Pkg: "example.com/m", Arm: "b", Base: "a", Unit: "sec/op", Err: "no values at the base"},
	}
}

// Written, read and written again, a report is the same bytes, and the
// numbers come back, NaN and infinities included.
func TestJSONRoundTrip(t *testing.T) {
	rows := sampleRows(t)
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	var a bytes.Buffer
	require.NoError(t, WriteJSON(&a, "interleave", now, rows))
	d, err := ReadJSON(bytes.NewReader(a.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, Schema, d.Schema)
	assert.Equal(t, "interleave", d.Command)
	assert.Equal(t, "2026-12-01T20:00:00Z", d.Created)
	assert.Equal(t, "not-run", d.AACheck, "the null-check row has too few rounds")
	require.Len(t, d.Rows, 3)

	r := d.Rows[0]
	v := rows[0].Verdict
	assert.Equal(t, "slower", r.Outcome)
	assert.Equal(t, v.Ratio, float64(r.Ratio))
	assert.Equal(t, v.Lo, float64(r.Lo))
	assert.Equal(t, v.Used, r.Used)
	assert.Len(t, r.Rounds, 8)
	assert.Equal(t, []int{3}, r.Stalled)
	assert.Equal(t, "candidate", r.Kind)

	n := d.Rows[1]
	assert.Equal(t, "null-check", n.Kind)
	assert.True(t, math.IsNaN(float64(n.Benchstat.Base)))
	assert.True(t, math.IsInf(float64(n.MDE), 1), "MDE %v", n.MDE)
	assert.Contains(t, n.Reasons, "too-few-rounds")
	assert.Equal(t, "missing", n.Rounds[1].Cause)
	assert.Equal(t, "no values at the base", d.Rows[2].Error)

	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(d))
	assert.Equal(t, a.String(), b.String())
	assert.Contains(t, a.String(), `"mde": "+Inf"`)
	assert.Contains(t, a.String(), `"base": null`)
}

func TestReadJSONRefuses(t *testing.T) {
	_, err := ReadJSON(strings.NewReader(`{"schema":"gapbench.report/v9","rows":[]}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `schema "gapbench.report/v9", want "gapbench.report/v1"`)
	_, err = ReadJSON(strings.NewReader(`{"schema":"gapbench.report/v1","rows":[],"surprise":1}`))
	assert.Error(t, err)
	var n Num
	assert.Error(t, n.UnmarshalJSON([]byte(`"NaN"`)))
}

func TestEnumerations(t *testing.T) {
	assert.Equal(t, []string{"undecided", "faster", "slower", "equivalent"}, Outcomes)
	assert.Contains(t, Reasons, "straddles")
	assert.Contains(t, Causes, "contended")
}

// Every JSON field is in the schema's documentation, and the
// documentation names no field the writer lacks.
func TestJSONSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/guide/json.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	var a bytes.Buffer
	rev := &Revisions{Base: Revision{Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567"}, Head: Revision{Dirty: true}}
	require.NoError(t, WriteJSONRevisions(&a, "pr", time.Now(), rev, sampleRows(t)))
	var generic map[string]any
	require.NoError(t, json.Unmarshal(a.Bytes(), &generic))
	written := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				name := k
				if prefix != "" {
					name = prefix + "." + k
				}
				written[name] = true
				walk(name, e)
			}
		case []any:
			for _, e := range x {
				walk(prefix, e)
			}
		}
	}
	walk("", generic)
	for k := range written {
		assert.True(t, documented[k], "field %s is not in docs/guide/json.md", k)
	}
	for k := range documented {
		assert.True(t, written[k], "docs/guide/json.md names %s, which the writer does not write", k)
	}
}

// A report of two revisions records them (refs as given, full hashes)
// and reads them back; a report of arms has no revisions field.
func TestJSONRevisions(t *testing.T) {
	rev := &Revisions{Base: Revision{Ref: "origin/main", Commit: "0123456789abcdef0123456789abcdef01234567"},
		Head: Revision{Ref: "", Commit: "89abcdef0123456789abcdef0123456789abcdef"}}
	var a bytes.Buffer
	require.NoError(t, WriteJSONRevisions(&a, "pr", time.Now(), rev, sampleRows(t)))
	d, err := ReadJSON(bytes.NewReader(a.Bytes()))
	require.NoError(t, err)
	require.NotNil(t, d.Revisions)
	assert.Equal(t, *rev, *d.Revisions)
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, "interleave", time.Now(), sampleRows(t)))
	assert.NotContains(t, b.String(), "revisions")
}

// endlessRows is a report whose rows never end: the header, then row
// again and again, each time with its "#" replaced by a new number;
// read counts the bytes taken.
type endlessRows struct {
	head, row []byte
	pending   []byte
	n         int
	read      int64
}

func (e *endlessRows) Read(p []byte) (int, error) {
	if len(e.pending) == 0 {
		e.n++
		e.pending = bytes.ReplaceAll(e.row, []byte("#"), []byte(strconv.Itoa(e.n)))
		if e.head != nil {
			e.pending, e.head = e.head, nil
		}
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	e.read += int64(n)
	return n, nil
}

// TestReadJSONBounded: a document of endless rows (10^6 rows took 2 GB)
// is refused at MaxRows, naming the limit, before more than MaxJSONBytes
// is read; so is one of endless bytes in a single field.
func TestReadJSONBounded(t *testing.T) {
	var a bytes.Buffer
	require.NoError(t, WriteJSON(&a, "interleave", time.Now(), sampleRows(t)[2:]))
	s := a.String()
	i := strings.Index(s, `"rows": [`) + len(`"rows": [`)
	row := strings.Replace(strings.TrimSpace(s[i:strings.LastIndex(s, "]")]), `"Broken"`, `"Broken#"`, 1)
	r := &endlessRows{head: []byte(s[:i] + strings.ReplaceAll(row, "#", "0")), row: []byte("," + row)}
	_, err := ReadJSON(r)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.EqualError(t, err, "report: document too large: more than 50000 rows (report.MaxRows): not a report gapbench wrote")
	assert.LessOrEqual(t, r.read, int64(MaxJSONBytes+1))

	r = &endlessRows{head: []byte(`{"schema":"` + Schema + `","command":"`), row: []byte("xxxxxxxx")}
	_, err = ReadJSON(r)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.EqualError(t, err, "report: document too large: more than 67108864 bytes (report.MaxJSONBytes): not a report gapbench wrote")
	assert.LessOrEqual(t, r.read, int64(MaxJSONBytes+1))
}

// TestReadJSONRefusesWhatWriteJSONNeverWrites: each change to a written
// document (issue 39 item 8) is refused with an error naming the row and
// the field; they were read as they came (a missing number as 0, a second
// document ignored).
func TestReadJSONRefusesWhatWriteJSONNeverWrites(t *testing.T) {
	var a bytes.Buffer
	require.NoError(t, WriteJSON(&a, "interleave", time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), sampleRows(t)))
	edit := func(f func(doc map[string]any, row map[string]any)) string {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(a.Bytes(), &doc))
		f(doc, doc["rows"].([]any)[0].(map[string]any))
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		return string(b)
	}
	for _, c := range []struct {
		name, doc, want string
	}{
		{"unknown outcome", edit(func(_, r map[string]any) { r["outcome"] = "bogus" }),
			`report: row 1 (Step-2 b/a sec/op), field outcome: "bogus": want one of undecided, faster, slower, equivalent`},
		{"lo above hi", edit(func(_, r map[string]any) { r["lo"], r["hi"] = r["hi"], r["lo"] }),
			`report: row 1 (Step-2 b/a sec/op), field lo: `},
		{"negative rounds", edit(func(_, r map[string]any) { r["used"] = -3 }),
			`report: row 1 (Step-2 b/a sec/op), field used: -3: a count of rounds is at least 0`},
		{"every row twice", edit(func(d, _ map[string]any) { d["rows"] = append(d["rows"].([]any), d["rows"].([]any)...) }),
			`report: row 4 (Step-2 b/a sec/op), field bench: the row of row 1 again (same bench, pkg, arm, base, unit and kind)`},
		{"a missing number", edit(func(_, r map[string]any) { delete(r, "ratio") }),
			`report: row 1 (Step-2 b/a sec/op), field ratio: missing (a number left out would read as 0, not as null's NaN)`},
		{"a missing nested number", edit(func(_, r map[string]any) { delete(r["null"].(map[string]any), "lo") }),
			`report: row 1 (Step-2 b/a sec/op), field null.lo: missing`},
		{"a missing round number", edit(func(_, r map[string]any) { delete(r["rounds"].([]any)[2].(map[string]any), "b") }),
			`report: row 1 (Step-2 b/a sec/op), field rounds[3].b: missing`},
		{"an unknown cause", edit(func(_, r map[string]any) { r["rounds"].([]any)[0].(map[string]any)["cause"] = "gremlins" }),
			`report: row 1 (Step-2 b/a sec/op), field rounds[1].cause: "gremlins": want one of missing, non-positive, contended, extreme, or none`},
		{"a missing document field", edit(func(d, _ map[string]any) { delete(d, "aa_check") }),
			`report: field aa_check: missing`},
		{"a second document", a.String() + a.String(), `report: field (end): more after the document, at byte `},
	} {
		_, err := ReadJSON(strings.NewReader(c.doc))
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		var fe *FieldError
		assert.ErrorAs(t, err, &fe, c.name)
	}
	// The written document itself is read, and so is one of sorted keys.
	_, err := ReadJSON(strings.NewReader(edit(func(_, _ map[string]any) {})))
	assert.NoError(t, err)
}
