// Package nullband judges an A/B comparison measured in interleaved rounds,
// calibrated by a null arm A' (a second instance of A in the same rounds),
// and draws the seeded order of arms within rounds (Orders). It touches
// neither the host, testing.B nor processes (package interleave runs arms as
// processes). Judge returns numbers and enumerated reasons; renderers write
// the words.
//
// # Method (Judge)
//
// Per round i: dᵢ = ln(Bᵢ/Aᵢ) and nᵢ = ln(A'ᵢ/Aᵢ). With the arms' order drawn
// at random in each round, A and B are exchangeable under "no difference",
// so dᵢ is symmetric about 0 whatever weather, drift or burst the round's
// arms shared; nothing else is assumed (no normality, no equal variances).
// A' stays out of d: ln B − ½(ln A + ln A') is skewed when block times are,
// and its signed-rank test then drifts to "faster" as rounds grow.
//
//  1. Quarantine, symmetric in the arms: a round with a missing or
//     non-positive value, a round Samples.Contended marks whose spread
//     max−min of the arms' logs exceeds ContendedFactor (2) times the
//     unmarked rounds' median spread, and any round whose spread exceeds
//     Options.Extreme (3) times the median spread of the complete rounds. Swapping arms within a round
//     changes no decision, so the kept dᵢ stay symmetric. Over
//     MaxQuarantined (50%) of complete rounds: TooManyQuarantined.
//  2. Effect: the Wilcoxon signed-rank test on d. Estimate: Hodges–Lehmann
//     (median of the Walsh averages); interval: order statistics k and
//     N+1−k of the N Walsh averages, k from the exact null distribution of
//     the signed-rank statistic (n ≤ 100; normal approximation above). It
//     narrows like 1/√rounds. Ratio = exp(estimate).
//  3. Outcome: Faster or Slower when the (1−α) interval excludes 1
//     (α = 1−Confidence); else Equivalent when the (1−2α) interval lies in
//     [1/(1+δ), 1+δ] (TOST, two one-sided tests at α); else Undecided.
//     Faster/Slower inside ±δ carries the caveat WithinDelta. Each
//     one-sided test screens the rounds (step 1) with B divided by 1+δ or
//     multiplied by it: under its hypothesis those values are the ones
//     exchangeable with A's, so its quarantine stays symmetric.
//  4. Calibration: the same test on n at the stricter α/5. When A'/A is
//     itself significant the arms did not share the weather: NullShifted.
//     A decided outcome then stands only if B/A' (same rounds, same index)
//     decides it too, i.e. B differs from both instances of A; otherwise
//     it is withheld. This only removes calls, so error rates hold. In
//     nullband/sim it removes every false call that withholding all would,
//     and keeps the power of a mere caveat.
//  5. MDE: the |B/A−1| detected with about 80% power, (t₁₋α/₂ + t₀.₈)·σ/√n
//     (Student's t, n−1 degrees of freedom), σ the per-round scale implied
//     by the interval; MDEAt rescales it to other round counts.
//     RoundsToDecide: the rounds at which the interval would exclude 1 or
//     fit inside ±δ if σ and the estimate held.
//
// # Sequential mode (Options.MaxRounds > 0)
//
// Judge looks after every round (or every Options.Every rounds) from
// MinRounds and stops at the first decided look. Each test spends its error
// rate over the information fraction t = rounds/MaxRounds (Lan–DeMets;
// Spending: Pocock- or O'Brien–Fleming-type): the two-sided effect test α,
// each one-sided equivalence test α. The boundary of each look is the
// order-statistic index whose crossing probability, under sign flips of
// the observed magnitudes (Monte Carlo, Options.Replicates, fixed Seed:
// deterministic), reaches the spent level given no earlier crossing; later
// rounds never change an earlier look. Sign-flip boundaries are exact conditional on the
// magnitudes, so no union bound or normal approximation is needed. Pocock
// is the default: it stops clear effects early; O'Brien–Fleming keeps more
// power for the last look when the noise is close to the effect.
//
// # Families (JudgeFamily, JudgeWeighted)
//
// Several metrics of one arm, or every row of a pull request, are judged
// together under Holm's step-down procedure (weighted: Holm 1979, §4), so
// that the chance of any false faster/slower call among them is at most α;
// each member's difference test runs at its Holm level, its equivalence
// test at the nominal α (Options.EqConfidence). decodegap weighs an arm's
// median step twice its other metrics.
//
// Verdict also carries benchstat's view of the same rounds (each arm's
// benchmath.AssumeNothing summary and its U-test of A against B).
//
// References: Hollander, Wolfe & Chicken, Nonparametric Statistical Methods
// (3rd ed.), §3.1–3.2; Schuirmann (1987), TOST; Lan & DeMets (1983),
// Biometrika 70:659; Jennison & Turnbull, Group Sequential Methods (2000);
// Holm (1979), Scand. J. Statist. 6:65.
package nullband
