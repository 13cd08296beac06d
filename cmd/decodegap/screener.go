package main

import (
	"fmt"
	"io"
	"time"

	"github.com/gapbench/gapbench/hostmon"
	"github.com/gapbench/gapbench/internal/hostwords"
	"github.com/gapbench/gapbench/internal/interleave"
)

// childAwareScreener screens each run with hostmon's Sampler, leaving the
// child's own CPU time out of foreign busy (the Sampler subtracts only this
// process's time, and the child is a separate process).
type childAwareScreener struct {
	sampler *hostmon.Sampler
}

// hostFS returns the /proc and /sys trees the screen reads; tests replace it.
var hostFS = hostmon.DefaultFS

// newScreener returns the host's screener, or nil and why there is none.
func newScreener() (interleave.Screener, string) {
	fs, err := hostFS()
	if err != nil {
		return nil, err.Error()
	}
	s, err := hostmon.NewSampler(fs, nil, nil)
	if err != nil {
		return nil, err.Error()
	}
	return childAwareScreener{s}, ""
}

// Begin takes a snapshot; the returned function takes another and screens
// the span between them.
func (c childAwareScreener) Begin() func(time.Duration) interleave.ScreenResult {
	a := c.sampler.Snapshot()
	return func(childCPU time.Duration) interleave.ScreenResult {
		sp := hostmon.Between(a, c.sampler.Snapshot())
		sp = withoutChild(sp, childCPU)
		return screenResult(sp, sp.Screen(hostmon.Thresholds{}))
	}
}

// withoutChild subtracts the child's CPU time from the span's foreign busy.
func withoutChild(sp hostmon.Span, childCPU time.Duration) hostmon.Span {
	if !sp.ForeignBusyPct.Available() || sp.Seconds <= 0 || len(sp.CPUs) == 0 {
		return sp
	}
	childPct := 100 * childCPU.Seconds() / (sp.Seconds * float64(len(sp.CPUs)))
	sp.ForeignBusyPct.Value = max(0, sp.ForeignBusyPct.Value-childPct)
	return sp
}

// screenResult turns hostmon's verdict into the one-word screen: value and
// its detail line.
func screenResult(sp hostmon.Span, v hostmon.Verdict) interleave.ScreenResult {
	detail := fmt.Sprintf("%s (CPUs %s over %.2fs)", hostwords.Verdict(v), sp.CPUs, sp.Seconds)
	switch {
	case v.Contended:
		return interleave.ScreenResult{Verdict: "contended", Detail: detail}
	case len(v.Unscreened) > 0:
		return interleave.ScreenResult{Verdict: "clean", Detail: detail}
	}
	return interleave.ScreenResult{Verdict: "clean"}
}

// screenerFor returns the screener a command's runner uses, or none and
// why (the runner's NoScreen): -screen=false, or a host that cannot be
// screened, which is said on stderr.
func screenerFor(command string, on bool, stderr io.Writer) (interleave.Screener, string) {
	if !on {
		return nil, "screening turned off (-screen=false)"
	}
	sc, why := newScreener()
	if sc == nil {
		fmt.Fprintf(stderr, "decodegap %s: screen: unavailable: %s\n", command, why)
		return nil, why
	}
	return sc, ""
}
