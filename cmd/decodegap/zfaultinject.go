//go:build faultinject

// This file is built only with -tags faultinject, by the fault suite
// (chaos_test.go), never into the command users run. It makes 'decodegap
// ort -child' (a block) misbehave as GAPBENCH_FAULT says, so that the suite
// can test ort's parent with real children. Its name sorts after ort.go so
// that its init runs after ort.go's has registered the command.

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func init() {
	real := commands["ort"]
	commands["ort"] = command{summary: real.summary, run: func(args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 && args[0] == "-child" {
			injectFault("ort", stdout)
		}
		return real.run(args, stdout, stderr)
	}}
}

// injectFault counts this run in GAPBENCH_FAULT_DIR/count.SIDE, writes its pid
// to pid.SIDE.N and does what GAPBENCH_FAULT ("N=kind,...", "*=kind" for every
// run) says for run N: crash (panic), hang, bigline (a 1 MiB line first),
// exit (status 3). The fixture benchmarks of chaos_test.go do the same.
func injectFault(side string, stdout io.Writer) {
	dir := os.Getenv("GAPBENCH_FAULT_DIR")
	if dir == "" {
		return
	}
	cf := filepath.Join(dir, "count."+side)
	b, _ := os.ReadFile(cf)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	os.WriteFile(cf, []byte(strconv.Itoa(n)), 0o644)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("pid.%s.%d", side, n)), []byte(strconv.Itoa(os.Getpid())), 0o644)
	kind := ""
	for _, f := range strings.Split(os.Getenv("GAPBENCH_FAULT"), ",") {
		if k, v, _ := strings.Cut(f, "="); k == strconv.Itoa(n) || k == "*" {
			kind = v
		}
	}
	switch kind {
	case "crash":
		panic(fmt.Sprintf("fault: crash in run %d", n))
	case "hang":
		time.Sleep(time.Hour)
	case "bigline":
		fmt.Fprintln(stdout, "log: "+strings.Repeat("x", 1<<20))
	case "exit":
		os.Exit(3)
	}
}
