// Package nullband judges an A/B comparison measured in interleaved rounds,
// calibrated by a null arm A' (a second instance of A in the same rounds),
// and draws the seeded order of arms within rounds (Orders). It touches
// neither the host, testing.B nor processes (package interleave runs arms as
// processes). Judge returns numbers and enumerated reasons; renderers write
// the words.
//
// # Method (Judge)
//
// With the arms' order drawn at random in each round, B, A and A' are
// exchangeable within a round under "no difference": given a round's three
// values, B's is equally likely to be any of them, whatever weather, drift,
// burst or skew the round's arms shared. The test uses that and nothing
// else (no normality, no symmetry, no equal variances), and it uses A' as
// data: B is judged against both instances of A.
//
//  1. Quarantine: a round with a missing or non-positive value. No rule on
//     the values sets a round aside when there is a null arm: a rule on
//     the spread of all three arms removed rounds for showing B's
//     difference (a candidate slow in the rounds the screen marked lost
//     exactly those, and the rest said "equivalent": issue 33), and a rule
//     blind to B (the spread of A and A' alone) keeps the rounds in which
//     B is the odd value, which breaks the test's level under skewed
//     noise. Samples.Contended and Options.Extreme apply without a null
//     arm only (step 6). Over MaxQuarantined (50%) of complete rounds:
//     TooManyQuarantined.
//  2. Effect: the aligned-rank test of a randomized block design with three
//     treatments (Hodges & Lehmann 1962; Hollander, Wolfe & Chicken §7.3).
//     Per kept round the logs of B, A and A' are centred on the round's
//     mean (which cancels the round's weather), all 3n centred values are
//     ranked together, and T is the sum of B's ranks. Given the rounds'
//     rank triples, T's null distribution is that of a sum of n
//     independent uniform choices of one rank per triple: exact by
//     convolution (n ≤ 100; normal above, with its exact mean and
//     variance). The test of a shift θ divides B by e^θ first; the
//     interval is every θ no one-sided test rejects (its ends are among
//     the 2n² differences of centred B and A values), the estimate is
//     their median, Ratio = exp(estimate). It narrows like 1/√rounds and
//     needs 4 rounds for a 95% interval (3⁻⁴ ≤ 2.5%).
//  3. Outcome: Faster or Slower when the two-sided test of θ = 0 rejects at
//     α = 1−Confidence (the (1−α) interval excludes 1); else Equivalent when
//     the one-sided tests of θ = −ln(1+δ) and θ = +ln(1+δ) both reject at α
//     (TOST; the (1−2α) interval lies in [1/(1+δ), 1+δ]); else Undecided.
//     Faster/Slower inside ±δ carries the caveat WithinDelta. Equivalent
//     needs Options.MinEqRounds used rounds (EqFloor: 14 at 95%, enough to
//     see a regime of the candidate in 20% of its rounds at least once
//     with 95% probability); below it the outcome is Undecided with
//     BelowEqFloor.
//  4. Calibration: the Wilcoxon signed-rank test of ln(A'/A) at the
//     stricter α/5. When A'/A is itself significant the arms did not share
//     the weather: NullShifted. A decided outcome then stands only if the
//     paired signed-rank interval of B/A' (same rounds, same level)
//     decides it too, i.e. B differs from both instances of A; otherwise
//     it is withheld. This only removes calls, so error rates hold.
//  5. MDE: the |B/A−1| detected with about 80% power, (t₁₋α/₂ + t₀.₈)·σ/√n
//     (Student's t, n−1 degrees of freedom), σ the per-round scale implied
//     by the interval; MDEAt rescales it to other round counts.
//     RoundsToDecide: the rounds at which the interval would exclude 1 or
//     fit inside ±δ if σ and the estimate held.
//  6. Without a null arm the contended rule (a marked round whose spread
//     |ln B − ln A| is over ContendedFactor times the unmarked rounds'
//     median) and the extreme rule (over Options.Extreme times the median
//     spread) quarantine, symmetric in A and B; each one-sided
//     equivalence test screens the rounds with B moved to its margin.
//     A decided outcome then stands only when judging every complete
//     round (no rule applied; fixed-sample at the look's levels) decides
//     it too: otherwise Undecided with QuarantineChangesCall
//     (Verdict.Unscreened). This only removes calls.
//
// Without a null arm (Samples.Null nil) the test is the Wilcoxon
// signed-rank test of dᵢ = ln(Bᵢ/Aᵢ), symmetric about 0 under "no
// difference" (A and B exchangeable), with the Hodges–Lehmann estimate and
// the Walsh-average interval (Hollander, Wolfe & Chicken §3.1–3.2); it
// needs 6 rounds for a 95% interval. A simpler use of A', ln B −
// ½(ln A + ln A'), is skewed when block times are, and its signed-rank
// test drifts to "faster" as rounds grow; the aligned ranks do not.
//
// In nullband/sim's suite (docs/verdict-accuracy.md) the three-arm test
// has at least the power of benchstat's U-test at every effect of 2% and
// more under the host-like models, where the paired test fell short by
// 2–4 points in three cells (docs/aligned3-spike.md).
//
// # Sequential mode (Options.MaxRounds > 0)
//
// Judge looks after every round (or every Options.Every rounds) from
// MinRounds and stops at the first decided look. Each test spends its error
// rate over the information fraction t = rounds/MaxRounds (Lan–DeMets;
// Spending: Pocock- or O'Brien–Fleming-type): each tail of the effect test
// α/2, each one-sided equivalence test α. The boundary of each look is the
// critical value whose crossing probability under the permutation null
// (Monte Carlo, Options.Replicates, fixed Seed: deterministic) reaches the
// spent level given no earlier crossing; later rounds never change an
// earlier look. Each replicate draws, once per round, which of the round's
// three values plays B (without a null arm: the sign of dᵢ), so the joint
// law of the looks' statistics is the exact conditional one: no union bound
// or normal approximation is needed. The observed labelling counts as one
// more replicate (the usual +1 of Monte Carlo tests): left out, each look
// let about one replicate's worth too many through, 5.1% instead of 2.5% a
// tail over 27 looks with 200 replicates (TestRankBoundaryKeepsItsSpend…). The interval reported at the stopping
// look is the repeated confidence interval at that look's nominal levels
// (the exact null probability of each boundary). Pocock is the default: it
// stops clear effects early; O'Brien–Fleming keeps more power for the last
// look when the noise is close to the effect.
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
// (3rd ed.), §3.1–3.2 and §7.3; Hodges & Lehmann (1962), Ann. Math.
// Statist. 33:482, "Rank methods for combination of independent
// experiments in analysis of variance"; Schuirmann (1987), TOST; Lan & DeMets (1983),
// Biometrika 70:659; Jennison & Turnbull, Group Sequential Methods (2000);
// Holm (1979), Scand. J. Statist. 6:65.
package nullband
