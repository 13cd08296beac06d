package prreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/internal/runner"
)

// Tree is one side of the comparison: a source tree and the test binaries
// built from it.
type Tree struct {
	// Ref is the revision as given ("" for the work tree); Commit its
	// full hash: for the work tree HEAD's when git status lists no
	// change, "" when it does (the files then differ from any commit).
	Ref, Commit string
	// Root is the directory of the tree's copy of the repository: a git
	// worktree in a temporary directory, or the repository itself for the
	// work tree.
	Root string
	// Dirty is true for the work tree when `git status` lists changes.
	Dirty bool
}

// Package is one package with benchmarks on both sides.
type Package struct {
	// ImportPath is the package's import path.
	ImportPath string
	// BaseBin, HeadBin are the test binaries built at each side; BaseDir,
	// HeadDir the package's directory at each side (a test binary runs in
	// its package directory, as `go test` runs it).
	BaseBin, HeadBin string
	BaseDir, HeadDir string
	// Benchmarks are the top-level benchmarks present on both sides, as
	// -test.list prints them (with the Benchmark prefix), in the order
	// the head binary lists them.
	Benchmarks []string
	// OnlyBase and OnlyHead are benchmarks present on one side only: not
	// judged, listed in the report.
	OnlyBase, OnlyHead []string
}

// Build is the result of Prepare: both trees and every package built.
type Build struct {
	Base, Head Tree
	// Packages are the packages with at least one benchmark on either
	// side, in `go list` order of the head side.
	Packages []Package
	// Skipped lists packages matched at one side only, with which side.
	Skipped []string
	// tmp is the temporary directory holding worktrees and binaries;
	// repo the repository they were added to, gitCommon its git common
	// directory (worktreeLock's); added the worktrees registered with
	// git, for Close.
	tmp, repo, gitCommon string
	added                []Tree
	// owner is tmp's owner file, locked while the Build is open (see
	// holdOwner); nil once closed.
	owner *os.File
}

// BuildConfig says what Prepare builds.
type BuildConfig struct {
	// Dir is the directory the package patterns are relative to; it must
	// lie in a git repository's work tree. Empty means the current
	// directory.
	Dir string
	// Base is the base revision (any git revision); required.
	Base string
	// Head is the head revision; empty means the work tree as it is,
	// uncommitted changes included.
	Head string
	// Patterns are `go list` package patterns; empty means ".".
	Patterns []string
	// Log, when non-nil, receives one line per step (worktree, build).
	Log io.Writer
}

// BuildError is Prepare's error when a side's packages could not be
// listed (go list), built (go test -c) or their benchmarks listed
// (-test.list): the side's code, not the machinery, is at fault.
type BuildError struct {
	// Side is "base" or "head"; Pkg the package ("" when listing the
	// packages failed).
	Side, Pkg string
	Err       error
}

func (e *BuildError) Error() string {
	if e.Pkg == "" {
		return e.Side + ": " + e.Err.Error()
	}
	return e.Side + ": " + e.Pkg + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *BuildError) Unwrap() error { return e.Err }

// Prepare adds a git worktree for base (and for head when given) in a new
// temporary directory, resolves the package patterns at each side with
// `go list`, builds each package's test binary at both sides with
// `go test -c`, and lists each binary's benchmarks with -test.list. The
// caller must call Close to remove the worktrees and binaries. What the
// Builds of killed processes left (their folders and worktrees: no Close
// ran) is removed first, and logged.
func Prepare(ctx context.Context, c BuildConfig) (*Build, error) {
	if c.Base == "" {
		return nil, errors.New("prreport: BuildConfig.Base is required")
	}
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	logf := func(format string, a ...any) {
		if c.Log != nil {
			fmt.Fprintf(c.Log, format+"\n", a...)
		}
	}
	top, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not inside a git work tree: %w", dir, err)
	}
	// Resolve symlinks on both so the relative path is right.
	realDir, _ := filepath.EvalSymlinks(dir)
	realTop, _ := filepath.EvalSymlinks(top)
	rel, err := filepath.Rel(realTop, realDir)
	if err != nil {
		return nil, err
	}
	common, err := gitCommonDir(ctx, top)
	if err != nil {
		return nil, err
	}
	b := &Build{repo: top, gitCommon: common}
	// A run killed by SIGKILL (or a lost machine) ran no Close: remove
	// what such runs left, here and in os.TempDir().
	stale, err := b.pruneStale(ctx)
	for _, s := range stale {
		logf("removed %s and its worktrees: a pr or bisect run that was killed left them", s)
	}
	if err != nil {
		logf("removing what killed runs left: %v", err)
	}
	tmp, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return nil, err
	}
	b.tmp = tmp
	ok := false
	defer func() {
		if !ok {
			b.Close()
		}
	}()
	if b.owner, err = holdOwner(tmp); err != nil {
		return nil, err
	}

	side := func(name, ref string) (Tree, error) {
		if ref == "" {
			t := Tree{Root: top}
			st, err := gitOut(ctx, top, "status", "--porcelain", "--untracked-files=no")
			if err == nil && st != "" {
				t.Dirty = true
			} else if h, err := gitOut(ctx, top, "rev-parse", "--verify", "HEAD^{commit}"); err == nil {
				t.Commit = h
			}
			return t, nil
		}
		commit, err := gitOut(ctx, top, "rev-parse", "--verify", ref+"^{commit}")
		if err != nil {
			return Tree{}, fmt.Errorf("%s %q is not a commit here: %w", name, ref, err)
		}
		// git names a worktree's admin folder (.git/worktrees/NAME) after
		// the root's last element, and two pr runs in one repository at
		// once (CI shards on one runner) race for the same NAME: give it
		// the temp folder's unique suffix.
		root := filepath.Join(tmp, filepath.Base(tmp)+"-"+name)
		logf("%s: git worktree add --detach %s %s (%s)", name, root, ref, commit[:min(12, len(commit))])
		t := Tree{Ref: ref, Commit: commit, Root: root}
		if _, err := b.gitWorktree(ctx, "add", "--detach", root, commit); err != nil {
			// A worktree that was registered before the failure is
			// removed by Close.
			b.added = append(b.added, t)
			return Tree{}, fmt.Errorf("adding a worktree for %s %q: %w", name, ref, err)
		}
		b.added = append(b.added, t)
		if err := absReplaces(ctx, top, root, logf); err != nil {
			return Tree{}, fmt.Errorf("%s: %w", name, err)
		}
		return t, nil
	}
	if b.Base, err = side("base", c.Base); err != nil {
		return nil, err
	}
	if b.Head, err = side("head", c.Head); err != nil {
		return nil, err
	}

	patterns := c.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	basePkgs, err := listPackages(ctx, filepath.Join(b.Base.Root, rel), patterns)
	if err != nil {
		return nil, &BuildError{Side: "base", Err: err}
	}
	headPkgs, err := listPackages(ctx, filepath.Join(b.Head.Root, rel), patterns)
	if err != nil {
		return nil, &BuildError{Side: "head", Err: err}
	}
	if err := b.addPackages(ctx, basePkgs, headPkgs, logf); err != nil {
		return nil, err
	}
	ok = true
	return b, nil
}

// addPackages builds and lists each package found at both sides, and notes
// those found at one side only in b.Skipped.
func (b *Build) addPackages(ctx context.Context, basePkgs, headPkgs []listedPkg, logf func(string, ...any)) error {
	tmp := b.tmp
	var err error
	baseDir := map[string]string{}
	for _, p := range basePkgs {
		baseDir[p.importPath] = p.dir
	}
	headSeen := map[string]bool{}
	for i, hp := range headPkgs {
		headSeen[hp.importPath] = true
		bd, inBase := baseDir[hp.importPath]
		if !inBase {
			b.Skipped = append(b.Skipped, hp.importPath+" (head only)")
			continue
		}
		p := Package{ImportPath: hp.importPath, BaseDir: bd, HeadDir: hp.dir,
			BaseBin: filepath.Join(tmp, "bin", fmt.Sprintf("base-%d.test", i)),
			HeadBin: filepath.Join(tmp, "bin", fmt.Sprintf("head-%d.test", i))}
		var baseList, headList []string
		for _, s := range []struct {
			name, dir, bin string
			list           *[]string
		}{{"base", p.BaseDir, p.BaseBin, &baseList}, {"head", p.HeadDir, p.HeadBin, &headList}} {
			logf("%s: go test -c %s", s.name, p.ImportPath)
			if err := buildTest(ctx, s.dir, s.bin); err != nil {
				return &BuildError{Side: s.name, Pkg: p.ImportPath, Err: err}
			}
			if *s.list, err = listBenchmarks(ctx, s.dir, s.bin); err != nil {
				return &BuildError{Side: s.name, Pkg: p.ImportPath, Err: err}
			}
		}
		for _, n := range headList {
			if slices.Contains(baseList, n) {
				p.Benchmarks = append(p.Benchmarks, n)
			} else {
				p.OnlyHead = append(p.OnlyHead, n)
			}
		}
		for _, n := range baseList {
			if !slices.Contains(headList, n) {
				p.OnlyBase = append(p.OnlyBase, n)
			}
		}
		if len(p.Benchmarks)+len(p.OnlyBase)+len(p.OnlyHead) > 0 {
			b.Packages = append(b.Packages, p)
		}
	}
	for _, p := range basePkgs {
		if !headSeen[p.importPath] {
			b.Skipped = append(b.Skipped, p.importPath+" (base only)")
		}
	}
	return nil
}

// Close removes the worktrees (from git's list too) and the binaries. It
// runs its git commands without a context: it must finish after an
// interrupt has ended the one Prepare had.
func (b *Build) Close() error {
	var errs []error
	for _, t := range b.added {
		if _, err := b.gitWorktree(context.Background(), "remove", "--force", t.Root); err != nil {
			// Removed below with the directory; prune drops it from
			// git's list.
			if _, statErr := os.Stat(t.Root); statErr != nil && !os.IsNotExist(statErr) {
				errs = append(errs, err)
			}
		}
	}
	b.added = nil
	if b.tmp != "" {
		errs = append(errs, os.RemoveAll(b.tmp))
	}
	if b.owner != nil {
		b.owner.Close() // after the folder is gone: no one prunes it meanwhile
		b.owner = nil
	}
	if b.repo != "" {
		if _, err := b.gitWorktree(context.Background(), "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// absReplaces rewrites, in every go.mod of the worktree at root, each
// replace directive whose target is a relative directory outside the
// repository (replace example.com/x => ../x) to that directory's absolute
// path, read from the go.mod's place in the repository at top: the
// worktree lies in a temporary directory, where ../x is not the user's
// ../x. A relative target inside the repository stays relative, so the
// worktree builds that directory at its own revision.
func absReplaces(ctx context.Context, top, root string, logf func(string, ...any)) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == ".git" || d.Name() == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		origDir := filepath.Join(top, rel)
		js, err := run(ctx, filepath.Dir(path), "go", "mod", "edit", "-json")
		if err != nil {
			return err
		}
		var mod struct {
			Replace []struct {
				Old, New struct{ Path, Version string }
			}
		}
		if err := json.Unmarshal([]byte(js), &mod); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		var edits []string
		for _, r := range mod.Replace {
			if r.New.Version != "" || !(strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../")) {
				continue
			}
			abs := filepath.Join(origDir, r.New.Path)
			if in, err := filepath.Rel(top, abs); err == nil && in != ".." && !strings.HasPrefix(in, "../") {
				continue // inside the repository: the worktree has it
			}
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			edits = append(edits, "-replace="+old+"="+abs)
			logf("%s: replace %s => %s (was %s)", path, old, abs, r.New.Path)
		}
		if len(edits) == 0 {
			return nil
		}
		_, err = run(ctx, filepath.Dir(path), "go", append(append([]string{"mod", "edit"}, edits...), "go.mod")...)
		return err
	})
}

// Benchmarks returns the number of benchmarks present at both sides.
func (b *Build) Benchmarks() int {
	n := 0
	for _, p := range b.Packages {
		n += len(p.Benchmarks)
	}
	return n
}

type listedPkg struct{ importPath, dir string }

// listPackages resolves patterns in dir to the packages that have test
// files.
func listPackages(ctx context.Context, dir string, patterns []string) ([]listedPkg, error) {
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, patterns...)
	out, err := run(ctx, dir, "go", args...)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPkg
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] == "0" && f[3] == "0") {
			continue
		}
		pkgs = append(pkgs, listedPkg{f[0], f[1]})
	}
	return pkgs, nil
}

// buildTest builds the test binary of the package in dir to bin.
func buildTest(ctx context.Context, dir, bin string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	_, err := run(ctx, dir, "go", "test", "-c", "-o", bin, ".")
	return err
}

// listBenchmarks runs bin -test.list and returns the benchmark names.
func listBenchmarks(ctx context.Context, dir, bin string) ([]string, error) {
	out, err := run(ctx, dir, bin, "-test.list", "^Benchmark")
	if err != nil {
		return nil, err
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "Benchmark") && !strings.ContainsAny(l, " \t") {
			names = append(names, l)
		}
	}
	return names, nil
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := run(ctx, dir, "git", args...)
	return strings.TrimSpace(out), err
}

// run runs name with args in dir and returns its standard output; on
// failure the error holds the command line and its standard error.
//
// It runs through internal/runner (its own process group, a parent-death
// signal) with no time limit: a build takes what it takes; ctx stops it.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	res := runner.Run(ctx, runner.Cmd{Args: append([]string{name}, args...), Dir: dir,
		Stdout: &stdout, Stderr: &stderr, Timeout: runner.NoTimeout})
	if res.Outcome != runner.OK {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		var why string
		switch res.Outcome {
		case runner.Failed:
			why = fmt.Sprintf("exit status %d", res.ExitCode)
		case runner.Signaled:
			why = "signal " + unix.SignalName(res.Signal)
		case runner.Interrupted:
			why = ctx.Err().Error()
		default:
			why = fmt.Sprint(res.Err)
		}
		return "", fmt.Errorf("%s %s (in %s): %s: %s", name, strings.Join(args, " "), dir, why, msg)
	}
	return stdout.String(), nil
}
