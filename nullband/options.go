package nullband

import "fmt"

// Options configures Judge. The zero Options is valid: 95%, δ = 2%, fixed
// sample.
type Options struct {
	// Confidence is 1−α, the level of the interval that decides faster or
	// slower; equivalence uses the (1−2α) interval (TOST) unless
	// EqConfidence is set. Zero means 0.95.
	Confidence float64
	// EqConfidence, when set, is 1−α_eq for the equivalence test alone: it
	// is judged on the (1−2α_eq) interval. JudgeFamily sets it to the
	// family's nominal level while raising Confidence for Holm's
	// procedure. Zero means Confidence.
	EqConfidence float64
	// Delta is the equivalence margin as a fraction: B/A within
	// [1/(1+Delta), 1+Delta]. Zero means 0.02.
	Delta float64
	// MaxQuarantined is the largest share of complete rounds that may be
	// quarantined (Contended or Extreme) before the verdict is undecided.
	// Zero means 0.5; 1 never gives up.
	MaxQuarantined float64
	// MaxRounds > 0 selects sequential mode: Judge looks after every round
	// from MinRounds to MaxRounds and stops at the first decided look,
	// spending α over the looks (Spending). Zero judges all rounds once.
	MaxRounds int
	// MinRounds is the first look in sequential mode; zero means the
	// fewest rounds that give a finite interval (at 95%: 4 with a null
	// arm, 6 without), or MaxRounds
	// when that is fewer.
	MinRounds int
	// Spending is the α-spending function of sequential mode.
	Spending Spending
	// Every is the number of rounds between sequential looks after the
	// first (the last look is always at MaxRounds). Zero means 1.
	Every int
	// Extreme is the factor over the median spread beyond which a round is
	// quarantined as Extreme. Zero means 3; +Inf never quarantines.
	Extreme float64
	// Replicates is the number of Monte Carlo permutation replicates
	// behind the sequential boundaries. Zero means 4000.
	Replicates int
	// Seed seeds those replicates (deterministic for a given Seed).
	Seed uint64
}

// withDefaults fills in the zero fields; threeArm says the samples have a
// null arm (the aligned-rank test, whose fewest rounds differ).
func (o Options) withDefaults(threeArm bool) Options {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.EqConfidence == 0 {
		o.EqConfidence = o.Confidence
	}
	if o.Delta == 0 {
		o.Delta = 0.02
	}
	if o.MaxQuarantined == 0 {
		o.MaxQuarantined = 0.5
	}
	if o.Extreme == 0 {
		o.Extreme = 3
	}
	if o.Replicates == 0 {
		o.Replicates = 4000
	}
	if o.Every == 0 {
		o.Every = 1
	}
	if o.MinRounds == 0 {
		o.MinRounds = minRoundsFor((1 - o.Confidence) / 2)
		if threeArm {
			o.MinRounds = alignedMinRounds((1 - o.Confidence) / 2)
		}
		if o.MaxRounds > 0 && o.MinRounds > o.MaxRounds {
			// Too few rounds for any interval at this level: the one
			// look, at MaxRounds, says so (TooFewRounds).
			o.MinRounds = o.MaxRounds
		}
	}
	return o
}

func (o Options) validate() error {
	switch {
	case !(o.Confidence > 0.5 && o.Confidence < 1):
		return fmt.Errorf("nullband: Options.Confidence %v: want a value in (0.5, 1), e.g. 0.95", o.Confidence)
	case !(o.EqConfidence > 0.5 && o.EqConfidence < 1):
		return fmt.Errorf("nullband: Options.EqConfidence %v: want a value in (0.5, 1), or 0 for Confidence", o.EqConfidence)
	case !(o.Delta > 0):
		return fmt.Errorf("nullband: Options.Delta %v: want a fraction > 0, e.g. 0.02", o.Delta)
	case !(o.MaxQuarantined > 0 && o.MaxQuarantined <= 1):
		return fmt.Errorf("nullband: Options.MaxQuarantined %v: want a share in (0, 1]", o.MaxQuarantined)
	case !(o.Extreme > 1):
		return fmt.Errorf("nullband: Options.Extreme %v: want a factor > 1", o.Extreme)
	case o.MaxRounds < 0, o.Replicates < 0, o.Every < 0:
		return fmt.Errorf("nullband: Options.MaxRounds %d, Replicates %d, Every %d: want ≥ 0", o.MaxRounds, o.Replicates, o.Every)
	case o.MaxRounds > 0 && (o.MinRounds < 1 || o.MinRounds > o.MaxRounds):
		return fmt.Errorf("nullband: Options.MinRounds %d: want 1 … MaxRounds (%d)", o.MinRounds, o.MaxRounds)
	case o.Spending != Pocock && o.Spending != OBrienFleming:
		return fmt.Errorf("nullband: Options.Spending %v: unknown", o.Spending)
	}
	return nil
}
