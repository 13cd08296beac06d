// Package slo searches for the highest arrival rate at which a latency
// objective holds, in the manner of MLPerf LoadGen's Server scenario:
// bracket the rate by doubling or halving, then bisect, every probe long
// enough for its bound and judged from the bound (package tail), never the
// point estimate.
//
// The search knows nothing of steps or clocks: the caller's Probe runs the
// workload at a rate, keeps what it measured, and returns the judgement.
package slo

import (
	"errors"
	"fmt"
	"math"

	"github.com/gapbench/gapbench/decodegap/internal/tail"
)

// Probe runs the workload at rate arrivals per second and judges the
// objective on what it measured. An error stops the search.
type Probe func(rate float64) (tail.Judgement, error)

// Search configures a search. The zero Search is not valid: Start must be set.
type Search struct {
	// Start is the first rate probed, in arrivals per second; > 0.
	Start float64
	// Max caps the rates probed; 0 means no cap. A pass at Max ends the
	// search with Capped set.
	Max float64
	// Tolerance is the relative width at which bisection stops: the answer
	// is within a factor 1+Tolerance of the boundary. 0 means 0.02.
	Tolerance float64
	// MaxProbes bounds the number of probes; 0 means 30.
	MaxProbes int
}

// StopReason says why a search ended before its bracket closed.
type StopReason int

const (
	// NotStopped: the search ran its course (the zero value).
	NotStopped StopReason = iota
	// ServiceMisses: the probe's service times alone miss the objective
	// (their bound is over the limit): response times include them, so no
	// arrival rate can pass.
	ServiceMisses
	// ProbeTooLong: the next probe would run past the caller's time cap.
	ProbeTooLong
)

// String returns "no", "service-misses" or "probe-too-long".
func (r StopReason) String() string {
	switch r {
	case NotStopped:
		return "no"
	case ServiceMisses:
		return "service-misses"
	case ProbeTooLong:
		return "probe-too-long"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Stop is the error a Probe returns to end the search with a reason, not
// a failure: Run returns its Result with Stopped and StopRate set and a nil
// error. With ServiceMisses the probe ran, and Judgement (the response
// times' verdict) is kept as its step; with ProbeTooLong it did not run.
type Stop struct {
	Reason    StopReason
	Judgement tail.Judgement
}

func (s *Stop) Error() string { return "slo: search stopped: " + s.Reason.String() }

// errStopped ends Run's loops after a Stop.
var errStopped = errors.New("stopped")

// Step is one probe of a search, in the order run.
type Step struct {
	Rate      float64
	Judgement tail.Judgement
}

// Result is a finished search.
type Result struct {
	// Rate is the highest probed rate that passed; 0 when none did.
	Rate float64
	// Ceiling is the lowest probed rate that did not pass (failed or
	// undecided); +Inf when none was found below Max.
	Ceiling float64
	// Capped reports that Max itself passed.
	Capped bool
	// Exhausted reports that MaxProbes ran out before the bracket was
	// within Tolerance.
	Exhausted bool
	// Undecided counts probes whose bound straddled the limit; the search
	// treats them as not passing (the conservative side) and lists them.
	Undecided int
	// Steps lists every probe in the order run.
	Steps []Step
	// Stopped is why the search ended early, if it did, at the probe of
	// rate StopRate (see Stop).
	Stopped  StopReason
	StopRate float64
}

// Run searches with probe. An undecided probe counts as not passing: a rate
// is only reported when its bound showed the objective met. A probe that
// returns a *Stop ends the search there, without an error.
func (s Search) Run(probe Probe) (Result, error) {
	res, err := s.run(probe)
	if errors.Is(err, errStopped) {
		return res, nil
	}
	return res, err
}

func (s Search) run(probe Probe) (Result, error) {
	if !(s.Start > 0) || math.IsInf(s.Start, 0) {
		return Result{}, fmt.Errorf("slo: Search.Start = %v: want a rate > 0", s.Start)
	}
	if s.Max < 0 || math.IsNaN(s.Max) || (s.Max > 0 && s.Max < s.Start) {
		return Result{}, fmt.Errorf("slo: Search.Max = %v: want 0 (no cap) or ≥ Start (%v)", s.Max, s.Start)
	}
	if s.Tolerance == 0 {
		s.Tolerance = 0.02
	}
	if !(s.Tolerance > 0) {
		return Result{}, fmt.Errorf("slo: Search.Tolerance = %v: want > 0", s.Tolerance)
	}
	if s.MaxProbes == 0 {
		s.MaxProbes = 30
	}
	if s.MaxProbes < 2 {
		return Result{}, errors.New("slo: Search.MaxProbes must be ≥ 2 to bracket a rate")
	}
	res := Result{Ceiling: math.Inf(1)}
	try := func(rate float64) (bool, error) {
		j, err := probe(rate)
		var stop *Stop
		if errors.As(err, &stop) {
			res.Stopped, res.StopRate = stop.Reason, rate
			if stop.Reason == ServiceMisses {
				res.Steps = append(res.Steps, Step{Rate: rate, Judgement: stop.Judgement})
				res.Ceiling = math.Min(res.Ceiling, rate)
			}
			return false, errStopped
		}
		if err != nil {
			return false, fmt.Errorf("slo: probe at %.4g/s: %w", rate, err)
		}
		res.Steps = append(res.Steps, Step{Rate: rate, Judgement: j})
		if j.Verdict == tail.Undecided {
			res.Undecided++
		}
		pass := j.Verdict == tail.Pass
		if pass {
			res.Rate = math.Max(res.Rate, rate)
		} else {
			res.Ceiling = math.Min(res.Ceiling, rate)
		}
		return pass, nil
	}
	left := func() bool { return len(res.Steps) < s.MaxProbes }

	// Bracket.
	pass, err := try(s.Start)
	if err != nil {
		return res, err
	}
	for pass && left() {
		next := 2 * res.Rate
		if s.Max > 0 && next >= s.Max {
			next = s.Max
		}
		if next == res.Rate { // at the cap
			res.Capped = true
			return res, nil
		}
		if pass, err = try(next); err != nil {
			return res, err
		}
		if pass && next == s.Max {
			res.Capped = true
			return res, nil
		}
	}
	for !pass && left() && res.Rate == 0 {
		if pass, err = try(res.Ceiling / 2); err != nil {
			return res, err
		}
	}
	// Bisect between the highest pass and the lowest non-pass.
	for res.Rate > 0 && res.Ceiling/res.Rate > 1+s.Tolerance {
		if !left() {
			res.Exhausted = true
			return res, nil
		}
		if _, err = try(math.Sqrt(res.Rate * res.Ceiling)); err != nil {
			return res, err
		}
	}
	if res.Rate == 0 {
		res.Exhausted = true
	}
	return res, nil
}
