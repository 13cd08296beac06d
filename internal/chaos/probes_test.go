package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// plant writes precious (content "keep", mode 0600) in dir and a symlink
// to it at name.
func plant(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "precious"), []byte("keep"), 0o600))
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(dir, "precious"), filepath.Join(dir, name)))
	}
}

// untouched checks that the planted file is as it was.
func untouched(r result, dir string) (string, string) {
	b, err := os.ReadFile(filepath.Join(dir, "precious"))
	fi, serr := os.Stat(filepath.Join(dir, "precious"))
	switch {
	case err != nil || serr != nil:
		return symlink, fmt.Sprintf("the planted file is gone: %v %v", err, serr)
	case string(b) != "keep":
		return symlink, fmt.Sprintf("the planted file now holds %d bytes", len(b))
	case fi.Mode().Perm() != 0o600:
		return symlink, fmt.Sprintf("the planted file's mode is now %v", fi.Mode().Perm())
	}
	return ok, ""
}

// says checks that the output names every word given (a flag, a field).
func says(words ...string) func(r result, dir string) (string, string) {
	return func(r result, dir string) (string, string) {
		for _, w := range words {
			if !strings.Contains(r.stdout+r.stderr, w) {
				return wrong, fmt.Sprintf("the output does not say %q: %s", w, tail(r.stderr))
			}
		}
		return ok, ""
	}
}

// mkfifo makes a fifo at name in dir.
func mkfifo(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, name), 0o600))
	}
}

// file writes content at name in dir.
func file(name, content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
}

func both(a, b func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { a(t, dir); b(t, dir) }
}

// usage is a probe of a bad flag value: exit 2, naming the flag.
func usage(name string, flag string, args ...string) probe {
	return probe{name: name, item: "input", args: args, codes: []int{2}, check: says(flag)}
}

// measured checks that the run's measured lines are in the output file
// out: at least n benchfmt result lines.
func measured(out string, n int) func(r result, dir string) (string, string) {
	return func(r result, dir string) (string, string) {
		b, _ := os.ReadFile(filepath.Join(dir, out))
		got := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "/op") {
				got++
			}
		}
		if got < n {
			return lost, fmt.Sprintf("%d measured lines in %s, want at least %d", got, out, n)
		}
		return ok, ""
	}
}

// usageIL, usageCal and usageORT are usage probes of interleave, calibrate
// and ort with every other flag valid and the run short, should the bad
// value be let through.
func usageIL(name, flag string, args ...string) probe {
	return usage(name, flag, append([]string{"interleave", "-lock=false", "-rounds", "2", "-benchtime", "40x", "-bench", "Probe"}, args...)...)
}

func usageCal(name, flag string, args ...string) probe {
	return usage(name, flag, append([]string{"calibrate", "-lock=false", "-rounds", "4", "-benchtime", "40x", "-bench", "Probe"}, args...)...)
}

func usageORT(name, flag string, args ...string) probe {
	base := []string{"ort", "-lock=false", "-rounds", "2", "-benchtime", "20x", "-arm", "intra=1",
		"-shape", "input=1x512", "-shape", "state=2x1x128", "-input", "sr=16000"}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-shape" && strings.HasPrefix(args[i+1], "input=") {
			// The probe's own input shape, in place of the base's: ort
			// refuses a name given twice.
			base = slices.Delete(base, 8, 10)
			break
		}
	}
	return usage(name, flag, append(append(base, args...), "{model}")...)
}

// withCodes returns p allowing exit codes codes.
func withCodes(p probe, codes ...int) probe {
	p.codes = codes
	return p
}

func probes() []probe {
	fxArm := func(name string) string { return name + "={fx}" }
	il := func(extra ...string) []string {
		return append([]string{"interleave", "-lock=false", "-rounds", "2", "-benchtime", "40x", "-bench", "Probe", "-o", "{dir}/out.txt"}, extra...)
	}
	ps := []probe{
		// interleave: flags.
		usageIL("interleave -rounds 0", "-rounds", "-rounds", "0", fxArm("a"), fxArm("b")),
		usageIL("interleave -rounds -1", "-rounds", "-rounds", "-1", fxArm("a"), fxArm("b")),
		usageIL("interleave -rounds abc", "-rounds", "-rounds", "abc", fxArm("a"), fxArm("b")),
		usageIL("interleave -rounds 1e9", "-rounds", "-rounds", "1e9", fxArm("a"), fxArm("b")),
		usageIL("interleave -delta NaN", "-delta", "-delta", "NaN", fxArm("a"), fxArm("b")),
		usageIL("interleave -delta -1", "-delta", "-delta", "-1", fxArm("a"), fxArm("b")),
		usageIL("interleave -delta 1e309", "-delta", "-delta", "1e309", fxArm("a"), fxArm("b")),
		usageIL("interleave -max-failed -3", "-max-failed", "-max-failed", "-3", fxArm("a"), fxArm("b")),
		usageIL("interleave -timeout -1s", "-timeout", "-timeout", "-1s", fxArm("a"), fxArm("b")),
		usageIL("interleave -benchtime abc", "-benchtime", "-benchtime", "abc", fxArm("a"), fxArm("b")),
		usageIL("interleave -screen=bogus", "-screen", "-screen=bogus", fxArm("a"), fxArm("b")),
		usageIL("interleave -plot x.txt", "-plot", "-plot", "x.txt", fxArm("a"), fxArm("b")),
		usageIL("interleave -bench (", "-bench", "-bench", "(", fxArm("a"), fxArm("b")),
		usageIL("interleave -max-rounds -5", "-max-rounds", "-max-rounds", "-5", fxArm("a"), fxArm("b")),
		usageIL("interleave -unit empty", "-unit", "-unit", ",", fxArm("a"), fxArm("b")),
		// interleave: arms.
		{name: "interleave no arms", item: "input", args: []string{"interleave"}, codes: []int{2}},
		{name: "interleave one arm", item: "input", args: []string{"interleave", fxArm("a")}, codes: []int{2}},
		{name: "interleave arm without target", item: "input", args: []string{"interleave", "a=", fxArm("b")}, codes: []int{2}},
		{name: "interleave arm without name", item: "input", args: []string{"interleave", "={fx}", fxArm("b")}, codes: []int{2}},
		{name: "interleave duplicate arm names", item: "input", args: []string{"interleave", fxArm("a"), fxArm("a")}, codes: []int{2}},
		{name: "interleave missing target", item: "input", args: []string{"interleave", "a={dir}/nope", fxArm("b")}, codes: []int{1, 2}},
		{name: "interleave target is /dev/zero", item: "input", args: append(il(), "a=/dev/zero", fxArm("b")), codes: []int{1, 2}},
		{name: "interleave target is a directory", item: "input", args: append(il(), "a={dir}", fxArm("b")), codes: []int{1, 2}},
		{name: "interleave target not executable", item: "input", setup: file("plain", "#!/bin/sh\n"), args: append(il(), "a={dir}/plain", fxArm("b")), codes: []int{1, 2}},
		// interleave: runs that misbehave.
		{name: "interleave a crashing arm", item: "crash", env: []string{"GAPBENCH_PROBE=crash"}, args: append(il(), fxArm("a"), fxArm("b")), codes: []int{1}},
		{name: "interleave a hanging arm, -timeout 2s", item: "hang", env: []string{"GAPBENCH_PROBE=hang"}, args: append(il("-timeout", "2s"), fxArm("a"), fxArm("b")), codes: []int{1}, bound: 60 * time.Second},
		{name: "interleave an arm that exits 3", item: "crash", env: []string{"GAPBENCH_PROBE=exit"}, args: append(il(), fxArm("a"), fxArm("b")), codes: []int{1}},
		{name: "interleave a step error", item: "measurement", env: []string{"GAPBENCH_PROBE=error"}, args: append(il(), fxArm("a"), fxArm("b")), codes: []int{1}},
		{name: "interleave a 1 MB line", item: "input", env: []string{"GAPBENCH_PROBE=bigline"}, args: append(il(), fxArm("a"), fxArm("b")), codes: []int{0}, check: measured("out.txt", 6), bound: 60 * time.Second},
		{name: "interleave escape sequences from a child", item: "input", env: []string{"GAPBENCH_PROBE=esc"}, args: append(il(), fxArm("a"), fxArm("b")), codes: []int{0}, bound: 60 * time.Second},
		{name: "interleave NaN ns/op", item: "fabrication", env: []string{"GAPBENCH_PROBE=nan"}, args: append(il(), fxArm("a"), fxArm("b")), bound: 60 * time.Second},
		{name: "interleave -o through a planted symlink stays a choice of the user", item: "lock", setup: plant("lock"), args: append(il("-lock", "-lock-path", "{dir}/lock"), fxArm("a"), fxArm("b")), check: untouched, bound: 60 * time.Second},
		{name: "interleave -lock-path a directory", item: "lock", args: append(il("-lock", "-lock-path", "{dir}"), fxArm("a"), fxArm("b")), codes: []int{1, 2, 3}},
		{name: "interleave -lock-path /dev/null", item: "lock", args: append(il("-lock", "-lock-path", "/dev/null"), fxArm("a"), fxArm("b")), codes: []int{1, 2, 3}},
		{name: "interleave SIGHUP mid-run", item: "orphan", env: []string{"GAPBENCH_PROBE=hang"}, args: append(il("-timeout", "30s"), fxArm("a"), fxArm("b")), signal: syscall.SIGHUP, signalAfter: 3 * time.Second, bound: 40 * time.Second},
		{name: "interleave SIGTERM mid-run", item: "orphan", env: []string{"GAPBENCH_PROBE=hang"}, args: append(il("-timeout", "30s"), fxArm("a"), fxArm("b")), signal: syscall.SIGTERM, signalAfter: 3 * time.Second, bound: 40 * time.Second},
		{name: "interleave SIGINT mid-run", item: "orphan", env: []string{"GAPBENCH_PROBE=hang"}, args: append(il("-timeout", "30s"), fxArm("a"), fxArm("b")), signal: syscall.SIGINT, signalAfter: 3 * time.Second, bound: 40 * time.Second},
		{name: "interleave SIGKILL mid-run", item: "orphan", env: []string{"GAPBENCH_PROBE=hang"}, args: append(il("-timeout", "30s"), fxArm("a"), fxArm("b")), signal: syscall.SIGKILL, signalAfter: 3 * time.Second, bound: 40 * time.Second},

		// calibrate.
		usageCal("calibrate -rounds 0", "-rounds", "-rounds", "0", "{fx}"),
		usageCal("calibrate -rounds NaN", "-rounds", "-rounds", "NaN", "{fx}"),
		usageCal("calibrate -rounds 1e9", "-rounds", "-rounds", "1e9", "{fx}"),
		usageCal("calibrate -benchtime abc", "-benchtime", "-benchtime", "abc", "{fx}"),
		usageCal("calibrate -bench (", "-bench", "-bench", "(", "{fx}"),
		usageCal("calibrate -screen=bogus", "-screen", "-screen=bogus", "{fx}"),
		{name: "calibrate no target", item: "input", args: []string{"calibrate"}, codes: []int{2}},
		{name: "calibrate missing target", item: "input", args: []string{"calibrate", "-lock=false", "{dir}/nope"}, codes: []int{1, 2}},
		{name: "calibrate a crashing benchmark", item: "crash", env: []string{"GAPBENCH_PROBE=crash"}, args: []string{"calibrate", "-lock=false", "-rounds", "4", "-benchtime", "40x", "-bench", "Probe", "{fx}"}, codes: []int{1}},
		{name: "calibrate a hanging benchmark", item: "hang", env: []string{"GAPBENCH_PROBE=hang"}, args: []string{"calibrate", "-lock=false", "-rounds", "4", "-benchtime", "40x", "-bench", "Probe", "-run-timeout", "2s", "{fx}"}, codes: []int{1}, bound: 60 * time.Second},
		{name: "calibrate lock through a planted symlink", item: "lock", setup: plant("lock"), args: []string{"calibrate", "-lock-path", "{dir}/lock", "-rounds", "4", "-benchtime", "40x", "-bench", "Probe", "{fx}"}, check: untouched, bound: 60 * time.Second},

		// ort: flags and models it cannot run.
		// A shape is checked against the model: a refusal there is exit 1.
		withCodes(usageORT("ort -shape overflows", "over the limit", "-shape", "input=1x9223372036854775807"), 1, 2),
		withCodes(usageORT("ort -shape zero", "-shape input=0x512", "-shape", "input=0x512"), 1, 2),
		usageORT("ort -shape negative", "-shape", "-shape", "input=-1x512"),
		usageORT("ort -shape garbage", "-shape", "-shape", "input=1xq"),
		usageORT("ort -dims huge", "-dims", "-dims", "a=1e30"),
		usageORT("ort -sessions 100000", "-sessions", "-sessions", "100000"),
		usageORT("ort -sessions -1", "-sessions", "-sessions", "-1"),
		usageORT("ort -arm intra=1000000", "intra", "-arm", "intra=1000000"),
		usageORT("ort -gap -1ms", "-gap", "-gap", "-1ms"),
		usageORT("ort -gap-shape bogus", "-gap-shape", "-gap-shape", "bogus"),
		usageORT("ort -gap-kind bogus", "-gap-kind", "-gap-kind", "bogus"),
		usageORT("ort -jitter 2", "-jitter", "-jitter", "2"),
		usageORT("ort -jitter NaN", "-jitter", "-jitter", "NaN"),
		usageORT("ort -tol NaN", "-tol", "-tol", "NaN"),
		usageORT("ort -cpus 99", "-cpus", "-cpus", "99"),
		usageORT("ort -cpus garbage", "-cpus", "-cpus", "1-"),
		usageORT("ort -cores 0", "-cores", "-cores", "-1"),
		usageORT("ort -slo bogus", "-slo", "-slo", "p101<1ms"),
		usageORT("ort -max-rate -1", "-max-rate", "-max-rate", "-1"),
		usageORT("ort -rounds 1e9", "-rounds", "-rounds", "1e9"),
		usageORT("ort -warmup -5", "-warmup", "-warmup", "-5"),
		usageORT("ort -input bogus fill", "-input", "-input", "x=bogus:fill"),
		usageORT("ort -state bogus", "-state", "-state", "onlyone"),
		usageORT("ort -decode 1000000", "-decode 1000000: at most 8192 tokens", "-decode", "1000000", "-prefill", "1"),
		{name: "ort -child bad JSON", item: "input", args: []string{"ort", "-child", "{bad"}, codes: []int{2}},
		{name: "ort -list /dev/zero", item: "crash", args: []string{"ort", "-list", "/dev/zero"}, codes: []int{1, 2, 3}},
		{name: "ort -list a fifo", item: "hang", setup: mkfifo("m.onnx"), args: []string{"ort", "-list", "{dir}/m.onnx"}, codes: []int{1, 2, 3}},
		{name: "ort -list a directory", item: "input", args: []string{"ort", "-list", "{dir}"}, codes: []int{1, 2, 3}},
		{name: "ort -list a missing file", item: "input", args: []string{"ort", "-list", "{dir}/nope.onnx"}, codes: []int{1, 2, 3}},
		{name: "ort -list a text file", item: "input", setup: file("m.onnx", "not a model\n"), args: []string{"ort", "-list", "{dir}/m.onnx"}, codes: []int{1, 2, 3}},
		{name: "ort -list an empty file", item: "input", setup: file("m.onnx", ""), args: []string{"ort", "-list", "{dir}/m.onnx"}, codes: []int{1, 2, 3}},
		{name: "ort no model", item: "input", args: []string{"ort"}, codes: []int{2}},

		// lock.
		{name: "lock -path through a planted symlink", item: "lock", setup: plant("lock"), args: []string{"lock", "-path", "{dir}/lock", "--", "true"}, check: untouched},
		{name: "lock -path a planted symlink to a missing file", item: "lock", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(filepath.Join(dir, "made"), filepath.Join(dir, "lock")))
		}, args: []string{"lock", "-path", "{dir}/lock", "--", "true"}, check: func(r result, dir string) (string, string) {
			if _, err := os.Lstat(filepath.Join(dir, "made")); err == nil {
				return symlink, "the lock created the symlink's target"
			}
			return ok, ""
		}},
		{name: "lock -path a directory", item: "lock", args: []string{"lock", "-path", "{dir}", "--", "true"}, codes: []int{1, 2}},
		{name: "lock -path /dev/null", item: "lock", args: []string{"lock", "-path", "/dev/null", "--", "true"}, codes: []int{1, 2}},
		{name: "lock holder with escape sequences", item: "lock", setup: file("lock", "\x1b]0;owned\x07 held\n"), args: []string{"lock", "-path", "{dir}/lock", "-timeout", "1ms", "--", "true"}},
		{name: "lock -timeout -1s", item: "input", args: []string{"lock", "-timeout", "-1s", "--", "true"}, codes: []int{2}},
		{name: "lock no command", item: "input", args: []string{"lock", "-path", "{dir}/lock"}, codes: []int{2}},
		{name: "lock a missing command", item: "input", args: []string{"lock", "-path", "{dir}/lock", "--", "{dir}/nope"}, codes: []int{1, 2, 126, 127}},
		{name: "lock passes the exit code", item: "input", args: []string{"lock", "-path", "{dir}/lock", "--", "sh", "-c", "exit 7"}, codes: []int{7}},
		{name: "lock SIGHUP kills the command", item: "orphan", args: []string{"lock", "-path", "{dir}/lock", "--", "sleep", "30"}, signal: syscall.SIGHUP, signalAfter: time.Second},
		{name: "lock SIGKILL kills the command", item: "orphan", args: []string{"lock", "-path", "{dir}/lock", "--", "sleep", "30"}, signal: syscall.SIGKILL, signalAfter: time.Second},

		// plot.
		{name: "plot /dev/zero", item: "crash", args: []string{"plot", "/dev/zero"}, codes: []int{1, 2}},
		{name: "plot a fifo", item: "hang", setup: mkfifo("t.jsonl"), args: []string{"plot", "{dir}/t.jsonl"}, codes: []int{1, 2}},
		{name: "plot a missing file", item: "input", args: []string{"plot", "{dir}/nope.jsonl"}, codes: []int{1, 2}},
		{name: "plot an empty file", item: "input", setup: file("t.jsonl", ""), args: []string{"plot", "{dir}/t.jsonl"}, codes: []int{1, 2}},
		{name: "plot -format bogus", item: "input", args: []string{"plot", "-format", "bogus", "{dir}"}, codes: []int{2}, check: says("-format")},
		{name: "plot through a planted x.svg", item: "symlink", setup: both(fixtureTrace("x.jsonl", "BenchmarkX"), plant("x.svg")), args: []string{"plot", "{dir}/x.jsonl"}, codes: []int{1}, check: untouched},
		{name: "plot a name with control characters", item: "input", setup: fixtureTrace("c.jsonl", "BenchmarkC/\\u001b[31m\\u0000"), args: []string{"plot", "{dir}/c.jsonl"}, codes: []int{0}, check: validSVG("c.svg")},

		// merge (issue 39, item 1).
		{name: "merge /dev/zero", item: "hang", args: []string{"merge", "/dev/zero"}, codes: []int{3}, check: says("/dev/zero is a character device, not a regular file")},
		{name: "merge a fifo", item: "hang", setup: mkfifo("s.txt"), args: []string{"merge", "{dir}/s.txt"}, codes: []int{3}, check: says("s.txt is a fifo, not a regular file")},
		{name: "merge 10^6 result lines", item: "input", setup: file("s.txt", strings.Repeat("BenchmarkX-2 1 1 sec/op\n", 1000000)), args: []string{"merge", "{dir}/s.txt"}, codes: []int{3}, check: says("more than 100000 result lines")},

		// host and spin.
		usage("host -n -1", "-n", "host", "-n", "-1"),
		{name: "host -n 1e9", item: "input", args: []string{"host", "-n", "1000000000"}, codes: []int{1, 2}, check: says("1000000000")},
		usage("host -for -1s", "-for", "host", "-for", "-1s"),
		usage("host -idle abc", "-idle", "host", "-idle", "abc"),
		{name: "spin -cpu 99", item: "input", args: []string{"spin", "-cpu", "99", "-for", "10ms"}, codes: []int{1, 2}, check: says("99")},
		usage("spin -cpu -1", "-cpu", "spin", "-cpu", "-1", "-for", "10ms"),
		usage("spin -cpu 1,2", "-cpu", "spin", "-cpu", "1,2", "-for", "10ms"),
		usage("spin -duty 2", "-duty", "spin", "-duty", "2", "-for", "10ms"),
		usage("spin -duty NaN", "-duty", "spin", "-duty", "NaN", "-for", "10ms"),
		usage("spin -for -1s", "-for", "spin", "-for", "-1s"),
		{name: "unknown command", item: "input", args: []string{"no-such"}, codes: []int{2}},
	}
	return append(ps, historyProbes()...)
}

// fixtureTrace copies the plot test's trace fixture to name in dir, with
// its benchmark renamed to bench (JSON-escaped).
func fixtureTrace(name, bench string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		b, err := os.ReadFile("../../cmd/decodegap/testdata/plot-fixture.jsonl")
		require.NoError(t, err)
		lines := strings.SplitN(string(b), "\n", 2)
		hdr := lines[0]
		i := strings.Index(hdr, `"benchmark":"`)
		require.True(t, i >= 0, "no benchmark in the fixture's header")
		j := strings.Index(hdr[i+13:], `"`)
		hdr = hdr[:i+13] + bench + hdr[i+13+j:]
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(hdr+"\n"+lines[1]), 0o644))
	}
}
