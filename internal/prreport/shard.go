package prreport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/nullband"
)

// Sharding (`decodegap pr -shard i/n`, `decodegap merge`).
//
// A shard runs every benchmark but only its share of the rounds: shard i
// of n runs the rounds i, i+n, i+2n, … up to the total -max-rounds. The
// share is by rounds, not by benchmarks, because
//
//   - each round's three arms still run on one host, so a round stays a
//     block of the design and a runner's speed cancels within it (the
//     aligned-rank test centres each round's logs on their mean);
//   - every row sees every runner, so a slow or noisy runner spreads over
//     all rows instead of making some rows all-noisy;
//   - the shards' loads are equal without knowing what each benchmark
//     costs, and the merged report has the rows of one machine's report
//     and the same total rounds;
//   - round numbers stay unique across shards, so merging is a union.
//
// A shard runs its share in full (no early stop): the merge judges the
// union as one fixed sample, whose error rates would not hold if each
// shard had stopped on its own data. Each shard pays for its own builds
// and its own calibration runs.

// The benchfmt file configuration keys a shard adds to every result.
const (
	// KeyRunID is the run ID the shards of one comparison share.
	KeyRunID = "run-id"
	// KeyShard is the shard, "i/n".
	KeyShard = "shard"
	// KeyRunner is the runner's host name; KeyRunnerCPU its CPU model;
	// KeyRunnerCPUs its CPUs as "online/cores" (logical CPUs online,
	// physical cores); KeyRunnerConfined the CPU list the shard was
	// confined to ("" when it was not).
	KeyRunner         = "runner"
	KeyRunnerCPU      = "runner-cpu"
	KeyRunnerCPUs     = "runner-cpus"
	KeyRunnerConfined = "runner-confined"
	// KeyPRBase and KeyPRHead describe the two revisions ("ref commit",
	// or "worktree" and "worktree-dirty" for the work tree), so that the
	// merge refuses shards of different comparisons.
	KeyPRBase = "pr-base"
	KeyPRHead = "pr-head"
)

// ShardKeys are the file keys a shard adds; benchstat needs them in
// -ignore to pool the shards' files.
var ShardKeys = []string{KeyRunID, KeyShard, KeyRunner, KeyRunnerCPU, KeyRunnerCPUs, KeyRunnerConfined, KeyPRBase, KeyPRHead}

// Shard is one share of a sharded comparison: the I-th of N (1 ≤ I ≤ N).
// The zero Shard means no sharding. It implements flag.Value ("i/n").
type Shard struct{ I, N int }

// MaxShards is the most shards a comparison may have.
const MaxShards = 1000

// Set parses "i/n".
func (s *Shard) Set(v string) error {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("%q: write i/n, e.g. 2/4 for the second of four shards", v)
	}
	if n < 1 || n > MaxShards || i < 1 || i > n {
		return fmt.Errorf("%q: want 1 ≤ i ≤ n ≤ %d", v, MaxShards)
	}
	*s = Shard{I: i, N: n}
	return nil
}

// String returns "i/n", or "" for the zero Shard.
func (s *Shard) String() string {
	if s == nil || s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Sharded reports whether s is a share (N ≥ 1).
func (s Shard) Sharded() bool { return s.N > 0 }

// Rounds returns how many of total rounds the shard runs: those
// numbered I, I+N, I+2N, … ≤ total. Over the N shards they sum to total.
func (s Shard) Rounds(total int) int {
	if s.N == 0 {
		return total
	}
	if total < s.I {
		return 0
	}
	return (total-s.I)/s.N + 1
}

// Round returns the global number of the shard's local round k (from 1).
func (s Shard) Round(k int) int {
	if s.N == 0 {
		return k
	}
	return s.I + (k-1)*s.N
}

// Options returns the Scheduler options of the shard for the comparison's
// options opt (opt.MaxRounds the total over all shards): the shard's
// share as both MinRounds and MaxRounds, so every job runs its share in
// full, in turn with the others, and is looked at only after its last
// round. The zero Shard returns opt.
func (s Shard) Options(opt nullband.Options) nullband.Options {
	if s.N == 0 {
		return opt
	}
	k := max(s.Rounds(opt.MaxRounds), 1)
	opt.MaxRounds, opt.MinRounds = k, k
	return opt
}

// RunnerID is the identity of the runner a shard ran on, as written to
// its results.
type RunnerID struct {
	// RunID is shared by the shards of one comparison (DefaultRunID when
	// the caller gives none).
	RunID string
	// Shard is the share the runner ran.
	Shard Shard
	// Host is the host name; CPU the CPU model ("" when unknown); Online
	// and Cores the logical CPUs online and physical cores (0 unknown).
	Host, CPU     string
	Online, Cores int
	// Confined is the CPU list the shard was confined to, "" when none.
	Confined string
	// Base and Head describe the revisions (see KeyPRBase).
	Base, Head string
}

// DescribeTree is the KeyPRBase/KeyPRHead value of a tree: "ref commit",
// "worktree commit" (a clean work tree at that commit), "worktree" or
// "worktree-dirty".
func DescribeTree(t Tree) string {
	switch {
	case t.Commit == "" && t.Dirty:
		return "worktree-dirty"
	case t.Commit == "":
		return "worktree"
	case t.Ref == "":
		return "worktree " + t.Commit
	}
	return t.Ref + " " + t.Commit
}

// DefaultRunID derives a run ID from what every shard of one comparison
// knows without talking to the others: the two revisions and the number
// of shards. Two comparisons of the same revisions share it: give an ID
// (a CI run's number) to tell them apart.
func DefaultRunID(base, head Tree, n int) string {
	h := sha256.Sum256([]byte(DescribeTree(base) + "\n" + DescribeTree(head) + "\n" + strconv.Itoa(n)))
	return hex.EncodeToString(h[:6])
}

// config sets the identity's file keys on res.
func (id RunnerID) config(res *benchfmt.Result) {
	cpus := ""
	if id.Online > 0 {
		cpus = fmt.Sprintf("%d/%d", id.Online, id.Cores)
	}
	for _, kv := range [][2]string{
		{KeyRunID, id.RunID}, {KeyShard, id.Shard.String()}, {KeyRunner, id.Host},
		{KeyRunnerCPU, id.CPU}, {KeyRunnerCPUs, cpus}, {KeyRunnerConfined, id.Confined},
		{KeyPRBase, id.Base}, {KeyPRHead, id.Head},
	} {
		if kv[1] == "" {
			kv[1] = "unknown"
			if kv[0] == KeyRunnerConfined {
				kv[1] = "none"
			}
		}
		setFileConfig(res, kv[0], kv[1])
	}
}

// ShardRunner runs a shard's rounds with Inner: the Scheduler's local
// round k of a job becomes global round ID.Shard.Round(k), given to Inner
// (whose results carry it as round:, and whose per-round orders are drawn
// for it), and every result gets the runner's identity keys.
type ShardRunner struct {
	Inner RoundRunner
	ID    RunnerID
}

// RunRound implements RoundRunner.
func (s *ShardRunner) RunRound(ctx context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	res, err := s.Inner.RunRound(ctx, j, s.ID.Shard.Round(round))
	for _, r := range res {
		s.ID.config(r)
	}
	return res, err
}
