package traceplot

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the test binary when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
