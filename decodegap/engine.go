package decodegap

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/gapbench/gapbench/decodegap/internal/gap"
)

// Measure runs one measurement of n recorded steps as Run does (the same
// modes, gaps, warm-up, steady window, counters, census, sessions and open
// loop) without package testing's benchmark: for a program or a command
// that drives rounds itself. It returns the Result, or the error that
// stopped the measurement (a bad cfg, an open, the parity check, a step),
// naming the field or the iteration as Run's failures do; an error from a
// close comes with the Result. Nothing is logged or printed; a trace is
// written only when cfg.Trace (not $DECODEGAP_TRACE) is set, named after
// the benchmark name "Measure". ctx is checked before the open and before
// the timed loop, which it does not interrupt.
func Measure(ctx context.Context, cfg RunConfig, n int, open Opener) (*Result, error) {
	if open == nil {
		return nil, errors.New("decodegap.Measure: open is nil: pass an Opener (decodegap.Func(step) for a plain step)")
	}
	if n < 1 {
		return nil, fmt.Errorf("decodegap.Measure: n = %d: want >= 1 recorded steps", n)
	}
	s := cfg.settings()
	s.fn, s.sloFrom = "decodegap.Measure", "RunConfig.SLO"
	for _, err := range []error{cfg.validate(), s.validate(n), cfg.limitSessions(n)} {
		if err != nil {
			return nil, fmt.Errorf("decodegap.Measure: %w", err)
		}
	}
	traceName := ""
	if cfg.Trace != "" {
		traceName = "Measure"
	}
	res, done, err := measure(ctx, s, n, open, modeFor(&cfg), nil, traceName)
	if err != nil {
		return nil, fmt.Errorf("decodegap.Measure: %w", err)
	}
	out := res.export()
	if cerr := done(); cerr != nil {
		return out, fmt.Errorf("decodegap.Measure: %w", cerr)
	}
	return out, nil
}

// measure is the measured loop under Run and Measure: host, opens, parity,
// gaps, the timed loop, analysis and trace (to traceDir(s) when traceName
// is not ""). b, when not nil, is the benchmark whose timer brackets the
// loop and whose Fatalf stops it at a failed open, as Run always did; nil
// returns those failures as errors. On success the caller reads the result
// and then calls done, which closes what was opened, releases the host and
// returns the snapshot slots (their errors joined); on an error all of that
// is done already.
func measure(ctx context.Context, s *settings, n int, open Opener, m mode, b *testing.B, traceName string) (res *result, done func() error, err error) {
	var cleanups []func() error
	done = func() error {
		var errs []error
		for i := len(cleanups) - 1; i >= 0; i-- {
			errs = append(errs, cleanups[i]())
		}
		cleanups = nil
		return errors.Join(errs...)
	}
	fail := func(e error) (*result, func() error, error) {
		return nil, func() error { return nil }, errors.Join(e, done())
	}
	// A benchmark stopped by b.Fatalf in an open (runtime.Goexit) still
	// closes what was opened and releases the host.
	finished := false
	defer func() {
		if finished {
			return
		}
		if err := done(); err != nil && b != nil {
			b.Errorf("%s: %v", s.fn, err)
		}
	}()
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	r := newRunner(s, n)
	h, err := openHost(s)
	if err != nil {
		return fail(err)
	}
	r.phases[phaseBefore] = h.tids() // opening the sampler starts no thread
	cleanups = append(cleanups, func() error {
		if err := h.close(); err != nil {
			return fmt.Errorf("closing the host sampler or releasing %s.Budget's confinement: %w", s.typ, err)
		}
		return nil
	})
	r.host, r.cr.sampler, r.cr.kit = h, h.sampler, h.kit

	cl := &closers{}
	cleanups = append(cleanups, cl.closeAll)
	m.open(b, r, cl, open)
	if cl.err != nil {
		return fail(cl.err)
	}
	r.openTIDs = openedTIDs(r.phases[phaseBefore], h.tids()) // before spareThreads: those are the harness's
	if s.parity != nil {
		if err := s.parity(); err != nil {
			return fail(fmt.Errorf("parity check failed (%s.Parity), nothing was timed: %w", s.typ, err))
		}
	}
	runtime.LockOSThread()
	cleanups = append(cleanups, func() error { runtime.UnlockOSThread(); return nil })
	r.overheadNs = loopOverhead(s)
	if err := r.waiter.Begin(); err != nil {
		return fail(fmt.Errorf("preparing gaps (%s.Gap.Kind = %v): %w", s.typ, s.gap.Kind, err))
	}
	cleanups = append(cleanups, func() error { r.waiter.End(); return nil })
	// After the mode's open (sessions start their threads there), so that
	// the host sampler has seen every thread before the timed loop.
	spareOnce.Do(func() { spareThreads(2) })
	r.phases[phaseSetup] = h.tids()
	r.cr.threads = len(r.phases[phaseSetup])
	r.snaps = r.cr.prepare(snapSlots(r.n, r.window))
	// The slots go back to the kit when the caller is done, or at a failure.
	cleanups = append(cleanups, func() error { r.cr.recycle(); return nil })
	if err := ctx.Err(); err != nil {
		return fail(err)
	}

	if b != nil {
		b.ResetTimer()
	}
	r.wallStart, r.loopStartNs = wallNow(), gap.Now()
	if where, err := m.loop(r); err != nil {
		return fail(fmt.Errorf("%s: %w", where, err))
	}
	if b != nil {
		b.StopTimer()
	}
	res = m.analyze(r)
	if dir := traceDir(s); dir != "" && traceName != "" {
		res.tracePaths, _ = r.writeTrace(dir, traceName, res) // a failure is res.traceErr: a warning
	}
	finished = true
	return res, done, nil
}
