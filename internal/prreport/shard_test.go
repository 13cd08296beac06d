package prreport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/judge"
	"github.com/gapbench/gapbench/internal/report"
	"github.com/gapbench/gapbench/internal/sim"
	"github.com/gapbench/gapbench/nullband"
)

func TestShardSetAndRounds(t *testing.T) {
	for _, bad := range []string{"", "1", "0/4", "5/4", "a/b", "1/0", "1/1001"} {
		var s Shard
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q) = nil, want an error", bad)
		}
	}
	var s Shard
	if err := s.Set("3/4"); err != nil || s != (Shard{3, 4}) || s.String() != "3/4" {
		t.Fatalf("Set(3/4): %v %+v", err, s)
	}
	for _, n := range []int{1, 2, 3, 4, 7, 16} {
		for _, total := range []int{1, 2, 5, 12, 30, 31} {
			sum := 0
			seen := map[int]bool{}
			for i := 1; i <= n; i++ {
				sh := Shard{i, n}
				k := sh.Rounds(total)
				sum += k
				for l := 1; l <= k; l++ {
					r := sh.Round(l)
					if r < 1 || r > total || seen[r] || (r-1)%n+1 != i {
						t.Fatalf("n %d total %d: shard %d's round %d is %d", n, total, i, l, r)
					}
					seen[r] = true
				}
			}
			if sum != total {
				t.Errorf("n %d total %d: the shares sum to %d", n, total, sum)
			}
		}
	}
	base, head := Tree{Ref: "main", Commit: strings.Repeat("a", 40)}, Tree{Dirty: true}
	if a, b := DefaultRunID(base, head, 4), DefaultRunID(base, head, 4); a != b || a == DefaultRunID(base, head, 3) || a == DefaultRunID(base, Tree{}, 4) || len(a) != 12 {
		t.Errorf("default run IDs: %q %q; want one per revisions and n", a, b)
	}
	for _, tr := range []Tree{base, head, {}} {
		if sd := sideOf(DescribeTree(tr)); sd != (Side{Ref: tr.Ref, Commit: tr.Commit, Dirty: tr.Dirty}) {
			t.Errorf("%+v: described %q, read back %+v", tr, DescribeTree(tr), sd)
		}
	}
	opt := Shard{2, 4}.Options(nullband.Options{MaxRounds: 30})
	if opt.MaxRounds != 8 || opt.MinRounds != 8 {
		t.Errorf("shard 2/4 of 30 rounds: Options %d…%d, want 8…8", opt.MinRounds, opt.MaxRounds)
	}
	if o := (Shard{}).Options(nullband.Options{MaxRounds: 30}); o.MaxRounds != 30 || o.MinRounds != 0 {
		t.Errorf("no shard changed the options: %+v", o)
	}
}

// fleetRunner is a RoundRunner over pre-drawn fleet rows: global round r
// of job j is index r−1 of rows[j.Name]; each host's results carry its
// own GOMAXPROCS suffix, as runners of different sizes write them.
type fleetRunner struct {
	rows  map[string]nullband.Samples
	procs []int // by host
	n     int
}

func (f *fleetRunner) RunRound(_ context.Context, j *Job, round int) ([]*benchfmt.Result, error) {
	s := f.rows[j.Name]
	i := round - 1
	screen := "clean"
	if s.Contended[i] {
		screen = "contended"
	}
	name := strings.TrimPrefix(j.Name, "Benchmark")
	if p := f.procs[(round-1)%f.n]; p > 1 {
		name += "-" + strconv.Itoa(p)
	}
	var out []*benchfmt.Result
	for _, a := range []struct {
		arm string
		v   float64
	}{{ArmBase, s.Base[i]}, {ArmHead, s.Candidate[i]}, {ArmNull, s.Null[i]}} {
		out = append(out, &benchfmt.Result{
			Config: []benchfmt.Config{{Key: "pkg", Value: []byte(j.Pkg), File: true},
				{Key: interleave.KeyArm, Value: []byte(a.arm), File: true},
				{Key: interleave.KeyRound, Value: []byte(strconv.Itoa(round)), File: true},
				{Key: interleave.KeyScreen, Value: []byte(screen), File: true}},
			Name: benchfmt.Name(name), Iters: 1000,
			Values: []benchfmt.Value{{Value: 1e-6 * a.v, Unit: "sec/op"}},
		})
	}
	return out, nil
}

// fleetSeed seeds runFleet's rows. The null-arm check flags a sound
// runner at rate α (TestNullAgreementRate checks it); with seed 5 runner 1
// has p = 0.011 and is flagged beside runner 3, one of those chances.
const fleetSeed = 6

// runFleet runs each of the hosts' shards through the real Scheduler and
// ShardRunner into its own benchfmt file, with a trailer, and returns
// the files' bytes. effects[i] is benchmark i's change; nullShift
// multiplies the null arm of host nullHost (−1: none).
func runFleet(t *testing.T, hosts []fleetHost, total int, effects []float64, nullHost int, nullShift float64) [][]byte {
	t.Helper()
	models := sim.Models()
	fr := &fleetRunner{rows: map[string]nullband.Samples{}, n: len(hosts)}
	names := make([]string, len(effects))
	for i, e := range effects {
		names[i] = fmt.Sprintf("BenchmarkFleet%02d", i)
		s := fleetRow(models[i%3], fleetSeed, i, hosts, total, e) // the three lognormal and weather models
		for r := range s.Null {
			if (r)%len(hosts) == nullHost {
				s.Null[r] *= nullShift
			}
		}
		fr.rows[names[i]] = s
	}
	for h := range hosts {
		fr.procs = append(fr.procs, 2<<(h%2)) // 2 or 4 CPUs
	}
	var files [][]byte
	for h := range hosts {
		sh := Shard{h + 1, len(hosts)}
		jobs := make([]*Job, len(names))
		for i, n := range names {
			jobs[i] = &Job{Pkg: "example.com/fleet", Name: n}
		}
		var buf bytes.Buffer
		clock := time.Unix(0, 0)
		id := RunnerID{RunID: "run-7", Shard: sh, Host: fmt.Sprintf("ci-%d", h+1), CPU: "Test CPU", Online: fr.procs[h], Cores: fr.procs[h],
			Base: "main " + strings.Repeat("a", 40), Head: "worktree"}
		s := &Scheduler{Jobs: jobs, Runner: &ShardRunner{Inner: fr, ID: id},
			Options: sh.Options(nullband.Options{Confidence: 0.95, MaxRounds: total}), Out: &buf,
			Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if want := sh.Rounds(total); j.Rounds != want {
				t.Fatalf("shard %s: %s ran %d rounds, want its share %d", sh.String(), j.Name, j.Rounds, want)
			}
		}
		if err := WriteShardTrailer(&buf, Host{Load1Start: 1.5, Load1End: 2, Runs: 3 * len(jobs) * sh.Rounds(total), Contended: -1}, s.Elapsed(), 0); err != nil {
			t.Fatal(err)
		}
		files = append(files, buf.Bytes())
	}
	return files
}

func readShards(t *testing.T, data [][]byte) []*ShardFile {
	t.Helper()
	var out []*ShardFile
	for i, d := range data {
		f, err := ReadShard(fmt.Sprintf("shard%d.txt", i+1), bytes.NewReader(d))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// TestMergeFleet runs 4 shards on hosts whose speeds differ by up to
// 30% and whose noise differs, through the Scheduler, the ShardRunner and
// the files, and merges them: every round is back under its global
// number, the 10% slowdown is found, no unchanged row is flagged, the
// GOMAXPROCS suffixes of different runners do not split rows, the report
// names the runners, and -fail-on sees the merged rows.
func TestMergeFleet(t *testing.T) {
	hosts := []fleetHost{{1, 1}, {1.3, 1.5}, {1.1, 0.7}, {1.2, 1.2}}
	effects := []float64{0.10, 0, 0, 0, 0, 0}
	files := readShards(t, runFleet(t, hosts, 32, effects, -1, 1))
	if !files[0].Done || files[0].Elapsed <= 0 || files[1].ID.Host != "ci-2" || files[1].ID.Online != 4 {
		t.Errorf("shard file: done %v elapsed %v id %+v", files[0].Done, files[0].Elapsed, files[1].ID)
	}
	rep, err := MergeReport(files, nil, nullband.Options{Confidence: 0.95, Delta: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	var cand []Row
	for _, r := range rep.Rows {
		if r.Kind == report.Candidate {
			cand = append(cand, r)
		}
	}
	if len(cand) != len(effects) {
		t.Fatalf("%d rows, want %d (one per benchmark: GOMAXPROCS suffixes merged): %+v", len(cand), len(effects), cand)
	}
	for _, r := range cand {
		if r.Verdict.Given != 32 {
			t.Errorf("%s: %d rounds, want 32", r.Bench, r.Verdict.Given)
		}
		switch {
		case r.Bench == "Fleet00" && r.Verdict.Outcome != nullband.Slower:
			t.Errorf("the 10%% slowdown: %v (ratio %.3f)", r.Verdict.Outcome, r.Verdict.Ratio)
		case r.Bench != "Fleet00" && (r.Verdict.Outcome == nullband.Slower || r.Verdict.Outcome == nullband.Faster):
			t.Errorf("%s unchanged but %v", r.Bench, r.Verdict.Outcome)
		}
	}
	for _, fr := range rep.Fleet.Runners {
		if fr.Null.Disagrees || fr.Rounds != 8 || fr.Benchmarks != len(effects) {
			t.Errorf("runner %s: %+v", fr.ID.Shard.String(), fr)
		}
	}
	if rep.Base.Ref != "main" || rep.Head.Ref != "" || math.Abs(rep.Alpha-0.05) > 1e-9 || rep.MaxRounds != 32 {
		t.Errorf("report: base %+v head %+v alpha %v max rounds %d", rep.Base, rep.Head, rep.Alpha, rep.MaxRounds)
	}
	var text bytes.Buffer
	fail, _ := ParseFailOn("slower>3%")
	if err := WriteText(&text, rep, fail); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"Runners: 4 of 4 shards of run run-7, merged; each round's three arms ran on one runner",
		"Runner 2/4: host ci-2 (Test CPU, 4 CPUs online (4 cores)): 8 rounds of 6 benchmarks in ",
		"; load 1.5 at the start, 2.0 at the end; 144 runs, not screened for contention; null/base ×",
		"Check failed (-fail-on slower>3%): Fleet00 sec/op",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "disagrees") || strings.Contains(out, "Missing") {
		t.Errorf("no runner is flagged and none is missing:\n%s", out)
	}

	// Shard 2 cut short (no trailer): its rounds count, and the report says so.
	data := runFleet(t, hosts, 32, effects, -1, 1)
	cut, _, _ := bytes.Cut(data[1], []byte(trailerPrefix))
	data[1] = cut
	rep, err = MergeReport(readShards(t, data), nil, nullband.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	WriteText(&text, rep, nil)
	if want := "Runner 2/4: host ci-2 (Test CPU, 4 CPUs online (4 cores)): 8 rounds of 6 benchmarks; its file has no end line (the shard was cut short or is still running): its rounds so far are judged."; !strings.Contains(text.String(), want) {
		t.Errorf("the report lacks %q:\n%s", want, text.String())
	}

	// Without shard 4: named, and the rest judged.
	rep, err = MergeReport(files[:3], nil, nullband.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	WriteText(&text, rep, nil)
	if !strings.Contains(text.String(), "Missing shards: 4/4: no file was given for them; the rows are judged on the other shards' rounds (up to 24).") || rep.MaxRounds != 24 {
		t.Errorf("shard 4 missing: max rounds %d\n%s", rep.MaxRounds, text.String())
	}
}

// TestMergeFlagsShiftedNull shifts host 3's null arm by 4% (its base and
// null runs did not share their conditions): the check flags that runner
// alone, and the words say so.
func TestMergeFlagsShiftedNull(t *testing.T) {
	hosts := []fleetHost{{1, 1}, {1.3, 1}, {1.1, 1}, {1.2, 1}}
	effects := make([]float64, 10)
	files := readShards(t, runFleet(t, hosts, 32, effects, 2, 1.04))
	rep, err := MergeReport(files, nil, nullband.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range rep.Fleet.Runners {
		if want := fr.ID.Shard.I == 3; fr.Null.Disagrees != want {
			t.Errorf("runner %s: disagrees %v (null %+v), want %v", fr.ID.Shard.String(), fr.Null.Disagrees, fr.Null, want)
		}
	}
	var text bytes.Buffer
	WriteText(&text, rep, nil)
	if !strings.Contains(text.String(), "Runner 3/4 (host ci-3): its null arm disagrees with the others: null/base ×1.04") {
		t.Errorf("no flag for runner 3:\n%s", text.String())
	}
}

func TestMergeRefusesMixedShards(t *testing.T) {
	hosts := []fleetHost{{1, 1}, {1, 1}}
	data := runFleet(t, hosts, 8, []float64{0, 0}, -1, 1)
	files := readShards(t, data)
	other := bytes.ReplaceAll(data[1], []byte("run-id: run-7"), []byte("run-id: run-8"))
	f2, err := ReadShard("other.txt", bytes.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	var me *MergeError
	for _, c := range []struct {
		files []*ShardFile
		want  string
	}{
		{[]*ShardFile{files[0], f2}, "other.txt: run-id run-8, but shard1.txt has run-7: shards of different runs"},
		{[]*ShardFile{files[0], files[0]}, "shard 1/2 again (also in shard1.txt)"},
	} {
		_, _, err := MergeShards(c.files, nil)
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want a MergeError with %q", err, c.want)
		}
	}
	if _, err := ReadShard("plain.txt", strings.NewReader("arm: base\nround: 1\nBenchmarkX 1 2 sec/op\n")); err == nil || !strings.Contains(err.Error(), "plain.txt: no run-id: or shard: keys") {
		t.Errorf("a file of decodegap pr without -shard: err = %v", err)
	}
	bad := bytes.Replace(data[0], []byte("round: 3"), []byte("round: 4"), 1)
	fb, err := ReadShard("bad.txt", bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeShards([]*ShardFile{fb}, nil); err == nil || !strings.Contains(err.Error(), `round "4" is not one of shard 1/2's rounds (1, 3, …)`) {
		t.Errorf("a round of another shard: err = %v", err)
	}
}

// TestNullAgreementRate checks the null-arm check's calibration: over
// fleets of sound runners (speeds up to 30% apart, noise levels differing,
// sim's models), the share of fleets in which any runner is flagged is at
// most α = 5% (with its binomial margin); and a runner whose null arm is
// 3% off is flagged in most fleets.
func TestNullAgreementRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	models := sim.Models()
	const fleets = 300
	flagged, found := 0, 0
	for f := range fleets {
		n := 2 + f%7
		hosts := fleetHosts(n, true, uint64(f))
		r := rand.New(rand.NewPCG(uint64(f), 3))
		for _, shift := range []float64{1, 1.03} {
			fl := &Fleet{N: n}
			for h := range n {
				fl.Runners = append(fl.Runners, FleetRunner{ID: RunnerID{Shard: Shard{h + 1, n}}})
			}
			var jobs []*Job
			for i := range 20 {
				s := fleetRow(models[r.IntN(len(models))], uint64(100+f), i, hosts, 4*n, 0)
				for k := range s.Null {
					if k%n == 0 {
						s.Null[k] *= shift
					}
				}
				j := &Job{}
				for k, round := range s.Round {
					for arm, v := range map[string]float64{ArmBase: s.Base[k], ArmHead: s.Candidate[k], ArmNull: s.Null[k]} {
						b := judge.Block{Values: []benchfmt.Value{{Value: v, Unit: "sec/op"}}, Contended: s.Contended != nil && s.Contended[k]}
						if err := j.Table().Add("B", arm, round, b); err != nil {
							t.Fatal(err)
						}
					}
				}
				jobs = append(jobs, j)
			}
			NullAgreement(fl, jobs, 0.05)
			anyFlag := false
			for _, fr := range fl.Runners {
				anyFlag = anyFlag || fr.Null.Disagrees
			}
			switch {
			case shift == 1 && anyFlag:
				flagged++
			case shift != 1 && fl.Runners[0].Null.Disagrees:
				found++
			}
		}
	}
	t.Logf("fleets of sound runners with a runner flagged: %d of %d; a runner 3%% off flagged in %d of %d", flagged, fleets, found, fleets)
	if lim := binomialLimit(fleets, 0.05, 0.01); flagged > lim {
		t.Errorf("sound runners flagged in %d of %d fleets, above %d (5%% with its margin)", flagged, fleets, lim)
	}
	if found < fleets*3/4 {
		t.Errorf("a runner 3%% off flagged in %d of %d fleets, want most", found, fleets)
	}
}

// A value that is not a finite number (NaN, ±Inf) is refused naming the
// file and the line (issue 39 item 8): merge read it as a missing round
// and exited 0, where interleave refuses the same line.
func TestReadShardRefusesNonFinite(t *testing.T) {
	data := runFleet(t, []fleetHost{{1, 1}, {1, 1}}, 4, []float64{0}, -1, 1)[0]
	lines := strings.Split(string(data), "\n")
	n := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "BenchmarkFleet00") })
	require.GreaterOrEqual(t, n, 0)
	for _, v := range []string{"NaN", "+Inf", "-Inf"} {
		f := strings.Fields(lines[n])
		f[2] = v
		edited := slices.Clone(lines)
		edited[n] = strings.Join(f, " ")
		_, err := ReadShard("s.txt", strings.NewReader(strings.Join(edited, "\n")))
		var me *MergeError
		require.ErrorAs(t, err, &me, v)
		assert.EqualError(t, err, fmt.Sprintf("s.txt:%d: Fleet00-2: %s sec/op is not a finite number: %s", n+1, v, edited[n]))
	}
}
