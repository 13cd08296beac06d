package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/testutil"
)

// stepScript is an arm printing BenchmarkStep-2 with a mean of mean ns/op
// and a deterministic spread of ±spread% over its runs (a counter file
// beside it), whatever flags it is given.
func stepScript(t *testing.T, dir, name string, mean, spread float64) string {
	t.Helper()
	path := filepath.Join(dir, name+".sh")
	body := fmt.Sprintf(`#!/bin/sh
c=%s/%s.count
n=$(($(cat $c 2>/dev/null || echo 0) + 1)); echo $n > $c
awk -v n=$n 'BEGIN { printf "BenchmarkStep-2 1 %%.1f ns/op\n", %g * (1 + %g/100 * (((n * 7919) %% 201) - 100) / 100) }'
`, dir, name, mean, spread)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o755))
	return path
}

// -until-decided stops at the first round at which every verdict is
// decided, and says how many rounds it used; an effect that stays inside
// the noise runs to -max-rounds and stays undecided.
func TestInterleaveUntilDecided(t *testing.T) {
	for _, c := range []struct {
		name         string
		mean, spread float64
		max          int
		outcome      string
		decided      bool
		maxUsed      int
	}{
		{"slower", 1200, 1, 30, "slower", true, 10},
		{"same", 1000, 0.2, 30, "equivalent", true, 16}, // equivalence needs 14 used rounds (nullband.EqFloor)
		{"noisy", 1000, 30, 8, "undecided", false, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base := stepScript(t, dir, "base", 1000, 0.2)
			cand := stepScript(t, dir, "cand", c.mean, c.spread)
			out := filepath.Join(dir, "out.txt")
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"interleave", "-until-decided", "-max-rounds", strconv.Itoa(c.max), "-seed", "5", "-o", out,
				"-lock=false", "-screen=false", "-unit", "sec/op", "old=" + base, "new=" + cand}, &stdout, &stderr)
			require.Equal(t, 0, code, "stderr:\n%s", stderr.String())
			res := testutil.ResultsFile(t, out)
			require.Zero(t, len(res)%3)
			used := len(res) / 3
			if c.decided {
				assert.Contains(t, stderr.String(), fmt.Sprintf("decodegap interleave: every verdict decided after %d of at most %d rounds (-max-rounds)\n", used, c.max))
				assert.LessOrEqual(t, used, c.maxUsed)
				assert.GreaterOrEqual(t, used, 4, "no look before 4 rounds")
			} else {
				assert.Equal(t, c.max, used)
				assert.Contains(t, stderr.String(), fmt.Sprintf("decodegap interleave: not every verdict decided within -max-rounds %d\n", c.max))
				assert.Contains(t, stdout.String(), "-max-rounds")
				assert.NotContains(t, stdout.String(), "-rounds ")
			}
			// The row decides at its own look; the run goes on until the
			// A/A check has an interval too (judge.Decided).
			m := regexp.MustCompile(`(?m)^Step-2 +new +sec/op +` + c.outcome + ` +.* (\d+) +\S+ p=`).FindStringSubmatch(stdout.String())
			require.NotNil(t, m, stdout.String())
			k, _ := strconv.Atoi(m[1])
			assert.LessOrEqual(t, k, used)
			if c.decided {
				assert.NotContains(t, stdout.String(), "A/A check did not run")
			}
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Contains(t, string(data), fmt.Sprintf("# decodegap interleave: until decided, at most %d rounds, seed 5,", c.max))
		})
	}
}

func TestInterleaveUntilDecidedUsage(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "x.test")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-until-decided"}, "-until-decided needs -max-rounds N, the most rounds to run (e.g. 40)"},
		{[]string{"-until-decided", "-max-rounds", "20", "-rounds", "5"}, "-rounds and -until-decided: give -max-rounds N instead of -rounds with -until-decided"},
		{[]string{"-max-rounds", "20"}, "-max-rounds 20 without -until-decided: use -rounds for a fixed number of rounds"},
		{[]string{"-until-decided", "-max-rounds", "3"}, "-max-rounds 3: need 4 to 1000000000 (4 rounds give the first 95% CI, 5 for 2–3 units under Holm)"},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append(append([]string{"interleave"}, c.args...), "a="+exe, "b="+exe), &stdout, &stderr)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Equal(t, "decodegap interleave: "+c.msg+"\nrun 'decodegap interleave -h' for usage\n", stderr.String(), "%v", c.args)
	}
	// -delta has the one syntax of every command (judge.ParseDelta).
	for _, d := range []string{"NaN", "0", "+Inf", "100%"} {
		var stdout, stderr bytes.Buffer
		code := dispatch([]string{"interleave", "-delta", d, "a=" + exe, "b=" + exe}, &stdout, &stderr)
		assert.Equal(t, 2, code, d)
		assert.True(t, strings.HasPrefix(stderr.String(), `invalid value "`+d+`" for flag -delta: "`+d+`": the margin must lie between 0 and 100% (e.g. 2% or 0.02)`), stderr.String())
	}
}
