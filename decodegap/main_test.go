package decodegap

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test, and no benchmark run in a child process,
// leaves a goroutine behind (a session worker, a sampler, a timer).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
