// Package nullband does the statistics across runs of an A/B comparison —
// the null band from A/A pairs, the verdict of a B/A ratio against it, round
// rejection, the minimal detectable effect and regime (bimodality) detection
// — and the seeded order of arms within rounds (Orders). Package interleave
// runs arms as processes and collects their results into Samples.
//
// It touches neither the host, testing.B nor processes.
//
// # Why a null band
//
// A benchmark that compares B with A compares two things at once: B against
// A, and this moment's weather against the last. The null arm A' is a second,
// independent instance of A (another process, or another instance in the same
// process) measured in the same rounds; A'/A shows how far A strays from
// itself here and now. A B/A ratio is only news when it lies outside that.
//
// # The verdict (Judge)
//
// Input is Samples: for each round i, one value of A, B and A' in one unit.
//
//  1. Round rejection. Round i's own null ratio A'ᵢ/Aᵢ outside
//     [1/RejectRatio, RejectRatio] (default 1.25) marks the round rejected,
//     with the reason; so does a missing or non-positive value. Rejected
//     rounds stay in Verdict.Rounds and in benchstat's view (below) but not
//     in the band or the ratio. When more than MaxRejected (25%) of rounds
//     are rejected the verdict is unmeasurable.
//  2. Null band. The (1−BandCoverage)/2 and (1+BandCoverage)/2 quantiles
//     (default 5% and 95%) of the accepted rounds' A'/A: the range of a
//     single round's ratio when nothing differs. Band.Median adds the median
//     A'/A with its confidence interval.
//  3. Ratio. The median over accepted rounds of the paired ratio Bᵢ/Aᵢ, with
//     benchmath.AssumeNothing's distribution-free confidence interval (the
//     "±" of benchstat; 95%, needs ≥ 6 rounds to be finite). Pairing within a
//     round cancels the weather A and B shared.
//  4. Regimes. Each arm's accepted values are tested for regimes (Regimes:
//     a gap between sorted values much wider than the spread on either side).
//     A bimodal arm makes the verdict unmeasurable, naming each regime's
//     centre and count, rather than averaging the two.
//  5. Kind. Outside (an effect) when the ratio's whole confidence interval
//     lies outside the band. Inside (noise) when the ratio lies inside a band
//     no wider than MaxBand (default 1.10, ±10%). Otherwise unmeasurable, with
//     the reason: too few accepted rounds, too many rejected, a bimodal arm,
//     a band wider than MaxBand ("the band is wider than ±10%"), or a ratio
//     outside the band whose interval still overlaps it.
//  6. Minimal detectable effect. The ratios beyond which an effect would have
//     been called outside in this run: Band.Hi × Ratio.Center/Ratio.Lo above
//     1 and Band.Lo × Ratio.Center/Ratio.Hi below, i.e. this run's band
//     widened by this run's confidence interval.
//
// The band holds single rounds' ratios while the ratio is a median, so the
// test is conservative: it calls an effect only when B differs from A by
// more than A differed from itself in most single rounds.
//
// Verdict also carries benchstat's own figures over every round (rejected
// included): each arm's median and confidence interval
// (benchmath.AssumeNothing.Summary) and the Mann–Whitney U-test of A against
// B (benchmath.AssumeNothing.Compare), so what gapbench prints agrees with
// `go tool benchstat` on the same file.
//
// # Units
//
// Samples, Regime and the Base/Candidate/Null summaries are in the unit of
// the values (benchfmt tidies ns/op into sec/op). Ratios, the band, the MDE
// and RejectRatio/MaxBand are unitless ratios B/A or A'/A. Confidence,
// Alpha, BandCoverage and MaxRejected are fractions in (0, 1].
package nullband
