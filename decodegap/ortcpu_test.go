package decodegap

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gapbench/gapbench/decodegap/ort"
)

// processCPU is this process's CPU time so far, all threads.
func processCPU(tb testing.TB) time.Duration {
	var ts unix.Timespec
	require.NoError(tb, unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts))
	return time.Duration(ts.Nano())
}

// BenchmarkORTChild is run in a child process by TestCompareWithSpinningORTLeavesNoCPUBurning:
// Compare with two ONNX Runtime arms whose intra-op pools spin, then the
// process's CPU over an idle half second after Compare returned.
func BenchmarkORTChild(b *testing.B) {
	if os.Getenv(childEnv) != "ort-spin" {
		b.Skip("run by TestCompareWithSpinningORTLeavesNoCPUBurning in a child process")
	}
	ort.Require(b)
	open := func(threads int) Opener {
		return func() (Step, func() error, error) {
			v, err := ort.OpenVAD(ort.VADConfig{Options: ort.Options{IntraOpThreads: threads, Spinning: ort.SpinOn}})
			if err != nil {
				return nil, nil, err
			}
			return v.Step, v.Close, nil
		}
	}
	Compare(b, CompareConfig{Window: 8, Gap: Gap{Mean: 200 * time.Microsecond}},
		Arm{Name: "intra2", Open: open(2)}, Arm{Name: "intra1", Open: open(1)})
	before := processCPU(b)
	time.Sleep(500 * time.Millisecond)
	fmt.Printf("idle-cpu-after-compare %d ns\n", processCPU(b)-before)
}

// TestCompareWithSpinningORTLeavesNoCPUBurning: Compare closes every arm's
// instance before it returns, so no spinning pool thread burns CPU after.
func TestCompareWithSpinningORTLeavesNoCPUBurning(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ONNX Runtime in a child process")
	}
	ort.Require(t)
	out, err := runChildBench(t, "^BenchmarkORTChild$", "ort-spin", "-test.benchtime=64x", "-test.count=2")
	require.NoError(t, err, out)
	m := regexp.MustCompile(`idle-cpu-after-compare (\d+) ns`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	ns, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	// A spinning pool thread left open would burn most of the half second.
	assert.Less(t, ns, int64(idleCPULimit), "CPU burnt in an idle half second after Compare returned")
}

// idleCPULimit is the CPU an idle half second may take: 10% of one core,
// room for the runtime's own work.
const idleCPULimit = 50 * time.Millisecond

// TestIdleCPUMeasureSeesASpinner checks the instrument the test above
// relies on: a thread left spinning shows in processCPU over half a second.
func TestIdleCPUMeasureSeesASpinner(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() { // spin: that is the point
		}
	}()
	before := processCPU(t)
	time.Sleep(500 * time.Millisecond)
	burnt := processCPU(t) - before
	stop.Store(true)
	<-done
	assert.Greater(t, burnt, idleCPULimit, "a spinning thread must show above the limit, even on a busy host")
}
