package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skipComparer answers from a step function (commits at index ≥ first
// are changed) and skips the broken ones, as a comparer does when a
// commit does not build.
type skipComparer struct {
	first  int
	broken map[int]bool
	tried  []int
}

func (f *skipComparer) Compare(_ context.Context, good, cand string, _ float64) (StepResult, error) {
	var g, c int
	fmt.Sscan(good, &g)
	fmt.Sscan(cand, &c)
	f.tried = append(f.tried, c)
	if f.broken[c] {
		return StepResult{}, fmt.Errorf("head: example.com/x: go test -c: exit status 1: %w", ErrSkip)
	}
	if c >= f.first && g < f.first {
		return NaNStep(StepChanged), nil
	}
	return NaNStep(StepUnchanged), nil
}

func numbered(n int) []string {
	c := make([]string, n+1)
	for i := range c {
		c[i] = fmt.Sprint(i)
	}
	return c
}

// A commit that does not build is skipped and the search goes on with
// its neighbours, as git bisect skip: named when the skipped commits do
// not hide the answer, else the range of candidates, every commit inside
// it skipped (git's "the first bad commit could be any of").
func TestBisectSkipsUnbuildableCommits(t *testing.T) {
	ctx := context.Background()
	// 4 commits, slower from 4, 2 broken: 2 is skipped, 1 and 3 decide.
	f := &skipComparer{first: 4, broken: map[int]bool{2: true}}
	r, err := Bisect(ctx, numbered(4), f, 0.05, Slower)
	require.NoError(t, err)
	assert.Equal(t, WhyNamed, r.Why)
	assert.Equal(t, 4, r.First)
	require.Len(t, r.Skipped, 1)
	assert.Equal(t, 2, r.Skipped[0].Index)
	assert.ErrorIs(t, r.Skipped[0].Err, ErrSkip)
	assert.Len(t, r.Steps, 3, "4v0, 1v0, 3v1: within the 3 comparisons")

	// Slower from 3, 2 broken: 2 or 3, as git says.
	f = &skipComparer{first: 3, broken: map[int]bool{2: true}}
	r, err = Bisect(ctx, numbered(4), f, 0.05, Slower)
	require.NoError(t, err)
	assert.Equal(t, WhySkipped, r.Why)
	assert.Equal(t, -1, r.First)
	assert.Equal(t, []int{1, 3}, []int{r.Lo, r.Hi}, "the first slower commit is 2 or 3")

	// The bad end cannot be skipped: nothing to bisect against.
	f = &skipComparer{first: 3, broken: map[int]bool{4: true}}
	r, err = Bisect(ctx, numbered(4), f, 0.05, Slower)
	assert.ErrorIs(t, err, ErrSkip)
	assert.Equal(t, WhyFailed, r.Why)

	// Every first commit and random broken sets: never a wrong commit
	// named, never more comparisons than Tests, the range always holds
	// the first changed commit, and a WhySkipped range holds only
	// skipped commits inside it.
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		n := 2 + rng.IntN(40)
		first := 1 + rng.IntN(n)
		broken := map[int]bool{}
		for i := 1; i < n; i++ {
			if rng.Float64() < 0.3 {
				broken[i] = true
			}
		}
		f := &skipComparer{first: first, broken: broken}
		r, err := Bisect(ctx, numbered(n), f, 0.05, Slower)
		require.NoError(t, err)
		what := fmt.Sprintf("n %d first %d broken %v", n, first, broken)
		assert.LessOrEqual(t, len(r.Steps), r.Tests, what)
		switch r.Why {
		case WhyNamed:
			assert.Equal(t, first, r.First, what)
		case WhySkipped, WhyOutOfTests:
			assert.True(t, r.Lo < first && first <= r.Hi, "%s: range %d..%d", what, r.Lo, r.Hi)
			if r.Why == WhySkipped {
				for i := r.Lo + 1; i < r.Hi; i++ {
					assert.True(t, broken[i], "%s: %d in the range was not skipped", what, i)
				}
			}
		default:
			t.Fatalf("%s: why %v", what, r.Why)
		}
		for _, s := range r.Skipped {
			assert.True(t, broken[s.Index], what)
		}
		if len(broken) == 0 {
			assert.Equal(t, WhyNamed, r.Why, "without skips every search names the commit")
		}
	}
}

func TestMiddle(t *testing.T) {
	assert.Equal(t, 2, middle(0, 4, nil))
	assert.Equal(t, 1, middle(0, 4, map[int]bool{2: true}), "the lower of two as near")
	assert.Equal(t, 3, middle(0, 4, map[int]bool{1: true, 2: true}))
	assert.Equal(t, -1, middle(0, 4, map[int]bool{1: true, 2: true, 3: true}))
	assert.Equal(t, -1, middle(3, 4, nil))
}

// cancelComparer answers from skipComparer until its call number stop,
// where it ends the search's context (SIGINT) and returns its error, as
// prComparer does when a step's build or run is interrupted.
type cancelComparer struct {
	skipComparer
	stop, calls int
	cancel      context.CancelFunc
}

func (f *cancelComparer) Compare(ctx context.Context, good, cand string, conf float64) (StepResult, error) {
	if f.calls++; f.calls == f.stop {
		f.cancel()
		return StepResult{}, fmt.Errorf("building %s: %w", cand, ctx.Err())
	}
	return f.skipComparer.Compare(ctx, good, cand, conf)
}

// An interrupted search ends WhyInterrupted, not WhyFailed, at the first
// comparison as at a later one, with the range so far.
func TestBisectInterrupted(t *testing.T) {
	for _, stop := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		c := &cancelComparer{skipComparer: skipComparer{first: 5}, stop: stop, cancel: cancel}
		r, err := Bisect(ctx, numbered(16), c, 0.05, Slower)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, WhyInterrupted, r.Why, "stop at call %d", stop)
		assert.Len(t, r.Steps, stop-1)
		cancel()
	}
}
