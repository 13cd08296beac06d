package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/history/edivisive"
	"github.com/gapbench/gapbench/internal/judge"
)

const historyDetectUsage = `usage: decodegap history detect [-method edivisive|otava] [flags] [packages]

Finds change points in every stored series (benchmark × unit, one point a
commit: the median of its values), in commit order. -method edivisive (the
default) is E-Divisive means over the whole series with a permutation test
(MongoDB's method; defaults p ≤ 0.05, 100 permutations). -method otava is
Apache Otava's (Hunter's) variant: E-Divisive in sliding windows of
-window points (50) with a Student t test, then a merge that keeps the
change points whose t test between their neighbours gives p < -pvalue
(0.001). A series is split where its host changes: a change of machine is
never reported as a change of code. Each change point has its magnitude
(median after / median before − 1, with a bootstrap interval), the commits
it lies between and its p-value.

With -confirm, each change point found is bisected between its two
commits ('decodegap bisect', interleaved and null-calibrated) in the
direction it shows: a rise in values for the first slower commit, a fall
for the first faster one (as 'decodegap bisect -faster'). It runs in
packages (go list patterns, default ./...) of the current repository (or
-C), judging the change's unit, or -bisect-unit when given (cpu-sec/op is
steadier than sec/op on a shared host).

The search runs on ln of the values of a series whose every point is above
0 (a duration, B/op): a change is a ratio wherever the level is, and a
bimodal step (10 ns or 1000 ns) keeps its small mode's shifts in view. A
series holding a 0 or a negative value is searched on the values (JSON
Scale "linear"). Magnitudes and intervals are on the values' own scale.

A series holding a point that is not a finite number (NaN, ±Inf) or a
duration below 0 ('history add' refuses both, an older store may hold
them) is left out and named on stderr; the others are searched. When no
series is left, detect says how many values are stored and why none made
one (-bench, -unit, or arms of pr files). SIGINT or SIGTERM stops the
search.

Exit status: 0; 1 when -confirm named a commit; 2 for bad usage; 3 when a
bisect failed to build or run; 130 when interrupted.

flags:
`

func historyDetect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history detect", historyDetectUsage, stderr)
	db := dbFlag(fs, false)
	bench := fs.String("bench", ".", "only benchmarks whose name matches this `regexp` (names without the Benchmark prefix)")
	units := fs.String("unit", "", "comma-separated `units` (sec/op, B/op, cpu-sec/op …); empty: every unit")
	methodName := fs.String("method", "edivisive", "change point `method`: edivisive (permutation test) or otava (windows and a t test)")
	pvalue := fs.Float64("pvalue", 0, "largest `p-value` of a change point; 0 is the method's default: 0.05 (edivisive's permutation test), 0.001 (otava's t test)")
	perms := fs.Int("permutations", 100, fmt.Sprintf("`shuffles` of edivisive's permutation test (the smallest p-value is 1/(shuffles+1)); at most %d", maxPermutations))
	window := fs.Int("window", 50, "`points` of each window of -method otava's split step")
	var minMag percentOrZero
	fs.Var(&minMag, "min-magnitude", "drop change points smaller than this `margin` (e.g. 1%); 0 keeps all")
	seed := fs.Uint64("seed", 1234, "`seed` of the permutations and the bootstrap")
	asJSON := fs.Bool("json", false, "write JSON instead of text")
	confirm := fs.Bool("confirm", false, "bisect each change point found, a slowdown or a speed-up (see 'decodegap bisect -h'; its flags below apply)")
	bf := bisectFlagsInto(fs, "bisect-seed")
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	fs.Visit(func(fl *flag.Flag) {
		bf.unitsSet = bf.unitsSet || fl.Name == "bisect-unit"
		bf.deltaSet = bf.deltaSet || fl.Name == "delta"
	})
	re, err := regexp.Compile(*bench)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: -bench: %v\n", err)
		return 2
	}
	method, err := history.ParseMethod(*methodName)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: -method %q: want edivisive or otava\n", *methodName)
		return 2
	}
	switch {
	case !(*pvalue >= 0 && *pvalue < 1):
		fmt.Fprintf(stderr, "decodegap history detect: -pvalue %g: want a p-value in (0, 1), or 0 for the method's default\n", *pvalue)
		return 2
	case *perms < 1 || *perms > maxPermutations:
		fmt.Fprintf(stderr, "decodegap history detect: -permutations %d: want 1 to %d (p-values down to 1/%d; each shuffle costs a search of every series)\n", *perms, maxPermutations, maxPermutations+1)
		return 2
	case *window < 2:
		fmt.Fprintf(stderr, "decodegap history detect: -window %d: want 2 points or more\n", *window)
		return 2
	case *confirm && (bf.maxRounds < 0 || bf.maxRounds == 1):
		fmt.Fprintf(stderr, "decodegap history detect: -max-rounds %d: want at least 2, or 0 to set them from -budget\n", bf.maxRounds)
		return 2
	case *confirm && bf.maxRounds == 0 && bf.budget <= 0:
		fmt.Fprintf(stderr, "decodegap history detect: -max-rounds 0 sets the rounds from -budget, and -budget is %v (none): give one of them\n", bf.budget)
		return 2
	}
	ctx, stop := interruptible(0)
	defer stop()
	s, err := openStore(ctx, *db, false)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 2
	}
	defer s.Close()
	filter := history.Filter{Bench: re, Units: splitList(*units)}
	series, err := s.Series(ctx, filter)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 1
	}
	census, err := s.Census(ctx, filter)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 1
	}
	opt := history.DetectOptions{Method: method, EDivisive: edivisive.Options{PValue: *pvalue, Permutations: *perms, Seed: *seed},
		Otava:        edivisive.OtavaOptions{Window: *window, PValue: *pvalue, MinMagnitude: float64(minMag)},
		MinMagnitude: float64(minMag)}
	if *pvalue == 0 {
		opt.EDivisive.PValue, opt.Otava.PValue = 0.05, 0.001
	}
	changes, skipped, err := history.Detect(ctx, series, opt)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "decodegap history detect: interrupted while searching %d series for change points; nothing written\n", len(series))
		return 130
	}
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 1
	}
	writeSkipped(stderr, "history detect", skipped)
	rep := detectReport{Store: s.Where, Series: len(series), Census: census, Bench: *bench, Units: *units, Options: opt, Changes: changes, Skipped: skipped,
		Quarantined: history.Quarantined(series, opt.Quarantine)}
	for _, sr := range series {
		rep.Points += len(sr.Points)
	}
	status := 0
	if *confirm {
		rep.Confirmed, status = confirmChanges(ctx, changes, bf, fs.Args(), stderr)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(detectJSON(rep)); err != nil {
			fmt.Fprintf(stderr, "decodegap history detect: -json: %v\n", err)
			return 1
		}
		return status
	}
	writeDetect(stdout, rep)
	return status
}

// maxPermutations bounds -permutations: p-values down to 1/10001, and a
// search that ends in minutes, not days.
const maxPermutations = 10000

// detectReport is everything detect writes.
type detectReport struct {
	Store          string
	Series, Points int
	// Census counts the stored values and why some make no series;
	// Bench and Units are -bench and -unit as given.
	Census       history.Census
	Bench, Units string
	// Quarantined counts the points left out (history.Quarantined).
	Quarantined int
	Options     history.DetectOptions
	Changes     []history.Change
	// Skipped are the series left out for a point that is not a finite
	// number or a duration below 0.
	Skipped []history.Skipped
	// Confirmed holds the bisect of each change (nil without -confirm;
	// an entry is nil for a change not bisected: one of magnitude 0).
	Confirmed []*history.BisectResult
}

// percentOrZero is a margin flag that also takes 0.
type percentOrZero float64

func (p *percentOrZero) String() string { return fmt.Sprintf("%g%%", float64(*p)*100) }
func (p *percentOrZero) Set(s string) error {
	if strings.TrimSuffix(s, "%") == "0" {
		*p = 0
		return nil
	}
	var q judge.Delta
	if err := q.Set(s); err != nil {
		return err
	}
	*p = percentOrZero(q)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// exactBenchmark turns a stored name ("Step/gap=1ms-2") into the
// selection of that one benchmark for bisect ("^BenchmarkStep$" with
// "/^gap=1ms(-2)?$"): each level is quoted, and a trailing -N on the
// last level is optional, since it is GOMAXPROCS or, at GOMAXPROCS=1,
// part of the name ("size-64"), and the stored name cannot say which.
func exactBenchmark(name string) benchSel {
	levels := strings.Split(name, "/")
	last := len(levels) - 1
	quoted := make([]string, len(levels))
	for i, l := range levels {
		q := regexp.QuoteMeta(l)
		if m := procsSuffix.FindStringIndex(l); i == last && m != nil {
			q = regexp.QuoteMeta(l[:m[0]]) + "(" + l[m[0]:] + ")?"
		}
		quoted[i] = "^" + q + "$"
	}
	sel := benchSel{top: regexp.MustCompile("^Benchmark" + quoted[0][1:])}
	for _, q := range quoted[1:] {
		sel.sub += "/" + q
	}
	sel.pattern = sel.top.String() + sel.sub
	return sel
}

// procsSuffix is a name's trailing -GOMAXPROCS, as go test appends it.
var procsSuffix = regexp.MustCompile(`-\d+$`)
