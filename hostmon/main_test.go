package hostmon

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain lets a test re-execute the test binary as a helper process: with
// HOSTMON_TEST_HOLD_LOCK=path it takes the host lock, prints "locked" and
// waits to be killed.
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
	os.Exit(m.Run())
}
