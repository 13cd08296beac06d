package prreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/durfmt"
	"github.com/gapbench/gapbench/internal/report"
)

// fleetLines are a merged report's lines about its runners, in place of
// the one host line: the merge, each runner with its weather and null
// arm, the missing shards, and a flag for each runner whose null arm
// disagrees with the others.
func fleetLines(r Report) []string {
	fl := r.Fleet
	out := []string{fmt.Sprintf("Runners: %d of %d shards of run %s, merged; each round's three arms ran on one runner, so each round is judged within it and a runner's speed cancels.",
		len(fl.Runners), fl.N, fl.RunID)}
	if len(fl.Missing) > 0 {
		names := make([]string, len(fl.Missing))
		for i, m := range fl.Missing {
			names[i] = fmt.Sprintf("%d/%d", m, fl.N)
		}
		out = append(out, fmt.Sprintf("**Missing shards: %s**: no file was given for them; the rows are judged on the other shards' rounds (up to %d).",
			strings.Join(names, ", "), fl.Rounds))
	}
	for _, fr := range fl.Runners {
		out = append(out, runnerLine(fr))
	}
	for _, fr := range fl.Runners {
		if n := fr.Null; n.Disagrees {
			out = append(out, fmt.Sprintf("**Runner %s (%s): its null arm disagrees with the others**: null/base ×%s over its %d rounds (p %.2g, Holm across %d runners at %s), ×%s on the others. Its base and null runs did not share their conditions; its rounds stay in the report, where each row's own null check still guards the verdict. Rerun that shard, or merge without its file.",
				fr.ID.Shard.String(), hostName(fr.ID), report.Fixed(n.Ratio, 3), n.Values, n.P, len(fl.Runners), pct(fl.NullAlpha), report.Fixed(n.Others, 3)))
		}
	}
	return out
}

// runnerLine is one runner: identity, rounds, weather, null arm.
func runnerLine(fr FleetRunner) string {
	id, h := fr.ID, fr.Host
	var b strings.Builder
	fmt.Fprintf(&b, "Runner %s: %s", id.Shard.String(), hostName(id))
	var what []string
	if id.CPU != "" {
		what = append(what, id.CPU)
	}
	if id.Online > 0 {
		what = append(what, fmt.Sprintf("%d CPUs online (%d cores)", id.Online, id.Cores))
	}
	if id.Confined != "" {
		if set, err := hostmon.ParseCPUList(id.Confined); err == nil {
			what = append(what, "confined to "+set.Words())
		} else {
			what = append(what, "confined to CPUs "+id.Confined)
		}
	}
	if len(what) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(what, ", "))
	}
	fmt.Fprintf(&b, ": %s of %s", count(fr.Rounds, "round"), count(fr.Benchmarks, "benchmark"))
	if !fr.Done {
		b.WriteString("; its file has no end line (the shard was cut short or is still running): its rounds so far are judged.")
		return b.String()
	}
	fmt.Fprintf(&b, " in %s", durfmt.Elapsed(fr.Elapsed))
	if fr.Budget > 0 {
		fmt.Fprintf(&b, " (budget %s)", durfmt.Elapsed(fr.Budget))
	}
	fmt.Fprintf(&b, "; load %s at the start, %s at the end", fig(h.Load1Start, ""), fig(h.Load1End, ""))
	switch {
	case h.Contended < 0:
		fmt.Fprintf(&b, "; %d runs, not screened for contention", h.Runs)
	default:
		fmt.Fprintf(&b, "; %d of %d runs screened contended", h.Contended, h.Runs)
	}
	switch n := fr.Null; {
	case math.IsNaN(n.Ratio):
		b.WriteString("; null arm: no complete base and null pair.")
	case math.IsNaN(n.P):
		fmt.Fprintf(&b, "; null/base ×%s over %d rounds (too few to check: %d needed).", report.Fixed(n.Ratio, 3), n.Values, MinNullValues)
	default:
		fmt.Fprintf(&b, "; null/base ×%s over %d rounds (p %.2g).", report.Fixed(n.Ratio, 3), n.Values, n.P)
	}
	return b.String()
}

// count is "1 round", "2 rounds".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func hostName(id RunnerID) string {
	if id.Host == "" {
		return "host unknown"
	}
	return "host " + id.Host
}
