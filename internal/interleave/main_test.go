package interleave

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gapbench/gapbench/internal/runner"
)

// TestMain doubles as a fake benchmark binary: with NULLBAND_CHILD=1 in its
// environment it prints Go benchmark format instead of running tests, as
// its arguments say:
//
//	-value=V  print BenchmarkFake with V ns/op (V += round jitter -jitter=J)
//	-fail     print to stderr and exit 3
//	-none     print nothing
//	-sleep=D  sleep D first
func TestMain(m *testing.M) {
	if os.Getenv("NULLBAND_CHILD") == "1" {
		os.Exit(child(os.Args[1:]))
	}
	// No run may leave a goroutine behind (an output reader, a waiter).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(runner.SpawnerFunc))
}

func child(args []string) int {
	value := 1000.0
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "-value":
			value, _ = strconv.ParseFloat(v, 64)
		case "-fail":
			fmt.Println("--- FAIL: BenchmarkFake")
			fmt.Fprintln(os.Stderr, "child: step 17 failed: boom")
			return 3
		case "-none":
			fmt.Println("PASS")
			return 0
		case "-sleep":
			d, _ := time.ParseDuration(v)
			time.Sleep(d)
		}
	}
	fmt.Println("goos: linux")
	fmt.Println("pkg: example.com/fake")
	fmt.Printf("BenchmarkFake-2   \t    1000\t%g ns/op\t%g B/op\n", value, 64.0)
	fmt.Println("PASS")
	return 0
}
