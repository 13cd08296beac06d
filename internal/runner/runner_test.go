package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The child roles of this test binary, picked by RUNNER_TEST_MODE.
func TestMain(m *testing.M) {
	switch os.Getenv("RUNNER_TEST_MODE") {
	case "":
		goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(SpawnerFunc))
		return
	case "ok":
		fmt.Println("BenchmarkX 1 100 ns/op")
		os.Exit(0)
	case "exit3":
		fmt.Fprintln(os.Stderr, "failing")
		os.Exit(3)
	case "crash":
		var p *int
		_ = *p // SIGSEGV, turned by the runtime into a panic: exit 2
	case "abort":
		syscall.Kill(os.Getpid(), syscall.SIGKILL) // killed by someone else
		time.Sleep(time.Minute)
	case "bigline":
		fmt.Println("BenchmarkX 1 100 ns/op " + strings.Repeat("x", 1<<20))
		fmt.Println("BenchmarkY 1 200 ns/op")
		os.Exit(0)
	case "hang":
		// A grandchild in the same group, its pid in the file given.
		gc := exec.Command(os.Args[0], "-test.run=^$")
		gc.Env = append(os.Environ(), "RUNNER_TEST_MODE=sleep")
		if err := gc.Start(); err != nil {
			os.Exit(9)
		}
		os.WriteFile(os.Getenv("RUNNER_TEST_PIDFILE"), []byte(strconv.Itoa(gc.Process.Pid)), 0o644)
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "deaf":
		signal.Ignore(syscall.SIGINT)
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	case "parent":
		// Starts a sleeping child with Start, prints its pid, and waits to
		// be killed.
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), "RUNNER_TEST_MODE=sleep")
		if err := Start(c); err != nil {
			os.Exit(9)
		}
		fmt.Println(c.Process.Pid)
		time.Sleep(time.Hour)
	}
	os.Exit(1)
}

func child(mode string, extra ...string) Cmd {
	return Cmd{Args: []string{os.Args[0], "-test.run=^$"}, Env: append(append(os.Environ(), "RUNNER_TEST_MODE="+mode), extra...)}
}

func TestOutcomes(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want Outcome
		code int
		sig  syscall.Signal
	}{
		{"ok", OK, 0, 0},
		{"exit3", Failed, 3, 0},
		{"crash", Failed, 2, 0},
		{"abort", Signaled, -1, syscall.SIGKILL},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var out, errb bytes.Buffer
			c := child(tc.mode)
			c.Stdout, c.Stderr = &out, &errb
			r := Run(context.Background(), c)
			assert.Equal(t, tc.want, r.Outcome, "stderr: %s", errb.String())
			assert.Equal(t, tc.code, r.ExitCode)
			assert.Equal(t, tc.sig, r.Signal)
			assert.Equal(t, tc.want != OK, r.Outcome.Lost())
			assert.Positive(t, r.Pid)
			assert.Equal(t, DefaultTimeout, r.Timeout, "a timeout is on by default")
			if tc.mode == "ok" {
				assert.Equal(t, "BenchmarkX 1 100 ns/op\n", out.String())
			}
		})
	}
}

func TestStartFailed(t *testing.T) {
	r := Run(context.Background(), Cmd{Args: []string{"/no/such/program"}})
	assert.Equal(t, StartFailed, r.Outcome)
	assert.ErrorIs(t, r.Err, os.ErrNotExist)
	r = Run(context.Background(), Cmd{})
	assert.Equal(t, StartFailed, r.Outcome)
}

// A line of 1 MiB passes whole, and the line after it too.
func TestBigLine(t *testing.T) {
	var out bytes.Buffer
	c := child("bigline")
	c.Stdout = &out
	r := Run(context.Background(), c)
	require.Equal(t, OK, r.Outcome)
	lines := strings.Split(out.String(), "\n")
	require.Len(t, lines, 3)
	assert.Len(t, lines[0], len("BenchmarkX 1 100 ns/op ")+1<<20)
	assert.Equal(t, "BenchmarkY 1 200 ns/op", lines[1])
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	for range 200 {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			p, err := strconv.Atoi(string(b))
			require.NoError(t, err)
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the child wrote no pid")
	return 0
}

// gone reports whether pid has exited (or is a zombie), waiting up to 5 s.
func gone(pid int) bool {
	for range 500 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// A hanging run is timed out, and its whole group (the grandchild too) is
// gone when Run returns.
func TestTimeoutKillsGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	c := child("hang", "RUNNER_TEST_PIDFILE="+pidfile)
	c.Timeout = 300 * time.Millisecond
	r := Run(context.Background(), c)
	assert.Equal(t, TimedOut, r.Outcome)
	assert.Equal(t, 300*time.Millisecond, r.Timeout)
	assert.Equal(t, -1, r.ExitCode)
	gc := readPid(t, pidfile)
	assert.True(t, gone(r.Pid))
	assert.True(t, gone(gc), "the grandchild %d outlived the run", gc)
}

// A child that ignores SIGINT gets SIGKILL after Grace; ctx's end is
// Interrupted.
func TestInterruptEscalates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	c := child("deaf")
	c.Stdout = pw
	c.Grace = 200 * time.Millisecond
	c.Timeout = NoTimeout
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, c) }()
	buf := make([]byte, 6)
	_, err = pr.Read(buf)
	require.NoError(t, err)
	cancel()
	r := <-done
	pw.Close()
	assert.Equal(t, Interrupted, r.Outcome)
	assert.Equal(t, syscall.SIGKILL, r.Signal)
	assert.Zero(t, r.Timeout)
}

// Start forks from a thread that never exits: many goroutines locking and
// exiting their threads do not trigger the child's parent-death signal.
func TestPdeathsigSurvivesThreadExit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNNER_TEST_MODE=sleep")
	require.NoError(t, Start(cmd))
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for range 20 {
		done := make(chan struct{})
		go func() { runtime.LockOSThread(); close(done) }() // exits locked: its thread ends
		<-done
	}
	time.Sleep(100 * time.Millisecond)
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
	require.NoError(t, err)
	assert.Zero(t, pid, "the child died (status %v) when a thread exited", ws)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	require.NoError(t, err)
	// The group is the child's own.
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, cmd.Process.Pid, pgid, "%s", st)
}

func TestOutcomeString(t *testing.T) {
	want := []string{"ok", "failed", "signaled", "timed-out", "interrupted", "start-failed"}
	for i, w := range want {
		assert.Equal(t, w, Outcome(i).String())
	}
	assert.Equal(t, "outcome(99)", Outcome(99).String())
}

// The parent-death signal: a parent killed with SIGKILL takes its child
// with it.
func TestParentKilledChildDies(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "RUNNER_TEST_MODE=parent")
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, parent.Process.Kill())
	parent.Wait()
	assert.True(t, gone(pid), "the child %d outlived its parent's SIGKILL by 5 s", pid)
	t.Logf("child gone %v after the parent's SIGKILL", time.Since(t0))
}
