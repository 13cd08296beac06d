package sim

import (
	"fmt"

	"github.com/gapbench/gapbench/nullband"
)

// Verdict is nullband.Judge with its zero Options (95%, δ = 2%), given the
// trial's Contended flags. Fixed judges all rounds; Sequential sets
// Options.MaxRounds and reports the rounds up to the look that decided (or
// all of them).
func Verdict() Method {
	return Method{
		Name: "verdict",
		Fixed: func(t Trial) Call {
			v := judge(t, nullband.Options{})
			return fromOutcome(v.Outcome)
		},
		Sequential: func(t Trial, maxRounds int) (Call, int) {
			v := judge(t.Prefix(maxRounds), nullband.Options{MaxRounds: maxRounds})
			return fromOutcome(v.Outcome), len(v.Rounds)
		},
	}
}

// judge calls nullband.Judge; a trial is always well formed, so an error is
// a bug in the suite.
func judge(t Trial, opt nullband.Options) nullband.Verdict {
	v, err := nullband.Judge(nullband.Samples{Base: t.A, Candidate: t.B, Null: t.Null, Contended: t.Contended}, opt)
	if err != nil {
		panic(fmt.Sprintf("sim: nullband.Judge refused a trial: %v", err))
	}
	return v
}

func fromOutcome(o nullband.Outcome) Call {
	switch o {
	case nullband.Faster:
		return Faster
	case nullband.Slower:
		return Slower
	case nullband.Equivalent:
		return Equivalent
	}
	return Undecided
}
