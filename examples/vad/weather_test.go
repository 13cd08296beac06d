package vad

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchText returns go test -bench output of BenchmarkVAD with one block
// per entry of hosts (the block's "host:" log line, "" for none) and the
// figures of foreign (foreign-%, psi-some-% 100, load1 5; a negative
// foreign leaves the three out), and a census line that must not count.
func benchText(hosts []string, foreign []float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/gapbench/gapbench/examples/vad\n")
	for i, h := range hosts {
		name := fmt.Sprintf("BenchmarkVAD/gap=0s/arm=a%d-2", i)
		figs := ""
		if foreign[i] >= 0 {
			figs = fmt.Sprintf("\t%g foreign-%%\t100.0 psi-some-%%\t5.00 load1", foreign[i])
		}
		fmt.Fprintf(&b, "%s \t      64\t    93002 ns/op\t0.95 cpu/wall%s\n--- BENCH: %s\n", name, figs, name)
		fmt.Fprintf(&b, "    testingcontract.go:134: round 1 of 1 at GOMAXPROCS 2\n        steady state: flat\n")
		if h != "" {
			fmt.Fprintf(&b, "        %s\n", h)
		}
	}
	b.WriteString("BenchmarkVADCensus/spin=on-2 \t 64\t 1000 ns/op\t99 foreign-%\n--- BENCH: BenchmarkVADCensus/spin=on-2\n" +
		"        host: contended: foreign 99% on CPUs 0,1 > 5%\nPASS\n")
	return b.String()
}

// weather runs weather.awk on text with count rounds.
func weather(t *testing.T, text string, count int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.txt")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	out, err := exec.Command("awk", "-v", fmt.Sprint("count=", count), "-f", "weather.awk", path).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

const (
	contended = "host: contended: foreign 50% on CPUs 0,1 > 5% over the counter span on CPUs 0,1: foreign 50%"
	clean     = "host: clean over the counter span on CPUs 0,1: foreign 1%"
)

func TestWeatherMostlyContended(t *testing.T) {
	out := weather(t, benchText([]string{contended, contended, clean, contended, ""}, []float64{50, 60, 70, 80, 90}), 8)
	assert.Equal(t, "  contended: 3 of the 4 blocks screened (75%); over all 5 blocks: foreign-% median 70 (max 90), psi-some-% median 100 (max 100), load1 median 5 (max 5)\n"+
		"  Most blocks ran while other work used these CPUs. Pairing within a round cancels the weather its arms\n"+
		"  shared, not the noise it adds: the intervals are wider and more verdicts undecided, and a round whose\n"+
		"  arms met different weather (some blocks contended, others not) is set aside when its values show it\n"+
		"  (their spread over twice the other rounds'). For firmer verdicts: run one\n"+
		"  benchmark at a time on this host (go run ./cmd/decodegap lock -- make bench), use a quieter host, or run\n"+
		"  more rounds (BENCH_COUNT=16 make bench).\n", out)
}

func TestWeatherSomeContended(t *testing.T) {
	out := weather(t, benchText([]string{contended, clean, clean, clean}, []float64{50, 1, 2, 3}), 8)
	assert.Equal(t, "  contended: 1 of the 4 blocks screened (25%); over all 4 blocks: foreign-% median 2.5 (max 50), psi-some-% median 100 (max 100), load1 median 5 (max 5)\n"+
		"  The verdicts set aside each round whose arms met different weather (some blocks contended, others not)\n"+
		"  when its values show it (their spread over twice the other rounds').\n", out)
}

func TestWeatherClean(t *testing.T) {
	out := weather(t, benchText([]string{clean, clean}, []float64{1, 2}), 8)
	assert.Equal(t, "  contended: 0 of the 2 blocks screened (0%); over all 2 blocks: foreign-% median 1.5 (max 2), psi-some-% median 100 (max 100), load1 median 5 (max 5)\n", out)
}

func TestWeatherUnscreened(t *testing.T) {
	unavailable := "host: contention figures unavailable (no /proc/stat: not Linux?)"
	out := weather(t, benchText([]string{unavailable, unavailable}, []float64{-1, -1}), 8)
	assert.Equal(t, "  the contention screen did not run on any of the 2 blocks (no /proc/stat: not Linux?)\n"+
		"  foreign-% unavailable, psi-some-% unavailable, load1 unavailable\n", out)
}

// Under -test.v (as bench.sh runs BenchmarkVAD) a block's log comes
// before its result line, with no --- BENCH: header: its screen line
// still counts, and the census's does not.
func TestWeatherVerbose(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\n")
	for i, h := range []string{contended, clean} {
		fmt.Fprintf(&b, "    testingcontract.go:147: round 1 of 1 at GOMAXPROCS 2 (decodegap.Compare: the order and the verdicts follow the last arm's lines)\n        %s\n", h)
		fmt.Fprintf(&b, "BenchmarkVAD/gap=0s/arm=a%d-2 \t      64\t    93002 ns/op\t%d foreign-%%\t100.0 psi-some-%%\t5.00 load1\n", i, 10*(i+1))
	}
	b.WriteString("BenchmarkVADCensus/spin=on-2 \t 64\t 1000 ns/op\t99 foreign-%\n--- BENCH: BenchmarkVADCensus/spin=on-2\n" +
		"    census_test.go:1: host: contended: foreign 99% on CPUs 0,1 > 5%\n")
	out := weather(t, b.String(), 8)
	assert.Contains(t, out, "  contended: 1 of the 2 blocks screened (50%); over all 2 blocks: foreign-% median 15 (max 20)")
}
