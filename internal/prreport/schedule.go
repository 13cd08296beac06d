package prreport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/interleave"
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

	rows map[rowKey]*rowData
	// order lists rows in order of first appearance.
	order []rowKey
}

type rowKey struct{ bench, unit string }

// rowData holds one row's values by round.
type rowData struct {
	rounds    []int
	base      []float64
	head      []float64
	null      []float64
	contended []bool
}

// samples returns the row's values as nullband.Samples.
func (d *rowData) samples() nullband.Samples {
	return nullband.Samples{
		Round:     slices.Clone(d.rounds),
		Base:      slices.Clone(d.base),
		Candidate: slices.Clone(d.head),
		Null:      slices.Clone(d.null),
		Contended: slices.Clone(d.contended),
	}
}

// add files one round's results of the job (all three arms) into its rows.
func (j *Job) add(round int, results []*benchfmt.Result, units []string) {
	if j.rows == nil {
		j.rows = map[rowKey]*rowData{}
	}
	touched := map[*rowData]bool{}
	armContended, armSeen := map[armKey]bool{}, map[armKey]bool{}
	for _, res := range results {
		arm := res.GetConfig(interleave.KeyArm)
		bench := string(res.Name.Full())
		for _, v := range res.Values {
			factor, unit := benchunit.Tidy(1, v.Unit)
			if len(units) > 0 && !slices.Contains(units, unit) {
				continue
			}
			k := rowKey{bench, unit}
			d := j.rows[k]
			if d == nil {
				d = &rowData{}
				j.rows[k] = d
				j.order = append(j.order, k)
			}
			if !touched[d] {
				touched[d] = true
				d.rounds = append(d.rounds, round)
				d.base = append(d.base, math.NaN())
				d.head = append(d.head, math.NaN())
				d.null = append(d.null, math.NaN())
				d.contended = append(d.contended, false)
			}
			i := len(d.rounds) - 1
			switch arm {
			case ArmBase:
				d.base[i] = v.Value * factor
			case ArmHead:
				d.head[i] = v.Value * factor
			case ArmNull:
				d.null[i] = v.Value * factor
			}
			if res.GetConfig(interleave.KeyScreen) == "contended" {
				armContended[armKey{d, arm}] = true
			}
			armSeen[armKey{d, arm}] = true
		}
	}
	// A round is marked contended when the screen found some of its
	// arms' runs contended and others not: the arms did not share the
	// weather. All contended is shared weather, which pairing cancels.
	for d := range touched {
		i := len(d.rounds) - 1
		some, all := false, true
		for _, arm := range []string{ArmBase, ArmHead, ArmNull} {
			if !armSeen[armKey{d, arm}] {
				continue
			}
			c := armContended[armKey{d, arm}]
			some = some || c
			all = all && c
		}
		d.contended[i] = some && !all
	}
}

type armKey struct {
	d   *rowData
	arm string
}

// Rows returns the job's rows (benchmark and unit pairs) and their
// samples so far, in order of first appearance.
func (j *Job) Rows() []RowSamples {
	out := make([]RowSamples, len(j.order))
	for i, k := range j.order {
		out[i] = RowSamples{Pkg: j.Pkg, Benchmark: k.bench, Unit: k.unit, Samples: j.rows[k].samples()}
	}
	return out
}

// RowSamples is one row's data: a benchmark (a top-level benchmark or one
// of its sub-benchmarks) in one unit.
type RowSamples struct {
	// Pkg is the package; Benchmark the full name without "Benchmark"
	// (benchfmt.Name.Full, e.g. "Step-2"); Unit the tidied unit.
	Pkg, Benchmark, Unit string
	Samples              nullband.Samples
}

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
// sequential mode at the Bonferroni level (Alpha / rows), the first level
// of Holm's procedure, a decided look confirmed with the replicates
// JudgeFamily uses; the final verdicts come from JudgeFamily.
type Scheduler struct {
	// Jobs are the benchmarks to run.
	Jobs []*Job
	// Runner runs one round.
	Runner RoundRunner
	// Options are the verdict options (Delta, MinRounds, MaxRounds …);
	// MaxRounds must be > 0 (sequential mode). Options.Confidence is the
	// family's confidence: 1 − the family-wise error rate.
	Options nullband.Options
	// Units are the tidied units judged (e.g. "sec/op"); empty judges all.
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

// Run runs the jobs until each is decided, out of rounds or out of budget.
// A job whose round fails keeps its error in Job.Err and gets no more
// rounds; the others go on. It returns ctx's error when ctx ended.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.Options.MaxRounds <= 0 {
		return errors.New("prreport: Scheduler.Options.MaxRounds must be > 0")
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

// family returns the number of rows of all jobs: the family size.
func (s *Scheduler) family() int {
	m := 0
	for _, j := range s.Jobs {
		m += len(j.order)
	}
	return max(m, 1)
}

// look judges the job's rows at the Bonferroni level for m rows (the
// first level of Holm's procedure), marks it decided when every row is,
// and sets j.need.
func (s *Scheduler) look(j *Job, m int) {
	j.need = math.MaxInt32
	if len(j.order) == 0 {
		return
	}
	opt := s.Options
	opt.Confidence, _ = nullband.BonferroniLevel(s.Options.Confidence, m)
	need, decided := 0, true
	for _, k := range j.order {
		v, err := nullband.Judge(j.rows[k].samples(), opt)
		if err != nil || v.Outcome == nullband.Undecided {
			decided = false
		}
		switch {
		case err != nil || v.RoundsToDecide < 0:
			need = math.MaxInt32
		case v.RoundsToDecide-j.Rounds > need:
			need = v.RoundsToDecide - j.Rounds
		}
	}
	// A look with Judge's default replicates is cheap but its boundaries
	// are coarse at a family's level: confirm a stop with the replicates
	// the final JudgeFamily uses, or the job could stop on a look that
	// the final verdict does not repeat.
	if decided && s.Options.Replicates == 0 {
		opt.Replicates = nullband.FamilyReplicates(opt.Confidence)
		for _, k := range j.order {
			v, err := nullband.Judge(j.rows[k].samples(), opt)
			if err != nil || v.Outcome == nullband.Undecided {
				decided = false
				break
			}
		}
	}
	j.Decided, j.need = decided, need
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
	j.add(r, res, s.Units)
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
	if r >= max(s.Options.MinRounds, 1) {
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
