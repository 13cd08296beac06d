// Package testutil holds what gapbench's tests share: re-running the
// running test binary as a child process (for benchmarks that must run in
// a fresh process, helpers that hold a lock or spin, failures that end a
// process), and reading benchfmt output back as benchstat does.
//
// A package whose tests use a child role dispatches on an environment
// variable in TestMain (or at the top of the one test the child runs) and
// gives it with the env argument here:
//
//	func TestMain(m *testing.M) {
//		if os.Getenv("HOSTMON_TEST_SPIN") != "" { ...; os.Exit(0) }
//		os.Exit(m.Run())
//	}
//	cmd := testutil.Start(t, []string{"HOSTMON_TEST_SPIN=1"}, "spinning", "-test.run=^$")
//
// Only tests import it.
package testutil

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// Command returns a command that runs the running test binary (os.Args[0])
// again with args (test flags, "-test.run=^TestX$"), in the test's
// environment plus env ("NAME=value" each; a later value wins). The test
// flags the parent got are not passed on.
func Command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// Run runs Command(env, args...) to its end and returns its stdout and
// stderr interleaved as written, and its error: an *exec.ExitError when it
// exited non-zero, which the test may expect. When the test has a deadline
// (go test -timeout), the child is killed 10 s before it, so that a hung
// child fails this test with its output rather than the whole binary.
func Run(t testing.TB, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := Command(env, args...)
	if dl, ok := deadline(t); ok {
		ctx, cancel := context.WithDeadline(context.Background(), dl.Add(-10*time.Second))
		defer cancel()
		cmd = exec.CommandContext(ctx, cmd.Path, args...)
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Bench runs the benchmarks of the running test binary that match pattern
// (-test.bench), and no tests (-test.run=^$), in a child process with env
// and extra test flags args ("-test.benchtime=64x", "-test.count=3"), as
// `go test -run '^$' -bench pattern` would. See Run for the result.
func Bench(t testing.TB, env []string, pattern string, args ...string) (string, error) {
	t.Helper()
	return Run(t, env, append([]string{"-test.run=^$", "-test.bench=" + pattern}, args...)...)
}

// Start starts Command(env, args...), waits until the child prints ready
// on a line of its own on stdout, and kills it when the test ends. The
// child's stderr goes to the test's. A child that exits or prints anything
// else first fails the test.
func Start(t testing.TB, env []string, ready string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := Command(env, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("testutil.Start: %v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("testutil.Start: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != ready+"\n" {
		t.Fatalf("testutil.Start: the child printed %q (%v), want %q on a line of its own", line, err, ready)
	}
	return cmd
}

// deadline returns the test's deadline, when it has one.
func deadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

// Results reads benchfmt text (go test -bench output) from r and returns
// its results, each a copy the caller owns. Lines that are not results
// (logs, PASS, ok) are skipped as benchstat skips them; a line that starts
// like a result but does not parse fails the test with its position, as
// name:line. A read error fails the test too.
func Results(t testing.TB, name string, r io.Reader) []*benchfmt.Result {
	t.Helper()
	rd := benchfmt.NewReader(r, name)
	var out []*benchfmt.Result
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatalf("benchfmt: reading %s: %v", name, err)
	}
	return out
}

// ResultsString is Results of the text s, named "output" in errors.
func ResultsString(t testing.TB, s string) []*benchfmt.Result {
	t.Helper()
	return Results(t, "output", strings.NewReader(s))
}

// ResultsFile is Results of the file at path.
func ResultsFile(t testing.TB, path string) []*benchfmt.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("benchfmt: %v", err)
	}
	defer f.Close()
	return Results(t, path, f)
}

// procs is the -GOMAXPROCS suffix testing adds to a benchmark's name.
var procs = regexp.MustCompile(`-\d+$`)

// Name returns r's full name without "Benchmark" and without the
// -GOMAXPROCS suffix: "VAD/gap=0s/arm=null".
func Name(r *benchfmt.Result) string {
	return procs.ReplaceAllString(string(r.Name.Full()), "")
}

// Units returns the units of r's values as the benchmark wrote them
// ("ns/op", "p90-ns/op"), in order; benchfmt itself reports tidied units
// ("sec/op"), which Value and benchstat use.
func Units(r *benchfmt.Result) []string {
	out := make([]string, len(r.Values))
	for i, v := range r.Values {
		out[i] = v.OrigUnit // "" when benchfmt left the unit as it was
		if out[i] == "" {
			out[i] = v.Unit
		}
	}
	return out
}
