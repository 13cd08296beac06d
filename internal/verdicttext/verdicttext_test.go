package verdicttext

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchmath"

	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/nullband"
)

func synth(seed uint64, n int, noise, effect float64) nullband.Samples {
	r := rand.New(rand.NewPCG(seed, 42))
	s := nullband.Samples{Base: make([]float64, n), Candidate: make([]float64, n), Null: make([]float64, n)}
	for i := range n {
		w := 35e-6 * (1 + 0.1*(2*r.Float64()-1))
		s.Base[i] = w * math.Exp(noise*r.NormFloat64())
		s.Null[i] = w * math.Exp(noise*r.NormFloat64())
		s.Candidate[i] = w * effect * math.Exp(noise*r.NormFloat64())
	}
	return s
}

func judge(t *testing.T, s nullband.Samples) nullband.Verdict {
	v, err := nullband.Judge(s, nullband.Options{})
	require.NoError(t, err)
	return v
}

var names = Names{Base: "old", Null: "null", Rounds: "-rounds", Delta: "-delta", MaxRounds: "-max-rounds", MaxQuarantined: "-max-quarantined"}

func write(t *testing.T, rows []Row) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Write(&b, rows, names))
	return b.String()
}

func TestTableRows(t *testing.T) {
	slow := judge(t, synth(1, 10, 0.01, 1.05))
	require.Equal(t, nullband.Slower, slow.Outcome)
	same := judge(t, synth(3, 20, 0.004, 1.0))
	require.Equal(t, nullband.Equivalent, same.Outcome)
	out := write(t, []Row{
		{Bench: "Step-2", Arm: "new", Metric: "p50-sec/op", Verdict: slow},
		{Bench: "Step-2", Arm: "same", Metric: "sec/op", Verdict: same},
		{Bench: "Step-2", Arm: "bad", Metric: "sec/op", Err: errors.New("nullband: Samples.Base is empty")},
	})
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^benchmark +arm +metric +verdict +B/A +95% CI +δ / MDE +rounds +benchstat$`, lines[0])
	assert.Regexp(t, fmt.Sprintf(`^Step-2 +new +p50-sec/op +slower +%.3f +%.3f–%.3f +- +10 +`, slow.Ratio, slow.Lo, slow.Hi), lines[1])
	// An equivalent row shows the interval it was judged on: the 90% one.
	assert.Regexp(t, fmt.Sprintf(`^Step-2 +same +sec/op +equivalent +%.3f +%.3f–%.3f \(90%%\) +±2\.0%% +20 +~ p=0\.\d{3}$`, same.Ratio, same.EqLo, same.EqHi), lines[2])
	assert.Contains(t, out, "equivalent (same sec/op): the 90% interval marked (90%) lies inside ±2.0%")
	assert.Regexp(t, `^Step-2 +bad +sec/op +error +- +- +- +- +-$`, lines[3])
	assert.Contains(t, out, "\nbad sec/op: no verdict: nullband: Samples.Base is empty\n")
	assert.NotContains(t, out, "quarantined")
}

func TestReasonsOnceEach(t *testing.T) {
	a := judge(t, synth(2, 10, 0.05, 1.01))
	b := judge(t, synth(7, 10, 0.05, 1.0))
	require.Equal(t, []nullband.Reason{nullband.Straddles}, a.Reasons)
	require.Equal(t, []nullband.Reason{nullband.Straddles}, b.Reasons)
	few := judge(t, synth(5, 2, 0.01, 1.0))
	out := write(t, []Row{
		{Bench: "X", Arm: "a", Metric: "sec/op", Verdict: a},
		{Bench: "X", Arm: "b", Metric: "sec/op", Verdict: b},
		{Bench: "X", Arm: "few", Metric: "sec/op", Verdict: few},
	})
	assert.Equal(t, 1, strings.Count(out, "undecided: the 95% interval holds 1"), out)
	// The words of the key messages, with this run's numbers.
	assert.Contains(t, out, "too few rounds (few sec/op: 2 used): a 95% interval needs at least 4 used rounds; raise -rounds.\n")
	assert.Contains(t, strings.Join(strings.Fields(out), " "), fmt.Sprintf(
		"undecided: the 95%% interval holds 1 and reaches past ±2.0%%, so it shows neither a change nor equivalence "+
			"(a sec/op: CI %.3f–%.3f, about %d rounds would decide; b sec/op: CI %.3f–%.3f, about %d rounds would decide); "+
			"more rounds narrow it (-rounds), a wider margin (-delta) eases equivalence.",
		a.Lo, a.Hi, a.RoundsToDecide, b.Lo, b.Hi, b.RoundsToDecide))
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), Width, line)
	}
}

func TestNullShiftedAndQuarantine(t *testing.T) {
	s := synth(8, 12, 0.01, 1.05)
	for i := range s.Null {
		s.Null[i] *= 1.04 // A' runs 4% slower than A in every round
	}
	s.Candidate[5] *= 3 // one wild block
	v := judge(t, s)
	require.Equal(t, nullband.Slower, v.Outcome, "B is slower than both A and A'")
	require.Equal(t, []nullband.Reason{nullband.NullShifted}, v.Reasons)
	// A odd (3% fast) in every round: B/A and A'/A both read slower.
	odd := synth(9, 12, 0.005, 1.0)
	for i := range odd.Base {
		odd.Base[i] *= 0.97
	}
	w := judge(t, odd)
	require.Equal(t, nullband.Undecided, w.Outcome)
	require.Equal(t, []nullband.Reason{nullband.NullShifted}, w.Reasons)

	out := write(t, []Row{{Bench: "X", Arm: "new", Metric: "sec/op", Verdict: v}, {Bench: "X", Arm: "odd", Metric: "sec/op", Verdict: w}})
	flat := strings.Join(strings.Fields(out), " ")
	assert.Contains(t, flat, fmt.Sprintf("withheld: null, a second instance of old, differs from old itself "+
		"(odd sec/op: null/old %.3f, 99%% CI %.3f–%.3f, p=%.3f): the arms did not share the host's conditions, "+
		"and B against null does not confirm B/A; run again.", w.NullRatio, w.NullLo, w.NullHi, w.NullP))
	assert.Contains(t, flat, fmt.Sprintf("caveat: null, a second instance of old, differs from old itself "+
		"(new sec/op: null/old %.3f, 99%% CI %.3f–%.3f, p=%.3f; B/null %.3f–%.3f): the arms did not share the host's conditions, "+
		"but B differs from both instances the same way.", v.NullRatio, v.NullLo, v.NullHi, v.NullP, v.VsNullLo, v.VsNullHi))
	// With the null arm no round is set aside for its values (nullband,
	// issue 33): the wild block stays, and no quarantine is listed. The
	// extreme round's words without a null arm:
	assert.NotContains(t, out, "quarantined rounds")
	p := synth(8, 12, 0.01, 1.05)
	p.Null = nil
	p.Candidate[5] *= 3
	pv := judge(t, p)
	require.Equal(t, 1, pv.Quarantined)
	r := pv.Rounds[5]
	pout := write(t, []Row{{Bench: "X", Arm: "new", Metric: "sec/op", Verdict: pv}})
	assert.Contains(t, pout, fmt.Sprintf("quarantined rounds of new sec/op (left out of the test):\n"+
		"  round 6: old %s, null -, new %s: extreme (the arms spread %.1f%%, limit %.1f%%)\n",
		value(r.A, "sec/op"), value(r.B, "sec/op"), 100*math.Expm1(r.Spread), 100*math.Expm1(pv.SpreadLimit)))
	assert.Equal(t, "35.00µs", value(35000, "ns/op"))
	assert.Equal(t, "35.00µs", value(35e-6, "sec/op"))
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), Width, line)
	}
}

func TestNoBenchColumn(t *testing.T) {
	out := write(t, []Row{{Arm: "new", Metric: "ns/op", Verdict: judge(t, synth(1, 10, 0.01, 1.05))}})
	assert.Regexp(t, `^arm +metric +verdict +B/A +95% CI +δ / MDE +rounds +benchstat\nnew +ns/op +slower `, out)
	assert.Empty(t, write(t, nil))
}

func TestOtherReasonsWords(t *testing.T) {
	base := nullband.Verdict{Effect: nullband.Effect{Confidence: 0.95, Ratio: 1.004, Lo: 1.002, Hi: 1.006},
		Equivalence: nullband.Equivalence{Delta: 0.02}, NullCheck: nullband.NullCheck{NullConfidence: 0.99},
		Benchstat: nullband.Benchstat{Comparison: benchmath.Comparison{P: 0.5, Alpha: 0.05}, Base: benchmath.Summary{Center: 1}, Candidate: benchmath.Summary{Center: 1}}}
	small := base
	small.Outcome, small.Reasons, small.Used = nullband.Slower, []nullband.Reason{nullband.WithinDelta, nullband.NoNullArm}, 20
	noisy := base
	noisy.Ratio, noisy.Lo, noisy.Hi, noisy.MDE, noisy.RoundsToDecide = 1.01, 0, math.Inf(1), math.Inf(1), -1
	noisy.Reasons, noisy.Used, noisy.Quarantined = []nullband.Reason{nullband.TooManyQuarantined}, 4, 6
	noisy.Rounds = make([]nullband.Round, 10)
	seq := base
	seq.Ratio, seq.Lo, seq.Hi, seq.MDE = 1.01, 0.99, 1.03, 0.031
	seq.Reasons, seq.Used, seq.Rounds = []nullband.Reason{nullband.Straddles, nullband.Continuing}, 12, make([]nullband.Round, 12)
	out := write(t, []Row{
		{Arm: "small", Metric: "ns/op", Verdict: small},
		{Arm: "noisy", Metric: "ns/op", Verdict: noisy},
		{Arm: "seq", Metric: "ns/op", Verdict: seq},
	})
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^small +ns/op +slower +1\.004 +1\.002–1\.006 +- +20 +~ p=0\.500$`, lines[1])
	assert.Regexp(t, `^noisy +ns/op +undecided +1\.010 +∞ +MDE ∞ +4\+6q +~ p=0\.500$`, lines[2])
	assert.Regexp(t, `^seq +ns/op +undecided +1\.010 +0\.990–1\.030 +MDE 3\.1% +12 +~ p=0\.500$`, lines[3])
	flat := strings.Join(strings.Fields(out), " ")
	assert.Contains(t, flat, "undecided: too many rounds quarantined (noisy ns/op: 6 of 10), more than the cap (-max-quarantined): the host was too unsettled; see the quarantined rounds below.")
	assert.Contains(t, flat, "real but small: small ns/op +0.4%; the whole interval lies within ±2.0%, the equivalence margin.")
	assert.Contains(t, flat, "no null arm (small ns/op): whether the arms shared the host's conditions was not checked.")
	assert.Contains(t, flat, "stopped before deciding (seq ns/op: 12 rounds), below the cap -max-rounds.")
	assert.NotContains(t, flat, "about -1 rounds")
}

// A family judged by Holm: a row called slower at the first step (98.3%)
// and two rows re-judged at the second (97.5%); the column carries each
// row's level, the equivalent row its 90% interval, and one line states
// the family-wise rate.
func TestFamilyLevels(t *testing.T) {
	f, err := nullband.JudgeFamily([]nullband.Samples{synth(1, 20, 0.005, 1.05), synth(2, 20, 0.002, 1), synth(4, 8, 0.03, 1)}, nullband.Options{})
	require.NoError(t, err)
	require.Equal(t, []nullband.Outcome{nullband.Slower, nullband.Equivalent, nullband.Undecided},
		[]nullband.Outcome{f.Verdicts[0].Outcome, f.Verdicts[1].Outcome, f.Verdicts[2].Outcome})
	n := names
	n.Family = "each arm's metrics"
	var b bytes.Buffer
	require.NoError(t, Write(&b, []Row{
		{Arm: "new", Metric: "sec/op", Verdict: f.Verdicts[0]},
		{Arm: "new", Metric: "p50-sec/op", Verdict: f.Verdicts[1]},
		{Arm: "new", Metric: "cpu/wall", Verdict: f.Verdicts[2]},
	}, n))
	out := b.String()
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^arm +metric +verdict +B/A +CI +δ / MDE`, lines[0], "no single level heads the column")
	assert.Regexp(t, `^new +sec/op +slower +1\.0\d\d +1\.\d+–1\.\d+ \(98\.3%\) `, lines[1])
	assert.Regexp(t, `^new +p50-sec/op +equivalent +\S+ +\S+ \(90%\) `, lines[2])
	assert.Regexp(t, `^new +cpu/wall +undecided +\S+ +\S+ \(97\.5%\) `, lines[3])
	flat := strings.Join(strings.Fields(out), " ")
	assert.Contains(t, flat, "false alarms: each arm's metrics form one family of 3 rows under Holm's procedure: the chance that any of them is called faster or slower while unchanged is at most 5%; each CI is at the level Holm gave it.")
	assert.Contains(t, flat, "the 90% interval marked (90%) lies inside ±2.0%: two one-sided tests, each at 5%")

	// Rows judged alone: one level in the header, no family line.
	alone := write(t, []Row{{Arm: "new", Metric: "sec/op", Verdict: judge(t, synth(1, 20, 0.005, 1.05))}})
	assert.Regexp(t, `^arm +metric +verdict +B/A +95% CI `, alone)
	assert.NotContains(t, alone, "false alarms")
}

// A one-sided interval keeps its level when the rows' levels differ: the
// regression printed "0.957–∞" with no "(97.5%)" beside "(98.3%)" rows.
// An interval not yet made ("∞") has no level to show.
func TestOneSidedIntervalKeepsLevel(t *testing.T) {
	row := func(metric string, lo, hi, conf float64) Row {
		return Row{Arm: "new", Metric: metric, Verdict: nullband.Verdict{Outcome: nullband.Undecided,
			Effect: nullband.Effect{Ratio: 1.01, Lo: lo, Hi: hi, Confidence: conf}, RoundUse: nullband.RoundUse{Used: 5}}}
	}
	out := write(t, []Row{
		row("sec/op", 0.957, math.Inf(1), 0.975),
		row("p50-sec/op", 0, 1.04, 0.975),
		row("cpu/wall", 0, math.Inf(1), 0.975),
		row("p90-sec/op", 0.99, 1.03, 0.98333),
	})
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^arm +metric +verdict +B/A +CI +δ / MDE`, lines[0])
	assert.Regexp(t, `^new +sec/op +undecided +1\.010 +0\.957–∞ \(97\.5%\) `, lines[1])
	assert.Regexp(t, `^new +p50-sec/op +undecided +1\.010 +0–1\.040 \(97\.5%\) `, lines[2])
	assert.Regexp(t, `^new +cpu/wall +undecided +1\.010 +∞ +MDE`, lines[3])
	assert.Regexp(t, `^new +p90-sec/op +undecided +1\.010 +0\.990–1\.030 \(98\.3%\) `, lines[4])
}

// Rows that all failed have no level: the column is headed "CI", not
// "0% CI".
func TestAllErrorsHeader(t *testing.T) {
	out := write(t, []Row{{Arm: "new", Metric: "ns/op", Err: errors.New("boom")}})
	assert.Regexp(t, `^arm +metric +verdict +B/A +CI +δ / MDE`, out)
	assert.Contains(t, out, "new ns/op: no verdict: boom")
}

// The null arm's rows are marked as the A/A check, with their own line
// under the table, conditional on their outcome.
func TestWriteRowsAACheck(t *testing.T) {
	aa := judge(t, synth(3, 12, 0.01, 1.0))
	rows := []report.Row{
		{Bench: "Step", Arm: "new", Unit: "sec/op", Verdict: judge(t, synth(1, 12, 0.01, 1.1))},
		{Bench: "Step", Arm: "null", Unit: "sec/op", Kind: report.NullCheck, Verdict: aa},
	}
	var b bytes.Buffer
	require.NoError(t, WriteRows(&b, rows, names))
	out := b.String()
	assert.Regexp(t, `(?m)^Step +null \(A/A check\) +sec/op +(equivalent|undecided) `, out)
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "A/A check: null, a second instance of old, is not found to differ from old on any metric (1 row: equivalent or undecided).")

	rows[1].Verdict = judge(t, synth(4, 12, 0.01, 1.2)) // the instances differ
	b.Reset()
	require.NoError(t, WriteRows(&b, rows, names))
	flat := strings.Join(strings.Fields(b.String()), " ")
	assert.Regexp(t, `A/A check failed: null, a second instance of old, differs from old \(null sec/op 1\.\d{3} 1\.\d{3}–1\.\d{3}, above old in every one of 12 rounds\)\. `, flat)
	assert.Contains(t, flat, "Two instances of one configuration differ when the host moved between them, or when they settled in different regimes (a fresh session's pages, placement or threads); the rounds of the two alone do not tell which. A third instance of the configuration tells them apart (in a regime split it sides with one of the two, after a move of the host with neither), and more rounds (-rounds) show whether the shift stays. Read the verdicts above with that in mind.")
	assert.NotContains(t, flat, "the host, not the code", "the data cannot tell the host from a regime")
	assert.NotContains(t, flat, "Not found to differ from old", "new differs from old: it is no third instance")
}

// The A/A check fails beside a third arm that does not differ from the
// base (ONNX Runtime at 2 ms in turns: null 1.057 [1.025–1.190], a third
// identical instance 1.004): the line names it as the instance that
// tells the causes apart, and says on which side it falls; the rounds
// on the shift's side are counted.
func TestCheckLineNamesAThirdInstance(t *testing.T) {
	rounds := func(ratios ...float64) []nullband.Round {
		q := make([]nullband.Round, len(ratios))
		for i, r := range ratios {
			q[i] = nullband.Round{Label: i + 1, A: 1, B: r, Ratio: r}
		}
		return q
	}
	null := nullband.Verdict{Outcome: nullband.Slower, Effect: nullband.Effect{Ratio: 1.057, Lo: 1.025, Hi: 1.190, Confidence: 0.95},
		RoundUse: nullband.RoundUse{Used: 8, Rounds: rounds(1.06, 1.2, 1.05, 0.99, 1.04, 1.3, 1.07, 1.05)}}
	same := nullband.Verdict{Outcome: nullband.Undecided, Effect: nullband.Effect{Ratio: 1.004, Lo: 0.98, Hi: 1.03, Confidence: 0.95}, RoundUse: nullband.RoundUse{Used: 8}}
	var b bytes.Buffer
	require.NoError(t, Write(&b, []Row{
		{Bench: "VAD", Arm: "same", Metric: "sec/op", Verdict: same},
		{Bench: "VAD", Arm: "null", Metric: "sec/op", Verdict: null, Check: true},
	}, names))
	flat := strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, flat, "A/A check failed: null, a second instance of old, differs from old (null sec/op 1.057 1.025–1.190, above old in 7 of 8 rounds).")
	assert.Contains(t, flat, "Not found to differ from old: same sec/op 1.004 0.980–1.030; an arm of the same configuration as old is that third instance, and it sides with old. Read the verdicts above with that in mind.")
}

func TestWriteRowsStallsAndRelief(t *testing.T) {
	v := judge(t, synth(1, 12, 0.01, 1.1))
	var b bytes.Buffer
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "new", Unit: "cpu-sec/op", Verdict: v, Stalled: []int{3, 7}, Relieved: true},
		{Arm: "new", Unit: "sec/op", Verdict: v, Stalled: []int{3, 7}}}, names))
	out := strings.Join(strings.Fields(b.String()), " ")
	assert.Regexp(t, `new cpu-sec/op more CPU 1\.\d{3}`, out, "CPU time is more or less CPU, not slower or faster")
	assert.Contains(t, out, "stalled rounds of new cpu-sec/op, new sec/op (a step of 10× the median or more in some arm's block; with the null arm it stays in the test): 3, 7")
	noNull := synth(1, 12, 0.01, 1.1)
	noNull.Null = nil
	b.Reset()
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "new", Unit: "sec/op", Verdict: judge(t, noNull), Stalled: []int{3}}}, names))
	assert.Contains(t, strings.Join(strings.Fields(b.String()), " "), "stalled rounds of new sec/op (a step of 10× the median or more in some arm's block; when not every arm's, the round is quarantined if its spread shows it): 3",
		"without the null arm the screen's rule still sets such a round aside")
	b.Reset()
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "new", Unit: "sec/op", Verdict: v, Stalled: []int{3}},
		{Arm: "null", Unit: "sec/op", Kind: report.NullCheck, Verdict: judge(t, noNull), Stalled: []int{3}}}, names))
	assert.Contains(t, strings.Join(strings.Fields(b.String()), " "), "it stays in the rows judged with the null arm; in the others, when not every arm's, it is quarantined if its spread shows it): 3",
		"the A/A rows are judged without a null arm of their own")
	assert.Equal(t, 1, strings.Count(out, "stalled rounds of"), "listed once for the rows that share them")
	assert.Contains(t, out, "extreme-spread quarantine lifted (new cpu-sec/op)")
	assert.Equal(t, "more CPU", Outcome(nullband.Slower, "cpu-sec/op"))
	assert.Equal(t, "slower", Outcome(nullband.Slower, "p50-sec/op"))
	assert.Equal(t, "equivalent", Outcome(nullband.Equivalent, "cpu-sec/op"))
}

// With Names.Brief the legend is one short line each, and the stalled and
// quarantined rounds one line each with counts, naming the flag that
// lists them; without it every list is written in full.
func TestBrief(t *testing.T) {
	s := synth(1, 16, 0.01, 1.0)
	s.Null = nil        // with a null arm no round is set aside (nullband)
	s.Candidate[5] *= 3 // one wild block: quarantined as extreme
	v := judge(t, s)
	require.Equal(t, 2, v.Quarantined)
	require.Equal(t, []nullband.Cause{nullband.Extreme, nullband.Extreme}, causes(v))
	same := judge(t, synth(3, 20, 0.004, 1.0))
	require.Equal(t, nullband.Equivalent, same.Outcome)
	require.Zero(t, same.Quarantined)
	rows := []report.Row{
		{Arm: "new", Unit: "sec/op", Verdict: v, Stalled: []int{3, 6}},
		{Arm: "new", Unit: "p50-sec/op", Verdict: v, Stalled: []int{3, 6}},
		{Arm: "null", Unit: "sec/op", Kind: report.NullCheck, Verdict: same, Stalled: []int{6}},
	}
	n := names
	n.Brief = "-v"
	var b bytes.Buffer
	require.NoError(t, WriteRows(&b, rows, n))
	out := b.String()
	flat := strings.Join(strings.Fields(out), " ")
	assert.Contains(t, flat, "equivalent (new sec/op, new p50-sec/op, null sec/op): the 90% interval lies inside ±2.0% (-delta).")
	assert.Contains(t, flat, "stalled rounds (a step of 10× the median or more in some arm's block): 2 of 16 for new, 1 of 20 for null; -v lists them.")
	assert.Contains(t, flat, "quarantined rounds (the +Nq of the rounds column, left out of the test): 4 in 2 rows: 4 extreme (the arms spread past the row's limit); -v lists them with their values.")
	assert.NotContains(t, out, "stalled rounds of")
	assert.NotContains(t, out, "quarantined rounds of")
	assert.NotContains(t, flat, "two one-sided tests")
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), Width, line)
	}

	// An arm whose rows stalled in different rounds is counted row by row.
	rows[1].Stalled = []int{3}
	b.Reset()
	require.NoError(t, WriteRows(&b, rows, n))
	assert.Contains(t, strings.Join(strings.Fields(b.String()), " "), "): 2 of 16 for new sec/op, 1 of 16 for new p50-sec/op, 1 of 20 for null; -v lists them.")

	// Nothing stalled or quarantined: no count line.
	b.Reset()
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "null", Unit: "sec/op", Kind: report.NullCheck, Verdict: same}}, n))
	assert.NotContains(t, b.String(), "stalled rounds")
	assert.NotContains(t, b.String(), "quarantined rounds")

	// Without Brief: the lists and the legend in full.
	b.Reset()
	require.NoError(t, WriteRows(&b, rows, names))
	full := strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, full, "stalled rounds of new sec/op (a step of 10× the median")
	assert.Contains(t, full, "quarantined rounds of new sec/op (left out of the test): round 5: ")
	assert.Contains(t, full, "two one-sided tests")
	assert.NotContains(t, full, "-v lists")
}

// The family line is one short line with Names.Brief.
func TestBriefFamily(t *testing.T) {
	f, err := nullband.JudgeFamily([]nullband.Samples{synth(1, 20, 0.005, 1.05), synth(2, 20, 0.002, 1)}, nullband.Options{})
	require.NoError(t, err)
	n := names
	n.Brief, n.Family = "-v", "each arm's metrics"
	var b bytes.Buffer
	require.NoError(t, Write(&b, []Row{{Arm: "new", Metric: "sec/op", Verdict: f.Verdicts[0]}, {Arm: "new", Metric: "p50-sec/op", Verdict: f.Verdicts[1]}}, n))
	assert.Contains(t, b.String(), "\nfalse alarms: at most 5% over each family of 2 rows (Holm's procedure).\n")
	assert.NotContains(t, b.String(), "each arm's metrics form one family")
}

// causes are the causes of v's quarantined rounds.
func causes(v nullband.Verdict) []nullband.Cause {
	var c []nullband.Cause
	for _, r := range v.Rounds {
		if r.Quarantined {
			c = append(c, r.Cause)
		}
	}
	return c
}

// The equivalence guards have words that carry their numbers: the floor
// of used rounds, and the call that judging every round would change.
func TestWriteRowsEquivalenceGuards(t *testing.T) {
	few := judge(t, synth(3, 10, 0.002, 1.0))
	require.True(t, few.Has(nullband.BelowEqFloor), "%v", few.Reasons)
	var b bytes.Buffer
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "new", Unit: "sec/op", Verdict: few}}, names))
	flat := strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, flat, fmt.Sprintf("not yet equivalent (new sec/op: 10 used of %d): the interval lies inside ±2.0%%, but equivalence needs %d used rounds", few.EqFloor, few.EqFloor))
	assert.Contains(t, flat, "; raise -rounds.")

	s := synth(7, 16, 0.01, 1.0)
	s.Null = nil
	s.Candidate[5] *= 3
	changed := judge(t, s)
	require.True(t, changed.Has(nullband.QuarantineChangesCall), "%v", changed.Reasons)
	b.Reset()
	require.NoError(t, WriteRows(&b, []report.Row{{Arm: "new", Unit: "sec/op", Verdict: changed}}, names))
	flat = strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, flat, fmt.Sprintf("withheld: judged with the rounds the screen set aside, the call changes (new sec/op: %s on all 16 complete rounds, %d of them set aside)",
		Outcome(changed.Unscreened, "sec/op"), changed.Quarantined))
}
