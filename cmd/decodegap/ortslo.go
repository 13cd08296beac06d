package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/decodegap"
	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/runner"
)

// searchArms runs decodegap.SearchRate for each arm in a process of its
// own, one arm after the other, writes every probe's result to file (with
// the arm: key) and each search's summary to stdout.
func searchArms(ctx context.Context, f ortFlags, arms []interleave.Arm, file *os.File, logPath string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "decodegap ort: searching each of %d %s for the highest arrival rate per session that meets -slo %s, into %s; logs in %s\n",
		len(arms), plural(len(arms), "arm", "arms"), f.slo, f.out, logPath)
	w := benchfmt.NewWriter(file)
	for _, a := range arms {
		var out bytes.Buffer
		res := runner.Run(ctx, runner.Cmd{Args: a.Args, Env: append(os.Environ(), ortLogEnv+"="+logPath),
			Stdout: &out, Stderr: stderr, Timeout: f.run.runnerTimeout()})
		probes := 0
		// The arm as a file configuration line before the child's own.
		in := append([]byte(interleave.KeyArm+": "+a.Name+"\n"), out.Bytes()...)
		rd := benchfmt.NewReader(bytes.NewReader(in), a.Name)
		for rd.Scan() {
			res, ok := rd.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			if err := w.Write(res); err != nil {
				fmt.Fprintf(stderr, "decodegap ort: writing %s: %v\n", f.out, err)
				return 1
			}
			probes++
		}
		fmt.Fprintf(stdout, "== arm %s: %d %s\n", a.Name, probes, plural(probes, "probe", "probes"))
		for _, l := range searchSummary(out.String()) {
			fmt.Fprintln(stdout, l)
		}
		switch {
		case res.Outcome == runner.Interrupted:
			fmt.Fprintf(stderr, "decodegap ort: interrupted during arm %s's search; the finished probes are in %s\n", a.Name, f.out)
			return 130
		case res.Outcome == runner.TimedOut:
			fmt.Fprintf(stderr, "decodegap ort: arm %s's search was still going after -run-timeout %v, so it was stopped and the rest were not run; its log is in %s\n", a.Name, res.Timeout, logPath)
			return 1
		case res.Outcome != runner.OK:
			fmt.Fprintf(stderr, "decodegap ort: arm %s's search failed (%s, exit %d, signal %d), so the rest were not run; its log is in %s\n", a.Name, res.Outcome, res.ExitCode, res.Signal, logPath)
			return 1
		}
	}
	return 0
}

// searchSummary returns decodegap.SearchRate's summary lines in a child's
// output, indented by two spaces.
func searchSummary(out string) []string {
	var ls []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    --- decodegap.SearchRate: ") {
			in = true
		} else if !strings.HasPrefix(l, "    ") || strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			in = false
		}
		if in {
			ls = append(ls, "  "+strings.TrimPrefix(l, "    "))
		}
	}
	return ls
}

// printSLOTally counts, per arm, the blocks whose slo-met shows the
// objective met or missed, and those it left undecided.
func printSLOTally(w io.Writer, f ortFlags, logPath string, arms []string, rs []*benchfmt.Result) {
	o, err := decodegap.ParseSLO(f.slo)
	if err != nil {
		return
	}
	of := "step latency"
	if f.open {
		of = "response time"
	}
	conf := o.Confidence
	if conf == 0 {
		conf = 0.95
	}
	fmt.Fprintf(w, "== -slo %s: %s p%s ≤ %v, judged on each block's %s%% bound (slo-met)\n",
		f.slo, of, strconv.FormatFloat(o.Percentile, 'g', -1, 64), o.Limit, strconv.FormatFloat(100*conf, 'g', 4, 64))
	type tally struct{ met, missed, undecided int }
	per := map[string]*tally{}
	for _, r := range rs {
		arm := r.GetConfig(interleave.KeyArm)
		if per[arm] == nil {
			per[arm] = &tally{}
		}
		t := per[arm]
		switch v, ok := r.Value("slo-met"); {
		case !ok:
			t.undecided++
		case v == 1:
			t.met++
		default:
			t.missed++
		}
	}
	undecided := 0
	for _, a := range arms {
		t := per[a]
		if t == nil {
			t = &tally{}
		}
		n := t.met + t.missed + t.undecided
		fmt.Fprintf(w, "  %s: met in %d of %d %s, missed in %d, undecided in %d\n", a, t.met, n, plural(n, "block", "blocks"), t.missed, t.undecided)
		undecided += t.undecided
	}
	if undecided > 0 {
		fmt.Fprintf(w, "  undecided: too few steps bound the percentile or its bound straddles the limit; raise -benchtime (each block's SLO line in %s says which)\n", logPath)
	}
	fmt.Fprintln(w)
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
