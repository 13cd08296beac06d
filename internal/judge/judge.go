package judge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// member is one row in the making: its samples and where they came from.
type member struct {
	row report.Row
	s   nullband.Samples
}

// Judge judges a table under policy p and returns its rows: first every
// candidate row (by benchmark, candidate arm and unit, in the table's
// order of first appearance and the policy's order of units), then each
// benchmark's null-arm rows (A' against A, report.NullCheck).
//
// Candidates are the arms other than the base and the null arm. The
// candidate rows form one family under weighted Holm
// (nullband.JudgeWeighted, weights by Weight); the null-arm rows form a
// family of their own, so they never change a candidate's verdict. A
// round is offered to the quarantine (nullband.Samples.Contended) when the
// screen marked some of its arms' blocks contended and not others, or when
// some block held a stall.
//
// The extreme-spread quarantine (nullband.Options.Extreme) is a guard,
// not a veto: when it leaves some row of a family with no finite interval
// while that row's complete rounds would give one, the family is judged
// again without it (Extreme = +Inf) and its rows are marked Relieved.
// Rounds marked contended or stalled, and missing values, stay out.
//
// It is an error for the table to lack the base or the null arm, or to
// hold no value of the policy's units.
func Judge(t *Table, p Policy) ([]report.Row, error) {
	cands, nulls, err := members(t, p)
	if err != nil {
		return nil, err
	}
	rows := make([]report.Row, 0, len(cands)+len(nulls))
	for _, fam := range [][]member{cands, nulls} {
		if err := judgeFamily(fam, p.Options); err != nil {
			return nil, err
		}
		for _, m := range fam {
			rows = append(rows, m.row)
		}
	}
	return rows, nil
}

// ErrNothingToJudge is returned (wrapped) when a table holds no value of
// the policy's units for a candidate or null row.
var ErrNothingToJudge = errors.New("nothing to judge")

// members lays out the table's candidate and null-arm rows under p.
func members(t *Table, p Policy) (cands, nulls []member, err error) {
	base, null := p.base(), p.null()
	for _, need := range []string{base, null} {
		if !slices.Contains(t.arms, need) {
			return nil, nil, fmt.Errorf("no results for arm %q (arms seen: %v): the base and null arms must both be in the input", need, t.arms)
		}
	}
	for _, b := range t.benches {
		for _, c := range t.arms {
			if c == base || c == null {
				continue
			}
			for _, u := range p.units() {
				if t.Has(b, u, c) {
					cands = append(cands, t.member(b, u, base, c, null, report.Candidate))
				}
			}
		}
		for _, u := range p.units() {
			if t.Has(b, u, null) && t.Has(b, u, base) {
				nulls = append(nulls, t.member(b, u, base, null, "", report.NullCheck))
			}
		}
	}
	if len(cands)+len(nulls) == 0 {
		return nil, nil, fmt.Errorf("%w: no values of %v (units seen: %v)", ErrNothingToJudge, p.units(), t.units)
	}
	return cands, nulls, nil
}

// member is the row of arm c against base on unit u of bench, calibrated
// by null ("" for none).
func (t *Table) member(bench, u, base, c, null string, kind report.Kind) member {
	arms := []string{base, c}
	if null != "" {
		arms = append(arms, null)
	}
	m := member{row: report.Row{Bench: bench, Arm: c, Base: base, Unit: u, Kind: kind, Weight: Weight(u)}}
	s := &m.s
	var av, bv []float64
	for _, r := range t.rounds {
		a, b := t.Value(bench, u, base, r), t.Value(bench, u, c, r)
		s.Round = append(s.Round, r)
		s.Base, s.Candidate = append(s.Base, a), append(s.Candidate, b)
		if null != "" {
			s.Null = append(s.Null, t.Value(bench, u, null, r))
		}
		unshared, stall := t.roundMarks(bench, r, arms)
		s.Contended = append(s.Contended, unshared || stall)
		if stall {
			m.row.Stalled = append(m.row.Stalled, r)
		}
		if finite(a) {
			av = append(av, a)
		}
		if finite(b) {
			bv = append(bv, b)
		}
	}
	m.row.Benchstat = benchstatOf(av, bv)
	return m
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// benchstatAlpha is benchstat's default -alpha.
const benchstatAlpha = 0.05

// benchstatOf is benchstat's comparison of two columns of values.
func benchstatOf(a, b []float64) report.Benchstat {
	bs := report.Benchstat{Base: math.NaN(), Arm: math.NaN(), P: math.NaN(), Alpha: benchstatAlpha, BaseN: len(a), ArmN: len(b)}
	if len(a) == 0 || len(b) == 0 {
		return bs
	}
	sa, sb := benchmath.NewSample(a, &benchmath.DefaultThresholds), benchmath.NewSample(b, &benchmath.DefaultThresholds)
	bs.Base = benchmath.AssumeNothing.Summary(sa, 0.95).Center
	bs.Arm = benchmath.AssumeNothing.Summary(sb, 0.95).Center
	c := benchmath.AssumeNothing.Compare(sa, sb)
	bs.P = c.P
	return bs
}

// judgeFamily judges fam in place under weighted Holm, relieving the
// extreme-spread quarantine when it leaves a row with no interval.
func judgeFamily(fam []member, opt nullband.Options) error {
	if len(fam) == 0 {
		return nil
	}
	samples := make([]nullband.Samples, len(fam))
	weights := make([]float64, len(fam))
	for i, m := range fam {
		samples[i], weights[i] = m.s, m.row.Weight
	}
	f, err := nullband.JudgeWeighted(samples, weights, opt)
	if err != nil {
		for i := range fam {
			fam[i].row.Err = err.Error()
		}
		return nil
	}
	relieved := false
	if !math.IsInf(opt.Extreme, 1) && slices.ContainsFunc(f.Verdicts, starved) {
		o := opt
		o.Extreme = math.Inf(1)
		if g, err := nullband.JudgeWeighted(samples, weights, o); err == nil {
			f, relieved = g, true
		}
	}
	for i := range fam {
		fam[i].row.Verdict, fam[i].row.Level, fam[i].row.Relieved = f.Verdicts[i], f.Levels[i], relieved
	}
	return nil
}

// starved reports whether the extreme-spread quarantine left v with no
// finite interval (or over the quarantine cap) while its rounds without
// that quarantine would give one.
func starved(v nullband.Verdict) bool {
	extreme, other := 0, 0
	for _, r := range v.Rounds {
		switch {
		case r.Cause == nullband.Extreme:
			extreme++
		case r.Quarantined:
			other++
		}
	}
	if extreme == 0 {
		return false
	}
	noInterval := !(v.Lo > 0) || math.IsInf(v.Hi, 1) || v.Has(nullband.TooManyQuarantined) || v.Has(nullband.TooFewRounds)
	return noInterval && len(v.Rounds)-other >= v.NeedRounds
}

// Decided reports whether every candidate row is decided
// (report.Row.Decided), or for a table with no candidate (A/A) every null
// row: the stop of a sequential run. No rows is not decided.
func Decided(rows []report.Row) bool {
	kind := report.NullCheck // an A/A table: the null rows decide
	for _, r := range rows {
		if r.Kind == report.Candidate {
			kind = report.Candidate
		}
	}
	n := 0
	for _, r := range rows {
		if r.Kind != kind {
			continue
		}
		if !r.Decided() {
			return false
		}
		n++
	}
	return n > 0
}
