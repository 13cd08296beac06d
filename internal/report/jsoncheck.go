package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
)

// FieldError is ReadJSON's error for a document whose fields WriteJSON
// would not have written: a field missing (a number left out would read
// as 0, not as null's NaN), an identifier that is not one of the
// enumerations, an interval whose ends are reversed, a negative count, a
// row given twice.
type FieldError struct {
	// Row is the row's position in rows, from 1; 0 for a field of the
	// document itself.
	Row int
	// Bench, Arm, Base and Unit name the row, as far as it was read.
	Bench, Arm, Base, Unit string
	// Field is the JSON path of the field within the row (or document):
	// "outcome", "null.lo", "rounds[3].cause".
	Field string
	// Msg says what is wrong with it.
	Msg string
}

// Error names the row and the field.
func (e *FieldError) Error() string {
	if e.Row == 0 {
		return fmt.Sprintf("report: field %s: %s", e.Field, e.Msg)
	}
	id := e.Bench
	if e.Arm != "" || e.Base != "" {
		id += " " + e.Arm + "/" + e.Base
	}
	if e.Unit != "" {
		id += " " + e.Unit
	}
	return fmt.Sprintf("report: row %d (%s), field %s: %s", e.Row, id, e.Field, e.Msg)
}

// requiredFields returns the JSON path of the first field of the struct
// type t absent from raw, a JSON object (recursing into struct fields and
// slices of structs), or "" when every field without omitempty is there.
// Num fields are numbers; a struct field is a struct unless it is Num.
func requiredFields(t reflect.Type, raw json.RawMessage, prefix string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return strings.TrimSuffix(prefix, ".")
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		v, ok := obj[name]
		if !ok {
			if opts == "omitempty" {
				continue
			}
			return prefix + name
		}
		switch {
		case f.Type.Kind() == reflect.Struct:
			if m := requiredFields(f.Type, v, prefix+name+"."); m != "" {
				return m
			}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			var elems []json.RawMessage
			if json.Unmarshal(v, &elems) != nil {
				continue // the decoder names the type error
			}
			for j, e := range elems {
				if m := requiredFields(f.Type.Elem(), e, fmt.Sprintf("%s%s[%d].", prefix, name, j+1)); m != "" {
					return m
				}
			}
		}
	}
	return ""
}

// rowKey identifies a row: two rows with one key are one row given twice.
type rowKey struct{ bench, pkg, arm, base, unit, kind string }

// checkRow checks what a row read holds against what WriteJSON writes;
// n is its position from 1.
func checkRow(n int, r *JSONRow) error {
	bad := func(field, format string, a ...any) error {
		return &FieldError{Row: n, Bench: r.Bench, Arm: r.Arm, Base: r.Base, Unit: r.Unit, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if !slices.Contains(Outcomes, r.Outcome) {
		return bad("outcome", "%q: want one of %s", r.Outcome, strings.Join(Outcomes, ", "))
	}
	if r.Kind != Candidate.String() && r.Kind != NullCheck.String() {
		return bad("kind", "%q: want %s or %s", r.Kind, Candidate, NullCheck)
	}
	for i, x := range r.Reasons {
		if !slices.Contains(Reasons, x) {
			return bad(fmt.Sprintf("reasons[%d]", i+1), "%q: want one of %s", x, strings.Join(Reasons, ", "))
		}
	}
	for i, x := range r.Rounds {
		if x.Cause != "" && !slices.Contains(Causes, x.Cause) {
			return bad(fmt.Sprintf("rounds[%d].cause", i+1), "%q: want one of %s, or none", x.Cause, strings.Join(Causes, ", "))
		}
	}
	for _, iv := range []struct {
		lo, hi string
		l, h   Num
	}{{"lo", "hi", r.Lo, r.Hi}, {"eq_lo", "eq_hi", r.EqLo, r.EqHi}, {"null.lo", "null.hi", r.Null.Lo, r.Null.Hi}} {
		if iv.l > iv.h { // false when either is NaN
			return bad(iv.lo, "%v is above %s %v: an interval's ends are reversed", float64(iv.l), iv.hi, float64(iv.h))
		}
	}
	for _, c := range []struct {
		field string
		v     int
		min   int
	}{
		{"rounds_to_decide", r.RoundsToDecide, -1}, {"need_rounds", r.NeedRounds, 0}, {"used", r.Used, 0},
		{"quarantined", r.Quarantined, 0}, {"given", r.Given, 0}, {"looks", r.Looks, 0}, {"family_size", r.FamilySize, 0},
		{"benchstat.base_n", r.Benchstat.BaseN, 0}, {"benchstat.arm_n", r.Benchstat.ArmN, 0},
	} {
		if c.v < c.min {
			return bad(c.field, "%d: a count of rounds is at least %d", c.v, c.min)
		}
	}
	for i, x := range r.Stalled {
		if x < 0 {
			return bad(fmt.Sprintf("stalled[%d]", i+1), "%d: a round label is not negative", x)
		}
	}
	if math.IsInf(float64(r.Weight), 0) || r.Weight < 0 {
		return bad("weight", "%v: want a finite weight ≥ 0, or null", float64(r.Weight))
	}
	return nil
}
