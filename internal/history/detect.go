package history

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"time"

	"github.com/gapbench/gapbench/internal/history/edivisive"
)

// Point is one commit of a series: the median of every value stored for
// that commit, benchmark and unit.
type Point struct {
	Commit string
	Date   time.Time
	// Host is the machine the values came from ("" when the commit's
	// values came from several hosts, which ends a stretch).
	Host string
	// Value is the median; N the number of values behind it.
	Value float64
	N     int
	// Spread is the values' median absolute deviation over their median
	// (NaN with fewer than 3 values): how noisy the commit's runs were.
	Spread float64
}

// Series is one benchmark in one unit over commits, in commit order.
type Series struct {
	Benchmark, Unit string
	Points          []Point
}

// Filter selects series: Bench matches the benchmark name (nil: all),
// Units the units ("sec/op"; empty: all).
type Filter struct {
	Bench *regexp.Regexp
	Units []string
}

// Series reads the stored values of the results without an arm (plain
// `go test -bench` runs; the arms of a pr or interleave file are stored
// but not a history of one commit) and returns one series per benchmark
// and unit, sorted by benchmark and unit, each in commit order: commit
// date, then the order the commit's first file was added.
func (s *Store) Series(ctx context.Context, f Filter) ([]Series, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT f.id, f.commit_hash, f.commit_time, f.host, r.name, r.unit, r.value
		FROM results r JOIN files f ON f.id = r.file_id WHERE r.arm = '' ORDER BY f.commit_time, f.id`)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.Where, err)
	}
	defer rows.Close()
	type key struct{ bench, unit string }
	type acc struct {
		p    Point
		vals []float64
	}
	bySeries := map[key][]*acc{}
	idx := map[key]map[string]*acc{}
	for rows.Next() {
		var id int64
		var commit, ct, host, name, unit string
		var v float64
		if err := rows.Scan(&id, &commit, &ct, &host, &name, &unit, &v); err != nil {
			return nil, err
		}
		if f.Bench != nil && !f.Bench.MatchString(name) {
			continue
		}
		if len(f.Units) > 0 && !slices.Contains(f.Units, unit) {
			continue
		}
		k := key{name, unit}
		if idx[k] == nil {
			idx[k] = map[string]*acc{}
		}
		a := idx[k][commit]
		if a == nil {
			t, _ := parseTime(ct)
			a = &acc{p: Point{Commit: commit, Date: t, Host: host}}
			idx[k][commit] = a
			bySeries[k] = append(bySeries[k], a)
		}
		if a.p.Host != host {
			a.p.Host = ""
		}
		a.vals = append(a.vals, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(bySeries))
	for k, accs := range bySeries {
		sr := Series{Benchmark: k.bench, Unit: k.unit}
		for _, a := range accs {
			a.p.Value, a.p.N, a.p.Spread = median(a.vals), len(a.vals), spread(a.vals)
			sr.Points = append(sr.Points, a.p)
		}
		out = append(out, sr)
	}
	slices.SortFunc(out, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Benchmark, b.Benchmark), cmp.Compare(a.Unit, b.Unit))
	})
	return out, nil
}

// Census counts what Series would make of the stored values under f:
// how many there are and why those that make no series are left out.
type Census struct {
	// Values counts every stored value; Armed those with an arm (the
	// lines of a pr or interleave file, stored but no history of one
	// commit).
	Values, Armed int
	// OtherBench counts the values without an arm whose benchmark
	// Filter.Bench does not match; OtherUnit those it matches whose unit
	// is not among Filter.Units. Used counts the rest: the values of the
	// series.
	OtherBench, OtherUnit, Used int
	// Units are the units of the values Filter.Bench matches (armed or
	// not), sorted, each once.
	Units []string
}

// Census counts the stored values as Series(ctx, f) would sort them.
func (s *Store) Census(ctx context.Context, f Filter) (Census, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, unit, arm <> '', COUNT(*) FROM results GROUP BY name, unit, arm <> ''`)
	if err != nil {
		return Census{}, fmt.Errorf("history: %s: %w", s.Where, err)
	}
	defer rows.Close()
	var c Census
	for rows.Next() {
		var name, unit string
		var armed bool
		var n int
		if err := rows.Scan(&name, &unit, &armed, &n); err != nil {
			return Census{}, err
		}
		c.Values += n
		bench := f.Bench == nil || f.Bench.MatchString(name)
		if bench && !slices.Contains(c.Units, unit) {
			c.Units = append(c.Units, unit)
		}
		switch {
		case armed:
			c.Armed += n
		case !bench:
			c.OtherBench += n
		case len(f.Units) > 0 && !slices.Contains(f.Units, unit):
			c.OtherUnit += n
		default:
			c.Used += n
		}
	}
	slices.Sort(c.Units)
	return c, rows.Err()
}

// Method is Detect's search for change points in one stretch.
type Method int

const (
	// MethodPermutation is E-Divisive means over the whole stretch with
	// the permutation test (edivisive.Detect): the default.
	MethodPermutation Method = iota
	// MethodOtava is Otava's variant: E-Divisive in sliding windows with
	// a Student t test, then a merge of the weak change points
	// (edivisive.DetectOtava).
	MethodOtava
)

// String returns "edivisive" or "otava", the names -method takes.
func (m Method) String() string {
	if m == MethodOtava {
		return "otava"
	}
	return "edivisive"
}

// ParseMethod returns the Method named s ("edivisive" or "otava").
func ParseMethod(s string) (Method, error) {
	switch s {
	case "edivisive", "":
		return MethodPermutation, nil
	case "otava":
		return MethodOtava, nil
	}
	return 0, fmt.Errorf("history: method %q: want edivisive or otava", s)
}

// DetectOptions are Detect's settings; the zero value is valid.
type DetectOptions struct {
	// Method chooses the search; the zero value is MethodPermutation.
	Method Method
	// EDivisive are MethodPermutation's settings (package edivisive;
	// zero means MongoDB's published defaults: p ≤ 0.05, 100
	// permutations). Its Seed also seeds the bootstrap of every method.
	EDivisive edivisive.Options
	// Otava are MethodOtava's settings (zero means Otava's defaults:
	// windows of 50, p < 0.001, magnitude above 0).
	Otava edivisive.OtavaOptions
	// Confidence is the level of each magnitude's interval; 0 means 0.95.
	Confidence float64
	// MinMagnitude drops change points whose |After/Before − 1| is below
	// it (a fraction); 0 keeps all, as Otava's default does.
	MinMagnitude float64
	// Quarantine leaves out of the search the commits whose Spread is
	// above Quarantine times the median Spread of their stretch: runs
	// that disagreed among themselves far more than usual (a noisy
	// night) say little about the code's speed, and would otherwise show
	// as a pair of change points. 0 means 3; a negative value keeps every
	// commit. Commits with fewer than 3 values are never left out.
	Quarantine float64
}

// Change is one change point of one series.
type Change struct {
	Benchmark, Unit string
	// Host is the stretch's host: change points are looked for within
	// stretches of one host, never across a host change.
	Host string
	// Index is the position in the series of the first point after the
	// change; Good is the last point before it, Bad the first after: the
	// change lies in the commits after Good up to and including Bad.
	Index     int
	Good, Bad Point
	// Before and After are the medians of the points between this change
	// and its neighbours (or the stretch's ends); Ratio is After/Before,
	// with Lo and Hi its bootstrap interval at Level.
	Before, After float64
	Ratio, Lo, Hi float64
	Level         float64
	// P is the p-value: the permutation test's (MethodPermutation) or
	// the t test's between the change's neighbours (MethodOtava); Q the
	// statistic Q̂ (edivisive).
	P, Q float64
	// NBefore and NAfter count the points of the two sides.
	NBefore, NAfter int
	// Scale is the scale the stretch was searched on (ScaleLog when
	// every point of it is above 0). Before, After, Ratio, Lo and Hi are
	// on the values' own scale whatever it is.
	Scale Scale
}

// Scale is the scale Detect searches a stretch on.
type Scale int

const (
	// ScaleLog is ln of the values: a stretch whose every point is above
	// 0. A change is then a ratio wherever the level is, and a bimodal
	// series (a step of 10 or 1000 ns) keeps its small mode's shifts in
	// view beside the distance between the modes.
	ScaleLog Scale = iota
	// ScaleLinear is the values themselves: a stretch holding a point of
	// 0 or below (a B/op that is 0 before a change, a true zero of a wait).
	ScaleLinear
)

// String returns "log" or "linear", the words of the JSON.
func (s Scale) String() string {
	if s == ScaleLinear {
		return "linear"
	}
	return "log"
}

// scaleOf is the scale of x: ScaleLog when every value is above 0.
func scaleOf(x []float64) Scale {
	for _, v := range x {
		if !(v > 0) {
			return ScaleLinear
		}
	}
	return ScaleLog
}

// Magnitude is Ratio − 1: the change as a fraction.
func (c Change) Magnitude() float64 { return c.Ratio - 1 }

// Stretch is a run of points of one host: [Start, End).
type Stretch struct {
	Start, End int
	Host       string
}

// Stretches splits points where the host changes (a point whose values
// came from several hosts is a stretch of its own).
func Stretches(points []Point) []Stretch {
	var out []Stretch
	for i := 0; i < len(points); {
		j := i + 1
		for j < len(points) && points[i].Host != "" && points[j].Host == points[i].Host {
			j++
		}
		out = append(out, Stretch{Start: i, End: j, Host: points[i].Host})
		i = j
	}
	return out
}

// Skipped is a series Detect left out: a point of it is not a finite
// number, or a duration below 0 (a store written before Add refused
// them, or by another tool).
type Skipped struct {
	Benchmark, Unit string
	// Commit and Value are the first such point's.
	Commit string
	Value  float64
	// Why says what is wrong with Value.
	Why SkipReason
}

// SkipReason is why Detect left a series out.
type SkipReason int

const (
	// SkipNotFinite: the value is NaN or ±Inf.
	SkipNotFinite SkipReason = iota
	// SkipNegativeDuration: the unit is a duration (IsDuration) and the
	// value is below 0.
	SkipNegativeDuration
)

// String returns "not-finite" or "negative-duration", the words of the
// JSON.
func (r SkipReason) String() string {
	if r == SkipNegativeDuration {
		return "negative-duration"
	}
	return "not-finite"
}

// badPoint returns the index of the first point of sr Detect cannot
// search and why; −1 when there is none.
func badPoint(sr Series) (int, SkipReason) {
	dur := IsDuration(sr.Unit)
	for i, p := range sr.Points {
		switch {
		case math.IsNaN(p.Value) || math.IsInf(p.Value, 0):
			return i, SkipNotFinite
		case dur && p.Value < 0:
			return i, SkipNegativeDuration
		}
	}
	return -1, 0
}

// Detect finds the change points of every series (see the package
// comment), in series order and then index order. Each stretch is
// searched on ln of its values when they are all above 0 (Change.Scale);
// magnitudes and their intervals are on the values' own scale. A series
// holding a NaN or infinite point, or a duration below 0, is left out
// and returned in skipped; the other series are searched. When ctx is done Detect stops, within one shuffle
// of the permutation test, and returns ctx's error.
func Detect(ctx context.Context, series []Series, opt DetectOptions) (changes []Change, skipped []Skipped, err error) {
	level := opt.Confidence
	if level == 0 {
		level = 0.95
	}
	var out []Change
	for _, sr := range series {
		if i, why := badPoint(sr); i >= 0 {
			skipped = append(skipped, Skipped{Benchmark: sr.Benchmark, Unit: sr.Unit, Commit: sr.Points[i].Commit, Value: sr.Points[i].Value, Why: why})
			continue
		}
		for _, st := range Stretches(sr.Points) {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			pts, pos := kept(sr.Points[st.Start:st.End], opt.Quarantine)
			x := make([]float64, len(pts))
			for i, p := range pts {
				x[i] = p.Value
			}
			// The search runs on y; the magnitudes are x's.
			scale, y := scaleOf(x), x
			if scale == ScaleLog {
				y = make([]float64, len(x))
				for i, v := range x {
					y[i] = math.Log(v)
				}
			}
			var cps []edivisive.ChangePoint
			var err error
			if opt.Method == MethodOtava {
				o := opt.Otava
				o.Log = scale == ScaleLog
				cps, err = edivisive.DetectOtava(y, o)
			} else {
				cps, err = edivisive.DetectContext(ctx, y, opt.EDivisive)
			}
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if err != nil {
				return nil, nil, fmt.Errorf("history: %s %s: %w", sr.Benchmark, sr.Unit, err)
			}
			for i, cp := range cps {
				lo, hi := 0, len(x)
				if i > 0 {
					lo = cps[i-1].Index
				}
				if i+1 < len(cps) {
					hi = cps[i+1].Index
				}
				before, after := x[lo:cp.Index], x[cp.Index:hi]
				c := Change{Benchmark: sr.Benchmark, Unit: sr.Unit, Host: st.Host,
					Index: st.Start + pos[cp.Index], Good: pts[cp.Index-1], Bad: pts[cp.Index],
					Before: median(before), After: median(after), Level: level, P: cp.P, Q: cp.Q,
					NBefore: len(before), NAfter: len(after), Scale: scale}
				c.Ratio = c.After / c.Before
				c.Lo, c.Hi = bootRatio(before, after, level, opt.EDivisive.Seed^uint64(c.Index))
				if math.Abs(c.Ratio-1) < opt.MinMagnitude {
					continue
				}
				out = append(out, c)
			}
		}
	}
	return out, skipped, nil
}

// Quarantined counts the points of series that Detect leaves out under
// quarantine (see DetectOptions.Quarantine).
func Quarantined(series []Series, quarantine float64) int {
	n := 0
	for _, sr := range series {
		for _, st := range Stretches(sr.Points) {
			pts, _ := kept(sr.Points[st.Start:st.End], quarantine)
			n += st.End - st.Start - len(pts)
		}
	}
	return n
}

// kept returns the points of one stretch that quarantine keeps, and
// their positions in it.
func kept(pts []Point, quarantine float64) ([]Point, []int) {
	if quarantine == 0 {
		quarantine = 3
	}
	var spreads []float64
	for _, p := range pts {
		if !math.IsNaN(p.Spread) {
			spreads = append(spreads, p.Spread)
		}
	}
	limit := math.Inf(1)
	if quarantine > 0 && len(spreads) > 0 {
		limit = quarantine * median(spreads)
	}
	var out []Point
	var pos []int
	for i, p := range pts {
		if p.Spread > limit {
			continue
		}
		out = append(out, p)
		pos = append(pos, i)
	}
	return out, pos
}

// spread is the median absolute deviation of x over its median; NaN with
// fewer than 3 values.
func spread(x []float64) float64 {
	if len(x) < 3 {
		return math.NaN()
	}
	m := median(x)
	dev := make([]float64, len(x))
	for i, v := range x {
		dev[i] = math.Abs(v - m)
	}
	return median(dev) / m
}

// bootRatio is the percentile bootstrap interval at level of
// median(after)/median(before), from 1000 resamples of each side.
func bootRatio(before, after []float64, level float64, seed uint64) (lo, hi float64) {
	const n = 1000
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	ratios := make([]float64, n)
	a, b := make([]float64, len(before)), make([]float64, len(after))
	for r := range ratios {
		for i := range a {
			a[i] = before[rng.IntN(len(before))]
		}
		for i := range b {
			b[i] = after[rng.IntN(len(after))]
		}
		ratios[r] = median(b) / median(a)
	}
	slices.Sort(ratios)
	tail := (1 - level) / 2
	return ratios[int(tail*float64(n-1))], ratios[int(math.Ceil((1-tail)*float64(n-1)))]
}

// median returns the median of x (which it sorts a copy of); NaN when
// empty.
func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
