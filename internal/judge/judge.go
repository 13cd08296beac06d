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
// round is offered to the quarantine (nullband.Samples.Contended) when
// some of its arms' blocks were marked and others not: a block is marked
// when the screen found it contended or it held a stall (foreign weather
// for that arm alone; a mark every arm shares is weather that pairing
// cancels). The row lists its stalled rounds (report.Row.Stalled). With
// the null arm present, as every route has it, nullband sets no round
// aside for a mark or a spread (a mark that follows the candidate's slow
// blocks would set aside the difference judged; issue 33): the marks are
// kept for the report.
//
// The extreme-spread quarantine (nullband.Options.Extreme) is a guard,
// not a veto: when it leaves some row of a family with no finite interval
// while that row's complete rounds would give one, the family is judged
// again without it (Extreme = +Inf) and its rows are marked Relieved
// (without a null arm only: with one, nullband has no such quarantine).
// Rounds marked contended or stalled, and missing values, stay out.
//
// It is an error for the table to lack the base or the null arm, or to
// hold no value of the policy's units.
func Judge(t *Table, p Policy) ([]report.Row, error) {
	rows, err := JudgeAll([]*Table{t}, p)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// JudgeAll is Judge over several tables (a pull request's benchmarks,
// each with its own rounds): every candidate row of every table is one
// family, and every null-arm row another. rows[i] are table i's rows, in
// Judge's order. A table without a candidate or null value of the
// policy's units is an error only when no table has one.
func JudgeAll(tables []*Table, p Policy) ([][]report.Row, error) {
	var cands, nulls []member
	var at [][2]int // per table: its candidate and null counts
	var firstErr error
	for _, t := range tables {
		c, n, err := members(t, p)
		if err != nil && !errors.Is(err, ErrNothingToJudge) {
			return nil, err
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		cands, nulls = append(cands, c...), append(nulls, n...)
		at = append(at, [2]int{len(c), len(n)})
	}
	if len(cands)+len(nulls) == 0 {
		if firstErr == nil {
			firstErr = fmt.Errorf("%w: no tables", ErrNothingToJudge)
		}
		return nil, firstErr
	}
	for _, fam := range [][]member{cands, nulls} {
		judgeFamily(fam, p.Options)
	}
	out := make([][]report.Row, len(tables))
	ci, ni := 0, 0
	for i, k := range at {
		for _, m := range cands[ci : ci+k[0]] {
			out[i] = append(out[i], m.row)
		}
		for _, m := range nulls[ni : ni+k[1]] {
			out[i] = append(out[i], m.row)
		}
		ci, ni = ci+k[0], ni+k[1]
	}
	return out, nil
}

// FamilyWeight is the sum of the weights of t's candidate rows under p:
// a runner that looks at one table of a family at a time (Look) needs the
// family's total.
func FamilyWeight(t *Table, p Policy) float64 {
	c, _, _ := members(t, p)
	w := 0.0
	for _, m := range c {
		w += m.row.Weight
	}
	return w
}

// Look judges the candidate rows of t alone, each at the first level of
// weighted Holm in a family of total weight total (1 − α·w/total, the
// lowest level the final Judge gives it), in p's sequential mode: a
// runner that gives each table of a family its own rounds (pr's jobs)
// stops a table's rounds when Look says it is decided. Stopping early
// costs power, never error. A row that the extreme-spread quarantine
// starves is judged without it, as Judge does. A decided look is confirmed with the
// replicates the final family judgement uses, and waits for the table's
// null rows to have an interval (the A/A check, as Decided). need is the most further
// rounds a row's estimate says it needs (math.MaxInt32 when unknown).
func Look(t *Table, p Policy, total float64) (decided bool, need int) {
	c, nulls, err := members(t, p)
	if err != nil || len(c) == 0 || !(total > 0) {
		return false, math.MaxInt32
	}
	alpha := 0.05
	if p.Options.Confidence != 0 {
		alpha = 1 - p.Options.Confidence
	}
	decided = true
	judgeAt := func(m member, replicates int) (nullband.Verdict, error) {
		o := p.Options
		o.Confidence = 1 - alpha*m.row.Weight/total
		if o.EqConfidence == 0 {
			o.EqConfidence = 1 - alpha
		}
		if replicates > 0 {
			o.Replicates = replicates
		}
		v, err := nullband.Judge(m.s, o)
		if err == nil && !math.IsInf(o.Extreme, 1) && starved(v) {
			o.Extreme = math.Inf(1) // as judgeFamily relieves the family
			v, err = nullband.Judge(m.s, o)
		}
		return v, err
	}
	rounds := len(t.rounds)
	for _, m := range c {
		v, err := judgeAt(m, 0)
		if err != nil || v.Outcome == nullband.Undecided {
			decided = false
		}
		switch {
		case err != nil || v.RoundsToDecide < 0:
			need = math.MaxInt32
		case v.RoundsToDecide-rounds > need:
			need = v.RoundsToDecide - rounds
		}
	}
	if decided && p.Options.Replicates == 0 {
		for _, m := range c {
			v, err := judgeAt(m, nullband.FamilyReplicates(1-alpha*m.row.Weight/total))
			if err != nil || v.Outcome == nullband.Undecided {
				return false, need
			}
		}
	}
	if decided && !nullsChecked(nulls, c, p, alpha, total) {
		return false, need
	}
	return decided, need
}

// nullsChecked reports whether every null row of a Look has a finite
// interval or a decided verdict (report.Row.Checked: the A/A check ran),
// each judged at the first level of weighted Holm in a null family whose
// total weight is total scaled by the table's null to candidate weight
// (the same total where, as in pr, each table has one candidate arm).
func nullsChecked(nulls, cands []member, p Policy, alpha, total float64) bool {
	wc, wn := 0.0, 0.0
	for _, m := range cands {
		wc += m.row.Weight
	}
	for _, m := range nulls {
		wn += m.row.Weight
	}
	if !(wc > 0) {
		return true
	}
	for _, m := range nulls {
		o := p.Options
		o.Confidence = 1 - alpha*m.row.Weight/(total*wn/wc)
		if o.EqConfidence == 0 {
			o.EqConfidence = 1 - alpha
		}
		v, err := nullband.Judge(m.s, o)
		row := report.Row{Verdict: v, Kind: report.NullCheck}
		if err != nil {
			row.Err = err.Error()
		}
		if !row.Checked() {
			return false
		}
	}
	return true
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
		s.Contended = append(s.Contended, unshared)
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
// extreme-spread quarantine when it leaves a row with no interval. An
// error of nullband's is every row's Err.
func judgeFamily(fam []member, opt nullband.Options) {
	if len(fam) == 0 {
		return
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
		return
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

// Decided reports whether a sequential run may stop at rows: every
// candidate row decided (report.Row.Decided) and the A/A check run (every
// null row's interval finite, report.CheckOf): a run stopped before the
// null rows have an interval could never find a null arm that moved. For
// a table with no candidate (A/A) every null row must be decided. No rows
// is not decided.
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
	return n > 0 && report.CheckOf(rows) != report.CheckNotRun
}

// Samples returns arm's samples against base on unit of bench,
// calibrated by null ("" for none), as Judge judges them: one value per
// round of the table (NaN where a block lacks it), the rounds offered to
// the quarantine marked Contended.
func (t *Table) Samples(bench, unit, base, arm, null string) nullband.Samples {
	return t.member(bench, unit, base, arm, null, report.Candidate).s
}
