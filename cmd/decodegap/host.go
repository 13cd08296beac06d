package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/hostwords"
)

func init() {
	commands["host"] = command{
		summary: "print the CPU topology, the budget -n would get, and the contention now",
		run:     runHost,
	}
}

const hostUsage = `usage: decodegap host [-n N] [-idle] [-for D]

Prints this host's CPU topology (SMT siblings, physical cores, L3 domains,
NUMA nodes), the CPU budget a benchmark confined to N physical cores would
get (never two SMT siblings of one core; one L3 domain filled first), and the
contention on that budget and its SMT siblings sampled over D, screened with
hostmon's default thresholds.

Exit status: 0 when the report was printed, 1 when the host could not be
read or the budget does not fit, 2 for bad usage.

flags:
`

func runHost(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("host", flag.ContinueOnError)
	fl.SetOutput(stderr)
	n := fl.Int("n", 1, "budget size in physical `cores`")
	idle := fl.Bool("idle", false, "choose the least-busy cores, from a sample over -for, instead of the deterministic order")
	dur := fl.Duration("for", time.Second, "contention sample `duration`")
	// -root reads a fixture tree (ROOT/proc and ROOT/sys) instead of this
	// host; for tests, so not shown in the usage.
	root := ""
	fl.Func("root", "", func(s string) error { root = s; return nil })
	fl.Usage = func() {
		fmt.Fprint(stderr, hostUsage)
		shown := flag.NewFlagSet("host", flag.ContinueOnError)
		shown.SetOutput(stderr)
		fl.VisitAll(func(f *flag.Flag) {
			if f.Name != "root" {
				shown.Var(f.Value, f.Name, f.Usage)
				shown.Lookup(f.Name).DefValue = f.DefValue
			}
		})
		shown.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "decodegap host: unexpected argument %q\n", fl.Arg(0))
		fl.Usage()
		return 2
	}
	if *dur <= 0 {
		fmt.Fprintf(stderr, "decodegap host: -for %v: the sample needs a positive duration\n", *dur)
		return 2
	}
	if *n < 1 {
		fmt.Fprintf(stderr, "decodegap host: -n %d: the budget needs at least 1 core\n", *n)
		return 2
	}
	ctx, stop := interruptible(0)
	defer stop()

	var fs hostmon.FS
	var err error
	if root == "" {
		fs, err = hostmon.DefaultFS()
	} else {
		fs, err = hostmon.NewFS(filepath.Join(root, "proc"), filepath.Join(root, "sys"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "decodegap host: %v\n", err)
		return 1
	}
	topo, err := fs.Topology()
	if err != nil {
		fmt.Fprintf(stderr, "decodegap host: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "topology:\n%s\n", topo)

	var opts []hostmon.BudgetOption
	how := "deterministic order"
	if *idle {
		busy, err := fs.SampleCPUBusy(ctx, *dur)
		if err != nil {
			fmt.Fprintf(stderr, "decodegap host: sample CPU busy for -idle: %v\n", err)
			return 1
		}
		opts = append(opts, hostmon.PreferIdle(busy))
		how = fmt.Sprintf("least busy over %v", *dur)
	}
	b, err := topo.SelectBudget(*n, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap host: -n %d: %v\n", *n, err)
		return 1
	}
	fmt.Fprintf(stdout, "budget for -n %d (%s): %s\n\n", *n, how, b)

	s, err := hostmon.NewSampler(fs, b.CPUs, b.Siblings)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap host: %v\n", err)
		return 1
	}
	a := s.Snapshot()
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "decodegap host: interrupted")
		return 130
	case <-time.After(*dur):
	}
	sp := hostmon.Between(a, s.Snapshot())
	printSpan(stdout, sp, *dur)
	return 0
}

// userHZ is the /proc/stat clock tick rate (USER_HZ), 100 on Linux.
const userHZ = 100

// printSpan prints the contention figures of a span, one a line, and the
// verdict.
func printSpan(w io.Writer, sp hostmon.Span, dur time.Duration) {
	over := dur.String()
	if sp.Seconds > 0 {
		over = fmt.Sprintf("%.2fs", sp.Seconds)
	}
	fmt.Fprintf(w, "contention over %s on the budget (this command's own CPU time left out of foreign):\n", over)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name string, f hostmon.Figure, note string) {
		if note != "" && f.Available() {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, f, note)
			return
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, f)
	}
	on := sp.CPUs.Words()
	row("foreign busy", sp.ForeignBusyPct, "on "+on)
	row("busy", sp.BusyPct, "on "+on+", this command included")
	sib := ""
	if len(sp.SiblingBusy) > 0 {
		sib = fmt.Sprintf("on siblings %s; busiest CPU %d at %.1f%%", sp.Siblings, sp.SiblingBusy[0].CPU, sp.SiblingBusy[0].BusyPct)
	}
	row("sibling busy", sp.SiblingBusyPct, sib)
	row("steal", sp.StealPct, "on "+on)
	row("run-queue wait", sp.RunQueueWaitPct, "of CPU time on "+on)
	row("PSI cpu some", sp.PSISomePct, "host-wide")
	row("load1", sp.Load1, fmt.Sprintf("on %d online CPUs", sp.OnlineCPUs))
	row("runnable tasks", sp.ProcsRunning, "at the end")
	row("cgroup throttled", sp.ThrottledPct, "")
	tw.Flush()
	if sp.ResolutionPct > 0 {
		// ResolutionPct is 100 / ticks counted (all CPUs of the budget).
		ticks := math.Round(100 / sp.ResolutionPct)
		fmt.Fprintf(w, "(percentages from /proc/stat count whole clock ticks: it counted %.0f ticks (%.2f CPU-seconds) on %s in these %s, so one tick = %.1f%%; sample longer with -for for finer figures)\n",
			ticks, ticks/userHZ, on, over, sp.ResolutionPct)
	}
	fmt.Fprintf(w, "verdict: %s\n", hostwords.Verdict(sp.Screen(hostmon.Thresholds{})))
}
