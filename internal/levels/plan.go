package levels

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/aclements/go-moremath/stats"
)

// Cost is what a plan's parts take, in seconds of wall time.
type Cost struct {
	// Step is one timed step with its gap.
	Step float64
	// Block is the fixed cost of one block beyond its timed steps: opening
	// the session or process, the warm-up, the counters.
	Block float64
	// Round is the fixed cost of one round beyond its blocks.
	Round float64
	// Arms is the number of arms every round runs, the null arm included
	// (≥ 2).
	Arms int
}

// Plan is how a comparison spends its time.
type Plan struct {
	// Steps is the number of timed steps per block (-benchtime=Nx).
	Steps int
	// Blocks is the number of blocks of each arm per round; an arm's value
	// in a round is the geometric mean of its blocks' medians.
	Blocks int
	// Rounds is the number of rounds (-count).
	Rounds int
}

// String returns the plan as "600 steps × 1 block × 10 rounds".
func (p Plan) String() string {
	b := "blocks"
	if p.Blocks == 1 {
		b = "block"
	}
	return fmt.Sprintf("%d steps × %d %s × %d rounds", p.Steps, p.Blocks, b, p.Rounds)
}

// Seconds returns the wall time plan p takes at cost c.
func (c Cost) Seconds(p Plan) float64 {
	block := c.Block + float64(p.Steps)*c.Step
	return float64(p.Rounds) * (float64(c.Arms*p.Blocks)*block + c.Round)
}

// PerRound returns the variance of one round's ln(B/A) under plan p: both
// arms' Between and Within, averaged over p.Blocks blocks each; Rounds
// cancels in the ratio.
func (c Components) PerRound(p Plan) float64 {
	return 2 * (c.Between + c.WithinAt(p.Steps)) / float64(p.Blocks)
}

// Power is the power at which an MDE is detected.
const Power = 0.80

// MDE returns the minimal detectable effect (a fraction) of a comparison
// run with plan p at two-sided confidence conf: exp((t₁₋α/₂ + t₀.₈)·σ/√r) − 1,
// σ² = PerRound(p), r = p.Rounds, with r−1 degrees of freedom, as
// nullband.MDEAt computes it. +Inf with fewer than 2 rounds, and when c
// is not Estimable (Between read 0 from too few rounds: an MDE from it
// would count on a part the data could not see).
func (c Components) MDE(p Plan, conf float64) float64 {
	if !c.Estimable() {
		return math.Inf(1)
	}
	return MDEAt(math.Sqrt(c.PerRound(p)), p.Rounds, conf)
}

// MDEAt is the MDE of r rounds at per-round scale sigma of ln(B/A).
func MDEAt(sigma float64, r int, conf float64) float64 {
	if r < 2 || math.IsNaN(sigma) || math.IsInf(sigma, 0) {
		return math.Inf(1)
	}
	q := stats.InvCDF(stats.TDist{V: float64(r - 1)})
	alpha := 1 - conf
	return math.Expm1((q(1-alpha/2) + q(Power)) * sigma / math.Sqrt(float64(r)))
}

// Limits bound the plans Optimize considers.
type Limits struct {
	// MinSteps and MaxSteps bound Steps: a block needs enough steps for
	// its steady-state window (0 means 256 and 4000).
	MinSteps, MaxSteps int
	// MaxBlocks bounds Blocks (0 means 8).
	MaxBlocks int
	// MinRounds and MaxRounds bound Rounds (0 means 8, the fewest that give
	// the verdict's 98.75% interval, and 200).
	MinRounds, MaxRounds int
	// Confidence is the verdict's two-sided level (0 means 0.975, the
	// median step's under make bench's weighted Holm).
	Confidence float64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MinSteps, 256)
	def(&l.MaxSteps, 4000)
	def(&l.MaxBlocks, 8)
	def(&l.MinRounds, 8)
	def(&l.MaxRounds, 200)
	if l.Confidence <= 0 || l.Confidence >= 1 {
		l.Confidence = 0.975
	}
	l.MaxSteps = max(l.MaxSteps, l.MinSteps)
	l.MaxRounds = max(l.MaxRounds, l.MinRounds)
	return l
}

// stepGrid returns the step counts Optimize tries: about 40 values spaced
// evenly on a log scale from lo to hi, both included.
func stepGrid(lo, hi int) []int {
	var g []int
	for x := float64(lo); ; x *= 1.1 {
		n := int(math.Round(x))
		if n >= hi {
			break
		}
		if len(g) == 0 || n > g[len(g)-1] {
			g = append(g, n)
		}
	}
	return append(g, hi)
}

// Optimize returns the plan within l that reaches an MDE of target (a
// fraction, 0.05 for 5%) in the least time at cost c, and whether one
// does; when none does within l.MaxRounds, the plan with the smallest MDE
// at l.MaxRounds rounds, and false.
func (c Components) Optimize(cost Cost, target float64, l Limits) (Plan, bool) {
	l = l.withDefaults()
	best, bestT := Plan{}, math.Inf(1)
	fallback, fallbackM := Plan{}, math.Inf(1)
	for _, n := range stepGrid(l.MinSteps, l.MaxSteps) {
		for k := 1; k <= l.MaxBlocks; k++ {
			p := Plan{Steps: n, Blocks: k, Rounds: l.MaxRounds}
			if m := c.MDE(p, l.Confidence); m < fallbackM {
				fallback, fallbackM = p, m
			}
			r, ok := c.roundsFor(n, k, target, l)
			if !ok {
				continue
			}
			p.Rounds = r
			if t := cost.Seconds(p); t < bestT {
				best, bestT = p, t
			}
		}
	}
	if bestT < math.Inf(1) {
		return best, true
	}
	return fallback, false
}

// roundsFor returns the fewest rounds in [l.MinRounds, l.MaxRounds] whose
// MDE at n steps and k blocks is at most target.
func (c Components) roundsFor(n, k int, target float64, l Limits) (int, bool) {
	lo, hi := l.MinRounds, l.MaxRounds
	if c.MDE(Plan{n, k, hi}, l.Confidence) > target {
		return 0, false
	}
	for lo < hi { // the MDE falls as rounds grow
		mid := (lo + hi) / 2
		if c.MDE(Plan{n, k, mid}, l.Confidence) <= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// ForBudget returns the plan within l whose MDE is smallest among those
// that take at most budget seconds at cost c, and false when even the
// cheapest plan (l.MinSteps × 1 block × l.MinRounds) takes longer.
func (c Components) ForBudget(cost Cost, budget float64, l Limits) (Plan, bool) {
	l = l.withDefaults()
	best, bestM := Plan{}, math.Inf(1)
	for _, n := range stepGrid(l.MinSteps, l.MaxSteps) {
		for k := 1; k <= l.MaxBlocks; k++ {
			one := cost.Seconds(Plan{Steps: n, Blocks: k, Rounds: 1})
			r := min(int(budget/one), l.MaxRounds)
			if r < l.MinRounds {
				continue
			}
			p := Plan{Steps: n, Blocks: k, Rounds: r}
			if m := c.MDE(p, l.Confidence); m < bestM {
				best, bestM = p, m
			}
		}
	}
	if bestM == math.Inf(1) {
		return Plan{Steps: l.MinSteps, Blocks: 1, Rounds: l.MinRounds}, false
	}
	return best, true
}

// planHeader is the first line of a plan file.
const planHeader = "gapbench-plan v1"

// WriteFile writes p as a plan file: the header line, then "steps N",
// "blocks N" and "rounds N", one a line, which a shell reads with
// `while read key value`. WriteFile and ReadFile are symmetric.
func (p Plan) WriteFile(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\nsteps %d\nblocks %d\nrounds %d\n", planHeader, p.Steps, p.Blocks, p.Rounds)
	return err
}

// PlanError is a plan file's syntax error, with its line.
type PlanError struct {
	Line int
	Msg  string
}

func (e *PlanError) Error() string { return fmt.Sprintf("plan file line %d: %s", e.Line, e.Msg) }

// ReadPlan reads a plan file written by Plan.WriteFile. Every field must
// be present and positive; unknown keys are errors.
func ReadPlan(r io.Reader) (Plan, error) {
	var p Plan
	sc := bufio.NewScanner(r)
	line := 0
	fields := map[string]*int{"steps": &p.Steps, "blocks": &p.Blocks, "rounds": &p.Rounds}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			if text != planHeader {
				return Plan{}, &PlanError{line, fmt.Sprintf("got %q, want the header %q", text, planHeader)}
			}
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, _ := strings.Cut(text, " ")
		dst, ok := fields[k]
		if !ok {
			return Plan{}, &PlanError{line, fmt.Sprintf("unknown key %q (want steps, blocks or rounds)", k)}
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return Plan{}, &PlanError{line, fmt.Sprintf("%s %q: want a whole number ≥ 1", k, v)}
		}
		*dst = n
	}
	if err := sc.Err(); err != nil {
		return Plan{}, err
	}
	for k, v := range fields {
		if *v == 0 {
			return Plan{}, &PlanError{line, fmt.Sprintf("no %s line", k)}
		}
	}
	return p, nil
}
