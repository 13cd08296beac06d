package prreport

import (
	"bytes"
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

func row(name string, o nullband.Outcome, ratio, lo, hi, mde float64) Row {
	return Row{Pkg: "example.com/m/p", Bench: name, Arm: ArmHead, Base: ArmBase, Unit: "sec/op", Level: 0.99, Verdict: nullband.Verdict{
		Outcome: o, Effect: nullband.Effect{Ratio: ratio, Lo: lo, Hi: hi, Confidence: 0.99}, Power: nullband.Power{MDE: mde},
		RoundUse: nullband.RoundUse{Used: 12}, Equivalence: nullband.Equivalence{Delta: 0.02},
		Benchstat: nullband.Benchstat{Base: benchmath.Summary{Center: 1e-6}, Candidate: benchmath.Summary{Center: 1e-6 * ratio}}}}
}

func testReport() Report {
	rows := []Row{
		row("Eq-2", nullband.Equivalent, 1.001, 0.99, 1.01, 0.008),
		row("Slow-2", nullband.Slower, 1.10, 1.07, 1.13, 0.01),
		row("Fast-2", nullband.Faster, 0.95, 0.93, 0.97, 0.012),
		row("Meh-2", nullband.Slower, 1.02, 1.005, 1.035, 0.01),
		row("Unk-2", nullband.Undecided, 1.04, 0.97, 1.12, 0.06),
	}
	// The equivalent row was judged on its 90% interval; its Holm-level
	// interval (here none yet) is not what decided it.
	rows[0].Verdict.EqLo, rows[0].Verdict.EqHi, rows[0].Verdict.EqConfidence = 0.99, 1.01, 0.95
	rows[0].Verdict.Lo, rows[0].Verdict.Hi = 0, math.Inf(1)
	rows[4].Verdict.RoundsToDecide = 55
	rows[4].Verdict.Reasons = []nullband.Reason{nullband.Straddles}
	rows[4].Verdict.Quarantined = 2
	Sort(rows)
	return Report{
		Base: Side{Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567"}, Head: Side{Dirty: true},
		Rows: rows, Alpha: 0.05, Delta: 0.02, Budget: 20 * time.Minute, Elapsed: 3 * time.Minute, MaxRounds: 30,
		Names: verdicttext.Names{Rounds: "-budget"},
		Unjudged: []Unjudged{{Pkg: "example.com/m/p", Name: "BenchmarkNew", Why: UnjudgedOnlyHead},
			{Pkg: "example.com/m/p", Name: "BenchmarkBad", Why: UnjudgedFailed, Err: errors.New("exit status 2\nmore")}},
		Host: Host{CPU: "Test CPU", Online: 2, Cores: 2, Load1Start: 1.5, Load1End: 2.25, ForeignBusyPct: 12.5,
			StealPct: math.NaN(), PSISomePct: 3, Runs: 90, Contended: 4},
	}
}

func TestSortAndCount(t *testing.T) {
	r := testReport()
	var names []string
	for _, x := range r.Rows {
		names = append(names, x.Bench)
	}
	assert.Equal(t, []string{"Slow-2", "Meh-2", "Fast-2", "Unk-2", "Eq-2"}, names, "slower, faster, undecided, equivalent; larger first")
	assert.Equal(t, Counts{Slower: 2, Faster: 1, Equivalent: 1, Undecided: 1}, Count(r.Rows))
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	fail, err := ParseFailOn("slower>3%")
	require.NoError(t, err)
	require.NoError(t, WriteMarkdown(&b, testReport(), fail))
	md := b.String()
	t.Log(md)
	assert.True(t, strings.HasPrefix(md, "### Benchmarks: 2 slower, 1 faster, 1 equivalent within ±2%, 1 undecided\n"))
	assert.Contains(t, md, "main (0123456789ab) → work tree (uncommitted changes)")
	assert.Contains(t, md, "| 🔴 | p.Slow-2 | sec/op | 1.000µ | 1.100µ | +10% [+7%, +13%] | slower by 10% | ±1% | 12 |")
	assert.Contains(t, md, "| ❔ | p.Unk-2 | sec/op | 1.000µ | 1.040µ | +4% [−3%, +12%] | undecided | ±6% | 12 (+2 quarantined) |")
	assert.Contains(t, md, "| ⚪ | p.Eq-2 | sec/op | 1.000µ | 1.001µ | +0.1% [−1%, +1%] (90%) | equivalent within ±2% | ±0.8% | 12 |")
	assert.Contains(t, md, "False alarms: the chance that any of these 5 rows is called faster or slower while unchanged is at most 5%")
	assert.Contains(t, md, "What this run could detect: changes beyond ±1% (median over 5 rows), ±6% at worst (Unk-2 sec/op).")
	assert.Contains(t, md, "the slowest of them would need about 55 rounds.", "no limit named: the report's Stops are zero")
	assert.Contains(t, md, "<details><summary>Verdict details")
	assert.Contains(t, md, "undecided: the 99% interval holds 1 and reaches past ±2.0%", "the reasons come from internal/verdicttext")
	assert.Contains(t, md, "narrow it (-budget)")
	assert.Contains(t, md, "Host: Test CPU, 2 CPUs online (2 cores); load 1.5 at the start, 2.2 at the end; over the run: foreign busy 12.5%, steal unavailable, CPU pressure (PSI some) 3.0%; 4 of 90 runs screened contended; 3m0s of rounds (budget 20m0s).")
	assert.Contains(t, md, "Not judged: p.New exists at head only (new).")
	assert.Contains(t, md, "Not judged: p.Bad failed: exit status 2\n")
	assert.Contains(t, md, "**Check failed** (-fail-on slower>3%): Slow-2 sec/op +10.0%.", "Meh-2 is slower by 2%, within the limit")

	b.Reset()
	require.NoError(t, WriteText(&b, testReport(), nil))
	txt := b.String()
	assert.True(t, strings.HasPrefix(txt, "benchmarks: 2 slower, 1 faster, 1 equivalent within ±2%, 1 undecided\n"))
	assert.NotContains(t, txt, "**")
	assert.NotContains(t, txt, "Check")
	assert.Contains(t, txt, "\nverdict details:\nbenchmark  arm   metric")
	assert.Regexp(t, `p\.Slow-2 +sec/op +1\.000µ +1\.100µ +\+10% \[\+7%, \+13%\] +slower by 10%`, txt)

	b.Reset()
	require.NoError(t, WriteMarkdown(&b, Report{Alpha: 0.05, Delta: 0.02, Host: Host{Contended: -1, Load1Start: math.NaN(), Load1End: math.NaN()}}, fail))
	assert.Contains(t, b.String(), "### Benchmarks: no benchmarks judged")
	assert.Contains(t, b.String(), "Check passed (-fail-on slower>3%): no row decided slower by more than 3%.")
	assert.Contains(t, b.String(), "not screened for contention")
	assert.Contains(t, b.String(), "CPUs unknown")
}

func TestFailOn(t *testing.T) {
	f, err := ParseFailOn(" slower > 3% ")
	require.NoError(t, err)
	assert.InDelta(t, 0.03, f.Limit, 1e-12)
	f0, err := ParseFailOn("")
	require.NoError(t, err)
	assert.Nil(t, f0)
	assert.Empty(t, f0.Failing(testReport().Rows))
	for _, bad := range []string{"slower>3", "faster>3%", "slower>x%", "slower>-1%", "slower3%"} {
		_, err := ParseFailOn(bad)
		assert.Error(t, err, bad)
	}
	rows := testReport().Rows
	got := f.Failing(rows)
	require.Len(t, got, 1)
	assert.Equal(t, "Slow-2", got[0].Bench)
	// An undecided row beyond the limit never fails.
	assert.Empty(t, (&FailOn{Limit: 0.03}).Failing([]Row{row("U", nullband.Undecided, 1.5, 0.9, 2, 0.3)}))
}

// fakeRunner returns fixed values: head slower by effect[job] and a clock
// advanced by cost a round; fail names jobs whose rounds fail.
type fakeRunner struct {
	clock *time.Time
	cost  time.Duration
	calls map[string]int
	fail  string
	inner *simRunner
}

func (f *fakeRunner) RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	f.calls[j.Name]++
	if j.Name == f.fail {
		*f.clock = f.clock.Add(f.cost)
		return nil, errors.New("exit status 1")
	}
	return f.inner.RunRound(ctx, j, round)
}

func TestSchedulerBudget(t *testing.T) {
	clock := time.Unix(0, 0)
	quiet, _ := sim.ModelByName("lognormal-p50")
	noisy, _ := sim.ModelByName("outliers")
	sr := &simRunner{clock: &clock, cost: time.Second, trials: map[string]sim.Trial{
		"BenchmarkBig": quiet.Generate(1, 0, 30, 0.5), "BenchmarkNoisy": noisy.Generate(1, 1, 30, 0.01)}}
	fr := &fakeRunner{clock: &clock, cost: time.Second, calls: map[string]int{}, fail: "BenchmarkBad", inner: sr}
	jobs := []*Job{{Pkg: "p", Name: "BenchmarkBig"}, {Pkg: "p", Name: "BenchmarkNoisy"}, {Pkg: "p", Name: "BenchmarkBad"}}
	var progress, out bytes.Buffer
	s := &Scheduler{Jobs: jobs, Runner: fr, Options: nullband.Options{MaxRounds: 30}, Budget: 40 * time.Second,
		Now: func() time.Time { return clock }, Progress: &progress, Out: &out}
	require.NoError(t, s.Run(context.Background()))
	assert.LessOrEqual(t, s.Elapsed(), 40*time.Second, "the budget holds")
	assert.Equal(t, 1, fr.calls["BenchmarkBad"], "a failed job gets no more rounds")
	require.Error(t, jobs[2].Err)
	assert.True(t, jobs[0].Decided, "a 50%% effect at 1%% noise decides")
	assert.Greater(t, jobs[1].Rounds, jobs[0].Rounds, "the undecided job gets the rounds the decided one left")
	assert.Equal(t, 3*(jobs[0].Rounds+jobs[1].Rounds), s.Runs)
	assert.Contains(t, progress.String(), "p BenchmarkBad: round 1 failed; no more rounds for it: exit status 1")
	assert.Regexp(t, `p BenchmarkBig round \d+: decided \(\d+s, budget left \d+s\)`, progress.String())
	assert.Contains(t, out.String(), "arm: head")

	rows, un, err := JudgeJobs(jobs, s.Policy())
	require.NoError(t, err)
	require.Len(t, un, 1)
	assert.Equal(t, UnjudgedFailed, un[0].Why)
	require.Len(t, rows, 4, "the head's two rows, then the null arm's A/A rows")
	assert.Equal(t, "Big", rows[0].Bench)
	assert.Equal(t, report.NullCheck, rows[3].Kind)
	assert.Equal(t, nullband.Slower, rows[0].Verdict.Outcome)
}

// TestJobContended: a round is marked contended only when some of its
// arms' runs were screened contended and others not.
func TestJobContended(t *testing.T) {
	res := func(arm, screen string, v float64) *benchfmt.Result {
		return &benchfmt.Result{Name: benchfmt.Name("X"), Iters: 1,
			Config: []benchfmt.Config{{Key: interleave.KeyArm, Value: []byte(arm), File: true},
				{Key: interleave.KeyScreen, Value: []byte(screen), File: true}},
			Values: []benchfmt.Value{{Value: v, Unit: "ns/op"}, {Value: 8, Unit: "B/op"}}}
	}
	var j Job
	require.NoError(t, j.Add(1, []*benchfmt.Result{res(ArmBase, "contended", 10), res(ArmHead, "clean", 11), res(ArmNull, "clean", 12)}))
	require.NoError(t, j.Add(2, []*benchfmt.Result{res(ArmBase, "contended", 10), res(ArmHead, "contended", 11), res(ArmNull, "contended", 12)}))
	require.NoError(t, j.Add(3, []*benchfmt.Result{res(ArmBase, "clean", 10), res(ArmHead, "clean", 11)}))
	s := j.Table().Samples("X", "sec/op", ArmBase, ArmHead, ArmNull)
	assert.Equal(t, []int{1, 2, 3}, s.Round)
	assert.Equal(t, []bool{true, false, false}, s.Contended)
	assert.InDelta(t, 11e-9, s.Candidate[0], 1e-18, "ns/op tidied to sec/op")
	assert.True(t, math.IsNaN(s.Null[2]), "a missing arm is NaN")
}

func TestCalibrateBenchtime(t *testing.T) {
	ls, err := (&ProcessRunner{Benchtime: "500x"}).calibrate(context.Background(), &Job{})
	require.NoError(t, err)
	assert.Equal(t, []leaf{{n: 500}}, ls, "Nx is taken as it is, for the job as one leaf; nothing runs")
	for _, bad := range []string{"0x", "abc", "-1s"} {
		_, err := (&ProcessRunner{Benchtime: bad}).calibrate(context.Background(), &Job{})
		assert.ErrorContains(t, err, "want a duration or Nx", bad)
	}
}

// The null arm's A/A rows are shown, marked, and never counted, gated or
// summarised as the head's; CPU rows say more or less CPU.
func TestReportAARowsAndCPUWords(t *testing.T) {
	cpu := row("Step-2", nullband.Slower, 1.08, 1.05, 1.11, 0.01)
	cpu.Unit = "cpu-sec/op"
	aa := row("Step-2", nullband.Slower, 1.2, 1.1, 1.3, 0.01)
	aa.Kind, aa.Arm = report.NullCheck, ArmNull
	rep := Report{Rows: []Row{cpu, aa}, Alpha: 0.05, Delta: 0.02}
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, rep, &FailOn{Limit: 0.1}))
	md := b.String()
	assert.Contains(t, md, "### Benchmarks: 1 slower\n", "the A/A row is not the head's")
	assert.Contains(t, md, "| p.Step-2 | cpu-sec/op |")
	assert.Contains(t, md, "| more CPU by 8% |")
	assert.Contains(t, md, "| p.Step-2 (A/A check: null against base) | sec/op |")
	assert.Contains(t, md, "Check passed", "an A/A row never fails the gate")
	assert.Contains(t, md, "A/A check failed: null, a second instance of base, differs from base")
	assert.Empty(t, (&FailOn{Limit: 0.01}).Failing([]Row{aa}))
}

// An A/A row without an interval (pr's budget ended first) is an A/A
// check that did not run, and the notes say so.
func TestReportAACheckNotRun(t *testing.T) {
	cand := row("Step-2", nullband.Slower, 1.2, 1.1, 1.3, 0.01)
	aa := row("Step-2", nullband.Undecided, 1.0, 0, math.Inf(1), math.Inf(1))
	aa.Kind, aa.Arm = report.NullCheck, ArmNull
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Report{Rows: []Row{cand, aa}, Alpha: 0.05, Delta: 0.02}, nil))
	assert.Contains(t, b.String(), "A/A check did not run on 1 row (Step-2 sec/op): no interval yet")
	aa.Verdict.Lo, aa.Verdict.Hi = 0.95, 1.05
	b.Reset()
	require.NoError(t, WriteMarkdown(&b, Report{Rows: []Row{cand, aa}, Alpha: 0.05, Delta: 0.02}, nil))
	assert.NotContains(t, b.String(), "A/A check did not run")
}

// The base and head columns agree with the change column: head/base − 1
// is the change, also when the head's own median lies on the other side
// of the base (a paired estimate of +2% beside medians 100 and 97).
func TestColumnsAgreeWithChange(t *testing.T) {
	for _, c := range []struct {
		ratio, headMedian float64
	}{{1.02, 0.97e-6}, {0.95, 1.01e-6}, {1.10, 1.10e-6}, {1.001, 0.9e-6}} {
		r := row("X-2", nullband.Undecided, c.ratio, c.ratio-0.05, c.ratio+0.05, 0.02)
		r.Verdict.Candidate.Center = c.headMedian
		cs := cells(r, 0.02)
		scale := map[string]float64{"n": 1e-9, "µ": 1e-6, "m": 1e-3}
		parse := func(s string) float64 {
			m := regexp.MustCompile(`^([0-9.]+)([nµm]?)$`).FindStringSubmatch(s)
			require.NotNil(t, m, "cell %q", s)
			f, err := strconv.ParseFloat(m[1], 64)
			require.NoError(t, err)
			return f * scale[m[2]]
		}
		base, head := parse(cs.base), parse(cs.head)
		m := regexp.MustCompile(`^([+−])([0-9.]+)%`).FindStringSubmatch(cs.change)
		require.NotNil(t, m, "change %q", cs.change)
		change, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		if m[1] == "−" {
			change = -change
		}
		// The cells are rounded to 4 significant figures and the change
		// to 2: they agree within that rounding.
		assert.InDelta(t, change, 100*(head/base-1), 0.06, "ratio %v: base %s head %s change %s", c.ratio, cs.base, cs.head, cs.change)
	}
}

// A hostile value (B/A of 1e305) prints with bounded digits in every
// column and in the details: the regression printed 300-digit figures.
func TestReportHugeRatioFiguresBounded(t *testing.T) {
	huge := row("Huge-2", nullband.Slower, 1e305, 9.9e304, 1.01e305, 0.01)
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, Report{Rows: []Row{huge}, Alpha: 0.05, Delta: 0.02}, &FailOn{Limit: 0.1}))
	md := b.String()
	assert.Contains(t, md, "| p.Huge-2 | sec/op | 1.000µ | 1.00e+305µ | +1.00e+307% [+9.90e+306%, +1.01e+307%] | slower by 1.00e+307% | ±1% | 12 |")
	assert.Contains(t, md, "**Check failed** (-fail-on slower>10%): Huge-2 sec/op +1.00e+307%.")
	assert.Contains(t, md, "1.00e+305")
	assert.NotRegexp(t, `\d{13}`, md, "a figure of more than 12 digits")
	b.Reset()
	require.NoError(t, WriteText(&b, Report{Rows: []Row{huge}, Alpha: 0.05, Delta: 0.02}, nil))
	assert.NotRegexp(t, `\d{13}`, b.String(), "a figure of more than 12 digits")
}
