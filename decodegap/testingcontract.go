package decodegap

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This file holds Compare's contract with package testing, and Run's last
// call rule.
//
// testing runs a benchmark function that calls b.Run once, with b.N = 1,
// and then each sub-benchmark as a leaf: for every value of -cpu (setting
// GOMAXPROCS to it), -count times, each time a probe with b.N = 1 and then a
// call with the N of -benchtime=Nx (or growing N up to a duration).
//
// Compare therefore measures when it is called: for every -cpu value in
// order, with GOMAXPROCS set to it, up to -count rounds. Then it replays:
// it registers one sub-benchmark per arm whose k-th last call reports round
// k mod R of setting k / R (R the rounds run), after checking that testing
// set GOMAXPROCS to the value that round was measured at. No line is ever a
// copy: a call beyond what was measured fails the benchmark.
//
// With a single -cpu value Compare stops early once every verdict is
// decided (sequential mode, -count the most). It then lowers the testing
// flag test.count to the rounds run while its sub-benchmarks replay, and
// restores it after, so each arm prints exactly one line per round run:
// nothing is printed for rounds not run. With several -cpu values every
// setting runs -count rounds (testing's -count is one number for all).
//
// With -benchtime=D (a duration) testing ramps b.N of the replaying calls
// up to 1e9, so its iteration column shows that N, not the block size:
// use -benchtime=Nx.
//
// Without -v a block prints its result line only (blocklog.go): each arm's
// last call names, in one line, the rounds whose blocks were flagged.
//
// The order used and the verdict table (internal/verdicttext) are printed
// once, on stdout after every arm's lines, each line indented so that
// benchfmt and benchstat skip it: testing would keep only ten lines of the
// last arm's log, which says where they are.

// plan is what Compare reads from testing's flags.
type plan struct {
	procs []int // -cpu values, in order; the current GOMAXPROCS by default
	count int   // -count: the most rounds per setting
	// iters is N of -benchtime=Nx, or 0 for a duration (then duration).
	iters    int
	duration time.Duration
}

// readPlan reads -cpu, -count and -benchtime.
func readPlan() (plan, error) {
	p := plan{count: 1, duration: time.Second}
	if f := flag.Lookup("test.count"); f != nil {
		c, err := strconv.Atoi(f.Value.String())
		if err != nil || c < 1 {
			return p, fmt.Errorf("-count = %q: want a whole number >= 1", f.Value.String())
		}
		p.count = c
	}
	cpus := ""
	if f := flag.Lookup("test.cpu"); f != nil {
		cpus = f.Value.String()
	}
	var err error
	if p.procs, err = parseCPU(cpus); err != nil {
		return p, err
	}
	bt := "1s"
	if f := flag.Lookup("test.benchtime"); f != nil {
		bt = f.Value.String()
	}
	p.iters, p.duration, err = parseBenchtime(bt)
	return p, err
}

// parseCPU parses -cpu as testing does; "" is the current GOMAXPROCS.
func parseCPU(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return []int{runtime.GOMAXPROCS(0)}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("-cpu = %q: %q is not a positive whole number", s, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return []int{runtime.GOMAXPROCS(0)}, nil
	}
	return out, nil
}

// parseBenchtime returns N of "Nx", or the duration.
func parseBenchtime(bt string) (int, time.Duration, error) {
	if s, ok := strings.CutSuffix(bt, "x"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, 0, fmt.Errorf("-benchtime = %q: want Nx with N >= 1, or a duration", bt)
		}
		return n, 0, nil
	}
	d, err := time.ParseDuration(bt)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("-benchtime = %q: want Nx with N >= 1, or a duration", bt)
	}
	return 0, d, nil
}

// replay hands the measured rounds to testing, one sub-benchmark per arm.
func (c *comparison) replay(b *testing.B) {
	b.Helper()
	if c.rounds < c.plan.count {
		f := flag.Lookup("test.count")
		old := f.Value.String()
		if err := f.Value.Set(strconv.Itoa(c.rounds)); err != nil {
			b.Fatalf("decodegap.Compare: lowering -count to the %d rounds run: %v", c.rounds, err)
		}
		defer f.Value.Set(old)
	}
	total := len(c.plan.procs) * c.rounds
	verbose := testing.Verbose()
	for a := range c.arms {
		k := 0
		b.Run("arm="+c.arms[a].Name, func(sb *testing.B) {
			if k >= total {
				sb.Fatalf("decodegap.Compare: testing asked for result %d of arm %q, but %d were measured (%d -cpu settings × %d rounds): Compare must be the whole body of its benchmark function", k+1, c.arms[a].Name, total, len(c.plan.procs), c.rounds)
			}
			pi, r := k/c.rounds, k%c.rounds
			last := isLastCall(sb)
			// testing's first probe runs before it sets GOMAXPROCS; the
			// calls whose results it prints run at the setting.
			if got := runtime.GOMAXPROCS(0); last && got != c.plan.procs[pi] {
				sb.Fatalf("decodegap.Compare: testing runs arm %q at GOMAXPROCS %d where round %d was measured at %d: refusing to report it", c.arms[a].Name, got, r+1, c.plan.procs[pi])
			}
			publishBlock(sb, c.s, c.res[pi][a][r], last, verbose)
			if last {
				k++
				if k == total && !verbose {
					if l := armNote(c.arms[a].Name, c.armBlocks(a)); l != "" {
						sb.Log(l)
					}
				}
			}
		})
	}
}

// armBlocks returns arm a's results at every setting, in the order replayed.
func (c *comparison) armBlocks(a int) []*result {
	var out []*result
	for pi := range c.plan.procs {
		out = append(out, c.res[pi][a]...)
	}
	return out
}

// isLastCall reports whether testing will not call the benchmark function
// again after this call, so that Run logs once rather than once per call.
//
// testing calls a benchmark function first with b.N = 1, then, for
// -benchtime=Nx, once with b.N = N; for -benchtime=D it calls it with
// growing b.N until the timed duration reaches D (or b.N reaches 1e9). The
// log of every call is kept and printed together, so only the last call may
// speak. The time-based rule is read from b.Elapsed, which testing adds to
// after Run returns: a call judged last is last; a call that ends within
// microseconds of D may be judged not last and print nothing.
func isLastCall(b *testing.B) bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return true
	}
	return lastCall(f.Value.String(), b.N, b.Elapsed())
}

// lastCall is isLastCall's rule on plain values: benchtime as -benchtime
// prints it, the b.N of this call and the benchmark time elapsed so far.
func lastCall(benchtime string, n int, elapsed time.Duration) bool {
	if s, ok := strings.CutSuffix(benchtime, "x"); ok {
		want, err := strconv.Atoi(s)
		if err != nil {
			return true
		}
		if want <= 1 {
			return n == 1
		}
		return n == want
	}
	d, err := time.ParseDuration(benchtime)
	if err != nil {
		return true
	}
	return elapsed >= d || n >= 1e9
}
