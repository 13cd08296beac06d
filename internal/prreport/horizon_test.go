package prreport

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/nullband"
)

// With MaxRounds 0 the horizon comes from the budget: one undecidable
// benchmark (no change, a margin far below its noise) at 1 s a round gets
// the 40 rounds a 40 s budget pays for, not a fixed 30 with 10 s left,
// and at most AutoMaxRounds from an hour; three at 1 s a round and 10 s get the
// fewest (6), of which the budget pays for 3.
func TestSchedulerHorizonFromBudget(t *testing.T) {
	model, _ := sim.ModelByName("lognormal-p50")
	for _, c := range []struct {
		jobs   int
		budget time.Duration
		want   int
	}{{1, 40 * time.Second, 40}, {3, 10 * time.Second, autoMinRounds}} {
		clock := time.Unix(0, 0)
		sr := &simRunner{clock: &clock, cost: time.Second, trials: map[string]sim.Trial{}}
		var jobs []*Job
		for i := range c.jobs {
			name := "BenchmarkFlat" + string(rune('A'+i))
			sr.trials[name] = model.Generate(uint64(i), i, AutoMaxRounds, 0)
			jobs = append(jobs, &Job{Pkg: "p", Name: name})
		}
		var progress bytes.Buffer
		s := &Scheduler{Jobs: jobs, Runner: sr, Options: nullband.Options{Delta: 0.0001}, Budget: c.budget,
			Now: func() time.Time { return clock }, Progress: &progress}
		require.NoError(t, s.Run(context.Background()))
		assert.Equal(t, c.want, s.Options.MaxRounds, "%d jobs, budget %v", c.jobs, c.budget)
		assert.Contains(t, progress.String(), "rounds a benchmark: what -budget")
		for _, j := range jobs {
			assert.False(t, j.Decided)
			assert.LessOrEqual(t, j.Rounds, s.Options.MaxRounds)
		}
		if c.jobs == 1 {
			assert.Equal(t, c.want, jobs[0].Rounds, "the budget pays for every round of the horizon")
			assert.Equal(t, Stops{Capped: 1}, s.Stops())
			rows, _, err := JudgeJobs(jobs, s.Policy())
			require.NoError(t, err)
			assert.Equal(t, c.want, rows[0].Verdict.Given)
		} else {
			assert.Equal(t, Stops{Budget: 3}, s.Stops(), "10 s pay for 3 rounds each, below the horizon")
		}
	}

	// An hour at 1 s a round: capped at AutoMaxRounds (set directly:
	// judging 100 looks would slow the test).
	clock := time.Unix(0, 0)
	capped := &Scheduler{Jobs: []*Job{{Name: "BenchmarkX", Rounds: 1, Wall: time.Second}}, Budget: time.Hour,
		Now: func() time.Time { return clock }}
	capped.setHorizon()
	assert.Equal(t, AutoMaxRounds, capped.Options.MaxRounds)

	// Without a budget there is nothing to set it from.
	s := &Scheduler{Jobs: []*Job{{Name: "BenchmarkX"}}, Runner: &simRunner{}}
	assert.ErrorContains(t, s.Run(context.Background()), "needs a Budget")
}

// The advice under the table names the limit that stopped the undecided
// rows: -max-rounds when they reached it with budget left, -budget only
// when the budget ran out first, both when each stopped some.
func TestUndecidedAdviceNamesTheLimit(t *testing.T) {
	r := testReport() // one undecided row; 3m of a 20m budget; 30 rounds
	for _, c := range []struct {
		stops     Stops
		want, not []string
	}{
		{Stops{Capped: 1}, []string{"(this run stopped them at the 30 rounds of -max-rounds, with 17m0s of -budget 20m0s left: raise -max-rounds)."}, []string{"raise -budget"}},
		{Stops{Budget: 1}, []string{"(-budget 20m0s ran out before it reached the 30 rounds of -max-rounds: raise -budget)."}, []string{"raise -max-rounds"}},
		{Stops{Capped: 1, Budget: 2}, []string{"(1 benchmark stopped at the 30 rounds of -max-rounds, 2 when -budget 20m0s ran out: raise both)."}, nil},
		{Stops{}, []string{"Undecided rows never fail the check; the slowest of them would need about 55 rounds."}, []string{"raise"}},
	} {
		r.Stops = c.stops
		var b bytes.Buffer
		require.NoError(t, WriteText(&b, r, nil))
		line := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "Undecided rows") {
				line = l
			}
		}
		for _, w := range c.want {
			assert.Contains(t, line, w, "%+v", c.stops)
		}
		for _, w := range c.not {
			assert.NotContains(t, line, w, "%+v", c.stops)
		}
	}
}
