package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
)

// chaosScript is an arm that, on its k-th run, does what line k of DIR/plan
// says: ok (prints a result), crash, hang (with a grandchild sleep whose pid
// it writes to DIR/sleep.K), garbage (binary output), inf (+Inf ns/op) or
// dup (two results).
const chaosScript = `#!/bin/sh
d=%s
n=$(($(cat $d/count 2>/dev/null || echo 0) + 1)); echo $n > $d/count
case $(sed -n "${n}p" $d/plan) in
crash) echo "panic: chaos in run $n" >&2; exit 2;;
hang) sleep 300 & echo $! > $d/sleep.$n; wait;;
garbage) printf 'garbage \001\377\376\033[0m'; head -c 3000 /dev/urandom; exit 0;;
inf) echo "BenchmarkStep-2 1 +Inf ns/op";;
dup) echo "BenchmarkStep-2 1 1000 ns/op"; echo "BenchmarkStep-2 1 1001 ns/op";;
*) echo "BenchmarkStep-2 1 $((1000 + $$ %% 13)) ns/op";;
esac
`

// One arm randomly crashes, hangs past the timeout, prints garbage, a
// non-finite or a duplicated result (-timeout 3s: time for the good runs of a
// loaded host). Every valid run is kept, the output
// parses with benchfmt, the verdict lists each lost round with its cause,
// and no process is left behind.
func TestInterleaveChaos(t *testing.T) {
	dir := t.TempDir()
	const rounds = 14
	plan := []string{"crash", "hang", "garbage", "inf", "dup", "hang"}
	for len(plan) < rounds {
		plan = append(plan, "ok")
	}
	r := rand.New(rand.NewPCG(7, 7))
	r.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan"), []byte(strings.Join(plan, "\n")+"\n"), 0o644))
	chaos := filepath.Join(dir, "chaos.sh")
	require.NoError(t, os.WriteFile(chaos, fmt.Appendf(nil, chaosScript, dir), 0o755))
	good := filepath.Join(dir, "good.sh")
	require.NoError(t, os.WriteFile(good, []byte("#!/bin/sh\necho \"BenchmarkStep-2 1 $((1000 + $$ % 13)) ns/op\"\n"), 0o755))

	out := filepath.Join(dir, "out.txt")
	var stdout, stderr bytes.Buffer
	t0 := time.Now()
	code := dispatch([]string{"interleave", "-rounds", strconv.Itoa(rounds), "-seed", "3", "-o", out, "-lock=false", "-screen=false",
		"-timeout", "3s", "-max-failed", "100", "-unit", "sec/op", "base=" + good, "chaos=" + chaos}, &stdout, &stderr)
	assert.Equal(t, 1, code, "runs were lost: %s", stderr.String())
	assert.Less(t, time.Since(t0), 60*time.Second)

	res := testutil.ResultsFile(t, out) // fails the test on any line benchfmt cannot parse
	perArm := map[string]int{}
	for _, r := range res {
		perArm[r.GetConfig("arm")]++
		v, ok := r.Value("sec/op")
		require.True(t, ok)
		assert.InDelta(t, 1006e-9, v, 7e-9)
	}
	assert.Equal(t, map[string]int{"base": rounds, "null": rounds, "chaos": rounds - 6}, perArm, "every valid run is kept")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	table := stdout.String()
	assert.Contains(t, table, "\nlost runs (6; their arm has no value in that round):\n")
	want := map[string]string{
		"crash":   "failed: exit status 2",
		"hang":    "timed out: still running after -run-timeout 3s, so it was stopped",
		"garbage": "no results: it exited 0 but printed no benchmark results",
		"inf":     "malformed result: line 1 of its output gives +Inf ns/op, not a finite number",
		"dup":     "duplicated result: lines 1 and 2 of its output both give a result of BenchmarkStep-2",
	}
	cause := map[string]string{"crash": "exited", "hang": "timed-out", "garbage": "no-results", "inf": "malformed", "dup": "duplicate"}
	for k, what := range plan {
		round := k + 1 // the chaos arm runs once per round
		if what == "ok" {
			assert.NotContains(t, table, fmt.Sprintf("round %d arm chaos:", round))
			continue
		}
		assert.Contains(t, table, fmt.Sprintf("  round %d arm chaos: %s", round, want[what]), "round %d (%s)", round, what)
		assert.Contains(t, string(data), fmt.Sprintf("# round %d arm chaos lost: %s: ", round, cause[what]))
		if what == "hang" {
			pid, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("sleep.%d", round)))
			require.NoError(t, err)
			p, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
			assert.True(t, processGone(p), "round %d: the hanging arm's sleep outlived the run", round)
		}
	}
	// The garbage is shown quoted and shortened, never raw.
	// The random bytes hold newlines, so the garbage line itself may be
	// short; some line of it is long enough to be cut.
	assert.Regexp(t, regexp.MustCompile(`(?m)^ *"garbage \\x01\\xff\\xfe\\x1b\[0m.*"`), stderr.String())
	assert.Regexp(t, regexp.MustCompile(`(?m)^ *".*"… \(\d+ bytes in all\)$`), stderr.String())
	assert.NotContains(t, stderr.String(), "\x01\xff")
	// The verdict's table is there, judged from the rounds kept.
	assert.Regexp(t, regexp.MustCompile(`(?m)^Step-2 +chaos +sec/op +`), table)
}

// processGone reports whether pid has exited (or is a zombie nobody reaps),
// waiting up to 5 s.
func processGone(pid int) bool {
	for range 100 {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// -rounds costs memory in proportion to the rounds run, not to the number
// asked for: ten million rounds whose first run fails use a few MB.
func TestInterleaveManyRoundsCostLittle(t *testing.T) {
	bin := buildDecodegap(t)
	dir := t.TempDir()
	fail := filepath.Join(dir, "fail.sh")
	require.NoError(t, os.WriteFile(fail, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	cmd := exec.Command(bin, "interleave", "-rounds", "10000000", "-o", filepath.Join(dir, "out.txt"), "-lock=false", "-screen=false",
		"-max-failed", "0", "a="+fail, "b="+fail)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 1, ee.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "decodegap interleave: 30000000 runs (3 arms × 10000000 rounds")
	maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
	t.Logf("peak RSS with -rounds 10000000: %d KiB", maxRSS)
	assert.Less(t, maxRSS, int64(100<<10), "peak RSS %d KiB", maxRSS)
}
