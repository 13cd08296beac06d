package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"
)

// roleEnv makes this test binary act as a child: "hello" prints a line and
// its argument count, "fail" exits 3, "ready" prints ready and waits,
// "bench" is for BenchmarkChild.
const roleEnv = "TESTUTIL_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "hello":
		fmt.Printf("hello from the child, %s\n", os.Getenv("TESTUTIL_TEST_WHO"))
		fmt.Fprintln(os.Stderr, "on stderr")
		os.Exit(0)
	case "fail":
		fmt.Println("failing")
		os.Exit(3)
	case "ready", "noise":
		if os.Getenv(roleEnv) == "noise" {
			fmt.Println("something else")
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func BenchmarkChild(b *testing.B) {
	for range b.N {
	}
	b.ReportMetric(42, "p90-ns/op")
}

func TestRun(t *testing.T) {
	out, err := Run(t, []string{roleEnv + "=hello", "TESTUTIL_TEST_WHO=test"})
	require.NoError(t, err)
	assert.Equal(t, "hello from the child, test\non stderr\n", out)

	out, err = Run(t, []string{roleEnv + "=fail"})
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	assert.Equal(t, 3, exit.ExitCode())
	assert.Equal(t, "failing\n", out)
}

func TestBenchAndResults(t *testing.T) {
	out, err := Bench(t, nil, "^BenchmarkChild$", "-test.benchtime=7x", "-test.count=2")
	require.NoError(t, err, out)
	res := ResultsString(t, out)
	require.Len(t, res, 2)
	for _, r := range res {
		assert.Equal(t, "Child", Name(r))
		assert.Equal(t, 7, r.Iters)
		assert.Equal(t, []string{"ns/op", "p90-ns/op"}, Units(r))
		v, ok := r.Value("p90-sec/op")
		assert.True(t, ok, "benchfmt tidies the unit")
		assert.InDelta(t, 42e-9, v, 1e-15)
	}

	path := filepath.Join(t.TempDir(), "out.txt")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	assert.Len(t, ResultsFile(t, path), 2)
	res[0].Iters = -1
	assert.Equal(t, 7, ResultsString(t, out)[0].Iters, "results are copies")
}

// A result line that does not parse fails the test, naming where.
func TestResultsSyntaxError(t *testing.T) {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Results(ft, "in.txt", strings.NewReader("goos: linux\nBenchmarkX 10 5 ns/op\nBenchmarkY 10 five ns/op\n"))
	}()
	<-done
	assert.Contains(t, ft.msg, "in.txt:3: parsing measurement")
}

func TestStart(t *testing.T) {
	cmd := Start(t, []string{roleEnv + "=ready"}, "ready", "-test.run=^$")
	assert.Nil(t, cmd.ProcessState, "still running")

	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(ft, []string{roleEnv + "=noise"}, "ready", "-test.run=^$")
	}()
	<-done
	assert.Contains(t, ft.msg, `the child printed "something else\n"`)
}

// fakeT records a Fatalf and ends the goroutine, as testing.T does.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
