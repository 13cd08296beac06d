package prreport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/nullband"
)

// The arm names written as the benchfmt `arm:` key.
const (
	ArmBase = "base"
	ArmHead = "head"
	ArmNull = "null"
)

// Job is one benchmark of one package, measured as base, head and null
// (a second process of base) in interleaved rounds.
type Job struct {
	// Pkg is the package's import path; Name the benchmark as -test.list
	// prints it ("BenchmarkFoo").
	Pkg, Name string
	// Base, Head are the commands of the two sides (the null arm runs
	// Base again).
	Base, Head interleave.Arm

	// Rounds is the number of rounds run; Wall their total wall time.
	Rounds int
	Wall   time.Duration
	// Decided is true once every row of the job was decided at a look
	// (its rounds stopped there).
	Decided bool
	// Err is the failure that stopped the job, if any.
	Err error
	// Lost counts the job's rounds lost to a failed run (a crash, a
	// timeout, no results); each was dropped whole.
	Lost int

	// need is the most rounds a row still needed at the last look, for
	// ordering (math.MaxInt32 when unknown).
	need int

	// table holds the job's rounds (internal/judge's rounds table).
	table judge.Table
}

// Add files one round's results of the job (all three arms) into its
// rounds table.
func (j *Job) Add(round int, results []*benchfmt.Result) error {
	for _, res := range results {
		if err := j.table.Add(string(res.Name.Full()), res.GetConfig(interleave.KeyArm), round, judge.BlockOf(res)); err != nil {
			return err
		}
	}
	return nil
}

// Table returns the job's rounds table so far; the caller must not
// modify it.
func (j *Job) Table() *judge.Table { return &j.table }

// RoundRunner runs one round of a job: its base, head and null arms, each
// once, and returns their results with the `arm:` key set to ArmBase,
// ArmHead or ArmNull. ProcessRunner is the real one.
type RoundRunner interface {
	RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error)
}

// Scheduler shares a wall-clock budget across jobs: every job gets
// Options.MinRounds rounds first (at least one; rounds taken in turn
// across jobs), then the undecided ones get a round each, in passes, the
// job whose verdict is nearest to deciding first, until each is decided,
// has Options.MaxRounds rounds, or the budget cannot pay for its next
// round. While some undecided job's estimate (Verdict.RoundsToDecide)
// says it decides within MaxRounds, passes go to those jobs only, so the
// budget goes where it can decide something.
// At each look (each round from MinRounds on) a job's rows are judged in
// sequential mode at the first level of weighted Holm over every job's
// rows (judge.Look), a decided look confirmed with the replicates the
// final judgement uses; the final verdicts come from JudgeJobs.
type Scheduler struct {
	// Jobs are the benchmarks to run.
	Jobs []*Job
	// Runner runs one round.
	Runner RoundRunner
	// Options are the verdict options (Delta, MinRounds, MaxRounds …).
	// Options.Confidence is the family's confidence: 1 − the family-wise
	// error rate. MaxRounds > 0 is the horizon of the sequential test;
	// MaxRounds 0 (with a Budget) has Run set it from the budget after
	// every job's first round, before any look can decide (see
	// AutoHorizon): the rounds the budget pays for if every job ran them
	// all, at least 6 and at most AutoMaxRounds. Run leaves the horizon
	// used in Options.MaxRounds.
	Options nullband.Options
	// Units are the tidied units judged (e.g. "sec/op"); nil judges
	// judge.DefaultUnits.
	Units []string
	// Budget is the wall-clock time the rounds may take; 0 means none. It
	// bounds the round in flight too: a run still going when the budget
	// ends is stopped (SIGINT to its group, SIGKILL 2 s later), its round
	// dropped, and Run returns.
	Budget time.Duration
	// MaxFailed is the rounds of one job that may be lost to a failed run
	// (an *interleave.RunError) before the job gets no more: a lost round
	// is dropped and run again. Any other error stops the job at once.
	MaxFailed int
	// Out, when non-nil, receives every result as benchfmt, a round at a
	// time as soon as it has run.
	Out io.Writer
	// Progress, when non-nil, receives a line per round.
	Progress io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Runs counts the runs (processes) that finished, Contended those
	// whose results carry screen: contended. Run sets them.
	Runs, Contended int
	// BudgetCut is set when the budget ended during a round, which was
	// stopped and dropped.
	BudgetCut bool

	start time.Time
	w     *benchfmt.Writer
}

// AutoMaxRounds is the most rounds a horizon set from the budget gives
// (Scheduler.Options.MaxRounds 0): judging a look costs time that grows
// with the horizon (about 0.6 s a row at 100 rounds on a 2-CPU host at
// load 6), which the budget pays too.
const AutoMaxRounds = 100

// autoMinRounds is the fewest rounds a horizon set from the budget gives.
const autoMinRounds = 6

// Run runs the jobs until each is decided, out of rounds or out of budget.
// A job whose round fails keeps its error in Job.Err and gets no more
// rounds; the others go on. It returns ctx's error when ctx ended.
func (s *Scheduler) Run(ctx context.Context) error {
	auto := s.Options.MaxRounds <= 0
	if auto && s.Budget <= 0 {
		return errors.New("prreport: Scheduler.Options.MaxRounds 0 (set from the budget) needs a Budget")
	}
	if auto {
		// Whatever ends Run, the rounds are judged at a horizon.
		defer func() {
			if s.Options.MaxRounds <= 0 {
				s.setHorizon()
			}
		}()
	}
	now := s.now()
	s.start = now
	if s.Out != nil {
		s.w = benchfmt.NewWriter(s.Out)
	}
	minRounds := max(s.Options.MinRounds, 1)
	// Phase 1: every job its first rounds, in turn.
	for r := 0; r < minRounds; r++ {
		for _, j := range s.Jobs {
			if j.Err != nil || j.Rounds > r {
				continue
			}
			if !s.afford(j) {
				return nil
			}
			if err := s.round(ctx, j); err != nil {
				return budgetOK(err)
			}
		}
		if r == 0 && auto {
			// Every job has its first round (no look has been made):
			// the horizon from what a round costs, then the looks the
			// first round skipped.
			s.setHorizon()
			w := s.family()
			for _, j := range s.Jobs {
				if j.Err == nil && j.Rounds >= minRounds {
					s.look(j, w)
				}
			}
		}
	}
	// Phase 2: passes over the undecided.
	for {
		var todo []*Job
		for _, j := range s.Jobs {
			if j.Err == nil && !j.Decided && j.Rounds < s.Options.MaxRounds {
				todo = append(todo, j)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		slices.SortStableFunc(todo, func(a, b *Job) int { return cmp.Compare(a.need, b.need) })
		// While some job's estimate says it decides within MaxRounds,
		// passes go to those jobs only.
		hopeful := 0
		for _, j := range todo {
			if j.need <= s.Options.MaxRounds-j.Rounds {
				hopeful++
			}
		}
		if hopeful > 0 {
			todo = todo[:hopeful]
		}
		ran := false
		for _, j := range todo {
			if j.Decided {
				continue
			}
			if !s.afford(j) {
				continue
			}
			if err := s.round(ctx, j); err != nil {
				return budgetOK(err)
			}
			ran = true
		}
		if !ran {
			return nil
		}
	}
}

// setHorizon sets Options.MaxRounds from the budget: the rounds it pays
// for if every job that has not failed ran them all at its mean round
// cost so far (decided jobs stop early, so this is the fewest the budget
// can give), at least max(autoMinRounds, MinRounds), at most
// AutoMaxRounds.
func (s *Scheduler) setHorizon() {
	var total time.Duration
	for _, j := range s.Jobs {
		if j.Err == nil {
			total += s.roundCost(j)
		}
	}
	h := AutoMaxRounds
	if total > 0 {
		h = int(min(s.Budget/total, AutoMaxRounds))
	}
	h = max(h, autoMinRounds, s.Options.MinRounds)
	s.Options.MaxRounds = h
	s.progress("at most %d rounds a benchmark: what -budget %v pays for at %v a round of every benchmark (at most %d)",
		h, s.Budget, total.Round(time.Millisecond), AutoMaxRounds)
}

// Stops counts the jobs that ended undecided by what stopped their
// rounds: the horizon, or the budget.
type Stops struct {
	// Capped jobs ran Options.MaxRounds rounds; Budget jobs had fewer
	// (and at least one) when the budget could pay for no more, or was
	// spent during a round.
	Capped, Budget int
}

// Stops returns the count of undecided jobs by what stopped them, after
// Run. A job that failed, or never ran, is in neither.
func (s *Scheduler) Stops() Stops {
	var st Stops
	for _, j := range s.Jobs {
		switch {
		case j.Err != nil || j.Decided || j.Rounds == 0:
		case j.Rounds >= s.Options.MaxRounds:
			st.Capped++
		default:
			st.Budget++
		}
	}
	return st
}

// errBudget is round's way to say the budget ended during the round.
var errBudget = errors.New("prreport: budget spent")

// budgetOK turns errBudget into the end of Run without an error.
func budgetOK(err error) error {
	if err == errBudget {
		return nil
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Policy is the jobs' judging policy: internal/judge's, with base, head
// and null as ArmBase, ArmHead and ArmNull, s.Units and s.Options.
func (s *Scheduler) Policy() judge.Policy {
	return judge.Policy{Base: ArmBase, Null: ArmNull, Units: s.Units, Options: s.Options}
}

// family returns the total weight of all jobs' candidate rows: the
// family's, which each look's levels are taken from.
func (s *Scheduler) family() float64 {
	w := 0.0
	for _, j := range s.Jobs {
		w += judge.FamilyWeight(&j.table, s.Policy())
	}
	return w
}

// look judges the job's rows at the first level of weighted Holm in a
// family of total weight w (judge.Look), marks it decided when every row
// is, and sets j.need.
func (s *Scheduler) look(j *Job, w float64) {
	j.Decided, j.need = judge.Look(&j.table, s.Policy(), w)
}

// afford reports whether the budget can pay for another round of j, at
// j's mean round time so far (or all jobs' mean before j has one).
func (s *Scheduler) afford(j *Job) bool {
	if s.Budget <= 0 {
		return true
	}
	left := s.Budget - s.now().Sub(s.start)
	return s.roundCost(j) <= left
}

// roundCost estimates the wall time of j's next round.
func (s *Scheduler) roundCost(j *Job) time.Duration {
	if j.Rounds > 0 {
		return j.Wall / time.Duration(j.Rounds)
	}
	var wall time.Duration
	n := 0
	for _, o := range s.Jobs {
		wall += o.Wall
		n += o.Rounds
	}
	if n == 0 {
		return 0
	}
	return wall / time.Duration(n)
}

// round runs one round of j, files and writes its results, and judges j
// when it has reached MinRounds.
func (s *Scheduler) round(ctx context.Context, j *Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := j.Rounds + 1
	t0 := s.now()
	rctx := ctx
	if s.Budget > 0 {
		var cancel context.CancelFunc
		// The budget is on s.now's clock; the deadline on the real one.
		left := s.Budget - s.now().Sub(s.start)
		rctx, cancel = context.WithTimeout(ctx, max(left, 0))
		defer cancel()
	}
	res, err := s.Runner.RunRound(rctx, j, r)
	wall := s.now().Sub(t0)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rctx.Err() != nil {
			s.BudgetCut = true
			s.progress("%s %s: round %d stopped: -budget %v ran out while it ran", shortPkg(j.Pkg), j.Name, r, s.Budget)
			return errBudget
		}
		var re *interleave.RunError
		if errors.As(err, &re) && j.Lost < s.MaxFailed {
			j.Lost++
			s.progress("%s %s: round %d lost (%d of at most %d): %s", shortPkg(j.Pkg), j.Name, r, j.Lost, s.MaxFailed, firstLine(err.Error()))
			return nil
		}
		j.Err = err
		s.progress("%s %s: round %d failed; no more rounds for it: %v", j.Pkg, j.Name, r, err)
		return nil
	}
	j.Rounds, j.Wall = r, j.Wall+wall
	if err := j.Add(r, res); err != nil {
		j.Err = err
		s.progress("%s %s: round %d: %v; no more rounds for it", j.Pkg, j.Name, r, err)
		return nil
	}
	for _, arm := range []string{ArmBase, ArmHead, ArmNull} {
		ran, contended := false, false
		for _, x := range res {
			if x.GetConfig(interleave.KeyArm) == arm {
				ran = true
				contended = contended || x.GetConfig(interleave.KeyScreen) == "contended"
			}
		}
		if ran {
			s.Runs++
		}
		if contended {
			s.Contended++
		}
	}
	if s.w != nil {
		for _, x := range res {
			if err := s.w.Write(x); err != nil {
				return fmt.Errorf("prreport: writing results: %w", err)
			}
		}
	}
	state := "measuring"
	if r >= max(s.Options.MinRounds, 1) && s.Options.MaxRounds > 0 {
		s.look(j, s.family())
		state = "undecided"
		if j.Decided {
			state = "decided"
		}
	}
	el := s.now().Sub(s.start)
	left := ""
	if s.Budget > 0 {
		left = ", budget left " + durfmt.Elapsed(max(0, s.Budget-el))
	}
	s.progress("%s %s round %d: %s (%s%s)", shortPkg(j.Pkg), j.Name, r, state, durfmt.Elapsed(el), left)
	return nil
}

func (s *Scheduler) progress(format string, a ...any) {
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, format+"\n", a...)
	}
}

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Elapsed returns the wall time since Run started.
func (s *Scheduler) Elapsed() time.Duration { return s.now().Sub(s.start) }

// shortPkg is the last element of an import path.
func shortPkg(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
