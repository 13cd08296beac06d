package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Outcome kinds a probe can end in; every one but ok is a defect.
const (
	ok          = "ok"
	crash       = "crash"        // the command panicked, hit a fatal error or died by a signal
	hang        = "hang"         // it outlived its time bound
	fabrication = "fabrication"  // it reported what was not measured, or passed what failed
	lost        = "lost"         // a finished measurement is missing from its output
	orphan      = "orphan"       // a child outlived the command
	symlink     = "symlink"      // it wrote through a planted symlink
	wrong       = "wrong-answer" // an exit code or message other than the documented one
)

// result is what one run of the command left.
type result struct {
	code     int // exit code; -1 when killed by a signal
	signal   syscall.Signal
	timedOut bool
	stdout   string
	stderr   string
	took     time.Duration
}

// probe is one hostile input.
type probe struct {
	name string
	item string   // the item of the issue it replays
	args []string // decodegap's arguments; {fx} is the fixture test binary, {dir} the probe's folder
	env  []string
	// setup plants files in dir before the run.
	setup func(t *testing.T, dir string)
	// codes are the exit codes the documented behaviour allows (nil: any
	// that is not a crash).
	codes []int
	// check returns the kind of defect the run shows, or ok.
	check func(r result, dir string) (string, string)
	// bound is the run's time bound (default 20 s).
	bound time.Duration
	// signal, when set, is sent to the command after signalAfter.
	signal      syscall.Signal
	signalAfter time.Duration
}

var (
	buildOnce sync.Once
	bin, fx   string
	buildErr  error
)

// build builds the decodegap command and the fixture's test binary once.
func build(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gapbench-chaos-")
		if err != nil {
			buildErr = err
			return
		}
		bin, fx = filepath.Join(dir, "decodegap"), filepath.Join(dir, "fixture.test")
		for _, c := range [][]string{{"build", "-o", bin, "../../cmd/decodegap"}, {"test", "-c", "-o", fx, "./testdata/fixture"}} {
			if out, err := exec.Command("go", c...).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(c, " "), err, out)
				return
			}
		}
	})
	require.NoError(t, buildErr)
}

// run runs p in dir, with a marker in the environment of the command and
// of every process it starts, so that orphans can be found.
func run(p probe, dir, marker string) result {
	bound := p.bound
	if bound == 0 {
		bound = 20 * time.Second
	}
	args := make([]string, len(p.args))
	for i, a := range p.args {
		args[i] = strings.NewReplacer("{fx}", fx, "{dir}", dir, "{model}", vadModel()).Replace(a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	// A virtual-memory cap turns an unbounded read into a crash, not a
	// machine out of memory.
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", `ulimit -v 16000000; exec "$@"`, "bash", bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GAPBENCH_CHAOS_MARKER="+marker, "GOTRACEBACK=single", "GAPBENCH_CACHE="+cacheDir()), p.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Start()
	if err == nil && p.signal != 0 {
		go func() {
			time.Sleep(p.signalAfter)
			cmd.Process.Signal(p.signal)
		}()
	}
	if err == nil {
		err = cmd.Wait()
	}
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start), timedOut: ctx.Err() != nil}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code, r.signal = -1, ws.Signal()
		}
	default:
		r.code = -2
		r.stderr += err.Error()
	}
	return r
}

// cacheDir is the folder make deps fetches ONNX Runtime and the model to.
func cacheDir() string {
	cache := os.Getenv("GAPBENCH_CACHE")
	if cache == "" {
		cache = "../../.cache"
	}
	p, _ := filepath.Abs(cache)
	return p
}

// vadModel is the Silero VAD model that make deps fetches.
func vadModel() string {
	return filepath.Join(cacheDir(), "silero-vad-web-0.0.31", "silero_vad_v5.onnx")
}

// alive returns the pids of processes whose environment holds marker.
func alive(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("GAPBENCH_CHAOS_MARKER="+marker+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// classify returns the defect a run shows: the generic ones first, then
// the probe's own check.
func classify(p probe, r result, dir, marker string) (string, string) {
	if r.timedOut {
		return hang, fmt.Sprintf("still running after %v", r.took.Round(time.Millisecond))
	}
	sent := p.signal != 0 && (r.signal == p.signal || p.signal == syscall.SIGKILL)
	if r.code == -1 && !sent {
		return crash, "killed by " + r.signal.String()
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if (strings.HasPrefix(l, "panic: ") && !strings.Contains(l, "PROBE-FIXTURE")) || strings.HasPrefix(l, "fatal error: ") {
			return crash, l
		}
	}
	// Children get a second to die after their parent.
	deadline := time.Now().Add(time.Second)
	for len(alive(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pids := alive(marker); len(pids) > 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return orphan, fmt.Sprintf("%d processes alive 1 s after the command ended", len(pids))
	}
	if p.codes != nil && !contains(p.codes, r.code) && !sent {
		return wrong, fmt.Sprintf("exit %d, want one of %v; stderr: %s", r.code, p.codes, tail(r.stderr))
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b]0;owned") {
		return wrong, "an escape sequence from a file or a child reached the terminal"
	}
	if p.check != nil {
		return p.check(r, dir)
	}
	return ok, ""
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return s
}

// TestChaos runs every probe and fails on any defect; the counts by kind
// are logged (and written to CHAOS_REPORT when set).
func TestChaos(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probes read /proc")
	}
	build(t)
	ps := probes()
	type row struct{ name, item, kind, why string }
	rows := make([]row, len(ps))
	t.Run("probe", func(t *testing.T) {
		for i, p := range ps {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if p.setup != nil {
					p.setup(t, dir)
				}
				marker := fmt.Sprintf("%d-%d", os.Getpid(), i)
				r := run(p, dir, marker)
				kind, why := classify(p, r, dir, marker)
				rows[i] = row{p.name, p.item, kind, why}
				if kind != ok {
					t.Errorf("%s: %s (exit %d in %v)\nstdout: %s\nstderr: %s", kind, why, r.code, r.took.Round(time.Millisecond), tail(r.stdout), tail(r.stderr))
				}
			})
		}
	})
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.kind]++
	}
	var kinds []string
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var sum strings.Builder
	fmt.Fprintf(&sum, "%d probes:", len(rows))
	for _, k := range kinds {
		fmt.Fprintf(&sum, " %s %d", k, counts[k])
	}
	t.Log(sum.String())
	if out := os.Getenv("CHAOS_REPORT"); out != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n\n| probe | item | outcome | detail |\n|---|---|---|---|\n", sum.String())
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.name, r.item, r.kind, strings.ReplaceAll(strings.ReplaceAll(r.why, "|", "\\|"), "\n", " "))
		}
		require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
	}
}
