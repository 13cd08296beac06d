package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/prreport"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

func init() {
	commands["merge"] = command{
		summary: "judge the shards of a 'decodegap pr -shard i/n' comparison as one pull-request report",
		run:     runMerge,
	}
}

const mergeUsage = `usage: decodegap merge [flags] FILE...

Reads the -o files of the shards of one comparison ('decodegap pr -shard i/n'
on n runners, one run ID) and writes one report, as 'decodegap pr' does on one
machine. Each round's three arms ran on one runner: every round is judged
within its runner (runners are blocks, so their speeds cancel), and Holm's
procedure across all rows of all shards keeps the chance of any false
faster/slower call at most -alpha. The report names the runners and flags a
runner whose null arm disagrees with the others. A missing shard is named;
the rows are judged on the rounds of the others.

Exit status: 0; 1 when -fail-on matched a decided slowdown; 2 for bad usage;
3 when a file cannot be read or merged.

flags:
`

// mergeFlags are the merge command's settings.
type mergeFlags struct {
	alpha  float64
	delta  judge.Delta
	units  string
	md     string
	json   string
	failOn string
}

func parseMergeFlags(args []string, stderr io.Writer) (f mergeFlags, files []string, status int, ok bool) {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mergeUsage); fs.PrintDefaults() }
	f.delta = 0.02
	fs.Float64Var(&f.alpha, "alpha", 0.05, "family-wise error `rate` of the faster/slower calls across all rows (Holm), and of the runners' null-arm check")
	fs.Var(&f.delta, "delta", "equivalence `margin`: equivalent means within ±margin")
	fs.StringVar(&f.units, "unit", judge.DefaultUnitList, "comma-separated `units` to judge (as decodegap pr -unit)")
	addJSONFlag(fs, &f.json)
	fs.StringVar(&f.md, "md", "", "also write the report as Markdown to `file` (for a pull-request comment)")
	fs.StringVar(&f.failOn, "fail-on", "", "exit 1 when a row is decided slower by more than this, e.g. 'slower>3%' (undecided rows never fail)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, nil, 0, false
		}
		return f, nil, 2, false
	}
	bad := func(format string, a ...any) (mergeFlags, []string, int, bool) {
		fmt.Fprintf(stderr, "decodegap merge: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'decodegap merge -h' for usage")
		return f, nil, 2, false
	}
	if !(f.alpha > 0 && f.alpha < 0.5) {
		return bad("-alpha %v: want a rate in (0, 0.5), e.g. 0.05", f.alpha)
	}
	if _, err := prreport.ParseFailOn(f.failOn); err != nil {
		return bad("-fail-on %v", err)
	}
	if files = fs.Args(); len(files) == 0 {
		return bad("no FILE: give the -o files of the shards, e.g. decodegap merge shard-*.txt")
	}
	return f, files, 0, true
}

// maxShardResults bounds the result lines of one file merge reads (each
// costs about 2 KB once read): a shard runs its share of -max-rounds, three
// arms a round, so 100 benchmarks of 300 rounds fit; a file with more is
// not the -o of one shard. The file's bytes are bounded by maxBenchBytes.
const maxShardResults = 100_000

// readShardFile reads the shard file path: a regular file of at most
// maxBenchBytes and maxShardResults result lines, else an error naming
// the file and the limit, returned before the results are parsed.
func readShardFile(path string) (*prreport.ShardFile, error) {
	data, err := readRegularFile(path, maxBenchBytes, "give the -o files of decodegap pr -shard i/n")
	if err != nil {
		return nil, err
	}
	n := 0
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if bytes.HasPrefix(line, []byte("Benchmark")) {
			if n++; n > maxShardResults {
				return nil, fmt.Errorf("%s: more than %d result lines, more than one shard of decodegap pr -shard i/n writes", path, maxShardResults)
			}
		}
	}
	return prreport.ReadShard(path, bytes.NewReader(data))
}

func runMerge(args []string, stdout, stderr io.Writer) int {
	f, names, status, ok := parseMergeFlags(args, stderr)
	if !ok {
		return status
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "decodegap merge: "+format+"\n", a...)
		return 3
	}
	var files []*prreport.ShardFile
	for _, name := range names {
		sf, err := readShardFile(name)
		if err != nil {
			return fail("%v", err)
		}
		files = append(files, sf)
	}
	var units []string
	for _, u := range strings.Split(f.units, ",") {
		if u = strings.TrimSpace(u); u != "" {
			units = append(units, u)
		}
	}
	rep, err := prreport.MergeReport(files, units, nullband.Options{Confidence: 1 - f.alpha, Delta: float64(f.delta)})
	if err != nil {
		return fail("%v", err)
	}
	rep.Names = verdicttext.Names{Rounds: "-max-rounds", MaxRounds: "-max-rounds", Delta: "-delta"}
	rep.Stops.Capped = prreport.Count(rep.Rows).Undecided // every shard ran its share in full
	failOn, _ := prreport.ParseFailOn(f.failOn)
	if err := prreport.WriteText(stdout, rep, failOn); err != nil {
		return fail("%v", err)
	}
	if f.json != "" {
		if err := writeJSONReport(f.json, "merge", rep.Revisions(), rep.Rows); err != nil {
			return fail("%v", err)
		}
	}
	fmt.Fprintf(stdout, "\nbenchstat: go tool benchstat -col 'arm@(base head null)' -ignore round,screen,%s %s\n",
		strings.Join(prreport.ShardKeys, ","), strings.Join(names, " "))
	if f.md != "" {
		mf, err := os.Create(f.md)
		if err == nil {
			err = prreport.WriteMarkdown(mf, rep, failOn)
			if cerr := mf.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fail("-md: %v", err)
		}
	}
	if len(failOn.Failing(rep.Rows)) > 0 {
		return 1
	}
	return 0
}
