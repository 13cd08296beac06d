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

const historyDetectUsage = `usage: decodegap history detect [flags] [packages]

Finds change points in every stored series (benchmark × unit, one point a
commit: the median of its values), in commit order, with E-Divisive means
and a permutation test (MongoDB's and Otava's method; defaults p ≤ 0.05,
100 permutations). A series is split where its host changes: a change of
machine is never reported as a change of code. Each change point has its
magnitude (median after / median before − 1, with a bootstrap interval),
the commits it lies between and its p-value.

With -confirm, each slowdown found is bisected between its two commits
('decodegap bisect', interleaved and null-calibrated) in packages (go list
patterns, default ./...) of the current repository (or -C), judging the
change's unit, or -bisect-unit when given (cpu-sec/op is steadier than
sec/op on a shared host).

Exit status: 0; 1 when -confirm named a commit; 2 for bad usage; 3 when a
bisect failed to build or run.

flags:
`

func historyDetect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history detect", historyDetectUsage, stderr)
	db := dbFlag(fs)
	bench := fs.String("bench", ".", "only benchmarks whose name matches this `regexp` (names without the Benchmark prefix)")
	units := fs.String("unit", "", "comma-separated `units` (sec/op, B/op, cpu-sec/op …); empty: every unit")
	pvalue := fs.Float64("pvalue", 0.05, "largest permutation `p-value` of a change point")
	perms := fs.Int("permutations", 100, "`shuffles` of the permutation test (the smallest p-value is 1/(shuffles+1))")
	var minMag percentOrZero
	fs.Var(&minMag, "min-magnitude", "drop change points smaller than this `margin` (e.g. 1%); 0 keeps all")
	seed := fs.Uint64("seed", 1234, "`seed` of the permutations and the bootstrap")
	asJSON := fs.Bool("json", false, "write JSON instead of text")
	confirm := fs.Bool("confirm", false, "bisect each slowdown found (see 'decodegap bisect -h'; its flags below apply)")
	bf := bisectFlagsInto(fs, "bisect-seed")
	if st := parseFlags(fs, args); st >= 0 {
		return st
	}
	fs.Visit(func(fl *flag.Flag) { bf.unitsSet = bf.unitsSet || fl.Name == "bisect-unit" })
	re, err := regexp.Compile(*bench)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: -bench: %v\n", err)
		return 2
	}
	if !(*pvalue > 0 && *pvalue < 1) || *perms < 1 {
		fmt.Fprintln(stderr, "decodegap history detect: -pvalue must be in (0, 1) and -permutations ≥ 1")
		return 2
	}
	ctx, stop := interruptible(0)
	defer stop()
	s, err := openStore(ctx, *db)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 2
	}
	defer s.Close()
	series, err := s.Series(ctx, history.Filter{Bench: re, Units: splitList(*units)})
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 1
	}
	opt := history.DetectOptions{EDivisive: edivisive.Options{PValue: *pvalue, Permutations: *perms, Seed: *seed},
		MinMagnitude: float64(minMag)}
	changes, err := history.Detect(series, opt)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap history detect: %v\n", err)
		return 1
	}
	rep := detectReport{Store: s.Where, Series: len(series), Options: opt, Changes: changes,
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
			return 1
		}
		return status
	}
	writeDetect(stdout, rep)
	return status
}

// detectReport is everything detect writes.
type detectReport struct {
	Store          string
	Series, Points int
	// Quarantined counts the points left out (history.Quarantined).
	Quarantined int
	Options     history.DetectOptions
	Changes     []history.Change
	// Confirmed holds the bisect of each change (nil without -confirm;
	// an entry is nil for a change not bisected: a speed-up).
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

// topBenchmark turns a stored name ("Step/gap=1ms-2") into the pattern of
// its top-level benchmark for -test.bench ("^BenchmarkStep$").
func topBenchmark(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	name = regexp.MustCompile(`-\d+$`).ReplaceAllString(name, "")
	return "^Benchmark" + regexp.QuoteMeta(name) + "$"
}
