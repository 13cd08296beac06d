package ownmodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The user's module: one step, one Run benchmark and one Compare benchmark,
// in the README's words.
const userGo = `package user

import (
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap"
)

var sink float64

func step() error {
	x := 1.0
	for i := 0; i < STEPS; i++ {
		x = x*1.0000001 + 1e-9
	}
	sink = x
	return nil
}

func BenchmarkDecode(b *testing.B) {
	decodegap.Run(b, decodegap.RunConfig{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}}, decodegap.Func(step))
}

func BenchmarkCompare(b *testing.B) {
	decodegap.Compare(b, decodegap.CompareConfig{Gap: decodegap.Gap{Mean: 100 * time.Microsecond}},
		decodegap.Arm{Name: "a", Open: decodegap.Func(step)},
		decodegap.Arm{Name: "b", Open: decodegap.Func(step)})
}
`

// run runs a command in dir and returns its combined output, failing the
// test with that output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s in %s:\n%s", name, strings.Join(args, " "), dir, out)
	return string(out)
}

// TestOwnModule follows the README's own-module section on a temporary
// module beside a "clone" (a symlink to this repository), with the
// relative replace the README writes.
func TestOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and the decodegap command: not in -short")
	}
	_, file, _, _ := runtime.Caller(0)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	require.NoError(t, err)

	top := t.TempDir()
	require.NoError(t, os.Symlink(repo, filepath.Join(top, "gapbench")))
	mod := filepath.Join(top, "user")
	require.NoError(t, os.Mkdir(mod, 0o755))
	gitEnv := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GOFLAGS=-mod=mod"}

	// The README's commands, as written.
	run(t, mod, gitEnv, "go", "mod", "init", "example.com/user")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "user_test.go"), []byte(strings.ReplaceAll(userGo, "STEPS", "20000")), 0o644))
	run(t, mod, gitEnv, "go", "mod", "edit", "-require", "github.com/gapbench/gapbench@v0.0.0", "-replace", "github.com/gapbench/gapbench=../gapbench")
	run(t, mod, gitEnv, "go", "mod", "edit", "-tool", "github.com/gapbench/gapbench/cmd/decodegap", "-tool", "golang.org/x/perf/cmd/benchstat")
	run(t, mod, gitEnv, "go", "mod", "tidy")

	// Run and Compare print benchfmt lines and a verdict.
	out := run(t, mod, gitEnv, "go", "test", "-run", "^$", "-bench", ".", "-benchtime", "200x", "-count", "4")
	assert.Regexp(t, `(?m)^BenchmarkDecode\S*\s+200\s+\d+(\.\d+)? ns/op`, out)
	assert.Contains(t, out, "--- decodegap.Compare: BenchmarkCompare")

	// benchstat reads it, as a tool of the module.
	require.NoError(t, os.WriteFile(filepath.Join(mod, "out.txt"), []byte(out), 0o644))
	assert.Contains(t, run(t, mod, gitEnv, "go", "tool", "benchstat", "out.txt"), "Decode")

	// The command runs as a tool of the module.
	help := run(t, mod, gitEnv, "go", "tool", "decodegap", "-h")
	assert.Contains(t, help, "pr")

	// pr between two commits of the module, with the relative replace:
	// the base is built in a worktree elsewhere.
	run(t, mod, gitEnv, "git", "init", "-q")
	run(t, mod, gitEnv, "git", "add", ".")
	run(t, mod, gitEnv, "git", "commit", "-qm", "base")
	require.NoError(t, os.WriteFile(filepath.Join(mod, "user_test.go"), []byte(strings.ReplaceAll(userGo, "STEPS", "24000")), 0o644))
	run(t, mod, gitEnv, "git", "commit", "-qam", "head")
	report := run(t, mod, gitEnv, "go", "tool", "decodegap", "pr", "-base", "HEAD~1", "-head", "HEAD",
		"-bench", "Decode", "-benchtime", "200x", "-budget", "20s", "-lock=false", ".")
	assert.Contains(t, report, "BenchmarkDecode")
}
