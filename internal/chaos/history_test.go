package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// historyStore stores a history of n commits in dir/h.db with the built
// command: BenchmarkStep-2, three runs a commit with 1% spread, 30%
// slower from commit n/2 on.
func historyStore(n int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		runs := filepath.Join(dir, "runs")
		require.NoError(t, os.MkdirAll(runs, 0o755))
		t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			level := 1000.0
			if i >= n/2 {
				level = 1300
			}
			body := fmt.Sprintf("commit: %040x\ncommit-date: %s\nhost: ci-1\n", i+1, t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
			for r := range 3 {
				body += fmt.Sprintf("BenchmarkStep-2 100 %.1f ns/op\n", level*(1+0.005*float64((i*7+r*3)%5-2)))
			}
			require.NoError(t, os.WriteFile(filepath.Join(runs, fmt.Sprintf("r%04d.txt", i)), []byte(body), 0o644))
		}
		out, err := exec.Command(bin, "history", "add", "-db", filepath.Join(dir, "h.db"), runs).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// absent checks that nothing was created at name in dir (nor a name
// starting with it).
func absent(name string) func(r result, dir string) (string, string) {
	return func(r result, dir string) (string, string) {
		if m, _ := filepath.Glob(filepath.Join(dir, name) + "*"); len(m) > 0 {
			return wrong, fmt.Sprintf("%s was created", m[0])
		}
		return ok, ""
	}
}

// promptly checks that the run ended within d of being signalled, and
// said why.
func promptly(after, d time.Duration, words ...string) func(r result, dir string) (string, string) {
	return func(r result, dir string) (string, string) {
		if r.took > after+d {
			return hang, fmt.Sprintf("ended %v after the signal, want within %v", (r.took - after).Round(time.Millisecond), d)
		}
		return says(words...)(r, dir)
	}
}

// historyProbes are the hostile inputs of 'decodegap history' (issue 33,
// point 6).
func historyProbes() []probe {
	bench := file("b.txt", "commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n")
	return []probe{
		{name: "history add /dev/zero", item: "hang", args: []string{"history", "add", "-db", "{dir}/h.db", "/dev/zero"}, codes: []int{2}, check: says("/dev/zero is a character device, not a regular file")},
		{name: "history add a fifo", item: "hang", setup: mkfifo("f.txt"), args: []string{"history", "add", "-db", "{dir}/h.db", "{dir}/f.txt"}, codes: []int{2}, check: says("f.txt is a fifo, not a regular file")},
		{name: "history add +Inf", item: "input", setup: file("b.txt", "commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 +Inf ns/op\n"), args: []string{"history", "add", "-db", "{dir}/h.db", "{dir}/b.txt"}, codes: []int{2}, check: says("b.txt:3: Step-2: +Inf ns/op is not a finite number")},
		{name: "history add -commit --output=FILE", item: "input", setup: bench, args: []string{"history", "add", "-db", "{dir}/h.db", "-commit", "--output={dir}/leak", "{dir}/b.txt"}, codes: []int{2}, check: absent("leak")},
		{name: "history add a commit: line --output=FILE", item: "input", setup: file("b.txt", "commit: --output={dir}/leak\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n"), args: []string{"history", "add", "-db", "{dir}/h.db", "{dir}/b.txt"}, codes: []int{2},
			check: func(r result, dir string) (string, string) {
				if k, why := absent("h.db")(r, dir); k != ok {
					return k, why
				}
				return says("a revision cannot start with '-'")(r, dir)
			}},
		{name: "history add -db with # and ?", item: "input", setup: bench, args: []string{"history", "add", "-db", "{dir}/a#b?c.db", "{dir}/b.txt"}, codes: []int{0}, check: func(r result, dir string) (string, string) {
			if _, err := os.Stat(filepath.Join(dir, "a#b?c.db")); err != nil {
				return wrong, fmt.Sprintf("no store named a#b?c.db: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
				return wrong, "a store named a: the '#' cut the name"
			}
			return ok, ""
		}},
		{name: "history files -db postgres://…?password=", item: "input", args: []string{"history", "files", "-db", "postgres://u@127.0.0.1:1/db?sslmode=disable&password=secret&sslpassword=secret"}, codes: []int{2},
			check: func(r result, dir string) (string, string) {
				if strings.Contains(r.stdout+r.stderr, "secret") {
					return wrong, "the password was printed: " + tail(r.stderr)
				}
				return says("password=***&sslpassword=***")(r, dir)
			}},
		{name: "history detect a mistyped -db", item: "input", args: []string{"history", "detect", "-db", "{dir}/hsitory.db"}, codes: []int{2}, check: absent("hsitory.db")},
		{name: "history files a mistyped -db", item: "input", args: []string{"history", "files", "-db", "{dir}/hsitory.db"}, codes: []int{2}, check: absent("hsitory.db")},
		usage("history detect -permutations 1e9", "-permutations 1000000000", "history", "detect", "-db", "{dir}/h.db", "-permutations", "1000000000"),
		{name: "history plot through a planted default name", item: "symlink", setup: both(historyStore(12), plant("history-Step-2.png")), args: []string{"history", "plot", "-db", "{dir}/h.db", "Step-2"}, codes: []int{1}, check: untouched},
		{name: "history detect SIGINT", item: "hang", setup: historyStore(800), args: []string{"history", "detect", "-db", "{dir}/h.db", "-permutations", "10000"},
			signal: syscall.SIGINT, signalAfter: time.Second, codes: []int{130}, check: promptly(time.Second, 3*time.Second, "interrupted"), bound: 60 * time.Second},
		{name: "history detect SIGTERM", item: "hang", setup: historyStore(800), args: []string{"history", "detect", "-db", "{dir}/h.db", "-permutations", "10000"},
			signal: syscall.SIGTERM, signalAfter: time.Second, codes: []int{130}, check: promptly(time.Second, 3*time.Second, "interrupted"), bound: 60 * time.Second},
		usageCal("calibrate -mde 0", "-mde 0", "-mde", "0", "{fx}"),
		usageCal("calibrate -mde NaN", "-mde NaN", "-mde", "NaN", "{fx}"),
		usageCal("calibrate -budget -1m", "-budget -1m0s", "-budget", "-1m", "{fx}"),
		{name: "calibrate -plan-out through a planted symlink", item: "symlink", setup: plant("plan"), args: []string{"calibrate", "-lock=false", "-rounds", "6", "-benchtime", "40x", "-bench", "Probe", "-plan-out", "{dir}/plan", "{fx}"}, codes: []int{1},
			check: func(r result, dir string) (string, string) {
				if k, why := untouched(r, dir); k != ok {
					return k, why
				}
				return says("-plan-out "+dir+"/plan: "+dir+"/plan is a symlink")(r, dir)
			}, bound: 60 * time.Second},
		{name: "calibrate's plan beside an unknown MDE", item: "fabrication", args: []string{"calibrate", "-lock=false", "-rounds", "2", "-benchtime", "40x", "-bench", "Probe", "{fx}"}, codes: []int{0, 1},
			check: func(r result, dir string) (string, string) {
				if strings.Contains(r.stdout, "plan for a") {
					return fabrication, "a plan claims an MDE the table calls unknown at 2 rounds"
				}
				return says("the MDE table calls p50-sec/op's MDE unknown (2 rounds used): no plan")(r, dir)
			}, bound: 60 * time.Second},
	}
}
