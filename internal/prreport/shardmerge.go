package prreport

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/nullband"
)

// ShardFile is one shard's output file, as ReadShard read it.
type ShardFile struct {
	// Name is the file's name, for messages.
	Name string
	// ID is the runner's identity, from the results' keys.
	ID RunnerID
	// Results are the file's results, owned by the ShardFile.
	Results []*benchfmt.Result
	// Done is true when the file ends with the shard's trailer (the shard
	// finished, or was interrupted and said so); Host, Elapsed and
	// Budget come from it (Host's figures NaN without it).
	Done            bool
	Host            Host
	Elapsed, Budget time.Duration
}

// MergeError is a shard file that cannot be merged, with the file's name.
type MergeError struct {
	File string
	Msg  string
	// Line is the line of File at fault; 0 when the fault is the file's.
	Line int
}

func (e *MergeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// trailerPrefix starts the comment line a shard writes last; benchfmt
// readers skip it.
const trailerPrefix = "# decodegap shard done:"

// WriteShardTrailer writes the shard's last line: its host weather and
// wall time, as a comment benchfmt readers skip, which ReadShard reads.
func WriteShardTrailer(w io.Writer, h Host, elapsed, budget time.Duration) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	_, err := fmt.Fprintf(w, "\n%s elapsed=%s budget=%s runs=%d contended=%d load1-start=%s load1-end=%s foreign-busy-pct=%s steal-pct=%s psi-some-pct=%s\n",
		trailerPrefix, elapsed, budget, h.Runs, h.Contended, f(h.Load1Start), f(h.Load1End), f(h.ForeignBusyPct), f(h.StealPct), f(h.PSISomePct))
	return err
}

// ReadShard reads a shard's output file (benchfmt with the ShardKeys, as
// `decodegap pr -shard` writes it). Every result must carry the same run
// ID, shard and runner keys. A syntax error is a *benchfmt.SyntaxError
// with the line; a missing or changing key a *MergeError.
func ReadShard(name string, r io.Reader) (*ShardFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	f := &ShardFile{Name: name, Host: Host{Load1Start: math.NaN(), Load1End: math.NaN(),
		ForeignBusyPct: math.NaN(), StealPct: math.NaN(), PSISomePct: math.NaN(), Contended: -1}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), trailerPrefix); ok {
			f.Done = true
			f.parseTrailer(rest)
		}
	}
	br := benchfmt.NewReader(bytes.NewReader(data), name)
	var first *benchfmt.Result
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					// interleave refuses the same line from a child
					_, line := rec.Pos()
					val, unit := v.OrigValue, v.OrigUnit
					if unit == "" {
						val, unit = v.Value, v.Unit
					}
					return nil, &MergeError{File: name, Line: line, Msg: fmt.Sprintf("%s: %v %s is not a finite number: %s", rec.Name.Full(), val, unit, lineAt(data, line))}
				}
			}
			res := rec.Clone()
			if first == nil {
				first = res
				if err := f.identity(res); err != nil {
					return nil, err
				}
			} else {
				for _, k := range ShardKeys {
					if a, b := res.GetConfig(k), first.GetConfig(k); a != b {
						return nil, &MergeError{File: name, Msg: fmt.Sprintf("%s changes from %q to %q within the file: one file must hold one shard", k, b, a)}
					}
				}
			}
			f.Results = append(f.Results, res)
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if first == nil {
		return nil, &MergeError{File: name, Msg: "no results: the shard ran nothing (see its log)"}
	}
	return f, nil
}

// lineAt returns line n (from 1) of data.
func lineAt(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return string(data)
}

// identity fills f.ID from res's keys.
func (f *ShardFile) identity(res *benchfmt.Result) error {
	id := RunnerID{RunID: res.GetConfig(KeyRunID), Host: res.GetConfig(KeyRunner), CPU: res.GetConfig(KeyRunnerCPU),
		Confined: res.GetConfig(KeyRunnerConfined), Base: res.GetConfig(KeyPRBase), Head: res.GetConfig(KeyPRHead)}
	if id.RunID == "" || res.GetConfig(KeyShard) == "" {
		return &MergeError{File: f.Name, Msg: "no run-id: or shard: keys: not the output of decodegap pr -shard i/n"}
	}
	if err := id.Shard.Set(res.GetConfig(KeyShard)); err != nil {
		return &MergeError{File: f.Name, Msg: "shard: " + err.Error()}
	}
	if a, b, ok := strings.Cut(res.GetConfig(KeyRunnerCPUs), "/"); ok {
		id.Online, _ = strconv.Atoi(a)
		id.Cores, _ = strconv.Atoi(b)
	}
	for _, p := range []*string{&id.Host, &id.CPU} {
		if *p == "unknown" {
			*p = ""
		}
	}
	if id.Confined == "none" {
		id.Confined = ""
	}
	f.ID = id
	return nil
}

func (f *ShardFile) parseTrailer(s string) {
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		num := func(dst *float64) {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				*dst = x
			}
		}
		switch k {
		case "elapsed":
			f.Elapsed, _ = time.ParseDuration(v)
		case "budget":
			f.Budget, _ = time.ParseDuration(v)
		case "runs":
			f.Host.Runs, _ = strconv.Atoi(v)
		case "contended":
			f.Host.Contended, _ = strconv.Atoi(v)
		case "load1-start":
			num(&f.Host.Load1Start)
		case "load1-end":
			num(&f.Host.Load1End)
		case "foreign-busy-pct":
			num(&f.Host.ForeignBusyPct)
		case "steal-pct":
			num(&f.Host.StealPct)
		case "psi-some-pct":
			num(&f.Host.PSISomePct)
		}
	}
}

// Fleet is the runners of a merged report.
type Fleet struct {
	// RunID is the shards' run ID; N the number of shards.
	RunID string
	N     int
	// Runners are the merged shards, by shard index.
	Runners []FleetRunner
	// Missing are the shard indices no file was given for.
	Missing []int
	// NullAlpha is the family-wise error rate of the null-arm check
	// across runners (Holm).
	NullAlpha float64
	// Rounds is the most rounds a merged job has.
	Rounds int
}

// FleetRunner is one shard of a merged report.
type FleetRunner struct {
	// ID is the runner's identity; File the shard's file.
	ID   RunnerID
	File string
	// Rounds counts the distinct rounds the shard's results hold;
	// Benchmarks the jobs it ran.
	Rounds, Benchmarks int
	// Done, Host, Elapsed and Budget are the shard's trailer (ShardFile).
	Done            bool
	Host            Host
	Elapsed, Budget time.Duration
	// Null is the check of this runner's null arm (NullAgreement).
	Null RunnerNull
}

// MergeShards checks that files are shards of one comparison (one run ID,
// one shard count, the same revisions, no shard twice) and files their
// results into jobs, each round under its global number, judged on units
// (empty: all). A benchmark's name loses its -GOMAXPROCS suffix when the
// shards ran it at different values (runners with different CPU counts):
// each round's arms ran at one value, so its ratios still pair. Jobs
// are in order of first appearance, shard by shard.
func MergeShards(files []*ShardFile, units []string) (*Fleet, []*Job, error) {
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("prreport: no shard files")
	}
	slices.SortStableFunc(files, func(a, b *ShardFile) int { return cmp.Compare(a.ID.Shard.I, b.ID.Shard.I) })
	f0 := files[0]
	fl := &Fleet{RunID: f0.ID.RunID, N: f0.ID.Shard.N}
	seen := map[int]string{}
	for _, f := range files {
		id := f.ID
		switch {
		case id.RunID != f0.ID.RunID:
			return nil, nil, &MergeError{File: f.Name, Msg: fmt.Sprintf("run-id %s, but %s has %s: shards of different runs", id.RunID, f0.Name, f0.ID.RunID)}
		case id.Shard.N != f0.ID.Shard.N:
			return nil, nil, &MergeError{File: f.Name, Msg: fmt.Sprintf("shard %s, but %s is shard %s: different shard counts", id.Shard.String(), f0.Name, f0.ID.Shard.String())}
		case id.Base != f0.ID.Base || id.Head != f0.ID.Head:
			return nil, nil, &MergeError{File: f.Name, Msg: fmt.Sprintf("compares %s with %s, but %s compares %s with %s", id.Base, id.Head, f0.Name, f0.ID.Base, f0.ID.Head)}
		case seen[id.Shard.I] != "":
			return nil, nil, &MergeError{File: f.Name, Msg: fmt.Sprintf("shard %s again (also in %s)", id.Shard.String(), seen[id.Shard.I])}
		}
		seen[id.Shard.I] = f.Name
	}
	for i := 1; i <= fl.N; i++ {
		if seen[i] == "" {
			fl.Missing = append(fl.Missing, i)
		}
	}
	type jobKey struct{ pkg, name string }
	byKey := map[jobKey]*Job{}
	rounds := map[*Job]map[int][]*benchfmt.Result{}
	var jobs []*Job
	for _, f := range files {
		fr := FleetRunner{ID: f.ID, File: f.Name, Done: f.Done, Host: f.Host, Elapsed: f.Elapsed, Budget: f.Budget}
		mine := map[int]bool{}
		ran := map[*Job]bool{}
		for _, res := range f.Results {
			r, err := strconv.Atoi(res.GetConfig(interleave.KeyRound))
			if err != nil || r < 1 || (r-1)%fl.N+1 != f.ID.Shard.I {
				return nil, nil, &MergeError{File: f.Name, Msg: fmt.Sprintf("%s: round %q is not one of shard %s's rounds (%d, %d, …)",
					res.Name.Full(), res.GetConfig(interleave.KeyRound), f.ID.Shard.String(), f.ID.Shard.Round(1), f.ID.Shard.Round(2))}
			}
			base, _ := res.Name.Parts()
			k := jobKey{res.GetConfig("pkg"), "Benchmark" + string(base)}
			j := byKey[k]
			if j == nil {
				j = &Job{Pkg: k.pkg, Name: k.name}
				byKey[k] = j
				rounds[j] = map[int][]*benchfmt.Result{}
				jobs = append(jobs, j)
			}
			rounds[j][r] = append(rounds[j][r], res)
			mine[r], ran[j] = true, true
		}
		fr.Rounds, fr.Benchmarks = len(mine), len(ran)
		fl.Runners = append(fl.Runners, fr)
	}
	for _, j := range jobs {
		byRound := rounds[j]
		stripProcs(byRound)
		order := make([]int, 0, len(byRound))
		for r := range byRound {
			order = append(order, r)
		}
		slices.Sort(order)
		for _, r := range order {
			if err := j.Add(r, byRound[r]); err != nil {
				return nil, nil, err
			}
		}
		j.Rounds = len(order)
		fl.Rounds = max(fl.Rounds, j.Rounds)
	}
	return fl, jobs, nil
}

// stripProcs drops the -GOMAXPROCS suffix from the names of a job's
// results when they carry more than one value of it.
func stripProcs(byRound map[int][]*benchfmt.Result) {
	procs := map[string]bool{}
	for _, rs := range byRound {
		for _, res := range rs {
			_, parts := res.Name.Parts()
			p := ""
			if n := len(parts); n > 0 && bytes.HasPrefix(parts[n-1], []byte("-")) {
				p = string(parts[n-1])
			}
			procs[p] = true
		}
	}
	if len(procs) < 2 {
		return
	}
	for _, rs := range byRound {
		for _, res := range rs {
			base, parts := res.Name.Parts()
			if n := len(parts); n > 0 && bytes.HasPrefix(parts[n-1], []byte("-")) {
				parts = parts[:n-1]
			}
			res.Name = benchfmt.Name(slices.Concat(append([][]byte{base}, parts...)...))
		}
	}
}

// MergeReport merges files (MergeShards), checks the
// runners' null arms (NullAgreement at the family rate 1 −
// opt.Confidence), judges every row of the union as one family
// (JudgeJobs: Holm across all rows of all shards) and returns the report.
// opt.MaxRounds must be 0: the shards ran fixed shares, judged as one
// fixed sample.
func MergeReport(files []*ShardFile, units []string, opt nullband.Options) (Report, error) {
	if opt.MaxRounds != 0 {
		return Report{}, fmt.Errorf("prreport: MergeReport judges a fixed sample: Options.MaxRounds must be 0")
	}
	fl, jobs, err := MergeShards(files, units)
	if err != nil {
		return Report{}, err
	}
	alpha := 1 - opt.Confidence
	if opt.Confidence == 0 {
		alpha = 0.05
	}
	NullAgreement(fl, jobs, alpha)
	rows, un, err := JudgeJobs(jobs, judge.Policy{Base: ArmBase, Null: ArmNull, Units: units, Options: opt})
	if err != nil {
		return Report{}, err
	}
	rep := Report{Base: sideOf(fl.Runners[0].ID.Base), Head: sideOf(fl.Runners[0].ID.Head),
		Rows: rows, Unjudged: un, Alpha: alpha, Delta: opt.Delta, MaxRounds: fl.Rounds, Fleet: fl}
	if rep.Delta == 0 {
		rep.Delta = 0.02
	}
	for _, r := range fl.Runners {
		rep.Elapsed = max(rep.Elapsed, r.Elapsed)
		rep.Budget = max(rep.Budget, r.Budget)
	}
	return rep, nil
}

// sideOf parses a KeyPRBase/KeyPRHead value back into a Side.
func sideOf(s string) Side {
	switch s {
	case "worktree":
		return Side{}
	case "worktree-dirty":
		return Side{Dirty: true}
	}
	ref, commit, _ := strings.Cut(s, " ")
	if ref == "worktree" {
		ref = ""
	}
	return Side{Ref: ref, Commit: commit}
}
