package judge

import (
	"errors"
	"fmt"
	"time"
)

// Stop says why a Loop ended.
type Stop int

const (
	// AllDecided: every row was decided at a look.
	AllDecided Stop = iota + 1
	// OutOfRounds: Loop.MaxRounds rounds ran.
	OutOfRounds
	// OutOfBudget: the time budget could not pay for another round at
	// the mean round time so far.
	OutOfBudget
	// Failed: a round returned an error; the rounds before it are kept.
	Failed
)

// String returns "decided", "max-rounds", "budget" or "failed".
func (s Stop) String() string {
	switch s {
	case AllDecided:
		return "decided"
	case OutOfRounds:
		return "max-rounds"
	case OutOfBudget:
		return "budget"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("Stop(%d)", int(s))
}

// Loop is the one sequential loop: rounds run one after another until
// every row is decided, MaxRounds rounds ran, or the time budget is spent.
// The verdict spends its error rate over the looks (nullband's sequential
// mode with Options.MaxRounds = MaxRounds), so stopping at the first
// decided look does not inflate false alarms; stopping for the budget
// before MaxRounds costs power, never error.
type Loop struct {
	// MaxRounds is the most rounds (> 0).
	MaxRounds int
	// Budget, when > 0, is the wall time the rounds may take: a round is
	// started only while the time left pays for it at the mean round time
	// so far (the first round always runs).
	Budget time.Duration
	// NoEarlyStop runs every round whatever the looks say (Compare with
	// several -cpu values); the budget still applies.
	NoEarlyStop bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Run runs round(r) for r = 1, 2, … and after each calls look(r), which
// reports whether every row is decided over the first r rounds. It
// returns the rounds completed and why it stopped; the error is round's,
// with the rounds before it completed.
func (l Loop) Run(round func(r int) error, look func(r int) bool) (int, Stop, error) {
	if l.MaxRounds <= 0 {
		return 0, Failed, errors.New("judge: Loop.MaxRounds must be > 0")
	}
	now := l.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	for r := 1; r <= l.MaxRounds; r++ {
		if r > 1 && l.Budget > 0 {
			el := now().Sub(start)
			per := el / time.Duration(r-1)
			if el+per > l.Budget {
				return r - 1, OutOfBudget, nil
			}
		}
		if err := round(r); err != nil {
			return r - 1, Failed, err
		}
		if look(r) && !l.NoEarlyStop {
			return r, AllDecided, nil
		}
	}
	return l.MaxRounds, OutOfRounds, nil
}
