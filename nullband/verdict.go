package nullband

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Samples holds one metric, in one unit, for three arms measured in the same
// interleaved rounds: the baseline A, the candidate B and the null arm A' (a
// second, independent instance of A). Index i of every slice is round i, so
// the three slices must have the same length. A missing measurement is NaN;
// its round is rejected with that reason.
//
// Values are whatever the unit measures (sec/op, B/op, …); ratios are taken
// as B/A and A'/A, so values must be positive for a round to count.
type Samples struct {
	// Round labels each round for messages (round numbers as written in
	// the benchfmt `round:` key). Nil means 1, 2, 3, …; otherwise it has
	// the same length as Base.
	Round []int
	// Base is A, the configuration the others are judged against.
	Base []float64
	// Candidate is B, the configuration being judged.
	Candidate []float64
	// Null is A', a second instance of A measured in the same rounds.
	Null []float64
}

// Knobs names, for messages a person reads, the settings that change a
// verdict. A command line sets them to its flags ("-rounds"); the zero
// Knobs names Options' fields.
type Knobs struct {
	// Rounds names the setting for the number of rounds.
	Rounds string
	// RejectRatio names the setting behind Options.RejectRatio.
	RejectRatio string
	// MaxBand names the setting behind Options.MaxBand.
	MaxBand string
}

// Options configures Judge. The zero Options is the documented default for
// every field.
type Options struct {
	// Confidence is the level of every confidence interval, in (0, 1).
	// Zero means 0.95, the level benchstat uses.
	Confidence float64
	// Alpha is the level of the Mann–Whitney U-test that benchstat runs
	// (benchmath.AssumeNothing.Compare), reported as Verdict.Comparison.
	// Zero means 0.05, benchstat's default. It does not decide the verdict.
	Alpha float64
	// BandCoverage is the share of accepted rounds' A'/A ratios that the
	// null band spans, centred: 0.90 spans the 5th to the 95th percentile.
	// Zero means 0.90.
	BandCoverage float64
	// RejectRatio rejects a round whose own A'/A ratio lies outside
	// [1/RejectRatio, RejectRatio]: that round's A and A' disagree by more
	// than the effects one hopes to see, so its B/A says nothing. It must
	// be > 1; zero means 1.25; +Inf never rejects.
	RejectRatio float64
	// MaxBand is the widest null band, as a ratio > 1 (1.10 is ±10%), that
	// can still call a ratio inside it noise. When the band is wider, a
	// ratio inside it is unmeasurable: the band is wider than MaxBand.
	// Zero means 1.10.
	MaxBand float64
	// MaxRejected is the largest share of complete rounds (every value
	// present and positive) that may be rejected for their A'/A before the
	// whole run is unmeasurable. Zero means 0.25; 1 never gives up.
	MaxRejected float64
	// RegimeGap is the factor by which the gap between two regimes must
	// exceed the spread inside each of them; see Regimes. Zero means 3.
	RegimeGap float64
	// Knobs names the settings in messages. Zero names Options' fields.
	Knobs Knobs
}

func (o Options) withDefaults() Options {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.BandCoverage == 0 {
		o.BandCoverage = 0.90
	}
	if o.RejectRatio == 0 {
		o.RejectRatio = 1.25
	}
	if o.MaxBand == 0 {
		o.MaxBand = 1.10
	}
	if o.MaxRejected == 0 {
		o.MaxRejected = 0.25
	}
	if o.RegimeGap == 0 {
		o.RegimeGap = 3
	}
	if o.Knobs.Rounds == "" {
		o.Knobs.Rounds = "the number of rounds"
	}
	if o.Knobs.RejectRatio == "" {
		o.Knobs.RejectRatio = "Options.RejectRatio"
	}
	if o.Knobs.MaxBand == "" {
		o.Knobs.MaxBand = "Options.MaxBand"
	}
	return o
}

func (o Options) validate() error {
	switch {
	case !(o.Confidence > 0 && o.Confidence < 1):
		return fmt.Errorf("nullband: Options.Confidence %v must be in (0, 1), e.g. 0.95", o.Confidence)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("nullband: Options.Alpha %v must be in (0, 1), e.g. 0.05", o.Alpha)
	case !(o.BandCoverage > 0 && o.BandCoverage <= 1):
		return fmt.Errorf("nullband: Options.BandCoverage %v must be in (0, 1], e.g. 0.90", o.BandCoverage)
	case !(o.RejectRatio > 1):
		return fmt.Errorf("nullband: %s %v must be > 1, e.g. 1.25 (±25%%)", o.Knobs.RejectRatio, o.RejectRatio)
	case !(o.MaxBand > 1):
		return fmt.Errorf("nullband: %s %v must be > 1, e.g. 1.10 (±10%%)", o.Knobs.MaxBand, o.MaxBand)
	case !(o.MaxRejected > 0 && o.MaxRejected <= 1):
		return fmt.Errorf("nullband: Options.MaxRejected %v must be in (0, 1], e.g. 0.25", o.MaxRejected)
	case !(o.RegimeGap > 0):
		return fmt.Errorf("nullband: Options.RegimeGap %v must be > 0, e.g. 3", o.RegimeGap)
	}
	return nil
}

// Kind is the outcome of a verdict.
type Kind int

const (
	// Unmeasurable means this run cannot tell: too few accepted rounds,
	// too many rejected, a bimodal arm, a null band wider than
	// Options.MaxBand, or a ratio whose confidence interval straddles the
	// band's edge. It is the zero Kind. Verdict.Reason says which.
	Unmeasurable Kind = iota
	// Inside means the B/A ratio lies inside a null band no wider than
	// Options.MaxBand: B differs from A by no more than A differs from
	// itself (noise).
	Inside
	// Outside means the whole confidence interval of the B/A ratio lies
	// outside the null band: an effect.
	Outside
)

// String returns "unmeasurable", "inside" or "outside".
func (k Kind) String() string {
	switch k {
	case Unmeasurable:
		return "unmeasurable"
	case Inside:
		return "inside"
	case Outside:
		return "outside"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Band is the null band: how far A'/A, the same configuration measured
// against a second instance of itself, strays in this run.
type Band struct {
	// Lo and Hi are the (1−Coverage)/2 and (1+Coverage)/2 quantiles of the
	// accepted rounds' A'/A ratios (linear interpolation between order
	// statistics; with few rounds they are close to the minimum and the
	// maximum). Unitless ratios; NaN when no round was accepted.
	Lo, Hi float64
	// Coverage is Options.BandCoverage.
	Coverage float64
	// Median is the median A'/A ratio with its confidence interval, as
	// benchmath.AssumeNothing computes it (benchstat's "±"). Lo and Hi of
	// the interval are ±Inf when there are too few rounds for one.
	Median benchmath.Summary
	// N is the number of accepted rounds the band is built from.
	N int
}

// Width returns the band's half-width as a ratio ≥ 1: max(Hi, 1/Lo). A band
// of 0.95–1.04 has width 1.0526 (±5.3%). NaN when the band is empty.
func (b Band) Width() float64 {
	if b.N == 0 || math.IsNaN(b.Lo) || math.IsNaN(b.Hi) {
		return math.NaN()
	}
	return math.Max(math.Max(b.Hi, 1/b.Lo), 1)
}

// Contains reports whether ratio r lies in [Lo, Hi].
func (b Band) Contains(r float64) bool { return r >= b.Lo && r <= b.Hi }

// RoundStatus is one round as Judge saw it.
type RoundStatus struct {
	// Round is the round's label (Samples.Round).
	Round int
	// Ratio is B/A in this round; NullRatio is A'/A. NaN when missing.
	Ratio, NullRatio float64
	// Rejected marks a round left out of the ratio and the band; it stays
	// in Verdict.Base/Candidate/Null and Comparison, as in benchstat.
	Rejected bool
	// Reason says why a round was rejected, with its numbers; empty when
	// it was accepted.
	Reason string
}

// Detectable is the minimal detectable effect of a run: the smallest ratios
// away from 1 whose confidence interval, as wide as this run's, would lie
// wholly outside this run's null band.
type Detectable struct {
	// Down (< 1) and Up (> 1) are ratios B/A. Down is 0 and Up is +Inf
	// when the run has no finite confidence interval.
	Down, Up float64
}

// Percent returns the larger of the two as a percentage: max(Up−1, 1−Down)
// ×100. +Inf when unknown.
func (d Detectable) Percent() float64 {
	return 100 * math.Max(d.Up-1, 1-d.Down)
}

// Verdict is the judgement of one candidate against the baseline and the
// null band of one run.
type Verdict struct {
	// Kind is inside, outside or unmeasurable.
	Kind Kind
	// Reason says why, in words, with the numbers it rests on and the
	// setting that would change it.
	Reason string
	// Confidence is the level of every confidence interval in the
	// verdict (Options.Confidence).
	Confidence float64
	// Ratio is the median over accepted rounds of the per-round ratio B/A,
	// with its confidence interval (benchmath.AssumeNothing on the
	// ratios). Pairing by round cancels the weather that A and B shared.
	Ratio benchmath.Summary
	// Band is the null band the ratio is judged against.
	Band Band
	// MDE is the minimal detectable effect of this run.
	MDE Detectable
	// Base, Candidate and Null summarise every round's values (rejected
	// included) exactly as benchstat does: median with its confidence
	// interval, in the samples' unit.
	Base, Candidate, Null benchmath.Summary
	// Comparison is benchstat's U-test of Base against Candidate over
	// every round; CenterRatio is benchstat's delta as a ratio:
	// Candidate.Center / Base.Center.
	Comparison  benchmath.Comparison
	CenterRatio float64
	// Rounds lists every round in input order, with its ratios and
	// whether it was rejected.
	Rounds []RoundStatus
	// Rejected is the number of rejected rounds; Incomplete the number of
	// those rejected because a value was missing or not positive (an
	// interrupted run's last round), as opposed to A'/A out of bounds.
	Rejected, Incomplete int
	// BaseRegimes, CandidateRegimes and NullRegimes are each arm's
	// regimes over the accepted rounds (see Regimes); more than one in any
	// arm makes the verdict
	// unmeasurable, because a median then sits between regimes.
	BaseRegimes, CandidateRegimes, NullRegimes []Regime
}

// Judge judges Samples s: the B/A ratio against the null band from A'/A.
//
// Each round's A'/A decides whether it is rejected (Options.RejectRatio); the
// accepted rounds give the band and the ratio. The verdict is Outside when
// the ratio's confidence interval lies wholly outside the band, Inside when
// the ratio lies inside a band no wider than Options.MaxBand, and
// Unmeasurable otherwise, with the reason. It returns an error only for
// malformed input or Options.
func Judge(s Samples, opt Options) (Verdict, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return Verdict{}, err
	}
	n := len(s.Base)
	if n == 0 {
		return Verdict{}, errors.New("nullband: Judge needs at least one round: Samples.Base is empty")
	}
	if len(s.Candidate) != n || len(s.Null) != n || (s.Round != nil && len(s.Round) != n) {
		return Verdict{}, fmt.Errorf("nullband: Samples slices differ in length (Base %d, Candidate %d, Null %d, Round %d): index i must be round i in each",
			n, len(s.Candidate), len(s.Null), len(s.Round))
	}

	v := Verdict{Confidence: opt.Confidence, Rounds: make([]RoundStatus, n)}
	var ratios, nulls []float64
	lo, hi := 1/opt.RejectRatio, opt.RejectRatio
	for i := range n {
		a, b, a2 := s.Base[i], s.Candidate[i], s.Null[i]
		rs := RoundStatus{Round: i + 1, Ratio: b / a, NullRatio: a2 / a}
		if s.Round != nil {
			rs.Round = s.Round[i]
		}
		switch {
		case math.IsNaN(a), math.IsNaN(b), math.IsNaN(a2):
			var miss []string
			for _, m := range []struct {
				name string
				v    float64
			}{{"A", a}, {"B", b}, {"A'", a2}} {
				if math.IsNaN(m.v) {
					miss = append(miss, m.name)
				}
			}
			rs.Rejected, rs.Reason = true, fmt.Sprintf("round %d has no %s value", rs.Round, strings.Join(miss, ", "))
			v.Incomplete++
		case !(a > 0) || !(b > 0) || !(a2 > 0):
			rs.Rejected, rs.Reason = true, fmt.Sprintf("round %d has a value ≤ 0 (A %.4g, B %.4g, A' %.4g): no ratio", rs.Round, a, b, a2)
			v.Incomplete++
		case rs.NullRatio < lo || rs.NullRatio > hi:
			rs.Rejected, rs.Reason = true, fmt.Sprintf("round %d: A'/A = %.3f is outside %.3f–%.3f (%s)", rs.Round, rs.NullRatio, lo, hi, opt.Knobs.RejectRatio)
		}
		if rs.Rejected {
			v.Rejected++
		} else {
			ratios = append(ratios, rs.Ratio)
			nulls = append(nulls, rs.NullRatio)
		}
		v.Rounds[i] = rs
	}

	// benchstat's view of the same values: every round, rejected or not.
	th := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	sa := benchmath.NewSample(finite(s.Base), th)
	sb := benchmath.NewSample(finite(s.Candidate), th)
	sn := benchmath.NewSample(finite(s.Null), th)
	v.Base = summarize(sa, opt.Confidence)
	v.Candidate = summarize(sb, opt.Confidence)
	v.Null = summarize(sn, opt.Confidence)
	if len(sa.Values) > 0 && len(sb.Values) > 0 {
		v.Comparison = benchmath.AssumeNothing.Compare(sa, sb)
	} else {
		v.Comparison = benchmath.Comparison{P: 1, N1: len(sa.Values), N2: len(sb.Values), Alpha: opt.Alpha}
	}
	v.CenterRatio = v.Candidate.Center / v.Base.Center

	// Regimes over accepted rounds: a rejected round is explained already.
	var acc [3][]float64
	for i, rs := range v.Rounds {
		if !rs.Rejected {
			acc[0] = append(acc[0], s.Base[i])
			acc[1] = append(acc[1], s.Candidate[i])
			acc[2] = append(acc[2], s.Null[i])
		}
	}
	v.BaseRegimes = Regimes(acc[0], opt.RegimeGap)
	v.CandidateRegimes = Regimes(acc[1], opt.RegimeGap)
	v.NullRegimes = Regimes(acc[2], opt.RegimeGap)

	v.Ratio = summarize(benchmath.NewSample(ratios, th), opt.Confidence)
	v.Band = Band{Lo: math.NaN(), Hi: math.NaN(), Coverage: opt.BandCoverage, N: len(nulls)}
	v.Band.Median = summarize(benchmath.NewSample(nulls, th), opt.Confidence)
	if len(nulls) > 0 {
		v.Band.Lo = quantile(nulls, (1-opt.BandCoverage)/2)
		v.Band.Hi = quantile(nulls, (1+opt.BandCoverage)/2)
	}
	v.MDE = Detectable{Down: 0, Up: math.Inf(1)}
	if finiteCI(v.Ratio) && v.Band.N > 0 && v.Ratio.Lo > 0 {
		v.MDE = Detectable{
			Down: v.Band.Lo * v.Ratio.Center / v.Ratio.Hi,
			Up:   v.Band.Hi * v.Ratio.Center / v.Ratio.Lo,
		}
	}

	v.Kind, v.Reason = decide(&v, n, opt)
	return v, nil
}

// decide returns the verdict's kind and its reason.
func decide(v *Verdict, n int, opt Options) (Kind, string) {
	pct := func(r float64) string { return fmt.Sprintf("±%.1f%%", 100*(r-1)) }
	accepted := n - v.Rejected
	complete := n - v.Incomplete
	if disagree := v.Rejected - v.Incomplete; disagree > 0 && float64(disagree) > opt.MaxRejected*float64(complete) {
		return Unmeasurable, fmt.Sprintf("%d of %d complete rounds rejected (more than %.0f%%): A and A' disagreed too often for this run to resolve anything; see the rejected rounds, or loosen %s",
			disagree, complete, 100*opt.MaxRejected, opt.Knobs.RejectRatio)
	}
	for _, arm := range []struct {
		name string
		rs   []Regime
	}{{"A", v.BaseRegimes}, {"B", v.CandidateRegimes}, {"A'", v.NullRegimes}} {
		if len(arm.rs) > 1 {
			return Unmeasurable, fmt.Sprintf("%s is %s, not one distribution: a median would sit between regimes; find what switches them before comparing",
				arm.name, describeRegimes(arm.rs))
		}
	}
	if !finiteCI(v.Ratio) {
		_, need := minRounds(opt.Confidence)
		return Unmeasurable, fmt.Sprintf("%d accepted rounds give no %.0f%% confidence interval for the ratio; it needs ≥ %d: raise %s",
			accepted, 100*opt.Confidence, need, opt.Knobs.Rounds)
	}
	band := fmt.Sprintf("%.3f–%.3f", v.Band.Lo, v.Band.Hi)
	ci := fmt.Sprintf("%.3f–%.3f", v.Ratio.Lo, v.Ratio.Hi)
	switch {
	case v.Ratio.Lo > v.Band.Hi:
		return Outside, fmt.Sprintf("B/A %.3f (CI %s) lies above the null band %s: B is higher than A by more than A differs from itself",
			v.Ratio.Center, ci, band)
	case v.Ratio.Hi < v.Band.Lo:
		return Outside, fmt.Sprintf("B/A %.3f (CI %s) lies below the null band %s: B is lower than A by more than A differs from itself",
			v.Ratio.Center, ci, band)
	case v.Band.Contains(v.Ratio.Center):
		if w := v.Band.Width(); w > opt.MaxBand {
			return Unmeasurable, fmt.Sprintf("the null band %s is wider than %s (%s): B/A %.3f inside it cannot be told from noise; only effects beyond %.3f–%.3f could be",
				band, pct(opt.MaxBand), opt.Knobs.MaxBand, v.Ratio.Center, v.MDE.Down, v.MDE.Up)
		}
		return Inside, fmt.Sprintf("B/A %.3f lies inside the null band %s: no difference beyond what A shows against itself",
			v.Ratio.Center, band)
	default:
		return Unmeasurable, fmt.Sprintf("B/A %.3f lies outside the null band %s but its CI %s overlaps it: raise %s",
			v.Ratio.Center, band, ci, opt.Knobs.Rounds)
	}
}

// summarize is benchmath.AssumeNothing.Summary, with NaNs for an empty
// sample instead of a panic.
func summarize(s *benchmath.Sample, confidence float64) benchmath.Summary {
	if len(s.Values) == 0 {
		return benchmath.Summary{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return benchmath.AssumeNothing.Summary(s, confidence)
}

func finiteCI(s benchmath.Summary) bool {
	return !math.IsNaN(s.Center) && !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi)
}

// minRounds returns the fewest values that give benchmath a finite median
// confidence interval at this level (6 at 0.95).
func minRounds(confidence float64) (op string, n int) {
	for n = 2; n <= 200; n++ {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(i + 1)
		}
		if finiteCI(benchmath.AssumeNothing.Summary(benchmath.NewSample(vals, &benchmath.DefaultThresholds), confidence)) {
			return ">=", n
		}
	}
	return ">", 200
}

// finite returns a copy of xs without NaNs.
func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// quantile returns the q-quantile of xs by linear interpolation between
// order statistics (Hyndman–Fan type 7, R's default). xs is not modified.
func quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 1 {
		return s[0]
	}
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
