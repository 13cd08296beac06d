package main

// The shared fault suite: interleave, ort, calibrate and pr run real child
// processes that misbehave as GAPBENCH_FAULT says (the fixture benchmark
// below; for ort, the block process of a decodegap built with -tags
// faultinject, see zfaultinject.go). Each command must
//   - time out a hanging run and kill its group;
//   - lose a crashing run and go on;
//   - handle a 1 MiB output line;
//   - after SIGINT, SIGTERM or SIGHUP, have its children gone before the
//     lock is released, and leave every file it wrote valid;
//   - after SIGKILL, have its children die (the parent-death signal).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/decodegap/ort"
	"github.com/gapbench/gapbench/internal/testutil"
)

// faultSource is the fixture package: a benchmark whose TestMain counts its
// runs (not -test.list) and misbehaves in run N as GAPBENCH_FAULT says
// ("N=kind,...", "*=kind" every run; kinds crash, hang, bigline, exit), when
// GAPBENCH_FAULT_SIDE is empty or names its side. It writes its pid to
// GAPBENCH_FAULT_DIR/pid.SIDE.N.
const faultSource = `package fault

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
%s)

const side = %q

func TestMain(m *testing.M) {
	fault()
	os.Exit(m.Run())
}

func fault() {
	for _, a := range os.Args {
		if strings.HasPrefix(a, "-test.list") {
			return
		}
	}
	dir := os.Getenv("GAPBENCH_FAULT_DIR")
	if s := os.Getenv("GAPBENCH_FAULT_SIDE"); dir == "" || s != "" && s != side {
		return
	}
	cf := filepath.Join(dir, "count."+side)
	b, _ := os.ReadFile(cf)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	os.WriteFile(cf, []byte(strconv.Itoa(n)), 0o644)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("pid.%%s.%%d", side, n)), []byte(strconv.Itoa(os.Getpid())), 0o644)
	kind := ""
	for _, f := range strings.Split(os.Getenv("GAPBENCH_FAULT"), ",") {
		if k, v, _ := strings.Cut(f, "="); k == strconv.Itoa(n) || k == "*" {
			kind = v
		}
	}
	switch kind {
	case "crash":
		panic(fmt.Sprintf("fault: crash in run %%d", n))
	case "hang":
		time.Sleep(time.Hour)
	case "bigline":
		fmt.Println("log: " + strings.Repeat("x", 1<<20))
	case "exit":
		os.Exit(3)
	}
}

var sink uint64

func BenchmarkStep(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += %s
	}
}
`

// faultFile is the fixture's test file for side; dep makes it call
// example.com/dep (see faultRepo).
func faultFile(side string, dep bool) string {
	if dep {
		return fmt.Sprintf(faultSource, "\n\t\"example.com/dep\"\n", side, "dep.Work(300)")
	}
	return fmt.Sprintf(faultSource, "", side, "uint64(len(fmt.Sprint(i)))")
}

var faultBin struct {
	once sync.Once
	path string
	err  error
}

// faultTest builds the fixture package's test binary once.
func faultTest(t *testing.T) string {
	t.Helper()
	faultBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "gapbench-fault-")
		if err != nil {
			faultBin.err = err
			return
		}
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/fault\n\ngo 1.21\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "fault_test.go"), []byte(faultFile("x", false)), 0o644)
		cmd := exec.Command("go", "test", "-c", "-o", "fault.test", ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			faultBin.err = fmt.Errorf("go test -c: %v\n%s", err, out)
		}
		faultBin.path = filepath.Join(dir, "fault.test")
	})
	require.NoError(t, faultBin.err)
	return faultBin.path
}

// faultRepo is a git repository of the fixture with two commits, base and
// head, whose binaries have sides "base" and "head". With dep, the module
// requires example.com/dep through `replace example.com/dep => ../dep`, a
// directory beside the repository, as the README's own-module section has
// it.
func faultRepo(t *testing.T, dep bool) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "repo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	gomod := "module example.com/fault\n\ngo 1.21\n"
	if dep {
		d := filepath.Join(top, "dep")
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "go.mod"), []byte("module example.com/dep\n\ngo 1.21\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "dep.go"), []byte("package dep\n\n// Work mixes n times.\nfunc Work(n int) uint64 {\n\tx := uint64(1)\n\tfor i := 0; i < n; i++ {\n\t\tx = x*6364136223846793005 + 1\n\t}\n\treturn x\n}\n"), 0o644))
		gomod += "\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n"
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	git("init", "-q", "-b", "main")
	write("go.mod", gomod)
	write("fault_test.go", faultFile("base", dep))
	git("add", ".")
	git("commit", "-q", "-m", "base")
	write("fault_test.go", faultFile("head", dep))
	git("commit", "-q", "-am", "head")
	return dir
}

// faultCase is one command of the suite, ready to start.
type faultCase struct {
	name string
	// args builds the command line (the program first) with -o out,
	// -lock-path lock and -run-timeout rt; dir is where to run it.
	args func(t *testing.T, out, lock, rt string) (args []string, dir string)
	// lostStatus is the exit status when runs were lost and the others
	// judged.
	lostStatus int
	// side is GAPBENCH_FAULT_SIDE for the lost-run case (pr: head).
	side string
	// timeout is -run-timeout for the lost-run case: long enough for a
	// good run on a loaded host (an ort block loads ONNX Runtime).
	timeout string
}

func faultCases(t *testing.T) []faultCase {
	common := func(out, lock, rt string) []string {
		return []string{"-o", out, "-lock-path", lock, "-screen=false", "-run-timeout", rt}
	}
	return []faultCase{
		{name: "interleave", lostStatus: 1, timeout: "3s", args: func(t *testing.T, out, lock, rt string) ([]string, string) {
			fx := faultTest(t)
			return append(append([]string{buildDecodegap(t), "interleave", "-rounds", "3", "-seed", "1", "-benchtime", "20x", "-unit", "sec/op"},
				common(out, lock, rt)...), "a="+fx, "b="+fx), ""
		}},
		{name: "calibrate", lostStatus: 1, timeout: "3s", args: func(t *testing.T, out, lock, rt string) ([]string, string) {
			return append(append([]string{buildDecodegap(t), "calibrate", "-rounds", "3", "-seed", "1", "-benchtime", "20x", "-unit", "sec/op"},
				common(out, lock, rt)...), faultTest(t)), ""
		}},
		{name: "ort", lostStatus: 1, timeout: "10s", args: func(t *testing.T, out, lock, rt string) ([]string, string) {
			parts := ort.Require(t)
			bin := buildOnce(t, "decodegap-faultinject", "build", "-tags", "faultinject", ".")
			return append(append([]string{bin, "ort", "-rounds", "3", "-seed", "7", "-benchtime", "64x", "-warmup", "2", "-parity", "0",
				"-shape", "input=1x512", "-shape", "state=2x1x128", "-input", "sr=16000", "-arm", "intra=1"},
				common(out, lock, rt)...), parts.Model), ""
		}},
		{name: "pr", lostStatus: 0, side: "head", timeout: "3s", args: func(t *testing.T, out, lock, rt string) ([]string, string) {
			repo := faultRepo(t, false)
			return append([]string{buildDecodegap(t), "pr", "-base", "HEAD~1", "-head", "HEAD", "-budget", "2m", "-max-rounds", "3",
				"-benchtime", "20x", "-unit", "sec/op"}, append(common(out, lock, rt), "./...")...), repo
		}},
	}
}

// started is a command of the suite started with a fault.
type started struct {
	cmd            *exec.Cmd
	dir            string // GAPBENCH_FAULT_DIR
	out, lock      string
	stdout, stderr bytes.Buffer
	done           chan error
}

func startFault(t *testing.T, c faultCase, fault, side, rt string) *started {
	t.Helper()
	s := &started{dir: t.TempDir(), done: make(chan error, 1)}
	s.out = filepath.Join(t.TempDir(), "out.txt")
	s.lock = filepath.Join(t.TempDir(), "host.lock")
	args, dir := c.args(t, s.out, s.lock, rt)
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "GAPBENCH_FAULT="+fault, "GAPBENCH_FAULT_DIR="+s.dir, "GAPBENCH_FAULT_SIDE="+side)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	require.NoError(t, s.cmd.Start())
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
		if dir != "" {
			removeWorktrees(dir)
		}
	})
	return s
}

// wait waits for the command's end, at most d, and returns its exit status.
func (s *started) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
		s.done <- nil // for Cleanup
	case <-time.After(d):
		t.Fatalf("still running after %v; stderr:\n%s", d, s.stderr.String())
	}
	return s.cmd.ProcessState.ExitCode()
}

// childPid waits for the first run to write its pid (the pid file of run 1
// of any side) and returns it.
func (s *started) childPid(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(s.dir, "pid.*.1"))
		if len(m) > 0 {
			if b, err := os.ReadFile(m[0]); err == nil && len(b) > 0 {
				p, err := strconv.Atoi(string(b))
				require.NoError(t, err)
				return p
			}
		}
		select {
		case <-s.done:
			t.Fatalf("exited before a run started: %v; stderr:\n%s", s.cmd.ProcessState, s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no run started; stderr:\n%s", s.stderr.String())
	return 0
}

// removeWorktrees removes the worktrees a killed pr left registered in repo.
func removeWorktrees(repo string) {
	out, _ := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && p != repo {
			exec.Command("git", "-C", repo, "worktree", "remove", "--force", p).Run()
			os.RemoveAll(filepath.Dir(p))
		}
	}
}

// worktrees returns the worktrees registered in repo besides its own.
func worktrees(t *testing.T, repo string) []string {
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	require.NoError(t, err)
	var wt []string
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			if r, _ := filepath.EvalSymlinks(repo); p != repo && p != r {
				wt = append(wt, p)
			}
		}
	}
	return wt
}

var lostLineRE = regexp.MustCompile(`(?m)^# round \d+ arm \S+ lost: (\S+): `)

// Run 1 crashes, run 2 hangs past -run-timeout, run 3 prints a 1 MiB line
// before its result: the crash and the hang are lost, the hang's process is
// gone, the big line's run is kept, and the command goes on to the end.
func TestFaultRunsLost(t *testing.T) {
	for _, c := range faultCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startFault(t, c, "1=crash,2=hang,3=bigline", c.side, c.timeout)
			code := s.wait(t, 3*time.Minute)
			t.Logf("stderr:\n%s", s.stderr.String())
			assert.Equal(t, c.lostStatus, code)
			res := testutil.ResultsFile(t, s.out) // every line parses
			assert.NotEmpty(t, res)
			side := c.side
			if side == "" {
				side = map[string]string{"ort": "ort"}[c.name]
				if side == "" {
					side = "x"
				}
			}
			hang, err := os.ReadFile(filepath.Join(s.dir, "pid."+side+".2"))
			require.NoError(t, err)
			p, _ := strconv.Atoi(string(hang))
			assert.True(t, processGone(p), "the hanging run %d outlived the timeout", p)
			if _, err := os.Stat(filepath.Join(s.dir, "pid."+side+".4")); err != nil {
				t.Errorf("no run after the bigline run: the command did not go on")
			}
			if c.name == "pr" {
				assert.Equal(t, 2, strings.Count(s.stderr.String(), " lost ("), "two rounds lost")
				assert.Contains(t, s.stderr.String(), "still running after the timeout of "+c.timeout)
				assert.Empty(t, worktrees(t, s.cmd.Dir))
				return
			}
			data, err := os.ReadFile(s.out)
			require.NoError(t, err)
			var causes []string
			for _, m := range lostLineRE.FindAllStringSubmatch(string(data), -1) {
				causes = append(causes, m[1])
			}
			assert.ElementsMatch(t, []string{"exited", "timed-out"}, causes)
		})
	}
}

// SIGINT, SIGTERM and SIGHUP while a run hangs: the run's process is gone
// before the host lock is free, the command exits 130, and its output parses.
func TestFaultSignals(t *testing.T) {
	for _, c := range faultCases(t) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			t.Run(c.name+"/"+unixSignalName(sig), func(t *testing.T) {
				t.Parallel()
				s := startFault(t, c, "1=hang", "", "0")
				child := s.childPid(t)
				require.False(t, lockFree(t, s.lock), "the lock is held while a run goes")
				require.NoError(t, s.cmd.Process.Signal(sig))
				t0 := time.Now()
				for {
					select {
					case <-s.done:
						s.done <- nil
					default:
						// The lock first: a run still running after the lock
						// was seen free ran while it was free.
						free := lockFree(t, s.lock)
						require.False(t, free && processRunning(child), "run %d alive while the lock is free", child)
						require.Less(t, time.Since(t0), time.Minute, "still running after %v", sig)
						time.Sleep(time.Millisecond)
						continue
					}
					break
				}
				assert.True(t, processGone0(child), "run %d outlived the command", child)
				assert.Equal(t, 130, s.cmd.ProcessState.ExitCode(), "stderr:\n%s", s.stderr.String())
				testutil.ResultsFile(t, s.out)
				if c.name == "pr" {
					assert.Empty(t, worktrees(t, s.cmd.Dir), "pr left a worktree after %v", sig)
				}
			})
		}
	}
}

// SIGKILL of the command while a run hangs: the run dies with it (the
// parent-death signal). Measured here: well under a second (logged).
func TestFaultParentKilled(t *testing.T) {
	for _, c := range faultCases(t) {
		t.Run(c.name, func(t *testing.T) {
			s := startFault(t, c, "1=hang", "", "0")
			child := s.childPid(t)
			t0 := time.Now()
			require.NoError(t, s.cmd.Process.Kill())
			for !processGone0(child) {
				require.Less(t, time.Since(t0), 5*time.Second, "run %d outlived its parent's SIGKILL", child)
				time.Sleep(time.Millisecond)
			}
			t.Logf("%s: the run died %v after SIGKILL of its parent", c.name, time.Since(t0))
		})
	}
}

func unixSignalName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[s]
}
