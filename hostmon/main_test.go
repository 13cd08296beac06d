package hostmon

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// init keeps the main goroutine on the main thread, so that no test
// goroutine runs there: Go never ends the main thread, and tests that lock a
// goroutine to a thread and let it exit expect the thread to end.
func init() { runtime.LockOSThread() }

// TestMain lets a test re-execute the test binary as a helper process: with
// HOSTMON_TEST_HOLD_LOCK=path it takes the host lock, prints "locked" and
// waits to be killed; with HOSTMON_TEST_SPIN=cpu it spins on that CPU at
// 100% until killed (at most 30 s).
func TestMain(m *testing.M) {
	if path := os.Getenv("HOSTMON_TEST_HOLD_LOCK"); path != "" {
		l, err := Lock(context.Background(), path, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		l.Unlock()
		os.Exit(0)
	}
	if cpu := os.Getenv("HOSTMON_TEST_SPIN"); cpu != "" {
		n, _ := strconv.Atoi(cpu)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := Spin(ctx, n, 100); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("spinning")
		<-ctx.Done()
		os.Exit(0)
	}
	// No test may leave a goroutine behind (a sampler, a spinner, a lock
	// waiter).
	goleak.VerifyTestMain(m)
}
