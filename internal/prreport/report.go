package prreport

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

// Row is one benchmark in one unit with its family-adjusted verdict: the
// report row of every route (internal/report), Pkg set to the job's
// package, Arm ArmHead (or ArmNull for the null arm's A/A row).
type Row = report.Row

// Effect is B/A − 1, the change as a fraction (NaN when unknown).
func Effect(r Row) float64 { return r.Verdict.Ratio - 1 }

// Candidates returns the rows that judge the head (report.Candidate),
// leaving out the null arm's A/A rows.
func Candidates(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Kind == report.Candidate {
			out = append(out, r)
		}
	}
	return out
}

// Unjudged is a benchmark that has no verdict, and why.
type Unjudged struct {
	Pkg, Name string
	// Why says which: UnjudgedOnlyBase, UnjudgedOnlyHead, UnjudgedFailed,
	// UnjudgedNotRun.
	Why UnjudgedWhy
	// Err is the failure for UnjudgedFailed.
	Err error
}

// UnjudgedWhy is why a benchmark has no verdict.
type UnjudgedWhy int

const (
	// UnjudgedOnlyBase: the benchmark exists at base only (removed).
	UnjudgedOnlyBase UnjudgedWhy = iota
	// UnjudgedOnlyHead: the benchmark exists at head only (added).
	UnjudgedOnlyHead
	// UnjudgedFailed: a run of it failed.
	UnjudgedFailed
	// UnjudgedNotRun: the budget ran out before its first round.
	UnjudgedNotRun
)

// Side is one revision of the report.
type Side struct {
	// Ref is the revision as given ("" for the work tree); Commit the
	// full hash ("" for the work tree).
	Ref, Commit string
	// Dirty is true for a work tree with uncommitted changes.
	Dirty bool
}

// Host is the machine and its weather over the run, as the command
// measured it. Figures are NaN when unavailable.
type Host struct {
	// CPU is the CPU model name ("" when unknown); Online the online
	// logical CPUs, Cores the physical cores.
	CPU           string
	Online, Cores int
	// Load1Start and Load1End are the 1-minute load averages before and
	// after the runs.
	Load1Start, Load1End float64
	// ForeignBusyPct, StealPct and PSISomePct are the contention figures
	// over the whole run (hostmon.Span): busy time not ours, time stolen
	// by the hypervisor, and the share of time some task waited for a CPU.
	ForeignBusyPct, StealPct, PSISomePct float64
	// Runs is the number of runs; Contended those the screen marked
	// contended (-1 when runs were not screened).
	Runs, Contended int
}

// Report is everything a pull-request comment says.
type Report struct {
	Base, Head Side
	// Rows are the judged rows, sorted by Sort.
	Rows []Row
	// Unjudged are benchmarks with no verdict.
	Unjudged []Unjudged
	// Alpha is the family-wise error rate of the difference calls (Holm);
	// Delta the equivalence margin (a fraction).
	Alpha, Delta float64
	// Budget is the wall-clock budget of the rounds (0: none); Elapsed
	// the time they took; MaxRounds the most rounds a benchmark could get.
	Budget, Elapsed time.Duration
	MaxRounds       int
	// Stops counts the benchmarks that ended undecided by what stopped
	// them (Scheduler.Stops): the advice under the table names the
	// setting that was the limit, and only that one.
	Stops Stops
	// Host is the machine and its weather.
	Host Host
	// Names are the settings the verdict details name (internal/verdicttext;
	// Base and Null are set by the renderer).
	Names verdicttext.Names
	// Fleet, for a merged report (decodegap merge), is its runners; the
	// host line then names each runner. Nil for one machine. [shard hook]
	Fleet *Fleet
}

// Revisions returns the report's two revisions as the JSON report
// records them.
func (r Report) Revisions() *report.Revisions {
	side := func(s Side) report.Revision { return report.Revision{Ref: s.Ref, Commit: s.Commit, Dirty: s.Dirty} }
	return &report.Revisions{Base: side(r.Base), Head: side(r.Head)}
}

// Unjudgeable returns the benchmarks of un that were to be judged and could
// not be: those whose runs failed (UnjudgedFailed) and those the budget left
// unrun (UnjudgedNotRun). A benchmark present at one side only is not among
// them: there is nothing to compare.
func Unjudgeable(un []Unjudged) []Unjudged {
	var out []Unjudged
	for _, u := range un {
		if u.Why == UnjudgedFailed || u.Why == UnjudgedNotRun {
			out = append(out, u)
		}
	}
	return out
}

// JudgeJobs judges every job's rounds under policy p (internal/judge's
// JudgeAll: every head row of every job one family under weighted Holm,
// the null arm's A/A rows another) and returns the rows, sorted by Sort,
// and the benchmarks that have no verdict.
func JudgeJobs(jobs []*Job, p judge.Policy) ([]Row, []Unjudged, error) {
	var un []Unjudged
	var tables []*judge.Table
	var judged []*Job
	for _, j := range jobs {
		switch {
		case j.Err != nil:
			un = append(un, Unjudged{Pkg: j.Pkg, Name: j.Name, Why: UnjudgedFailed, Err: j.Err})
			continue
		case j.Rounds == 0:
			un = append(un, Unjudged{Pkg: j.Pkg, Name: j.Name, Why: UnjudgedNotRun})
			continue
		}
		tables, judged = append(tables, &j.table), append(judged, j)
	}
	if len(tables) == 0 {
		return nil, un, nil
	}
	all, err := judge.JudgeAll(tables, p)
	if err != nil {
		return nil, nil, err
	}
	var rows []Row
	for i, rs := range all {
		for _, r := range rs {
			r.Pkg = judged[i].Pkg
			rows = append(rows, r)
		}
	}
	Sort(rows)
	return rows, un, nil
}

// Sort orders rows for the report: the head's rows first, slower,
// faster, undecided, equivalent; within each, the largest |log B/A| first;
// then by name; the null arm's A/A rows last, in the same order.
func Sort(rows []Row) {
	rank := map[nullband.Outcome]int{nullband.Slower: 0, nullband.Faster: 1, nullband.Undecided: 2, nullband.Equivalent: 3}
	size := func(r Row) float64 {
		l := math.Abs(math.Log(r.Verdict.Ratio))
		if math.IsNaN(l) {
			return -1
		}
		return l
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(rank[a.Verdict.Outcome], rank[b.Verdict.Outcome]),
			cmp.Compare(size(b), size(a)),
			cmp.Compare(a.Pkg, b.Pkg), cmp.Compare(a.Bench, b.Bench), cmp.Compare(a.Unit, b.Unit))
	})
}

// Counts is the number of rows per outcome.
type Counts struct{ Slower, Faster, Equivalent, Undecided int }

// Count counts the outcomes of the head's rows.
func Count(rows []Row) Counts {
	var c Counts
	for _, r := range Candidates(rows) {
		switch r.Verdict.Outcome {
		case nullband.Slower:
			c.Slower++
		case nullband.Faster:
			c.Faster++
		case nullband.Equivalent:
			c.Equivalent++
		default:
			c.Undecided++
		}
	}
	return c
}

// FailOn is a gate on decided regressions: a row fails when its verdict
// is slower and its estimated slowdown B/A − 1 exceeds Limit. Undecided
// rows never fail.
type FailOn struct {
	// Limit is the slowdown, a fraction (0.03 for 3%).
	Limit float64
}

// ParseFailOn parses "slower>3%" (or "slower>0.03"'s percent form only:
// the number is always a percentage). The empty string is no gate.
func ParseFailOn(s string) (*FailOn, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	k, v, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), ">")
	if !ok || k != "slower" || !strings.HasSuffix(v, "%") {
		return nil, fmt.Errorf("%q: write slower>N%%, e.g. slower>3%%", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || n < 0 || math.IsInf(n, 0) {
		return nil, fmt.Errorf("%q: %q is not a percentage ≥ 0", s, v)
	}
	return &FailOn{Limit: n / 100}, nil
}

// Failing returns the head's rows that fail the gate (never an A/A row).
func (f *FailOn) Failing(rows []Row) []Row {
	if f == nil {
		return nil
	}
	var out []Row
	for _, r := range Candidates(rows) {
		if r.Verdict.Outcome == nullband.Slower && Effect(r) > f.Limit {
			out = append(out, r)
		}
	}
	return out
}

// Detect summarises what the run could detect: the median and the largest
// MDE over the rows that have one, and the row with the largest.
type Detect struct {
	// Median and Max are fractions; NaN when no row has an MDE.
	Median, Max float64
	// MaxRow is the row with the largest MDE.
	MaxRow Row
	// Rows is how many rows have an MDE.
	Rows int
}

// Detection computes Detect from rows.
func Detection(rows []Row) Detect {
	d := Detect{Median: math.NaN(), Max: math.NaN()}
	var m []float64
	for _, r := range Candidates(rows) {
		x := r.Verdict.MDE
		if x > 0 && !math.IsInf(x, 0) {
			m = append(m, x)
			if !(x <= d.Max) {
				d.Max, d.MaxRow = x, r
			}
		}
	}
	d.Rows = len(m)
	if len(m) > 0 {
		slices.Sort(m)
		if len(m)%2 == 1 {
			d.Median = m[len(m)/2]
		} else {
			d.Median = (m[len(m)/2-1] + m[len(m)/2]) / 2
		}
	}
	return d
}
