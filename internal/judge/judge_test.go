package judge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

// vals is one block of values in ns/op-style units.
func vals(mean, p50 float64) []benchfmt.Value {
	return []benchfmt.Value{{Value: mean, Unit: "ns/op"}, {Value: p50, Unit: "p50-ns/op"}}
}

// synthetic is a table of rounds rounds of base, cand (×ratio) and null.
func synthetic(rounds int, ratio float64, seed uint64) *Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &Table{}
	for r := 1; r <= rounds; r++ {
		w := 1 + 0.2*rng.Float64() // weather shared by the round
		for _, a := range []struct {
			name string
			f    float64
		}{{"base", 1}, {"cand", ratio}, {"null", 1}} {
			v := 1000 * w * a.f * (1 + 0.01*rng.NormFloat64())
			if err := t.Add("X", a.name, r, Block{Values: vals(v, v)}); err != nil {
				panic(err)
			}
		}
	}
	return t
}

// A round is offered to the quarantine for contention only when its arms
// met different weather; a host contended throughout keeps its rounds.
func TestRoundMarksUnsharedWeather(t *testing.T) {
	mk := func(c ...bool) *Table {
		tb := &Table{}
		for i, x := range c {
			require.NoError(t, tb.Add("X", []string{"a", "b", "c"}[i], 1, Block{Contended: x}))
		}
		return tb
	}
	arms := []string{"a", "b", "c"}
	u, _ := mk(true, true, true).roundMarks("X", 1, arms)
	assert.False(t, u, "all contended: shared weather")
	u, _ = mk(false, false, false).roundMarks("X", 1, arms)
	assert.False(t, u)
	u, _ = mk(true, false, true).roundMarks("X", 1, arms)
	assert.True(t, u)
	u, _ = mk(true, true).roundMarks("X", 1, arms)
	assert.False(t, u, "an arm that did not run does not count")
}

func TestJudgeRowsFamilyAndNullCheck(t *testing.T) {
	rows, err := Judge(synthetic(12, 1.10, 1), Policy{})
	require.NoError(t, err)
	require.Len(t, rows, 4)
	assert.Equal(t, []string{"cand sec/op", "cand p50-sec/op", "null sec/op", "null p50-sec/op"},
		[]string{rows[0].Arm + " " + rows[0].Unit, rows[1].Arm + " " + rows[1].Unit, rows[2].Arm + " " + rows[2].Unit, rows[3].Arm + " " + rows[3].Unit})
	assert.Equal(t, report.Candidate, rows[0].Kind)
	assert.Equal(t, report.NullCheck, rows[2].Kind)
	assert.Equal(t, nullband.Slower, rows[0].Verdict.Outcome)
	assert.Equal(t, nullband.Slower, rows[1].Verdict.Outcome)
	assert.Equal(t, 2.0, rows[1].Weight, "the median weighs twice")
	assert.Equal(t, 2, rows[0].Verdict.FamilySize, "the candidate rows are one family")
	assert.Equal(t, 2, rows[2].Verdict.FamilySize, "the null rows are another")
	assert.NotEqual(t, nullband.Slower, rows[2].Verdict.Outcome, "A' is A")
	assert.NotEqual(t, nullband.Faster, rows[2].Verdict.Outcome)
	assert.True(t, Decided(rows))
	// benchstat's view spans every round.
	assert.Equal(t, 12, rows[0].Benchstat.BaseN)
	assert.InDelta(t, 1.10, 1+rows[0].Benchstat.Delta(), 0.05)
	assert.True(t, rows[0].Benchstat.Significant())
}

func TestJudgeNeedsBaseAndNull(t *testing.T) {
	_, err := Judge(synthetic(6, 1, 1), Policy{Base: "a"})
	assert.ErrorContains(t, err, `no results for arm "a"`)
	_, err = Judge(synthetic(6, 1, 1), Policy{Units: []string{"B/op"}})
	assert.True(t, errors.Is(err, ErrNothingToJudge), "%v", err)
}

// Rounds whose arms spread widely because a bimodal candidate's block
// lands in its slow mode were quarantined as extreme until too few rounds
// were left for an interval, and Judge lifted that quarantine (Relieved).
// With the null arm nullband sets no round aside for its values (issue
// 33: the spread showed B's difference), so nothing starves.
func TestJudgeKeepsACandidatesSlowModeRounds(t *testing.T) {
	tb := &Table{}
	rng := rand.New(rand.NewPCG(3, 3))
	for r := 1; r <= 5; r++ {
		for _, a := range []string{"base", "cand", "null"} {
			v := 1000 * (1 + 0.001*rng.NormFloat64())
			if a == "cand" {
				v *= 1.05
				if r == 2 || r == 5 {
					v *= 1.4 // the candidate's block lands in its slow mode
				}
			}
			require.NoError(t, tb.Add("X", a, r, Block{Values: []benchfmt.Value{{Value: v, Unit: "ns/op"}}}))
		}
	}
	cands, _, err := members(tb, Policy{})
	require.NoError(t, err)
	plain, err := nullband.Judge(cands[0].s, nullband.Options{})
	require.NoError(t, err)
	require.False(t, starved(plain), "%d quarantined, interval %v–%v", plain.Quarantined, plain.Lo, plain.Hi)

	rows, err := Judge(tb, Policy{})
	require.NoError(t, err)
	v := rows[0].Verdict
	assert.False(t, rows[0].Relieved)
	assert.True(t, v.Lo > 0 && !math.IsInf(v.Hi, 1), "an interval: %v–%v", v.Lo, v.Hi)
	assert.Equal(t, 0, v.Quarantined)
	assert.Equal(t, nullband.Slower, v.Outcome)
}

func TestStallMarksTheRound(t *testing.T) {
	tb := synthetic(8, 1, 2)
	r := &benchfmt.Result{Name: benchfmt.Name("X"), Iters: 1, Values: []benchfmt.Value{{Value: 1000, Unit: "ns/op"}, {Value: 3, Unit: UnitOutlier}}}
	r.SetConfig(KeyArm, "cand")
	r.SetConfig(KeyRound, "9")
	require.NoError(t, tb.AddResult(r))
	for _, a := range []string{"base", "null"} {
		require.NoError(t, tb.Add("X", a, 9, Block{Values: vals(1000, 1000)}))
	}
	rows, err := Judge(tb, Policy{Units: []string{"sec/op"}})
	require.NoError(t, err)
	assert.Equal(t, []int{9}, rows[0].Stalled)
	assert.Empty(t, rows[1].Stalled, "the null check did not meet the stall")
}

func TestAddRefusesTwoBlocksOfOneArmInARound(t *testing.T) {
	tb := &Table{}
	require.NoError(t, tb.Add("X", "a", 1, Block{}))
	assert.ErrorContains(t, tb.Add("X", "a", 1, Block{}), "-test.count=1")
	// A unit twice in one block: the first value stays.
	require.NoError(t, tb.Add("X", "b", 1, Block{Values: []benchfmt.Value{{Value: 2, Unit: "cpu-sec/op"}, {Value: 3, Unit: "cpu-sec/op"}}}))
	assert.Equal(t, 2.0, tb.Value("X", "cpu-sec/op", "b", 1))
	// benchfmt leaves an exact 0 in ns/op; it joins sec/op.
	require.NoError(t, tb.Add("X", "c", 1, Block{Values: []benchfmt.Value{{Value: 0, Unit: "ns/op"}}}))
	assert.Equal(t, 0.0, tb.Value("X", "sec/op", "c", 1))
}

func TestParseDelta(t *testing.T) {
	for in, want := range map[string]float64{"2%": 0.02, "0.02": 0.02, " 0.5% ": 0.005, "10%": 0.1} {
		got, err := ParseDelta(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, 1e-15, in)
	}
	for _, in := range []string{"", "abc", "0", "100%", "1", "-2%", "NaN", "2%%"} {
		_, err := ParseDelta(in)
		assert.Error(t, err, in)
	}
	var d Delta
	require.NoError(t, d.Set("3%"))
	assert.Equal(t, "3%", d.String())
}

func TestLoopStopsWhenDecidedOutOfRoundsOrBudget(t *testing.T) {
	ran := 0
	n, stop, err := Loop{MaxRounds: 10}.Run(func(int) error { ran++; return nil }, func(r int) bool { return r == 4 })
	require.NoError(t, err)
	assert.Equal(t, []any{4, AllDecided, 4}, []any{n, stop, ran})

	n, stop, _ = Loop{MaxRounds: 3}.Run(func(int) error { return nil }, func(int) bool { return false })
	assert.Equal(t, []any{3, OutOfRounds}, []any{n, stop})

	n, stop, _ = Loop{MaxRounds: 10, NoEarlyStop: true}.Run(func(int) error { return nil }, func(int) bool { return true })
	assert.Equal(t, []any{10, OutOfRounds}, []any{n, stop})

	// Each round takes 10 s of a fake clock; 35 s pay for 3 rounds (the
	// fourth would end at 40 s).
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	n, stop, _ = Loop{MaxRounds: 10, Budget: 35 * time.Second, Now: clock}.Run(
		func(int) error { now = now.Add(10 * time.Second); return nil }, func(int) bool { return false })
	assert.Equal(t, []any{3, OutOfBudget}, []any{n, stop})

	boom := errors.New("boom")
	n, stop, err = Loop{MaxRounds: 10}.Run(func(r int) error {
		if r == 3 {
			return boom
		}
		return nil
	}, func(int) bool { return false })
	assert.Equal(t, []any{2, Failed}, []any{n, stop})
	assert.ErrorIs(t, err, boom)
}

func TestLookDecidesAtTheFirstHolmLevel(t *testing.T) {
	// 14 rounds: the null rows' sec/op interval at its Holm level (weight
	// 1 of 3, sequential to 30) is finite from 13 on, and the stop waits
	// for it (TestStopWaitsForTheAACheck).
	tb := synthetic(14, 1.10, 1)
	p := Policy{Options: nullband.Options{MaxRounds: 30}}
	w := FamilyWeight(tb, p)
	assert.Equal(t, 3.0, w, "sec/op 1 + p50-sec/op 2")
	decided, need := Look(tb, p, w)
	assert.True(t, decided, "a 10% change at 1% noise")
	assert.Equal(t, 0, need)
	decided, _ = Look(synthetic(12, 1.0, 2), Policy{Options: nullband.Options{MaxRounds: 30, Delta: 0.001}}, w)
	assert.False(t, decided, "no change, and a margin too narrow to show equivalence")
	decided, need = Look(&Table{}, p, w)
	assert.False(t, decided, "nothing to judge")
	assert.Equal(t, math.MaxInt32, need)
}

func TestJudgeAllOneFamilyAcrossTables(t *testing.T) {
	a, b := synthetic(12, 1.10, 1), synthetic(9, 1.0, 5)
	rows, err := JudgeAll([]*Table{a, b}, Policy{})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Len(t, rows[0], 4)
	require.Len(t, rows[1], 4)
	assert.Equal(t, 4, rows[0][0].Verdict.FamilySize, "both tables' candidate rows are one family")
	assert.Equal(t, 9, rows[1][0].Verdict.Given, "each table keeps its own rounds")
	one, err := Judge(a, Policy{})
	require.NoError(t, err)
	assert.Equal(t, 2, one[0].Verdict.FamilySize)
}

// TestStopWaitsForTheAACheck (issue 33, point 3): a candidate 50% slower
// is decided within a handful of rounds, before the null rows (a
// signed-rank family of their own) have an interval; the loop runs on
// until they do, so that the A/A check could flag the host. A run whose
// -count ends first says the A/A check did not run.
func TestStopWaitsForTheAACheck(t *testing.T) {
	const most = 40
	p := Policy{Options: nullband.Options{MaxRounds: most}}
	// synthetic(r, …) is the first r rounds of one series.
	prefix := func(r int) *Table { return synthetic(r, 1.5, 3) }
	look := func(r int) ([]report.Row, bool) {
		rows, err := Judge(prefix(r), p)
		require.NoError(t, err)
		return rows, Decided(rows)
	}
	// The round at which every candidate row is decided: the old stop.
	cands := 0
	for r := 1; r <= most && cands == 0; r++ {
		rows, _ := look(r)
		ok := true
		for _, row := range rows {
			ok = ok && (row.Kind != report.Candidate || row.Decided())
		}
		if ok {
			cands = r
			assert.Equal(t, report.CheckNotRun, report.CheckOf(rows), "round %d: the null rows have no interval yet", r)
		}
	}
	require.NotZero(t, cands)
	require.LessOrEqual(t, cands, 6, "a 50% change at 1% noise decides early")

	n, stop, err := Loop{MaxRounds: most}.Run(func(int) error { return nil }, func(r int) bool { _, d := look(r); return d })
	require.NoError(t, err)
	assert.Equal(t, AllDecided, stop)
	assert.Greater(t, n, cands, "the loop waits for the null rows")
	rows, _ := look(n)
	assert.Equal(t, report.CheckRan, report.CheckOf(rows))
	for _, row := range rows {
		if row.Kind == report.NullCheck {
			assert.True(t, row.Checked(), "%s: finite interval %v–%v or decided", row.Unit, row.Verdict.Lo, row.Verdict.Hi)
		}
	}
	t.Logf("candidates decided at round %d, the A/A check ran at %d", cands, n)
	prev, _ := look(n - 1)
	assert.Equal(t, report.CheckNotRun, report.CheckOf(prev), "it stops at the first round the check ran")

	// -count ends before: the A/A check did not run, and the rows say so.
	n, stop, _ = Loop{MaxRounds: cands}.Run(func(int) error { return nil }, func(r int) bool { _, d := look(r); return d })
	assert.Equal(t, []any{cands, OutOfRounds}, []any{n, stop})
	rows, _ = look(cands)
	assert.Equal(t, report.CheckNotRun, report.CheckOf(rows))
}

// Look (pr's per-table stop) waits for the null rows too.
func TestLookWaitsForTheAACheck(t *testing.T) {
	p := Policy{Options: nullband.Options{MaxRounds: 40}}
	w := FamilyWeight(synthetic(5, 1.5, 3), p)
	for r := 4; r <= 12; r++ {
		tb := synthetic(r, 1.5, 3)
		rows, err := Judge(tb, p)
		require.NoError(t, err)
		decided, _ := Look(tb, p, w)
		if report.CheckOf(rows) == report.CheckNotRun {
			assert.False(t, decided, "round %d: no stop before the null rows have an interval", r)
		}
		if r == 12 {
			assert.True(t, decided, "decided, and the A/A check ran, by round 12")
		}
	}
}
