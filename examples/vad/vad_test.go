package vad

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/testutil"
)

// armNames returns the arm names BenchmarkVAD reports: Settings, then null.
func armNames() []string {
	var names []string
	for _, s := range Settings {
		names = append(names, s.Name)
	}
	return append(names, "null")
}

func TestBenchScriptRunsTheComparisonAndPrintsTheVerdicts(t *testing.T) {
	ort.Require(t)
	// The shortest real run of what `make bench` runs: two windows of 32
	// steps per block, 3 rounds, and 64 steps per census run.
	file := filepath.Join(t.TempDir(), "bench.txt")
	cmd := exec.Command("bash", "bench.sh")
	cmd.Env = append(os.Environ(), "BENCH_COUNT=3", "BENCH_STEPS=64", "BENCH_STEPS_2MS=64", "BENCH_CENSUS_STEPS=64", "BENCH_OUT="+file)
	b, err := cmd.CombinedOutput()
	printed := string(b)
	require.NoError(t, err, printed)

	// The file is go test -bench output: parse it as benchstat does. Every
	// arm at every gap, once per round, and each census run once.
	counts := map[string]int{}
	units := map[string]map[string]bool{}
	for _, r := range testutil.ResultsFile(t, file) {
		name := testutil.Name(r)
		counts[name]++
		assert.Equal(t, 64, r.Iters, name)
		units[name] = map[string]bool{}
		for _, u := range testutil.Units(r) {
			units[name][u] = true
		}
	}
	want := map[string]int{"VADCensus/spin=on": 1, "VADCensus/spin=off": 1}
	for _, g := range gapNames {
		for _, a := range armNames() {
			name := "VAD/" + g + "/arm=" + a
			want[name] = 3
			for _, u := range []string{"ns/op", "p50-ns/op", "p90-ns/op", "cpu/wall", "gap-ns/op"} {
				assert.True(t, units[name][u], "%s reports %s", name, u)
			}
			assert.Equal(t, a == "null", units[name]["null-ratio"], "%s: only the null arm carries null-ratio", name)
		}
	}
	assert.Equal(t, want, counts)

	// benchstat on the file puts each arm in a column, a table per metric
	// and a row per gap.
	bs, err := exec.Command("go", "tool", "benchstat", "-col", "/arm", "-filter", ".name:VAD", file).CombinedOutput()
	require.NoError(t, err, string(bs))
	// 64 steps are too few to bound a p99 (decodegap leaves it out), so
	// the tail checked is p90.
	assertArmTable(t, string(bs), []string{"sec/op", "p50-sec/op", "p90-sec/op", "cpu/wall", "gap-sec/op", "vcsw/op", "null-ratio"})

	// What bench.sh prints: the settings it ran with, the same table for
	// the main metrics, then a verdict of every arm against the base at
	// every gap, then the census of each spinning setting.
	assert.Contains(t, printed, "in 3 interleaved rounds (-count 3): gaps 0s and 100µs with 64 steps per arm (-benchtime=64x), 2ms with 64 (-benchtime=64x); equivalent within ±5% (BENCH_DELTA)")
	assert.Contains(t, printed, "full output in "+file)
	assert.Contains(t, printed, "bench.sh: gap 2ms: at most 3 rounds (-count 3) of -benchtime=64x within -vad.budget=0s (0s: none), -vad.slice=0 (0: Compare chooses turns or whole blocks, -1: whole), ")
	assert.Regexp(t, `\n  decided: \d+ of 18 step-latency rows \(mean and median step, 3 arms × 3 gaps\) in \d+s of BenchmarkVAD, at most 3 rounds a gap \(BENCH_COUNT\)\n`, printed)
	assert.Contains(t, printed, "decodegap.Compare: BenchmarkVAD/gap=0s: round 1/3, ", "Compare's progress reaches the terminal")
	assertArmTable(t, printed, []string{"sec/op", "p50-sec/op", "p90-sec/op", "cpu/wall", "gap-sec/op", "null-ratio"})
	assert.NotContains(t, printed, "p99-sec/op", "bench.sh prints the main metrics only")
	// The summary opens with the weather (weather.awk, tested on its own
	// in weather_test.go), then the verdicts, benchstat and the census.
	_, summary, ok := strings.Cut(printed, "bench.sh: full output in "+file+"\n\n== weather: the host while BenchmarkVAD ran\n")
	require.True(t, ok, printed)
	assert.Regexp(t, `^  (contended: \d+ of the \d+ blocks screened \(\d+%\); over all 45 blocks: foreign-% |the contention screen did not run on any of the 45 blocks)`, summary)
	_, verdicts, ok := strings.Cut(summary, "\n== verdicts: each arm against the first arm, mean step (sec/op), median step (p50-sec/op) and CPU time per step (cpu-sec/op), judged against the null arm (its own rows: the A/A check)\n")
	require.True(t, ok, printed)
	verdicts, rest, ok := strings.Cut(verdicts, "\n== benchstat: ")
	require.True(t, ok, printed)
	_, census, ok := strings.Cut(rest, "\n== census: BenchmarkVADCensus, where the CPU went at a 2ms gap\n")
	require.True(t, ok, printed)
	// One block per gap, in order: Compare's verdict table (a header, then
	// a row per arm and judged metric) and its notes.
	var gaps []string
	blocks := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(verdicts), "\n") {
		if !strings.HasPrefix(l, "  ") {
			gaps = append(gaps, l)
			continue
		}
		if len(gaps) > 0 {
			blocks[gaps[len(gaps)-1]] += l + "\n"
		}
	}
	assert.Equal(t, gapNames, gaps, verdicts)
	// Each block opens with how Compare ran the rounds (CompareConfig.Slice
	// unset): whole blocks below 1 ms, turns of 30 steps at 2 ms.
	slicing := map[string]string{"gap=0s": "rounds whole: each arm's block of 64 steps runs on its own (CompareConfig.Slice unset: the gap 0s is below 1ms",
		"gap=100µs": "rounds whole: each arm's block of 64 steps runs on its own (CompareConfig.Slice unset: the gap 100µs is below 1ms",
		"gap=2ms":   "rounds sliced: the arms take turns of 30 recorded steps, 60ms of gaps (CompareConfig.Slice unset: at a gap of 2ms"}
	for _, g := range gapNames {
		assert.True(t, strings.HasPrefix(strings.Join(strings.Fields(blocks[g]), " "), slicing[g]), "%s:\n%s", g, blocks[g])
		assert.Regexp(t, `(?m)^  arm\s+metric\s+verdict\s`, blocks[g], g)
		for _, s := range Settings[1:] {
			for _, m := range []string{"sec/op", "p50-sec/op", "cpu-sec/op"} {
				assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(s.Name)+`\s+`+regexp.QuoteMeta(m)+`\s`, blocks[g], "%s: a row for %s on %s", g, s.Name, m)
			}
		}
	}
	for _, spin := range []string{"on", "off"} {
		assert.Regexp(t, `  spin=`+spin+`-\d+: step: mean \S+, p50 `, census)
		assert.Regexp(t, `  spin=`+spin+`-\d+: process: cpu \S+/op \(user \S+, sys \S+; cpu/wall \d`, census)
		// Two intra-op threads: the caller and one pool thread, which
		// Config.Open created after Run listed the threads.
		// The census is one line or two, depending on how many lines the
		// log had left.
		assert.Regexp(t, `  spin=`+spin+`-\d+: threads: \d+ at the end \(.*1 created at setup/open\)`, census)
		assert.Regexp(t, `  spin=`+spin+`-\d+: (threads: .*; )?CPU by thread over the counter span: \d+% in `, census)
	}
}

// gapNames are the gap parts of BenchmarkVAD's sub-benchmark names.
var gapNames = []string{"gap=0s", "gap=100µs", "gap=2ms"}

// assertArmTable asserts that table, benchstat -col /arm output, has the
// arms as columns, a table for each of units and a row for each gap.
func assertArmTable(t *testing.T, table string, units []string) {
	t.Helper()
	header := regexp.MustCompile(`(?m)^\s*│\s*` + regexp.QuoteMeta(Settings[0].Name) + `\s*│.*$`).FindString(table)
	require.NotEmpty(t, header, "no header row with the arms as columns:\n%s", table)
	var cols []string
	for _, f := range strings.Split(header, "│") {
		if f = strings.TrimSpace(f); f != "" {
			cols = append(cols, f)
		}
	}
	assert.Equal(t, armNames(), cols)
	for _, unit := range units {
		assert.Regexp(t, `│\s+`+regexp.QuoteMeta(unit)+`\s+│`, table, "benchstat has a %s table", unit)
	}
	for _, g := range gapNames {
		assert.Contains(t, table, "VAD/"+g+"-", "benchstat has a row for %s", g)
	}
}

func TestBenchmarkVADRealtimeNeedsItsFlag(t *testing.T) {
	out, err := testutil.Bench(t, nil, "^BenchmarkVADRealtime$", "-test.benchtime=64x", "-test.v")
	require.NoError(t, err, out)
	assert.Contains(t, out, "BenchmarkVADRealtime paces steps 32ms apart, so each arm's block of -benchtime=Nx takes N × 32ms per round: pass -realtime to run it")
	assert.NotContains(t, out, "arm=")
}

func TestOpenChecksUntilTheCheckPasses(t *testing.T) {
	ort.Require(t)
	opts := ort.Options{IntraOpThreads: 1}
	for _, c := range []struct {
		fail   bool
		checks int // checks after three opens
	}{{false, 1}, {true, 3}} {
		checks := 0
		open := openChecked(opts, 0, func(v *ort.VAD) error {
			checks++
			assert.Equal(t, opts, v.Options())
			if c.fail {
				return errors.New("outputs differ")
			}
			return nil
		})
		for range 3 {
			step, closeStep, err := open()
			if c.fail {
				assert.EqualError(t, err, "outputs differ")
				continue
			}
			require.NoError(t, err)
			require.NoError(t, step())
			require.NoError(t, closeStep())
		}
		assert.Equal(t, c.checks, checks, "fail=%v", c.fail)
	}
}

func TestOpenNamesBothConfigurationsWhenTheCheckFails(t *testing.T) {
	ort.Require(t)
	defer func(r ort.Options) { Reference = r }(Reference)
	Reference = ort.Options{IntraOpThreads: -1} // the reference session cannot open
	_, _, err := Open(ort.Options{IntraOpThreads: 2, Spinning: ort.SpinOff}, 0)()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "checking intra=2,inter=0,spin=off,sequential against the reference intra=-1,inter=0,spin=on,sequential before timing: ")
	assert.Contains(t, err.Error(), "IntraOpThreads")
}

func TestOpenPassesTheParityCheckForEverySetting(t *testing.T) {
	ort.Require(t)
	for _, a := range Arms(Settings, 0) {
		step, closeStep, err := a.Open()
		require.NoError(t, err, a.Name)
		require.NoError(t, step(), a.Name)
		require.NoError(t, closeStep(), a.Name)
	}
}

func TestSettingsAreNamedForBenchstat(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings {
		assert.Regexp(t, `^[a-z0-9-]+[a-z]$`, s.Name, "no white space, '/' or '=' and no trailing -N (benchfmt reads that as GOMAXPROCS)")
		assert.NotEqual(t, "null", s.Name)
		assert.False(t, seen[s.Name], "%s twice", s.Name)
		seen[s.Name] = true
		assert.NoError(t, s.Options.Validate(), s.Name)
	}
	assert.Equal(t, 1, Reference.IntraOpThreads, "the reference runs every operator on the calling thread")
}

func TestBenchScriptSaysWhatToInstallWhenTheBenchmarksSkip(t *testing.T) {
	cmd := exec.Command("bash", "bench.sh")
	cmd.Env = append(os.Environ(), "CI=", "ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1",
		"BENCH_COUNT=1", "BENCH_OUT="+filepath.Join(t.TempDir(), "bench.txt"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err, string(out))
	assert.Contains(t, string(out), "bench.sh: BenchmarkVAD reported no results: it skips when ONNX Runtime or the Silero VAD model is missing; run 'make deps' at the repository root")
	assert.NotContains(t, string(out), "== verdicts")
}

func TestBenchScriptRefusesABadPlanOrBudget(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan")
	require.NoError(t, os.WriteFile(bad, []byte("steps 300\n"), 0o644))
	half := filepath.Join(dir, "half")
	require.NoError(t, os.WriteFile(half, []byte("gapbench-plan v1\nsteps 300\n"), 0o644))
	for env, want := range map[string]string{
		"BENCH_PLAN=" + bad:  "bench.sh: BENCH_PLAN=" + bad + ": not a plan file (its first line is not 'gapbench-plan v1'; write one with decodegap calibrate -plan-out)",
		"BENCH_PLAN=" + half: "bench.sh: BENCH_PLAN=" + half + ": needs a steps and a rounds line",
		"BENCH_BUDGET=6m":    "bench.sh: BENCH_BUDGET=6m: want whole seconds",
		"BENCH_DELTA=0.05":   "bench.sh: BENCH_DELTA=0.05: want a percentage, e.g. 5%",
		"BENCH_DELTA=5x%":    "bench.sh: BENCH_DELTA=5x%: want a percentage, e.g. 5%",
		"BENCH_DELTA=5.%":    "bench.sh: BENCH_DELTA=5.%: want a percentage, e.g. 5%",
	} {
		cmd := exec.Command("bash", "bench.sh")
		cmd.Env = append(os.Environ(), env, "BENCH_OUT="+filepath.Join(dir, "bench.txt"))
		out, err := cmd.CombinedOutput()
		require.Error(t, err, env)
		assert.Contains(t, string(out), want, env)
	}
}
