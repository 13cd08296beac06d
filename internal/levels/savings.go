package levels

import "math/rand/v2"

// The two models the plan's savings are simulated on (docs/noise-levels.md):
// the Silero VAD at a 2 ms gap as issue 25 measured it, and its three
// levels measured under load 12–22.
var (
	// IssueTruth: steps ±37% inside a block (p90/p50 ≈ 1.6), blocks ±15%
	// between sessions, rounds ±10%.
	IssueTruth = Truth{StepSigma: 0.37, BetweenSigma: 0.15, RoundSigma: 0.10}
	// IssueCost: a step of about 170 µs after its 2 ms gap, 0.1 s a block
	// to open the session and warm up, five arms.
	IssueCost = Cost{Step: 0.00217, Block: 0.11, Arms: 5}
	// MeasuredTruth: within ±4.5% at 300 steps (a step σ of 0.62), between
	// blocks ±25.7%, between rounds ±14.5%.
	MeasuredTruth = Truth{StepSigma: 0.62, BetweenSigma: 0.257, RoundSigma: 0.145}
	// MeasuredCost: a block costs 0.59 s beyond its steps, a step with
	// its gap 2.67 ms.
	MeasuredCost = Cost{Step: 0.00267, Block: 0.59, Arms: 5}
)

// Savings is the simulated time to an MDE of a calibrated plan and of a
// fixed one.
type Savings struct {
	// Calibrated is the plan Optimize chose from a simulated 20-round A/A
	// run, Fixed the fixed plan; each with the rounds it needed.
	Calibrated, Fixed Plan
	// CalibratedSeconds and FixedSeconds are their costs.
	CalibratedSeconds, FixedSeconds float64
}

// SimulateSavings calibrates a plan for target (an MDE, a fraction) from a
// simulated A/A run under truth (20 rounds of 3 blocks of 600 steps), then
// counts the rounds it and the fixed plan of fixedSteps × 1 block need for
// the MDE at confidence conf in trials simulated comparisons (seeded). ok
// is false when either plan cannot reach the target within 400 rounds.
func SimulateSavings(truth Truth, cost Cost, target, conf float64, fixedSteps, trials int, seed uint64) (s Savings, ok bool) {
	r := rand.New(rand.NewPCG(seed, seed))
	est, err := Estimate(truth.CalibrationRun(r, 20, 3, 600))
	if err != nil {
		return Savings{}, false
	}
	plan, ok := est.Optimize(cost, target, Limits{})
	if !ok {
		return Savings{}, false
	}
	rc, ok := truth.SimulatedRounds(plan, target, conf, 8, 400, trials, 1)
	if !ok {
		return Savings{}, false
	}
	fixed := Plan{Steps: fixedSteps, Blocks: 1}
	rf, ok := truth.SimulatedRounds(fixed, target, conf, 8, 400, trials, 1)
	if !ok {
		return Savings{}, false
	}
	plan.Rounds, fixed.Rounds = rc, rf
	return Savings{Calibrated: plan, Fixed: fixed, CalibratedSeconds: cost.Seconds(plan), FixedSeconds: cost.Seconds(fixed)}, true
}
