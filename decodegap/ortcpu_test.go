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

// cpuOver returns the process CPU burnt over the next half second, with a
// spinning goroutine when spin is set.
func cpuOver(tb testing.TB, spin bool) time.Duration {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for spin && !stop.Load() { // spin: that is the point
		}
	}()
	before := processCPU(tb)
	time.Sleep(500 * time.Millisecond)
	burnt := processCPU(tb) - before
	stop.Store(true)
	<-done
	return burnt
}

// BenchmarkORTChild is run in a child process by
// TestCompareWithSpinningORTLeavesNoCPUBurning: Compare with two ONNX
// Runtime arms whose intra-op pools spin; then the process's CPU over an
// idle half second after Compare returned, and, as the control, over a half
// second with one spinning thread.
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
	idle := cpuOver(b, false)
	spinning := cpuOver(b, true)
	fmt.Printf("idle-cpu-after-compare %d ns, with one spinner %d ns\n", idle, spinning)
}

// TestCompareWithSpinningORTLeavesNoCPUBurning: Compare closes every arm's
// instance before it returns, so no spinning pool thread burns CPU after.
// The limit is relative to what one spinning thread gets in the same
// process just after, so that a busy host, which gives every thread less,
// does not hide a leftover spinner.
func TestCompareWithSpinningORTLeavesNoCPUBurning(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ONNX Runtime in a child process")
	}
	ort.Require(t)
	out, err := runChildBench(t, "^BenchmarkORTChild$", "ort-spin", "-test.benchtime=64x", "-test.count=2")
	require.NoError(t, err, out)
	m := regexp.MustCompile(`idle-cpu-after-compare (\d+) ns, with one spinner (\d+) ns`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	idle, _ := strconv.ParseInt(m[1], 10, 64)
	spinning, _ := strconv.ParseInt(m[2], 10, 64)
	require.Positive(t, spinning)
	assert.Less(t, 4*idle, spinning, "CPU burnt in an idle half second after Compare returned (%v) against one spinner's (%v)", time.Duration(idle), time.Duration(spinning))
}

// TestIdleCPUMeasureSeesASpinner checks the instrument the test above
// relies on: one spinning thread burns several times an idle process's CPU
// over the same half second, however busy the host.
func TestIdleCPUMeasureSeesASpinner(t *testing.T) {
	idle := cpuOver(t, false)
	spinning := cpuOver(t, true)
	assert.Less(t, 4*idle, spinning, "idle %v, spinning %v", idle, spinning)
}
