package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/nullband"
)

// shardFlags are decodegap pr's sharding flags (-shard, -run-id, -cpus):
// the hooks pr.go calls, kept here so that pr.go carries a few lines.
type shardFlags struct {
	shard prreport.Shard
	runID string
	cpus  string
}

// add registers the flags on fs.
func (s *shardFlags) add(fs *flag.FlagSet) {
	fs.Var(&s.shard, "shard", "run the `i/n`-th share of the rounds (rounds i, i+n, … of -max-rounds, every benchmark, no early stop); merge the n files with 'decodegap merge'")
	fs.StringVar(&s.runID, "run-id", "", "`ID` the shards of one comparison share, written to -o (default: derived from the two revisions and n; give the CI run's ID)")
	fs.StringVar(&s.cpus, "cpus", "", "confine the run and its children to these `CPUs` (kernel list format, e.g. 0-1,4), to run shards side by side on one host")
}

// check returns a usage error in words, or "".
func (s *shardFlags) check(f prFlags) string {
	switch {
	case s.runID != "" && !s.shard.Sharded():
		return "-run-id needs -shard i/n"
	case strings.ContainsAny(s.runID, " \t\n"):
		return fmt.Sprintf("-run-id %q: want one word (no spaces)", s.runID)
	case s.shard.Sharded() && (f.md != "" || f.failOn != "" || f.json != ""):
		return "-md, -json and -fail-on apply to the merged report with -shard: give them to decodegap merge"
	case s.shard.Sharded() && f.minRounds != 0:
		return fmt.Sprintf("-min-rounds %d has no effect with -shard: a shard runs its share of -max-rounds in full", f.minRounds)
	case s.shard.Sharded() && s.shard.Rounds(f.maxRounds) == 0:
		return fmt.Sprintf("-shard %s: -max-rounds %d leaves this shard no round; want -max-rounds ≥ %d", s.shard.String(), f.maxRounds, s.shard.N)
	}
	if s.cpus != "" {
		if _, err := hostmon.ParseCPUList(s.cpus); err != nil {
			return fmt.Sprintf("-cpus: %v", err)
		}
	}
	return ""
}

// confine applies -cpus to this process (children inherit it); it returns
// a nonzero exit status on failure.
func (s *shardFlags) confine(stderr io.Writer) int {
	if s.cpus == "" {
		return 0
	}
	set, _ := hostmon.ParseCPUList(s.cpus)
	fs, err := hostFS()
	if err == nil {
		var topo *hostmon.Topology
		if topo, err = fs.Topology(); err == nil {
			_, err = topo.Confine(set)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "decodegap pr: -cpus %s: %v\n", s.cpus, err)
		return 3
	}
	fmt.Fprintf(stderr, "decodegap pr: confined to %s\n", set.Words())
	return 0
}

// options returns the scheduler's options: the shard's share in full.
func (s *shardFlags) options(opt nullband.Options) nullband.Options { return s.shard.Options(opt) }

// wrap returns the round runner of the shard: inner with the global round
// numbers and the runner's identity keys; inner itself without -shard.
func (s *shardFlags) wrap(inner prreport.RoundRunner, b *prreport.Build, h prreport.Host) prreport.RoundRunner {
	if !s.shard.Sharded() {
		return inner
	}
	id := prreport.RunnerID{RunID: s.runID, Shard: s.shard, CPU: h.CPU, Online: h.Online, Cores: h.Cores,
		Base: prreport.DescribeTree(b.Base), Head: prreport.DescribeTree(b.Head)}
	if id.RunID == "" {
		id.RunID = prreport.DefaultRunID(b.Base, b.Head, s.shard.N)
	}
	id.Host, _ = os.Hostname()
	if s.cpus != "" {
		set, _ := hostmon.ParseCPUList(s.cpus)
		id.Confined = set.String()
	}
	s.runID = id.RunID
	return &prreport.ShardRunner{Inner: inner, ID: id}
}

// finish ends a shard: the trailer to out, one line to stdout naming the
// merge. It returns the exit status (interrupted stays 130).
func (s *shardFlags) finish(out io.Writer, h prreport.Host, sched *prreport.Scheduler, budget time.Duration, status int, stdout, stderr io.Writer, name string) int {
	if err := prreport.WriteShardTrailer(out, h, sched.Elapsed(), budget); err != nil {
		fmt.Fprintf(stderr, "decodegap pr: -o %s: %v\n", name, err)
		return 3
	}
	done := 0
	for _, j := range sched.Jobs {
		if j.Rounds > 0 && j.Err == nil {
			done++
		}
	}
	fmt.Fprintf(stdout, "shard %s of run %s: %d of %d benchmarks ran, up to %d rounds each, in %s; results in %s.\nJudge the shards together: decodegap merge FILE...\n",
		s.shard.String(), s.runID, done, len(sched.Jobs), sched.Options.MaxRounds, sched.Elapsed().Round(10*time.Millisecond), name)
	return status
}
