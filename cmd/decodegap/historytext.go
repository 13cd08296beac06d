package main

// The words of 'decodegap history' and 'decodegap bisect': every sentence
// and table they print is written here, from the numbers of
// internal/history.

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gapbench/gapbench/internal/history"
	"github.com/gapbench/gapbench/internal/report"
)

func writeAdded(w io.Writer, where string, added []history.Added, files []*history.File) int {
	n := 0
	for i, a := range added {
		p := files[i].Prov
		if a.New {
			n++
			goV := p.GoVersion
			if goV == "" {
				goV = "go version unknown (-go)"
			}
			fmt.Fprintf(w, "stored %s: %d values, %d verdict rows; commit %s (%s), host %s, %s",
				a.Name, a.Results, a.Verdicts, short(p.Commit), p.Date.UTC().Format("2006-01-02 15:04"), p.Host, goV)
			if a.Replaced > 0 {
				fmt.Fprintf(w, "; replacing its %d earlier version(s)", a.Replaced)
			}
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "already stored %s (the same bytes, sha256 %s…): nothing written\n", a.Name, a.SHA256[:12])
		}
	}
	fmt.Fprintf(w, "%d of %d files new in %s\n", n, len(added), where)
	return 0
}

// writeSkipped names on w each series Detect left out.
func writeSkipped(w io.Writer, cmd string, skipped []history.Skipped) {
	for _, k := range skipped {
		what := "not a finite number"
		if k.Why == history.SkipNegativeDuration {
			what = "a duration below 0"
		}
		fmt.Fprintf(w, "decodegap %s: %s %s left out: commit %s's value is %g, %s (stored before 'history add' refused them?)\n",
			cmd, k.Benchmark, k.Unit, short(k.Commit), k.Value, what)
	}
}

func writeFiles(w io.Writer, where string, files []history.StoredFile) {
	fmt.Fprintf(w, "%d files in %s\n", len(files), where)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "commit\tdate\thost\tgo\tvalues\tverdicts\tfile")
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", short(f.Prov.Commit), f.Prov.Date.UTC().Format("2006-01-02 15:04"),
			f.Prov.Host, f.Prov.GoVersion, f.Results, len(f.Verdicts), f.Name)
	}
	tw.Flush()
}

// pct writes a ratio as a signed percentage change.
func pct(r float64) string {
	if math.IsNaN(r) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", (r-1)*100)
}

func writeDetect(w io.Writer, r detectReport) {
	if o := r.Options.Otava; r.Options.Method == history.MethodOtava {
		fmt.Fprintf(w, "%d change points in %d series (%d points) of %s; Otava's E-Divisive: windows of %d, t test p < %g (-method otava, -window, -pvalue)\n",
			len(r.Changes), r.Series, r.Points, r.Store, o.Window, o.PValue)
	} else {
		e := r.Options.EDivisive
		fmt.Fprintf(w, "%d change points in %d series (%d points) of %s; E-Divisive means, permutation p ≤ %g over %d shuffles (-pvalue, -permutations)\n",
			len(r.Changes), r.Series, r.Points, r.Store, e.PValue, e.Permutations)
	}
	if r.Quarantined > 0 {
		fmt.Fprintf(w, "%d of the %d points left out: their runs spread more than 3× their stretch's median spread (a noisy night); they are still drawn by 'history plot'\n", r.Quarantined, r.Points)
	}
	if len(r.Changes) == 0 {
		if r.Series == 0 {
			writeNoSeries(w, r)
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\tunit\tchange\t%.0f%% interval\tp\tafter\tup to\tpoints\thost\n", r.Changes[0].Level*100)
	for _, c := range r.Changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s … %s\t%.3f\t%s\t%s\t%d | %d\t%s\n", c.Benchmark, c.Unit, pct(c.Ratio), pct(c.Lo), pct(c.Hi),
			c.P, short(c.Good.Commit), short(c.Bad.Commit), c.NBefore, c.NAfter, c.Host)
	}
	tw.Flush()
	fmt.Fprintln(w, "change: median after / median before − 1; the change entered after the 'after' commit, at or before 'up to'.")
	var linear []string
	for _, c := range r.Changes {
		if c.Scale == history.ScaleLinear && !slices.Contains(linear, c.Benchmark+" "+c.Unit) {
			linear = append(linear, c.Benchmark+" "+c.Unit)
		}
	}
	if len(linear) == 0 {
		fmt.Fprintln(w, "searched on ln of the values.")
	} else {
		fmt.Fprintf(w, "searched on ln of the values, but on the values themselves for %s: a value of 0 or below.\n", strings.Join(linear, ", "))
	}
	for i, b := range r.Confirmed {
		if b == nil {
			continue
		}
		c := r.Changes[i]
		fmt.Fprintf(w, "\nconfirm %s %s (%s):\n", c.Benchmark, c.Unit, pct(c.Ratio))
		writeBisect(w, b, math.NaN())
	}
}

// writeNoSeries says why the stored values made no series.
func writeNoSeries(w io.Writer, r detectReport) {
	c := r.Census
	if c.Values == 0 {
		fmt.Fprintf(w, "no values stored in %s: add results with 'decodegap history add'\n", r.Store)
		return
	}
	var why []string
	if c.Armed > 0 {
		why = append(why, fmt.Sprintf("%d are arms of pr or interleave files (lines with an arm: key compare two commits, no history of one)", c.Armed))
	}
	if c.OtherBench > 0 {
		why = append(why, fmt.Sprintf("%d are of benchmarks -bench %q does not match", c.OtherBench, r.Bench))
	}
	if c.OtherUnit > 0 {
		units := strings.Join(c.Units, ", ")
		why = append(why, fmt.Sprintf("%d are of units -unit %q leaves out (the units stored: %s)", c.OtherUnit, r.Units, units))
	}
	fmt.Fprintf(w, "0 series from the %d values stored: %s\n", c.Values, strings.Join(why, "; "))
}

// changeJSON is one change point in -json. Its numbers are report.Num:
// null for NaN, "+Inf"/"-Inf" unbounded (a change from a median of 0
// has Ratio "+Inf"), as docs/guide/json.md says.
type changeJSON struct {
	Benchmark, Unit, Host string
	Good, Bad             string
	GoodDate, BadDate     string
	Index                 int
	Before, After         report.Num
	Ratio, Lo, Hi, Level  report.Num
	P, Q                  report.Num
	NBefore, NAfter       int
	// Scale is "log" (searched on ln of the values) or "linear" (a value
	// of 0 or below).
	Scale   string
	Confirm *bisectOut `json:",omitempty"`
}

// skippedJSON is a series detect left out.
type skippedJSON struct {
	Benchmark, Unit, Commit string
	Value                   report.Num
	// Why is "not-finite" or "negative-duration".
	Why string
}

type detectOut struct {
	Store          string
	Series, Points int
	Quarantined    int
	// Method is "edivisive" or "otava" (-method); PValue is its
	// level, Permutations edivisive's shuffles (0 for otava), Window
	// otava's window (0 for edivisive).
	Method       string
	PValue       float64
	Permutations int
	Window       int
	MinMagnitude float64
	Changes      []changeJSON
	// Skipped are the series left out for a point that is not a finite
	// number or a duration below 0 (empty when none).
	Skipped []skippedJSON
	// Census counts the values stored and why those that made no series
	// were left out (history.Census).
	Census history.Census
}

func detectJSON(r detectReport) detectOut {
	out := detectOut{Store: r.Store, Series: r.Series, Points: r.Points, Quarantined: r.Quarantined, Method: r.Options.Method.String(),
		PValue: r.Options.EDivisive.PValue, Permutations: r.Options.EDivisive.Permutations, MinMagnitude: r.Options.MinMagnitude, Changes: []changeJSON{}, Skipped: []skippedJSON{}, Census: r.Census}
	if out.Census.Units == nil {
		out.Census.Units = []string{}
	}
	for _, k := range r.Skipped {
		out.Skipped = append(out.Skipped, skippedJSON{Benchmark: k.Benchmark, Unit: k.Unit, Commit: k.Commit, Value: report.Num(k.Value), Why: k.Why.String()})
	}
	if r.Options.Method == history.MethodOtava {
		out.PValue, out.Permutations, out.Window = r.Options.Otava.PValue, 0, r.Options.Otava.Window
	}
	for i, c := range r.Changes {
		j := changeJSON{Benchmark: c.Benchmark, Unit: c.Unit, Host: c.Host, Good: c.Good.Commit, Bad: c.Bad.Commit,
			GoodDate: c.Good.Date.UTC().Format("2006-01-02T15:04:05Z"), BadDate: c.Bad.Date.UTC().Format("2006-01-02T15:04:05Z"),
			Index: c.Index, Before: report.Num(c.Before), After: report.Num(c.After), Ratio: report.Num(c.Ratio), Lo: report.Num(c.Lo), Hi: report.Num(c.Hi),
			Level: report.Num(c.Level), P: report.Num(c.P), Q: report.Num(c.Q), NBefore: c.NBefore, NAfter: c.NAfter, Scale: c.Scale.String()}
		if i < len(r.Confirmed) && r.Confirmed[i] != nil {
			b := bisectJSON(r.Confirmed[i], math.NaN())
			j.Confirm = &b
		}
		out.Changes = append(out.Changes, j)
	}
	return out
}

// confirmChanges bisects each change between its commits, in the
// current repository (or -C), in the direction it shows: a change whose
// values grew (a slowdown in a cost unit) for the first slower commit,
// one whose values fell for the first faster commit (as bisect -faster);
// it judges the change's unit unless -bisect-unit was given.
func confirmChanges(ctx context.Context, changes []history.Change, f *bisectFlags, pkgs []string, stderr io.Writer) ([]*history.BisectResult, int) {
	out := make([]*history.BisectResult, len(changes))
	status := 0
	for i, c := range changes {
		if !(c.Ratio > 1 || c.Ratio < 1) {
			continue
		}
		ff := *f
		ff.faster = c.Ratio < 1
		fmt.Fprintf(stderr, "decodegap history detect: confirming %s %s (%s) between %s and %s: the first %s commit\n", c.Benchmark, c.Unit, pct(c.Ratio), short(c.Good.Commit), short(c.Bad.Commit), ff.direction())
		if !f.unitsSet {
			ff.units = c.Unit
		}
		for _, e := range []struct{ end, commit string }{{"good", c.Good.Commit}, {"bad", c.Bad.Commit}} {
			if history.OptionLike(e.commit) {
				fmt.Fprintf(stderr, "decodegap history detect: -confirm: the change's %s commit %q (a stored commit: line) starts with '-': git would read it as an option; not bisected\n", e.end, e.commit)
				return out, 3
			}
		}
		res, code := bisectOnce(ctx, &ff, c.Good.Commit, c.Bad.Commit, exactBenchmark(c.Benchmark), pkgs, stderr)
		if code == 2 {
			code = 3 // a stored range bisect refuses is no usage error of detect's
		}
		out[i] = res
		switch {
		case code != 0:
			return out, code
		case res != nil && res.Why == history.WhyNamed && status == 0:
			status = 1
		}
	}
	return out, status
}

// thresholdWords says what a step's threshold t (a fraction) in
// direction d means and where it came from.
func thresholdWords(t float64, from history.ThresholdSource, d history.Direction) string {
	if from == history.ThresholdHalfChange {
		return fmt.Sprintf("%s is a change above %.1f%%, half of the %.1f%% step 1 measured between -good and -bad (-delta not given)", d, t*100, 2*t*100)
	}
	return fmt.Sprintf("%s is a change above %.1f%%, half of -delta", d, t*100)
}

// thresholdShort is a step's threshold in the table and the answer.
func thresholdShort(res history.StepResult) string {
	if res.ThresholdFrom == history.ThresholdHalfChange {
		return fmt.Sprintf("%.1f%%, half of step 1's change", res.Threshold*100)
	}
	return fmt.Sprintf("%.1f%%, half of -delta", res.Threshold*100)
}

// writeBisect writes a search's steps and its answer; delta (NaN: not
// shown) is the -delta the steps were judged with, for steps that carry
// no threshold of their own.
func writeBisect(w io.Writer, r *history.BisectResult, delta float64) {
	fmt.Fprintf(w, "bisect: %d commits after %s up to %s; at most %d comparisons, each at %.2f%% confidence (-alpha %g split over them, Bonferroni)\n",
		len(r.Commits)-1, short(r.Commits[0]), short(r.Commits[len(r.Commits)-1]), r.Tests, (1-r.Alpha/float64(r.Tests))*100, r.Alpha)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tcandidate\tgood\tverdict\tB/A\tinterval\trounds\tthreshold")
	for i, s := range r.Steps {
		rounds := fmt.Sprint(s.Result.Rounds)
		if s.Result.MaxRounds > 0 {
			rounds += fmt.Sprintf(" of %d", s.Result.MaxRounds)
		}
		thr := "-"
		if s.Result.Threshold > 0 {
			thr = thresholdShort(s.Result)
		}
		fmt.Fprintf(tw, "%d\t%s (#%d)\t%s (#%d)\t%s\t%s\t%s … %s\t%s\t%s\n", i+1, short(s.Candidate), s.CandidateIndex, short(s.Good), s.GoodIndex,
			s.Result.Outcome.Word(r.Direction), pct(s.Result.Ratio), pct(s.Result.Lo), pct(s.Result.Hi), rounds, thr)
	}
	tw.Flush()
	for _, sk := range r.Skipped {
		fmt.Fprintf(w, "skipped %s (#%d): it does not build: %s\n", short(sk.Commit), sk.Index, buildMessage(sk.Err))
	}
	// half is the threshold of the step that decided the answer: the
	// one that found the named commit changed, or the first.
	half := ""
	if !math.IsNaN(delta) {
		half = fmt.Sprintf(" (by more than %.1f%%, half of -delta)", delta*50)
	}
	for i, st := range r.Steps {
		if st.Result.Threshold > 0 && ((r.Why == history.WhyNamed && st.CandidateIndex == r.First && st.Result.Outcome == history.StepChanged) || (r.Why == history.WhyNoChange && i == 0)) {
			half = " (by more than " + thresholdShort(st.Result) + ")"
		}
	}
	dir, change := r.Direction.String(), "slowdown"
	if r.Direction == history.Faster {
		change = "speed-up"
	}
	switch r.Why {
	case history.WhyNamed:
		fmt.Fprintf(w, "first %s commit: %s (#%d of %d): %s%s than %s, which was not\n",
			dir, r.Commits[r.First], r.First, len(r.Commits)-1, dir, half, short(r.Commits[r.First-1]))
	case history.WhyNoChange:
		fmt.Fprintf(w, "no commit named: the bad end was not %s%s than the good end\n", dir, half)
	case history.WhyFailed:
		fmt.Fprintf(w, "no commit named: step %d failed to build or run (its error is above); the %s, if any, is after %s and at or before %s (%d commits)\n",
			len(r.Steps)+1, change, short(r.Commits[r.Lo]), short(r.Commits[r.Hi]), r.Hi-r.Lo)
	case history.WhyInterrupted:
		fmt.Fprintf(w, "no commit named: interrupted during step %d (SIGINT or SIGTERM); the %s, if any, is after %s and at or before %s (%d commits)\n",
			len(r.Steps)+1, change, short(r.Commits[r.Lo]), short(r.Commits[r.Hi]), r.Hi-r.Lo)
	case history.WhySkipped:
		fmt.Fprintf(w, "no single commit named: every commit after %s and before %s was skipped (it does not build), so the first %s commit is one of these %d: %s\n",
			short(r.Commits[r.Lo]), short(r.Commits[r.Hi]), dir, r.Hi-r.Lo, strings.Join(shortAll(r.Commits[r.Lo+1:r.Hi+1]), " "))
	case history.WhyOutOfTests:
		fmt.Fprintf(w, "no single commit named: the %d comparisons -alpha is split over were used, skipped commits having moved steps off the middle; the first %s commit is one of these %d: %s\n",
			r.Tests, dir, r.Hi-r.Lo, strings.Join(shortAll(r.Commits[r.Lo+1:r.Hi+1]), " "))
	case history.WhyUndecided:
		last := r.Steps[len(r.Steps)-1].Result
		fmt.Fprintf(w, "no commit named: step %d was undecided after %d rounds (-max-rounds, -budget); the %s, if any, is after %s and at or before %s (%d commits)\n",
			len(r.Steps), last.Rounds, change, short(r.Commits[r.Lo]), short(r.Commits[r.Hi]), r.Hi-r.Lo)
	}
}

// shortAll is short of each commit.
func shortAll(commits []string) []string {
	out := make([]string, len(commits))
	for i, c := range commits {
		out[i] = short(c)
	}
	return out
}

// buildMessage is the line of a build error that says what is wrong:
// the first that names a Go file (the compiler's "./x.go:17:2: …"), else
// the first line.
func buildMessage(err error) string {
	if err == nil {
		return ""
	}
	lines := strings.Split(err.Error(), "\n")
	for _, l := range lines {
		if strings.Contains(l, ".go:") {
			return strings.TrimSpace(l)
		}
	}
	return lines[0]
}

// skipOut is a skipped commit in the JSON.
type skipOut struct {
	Commit string
	Index  int
	Error  string
}

type stepOut struct {
	Good, Candidate           string
	GoodIndex, CandidateIndex int
	Confidence                float64
	Outcome                   string
	Ratio, Lo, Hi             jsonFloat
	// Rounds ran of MaxRounds (the horizon: -max-rounds, or set from
	// -budget).
	Rounds, MaxRounds int
	// Threshold is the change (a fraction in Direction) the step is
	// changed above; ThresholdFrom "delta" (half of -delta) or
	// "half-change" (half of step 1's change: -delta not given).
	Threshold     jsonFloat
	ThresholdFrom string
	Detail        string
}

type bisectOut struct {
	Commits []string
	Tests   int
	Alpha   float64
	Delta   jsonFloat `json:",omitempty"`
	// Direction is "slower" or "faster" (-faster): the steps' Outcome
	// words are its.
	Direction string
	Steps     []stepOut
	// Skipped are the commits skipped (they do not build).
	Skipped []skipOut `json:",omitempty"`
	Named   bool
	First   string `json:",omitempty"`
	Lo, Hi  string
	// Candidates are the commits the first changed one is among when
	// skipped commits leave it ambiguous (Why "skipped" or
	// "out-of-tests"): those after Lo up to Hi.
	Candidates []string `json:",omitempty"`
	Why        string
}

// jsonFloat writes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprintf("%g", float64(f))), nil
}

func bisectJSON(r *history.BisectResult, delta float64) bisectOut {
	noChange := "no-slowdown"
	if r.Direction == history.Faster {
		noChange = "no-speed-up"
	}
	out := bisectOut{Commits: r.Commits, Tests: r.Tests, Alpha: r.Alpha, Delta: jsonFloat(delta), Direction: r.Direction.String(),
		Lo: r.Commits[r.Lo], Hi: r.Commits[r.Hi], Named: r.Why == history.WhyNamed,
		Why: map[history.BisectWhy]string{history.WhyNamed: "named", history.WhyNoChange: noChange, history.WhyUndecided: "undecided", history.WhyFailed: "failed", history.WhyInterrupted: "interrupted",
			history.WhySkipped: "skipped", history.WhyOutOfTests: "out-of-tests"}[r.Why]}
	if out.Named {
		out.First = r.Commits[r.First]
	}
	if r.Why == history.WhySkipped || r.Why == history.WhyOutOfTests {
		out.Candidates = r.Commits[r.Lo+1 : r.Hi+1]
	}
	for _, sk := range r.Skipped {
		out.Skipped = append(out.Skipped, skipOut{Commit: sk.Commit, Index: sk.Index, Error: sk.Err.Error()})
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, stepOut{Good: s.Good, Candidate: s.Candidate, GoodIndex: s.GoodIndex, CandidateIndex: s.CandidateIndex,
			Confidence: s.Confidence, Outcome: strings.ReplaceAll(s.Result.Outcome.Word(r.Direction), " ", "-"),
			Ratio: jsonFloat(s.Result.Ratio), Lo: jsonFloat(s.Result.Lo), Hi: jsonFloat(s.Result.Hi), Rounds: s.Result.Rounds, MaxRounds: s.Result.MaxRounds,
			Threshold: jsonFloat(s.Result.Threshold), ThresholdFrom: s.Result.ThresholdFrom.String(), Detail: s.Result.Detail})
	}
	return out
}
