package decodegap

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gapbench/gapbench/decodegap/internal/slo"
	"github.com/gapbench/gapbench/decodegap/internal/tail"
)

// Rates bounds SearchRate's search. The zero Rates is not valid: Start
// must be set.
type Rates struct {
	// Start is the first arrival rate probed, per second; > 0.
	Start float64
	// Max caps the rates probed; 0 means no cap.
	Max float64
	// Tolerance is the relative width at which the search stops: the rate
	// found is within a factor 1+Tolerance of the highest passing one. 0
	// means 0.02.
	Tolerance float64
	// MaxProbes bounds the probes; 0 means 30.
	MaxProbes int
	// ProbeTime caps each probe's length: a probe whose -benchtime=Nx
	// steps (and the warm-up) would take longer than ProbeTime at its
	// arrival rate is not run, and the search stops there, saying so; a
	// duration -benchtime=D over ProbeTime stops it at once. 0 means
	// DefaultProbeTime. A probe whose steps are slower than their arrivals
	// lasts as long as its steps take back to back, as any Run does.
	ProbeTime time.Duration
}

// DefaultProbeTime is Rates.ProbeTime's default: the longest a SearchRate
// probe may last (at -benchtime=2000x, rates below 100/s are not probed).
const DefaultProbeTime = 20 * time.Second

// SearchRate finds the highest arrival rate at which the step meets
// cfg.SLO, as MLPerf LoadGen's Server scenario does: it brackets the rate by
// doubling or halving from rates.Start, then bisects, each probe an
// open-loop Run (cfg with Gap.Open set and Gap.Mean = 1s/rate) as a
// sub-benchmark "rate=R/s" of b, so testing prints every probe as a
// benchfmt line. A probe passes only when the objective's bound shows it met
// and its queue did not grow through the probe; an undecided probe (too few
// steps: raise -benchtime) counts as not passing. Give a duration
// -benchtime (-benchtime=5s): each probe then lasts about that long at any
// rate, long enough for a queue above capacity to show, where a fixed
// -benchtime=Nx probe at a high rate lasts milliseconds.
// It returns the rate found (0 when none passed) and prints the search, one
// indented line per probe, after the sub-benchmarks' lines. Left zero,
// cfg.SLO is taken from $DECODEGAP_SLO (EnvSLO), as in Run.
//
// The search ends early, with the reason printed, when a probe's service
// times alone miss the objective (their bound is over cfg.SLO.Limit:
// response times include them, so no lower rate can pass), or when the next
// probe would last longer than rates.ProbeTime. Every rate is probed with
// Gap.Mean of at least 1 ns; arrivals the loop cannot keep up with end the
// probe as overloaded (MaxQueue), never a hang.
func SearchRate(b *testing.B, cfg RunConfig, open Opener, rates Rates) float64 {
	b.Helper()
	const fn = "decodegap.SearchRate"
	from, err := resolveSLO(&cfg)
	if err != nil {
		b.Fatalf("%s: %v", fn, err)
	}
	if !cfg.SLO.on() {
		b.Fatalf("%s: RunConfig.SLO.Limit is 0: set the objective to search for (e.g. SLO{Percentile: 99, Limit: 5 * time.Millisecond}, or $%s=p99=5ms)", fn, EnvSLO)
	}
	if open == nil {
		b.Fatalf("%s: open is nil: pass an Opener (decodegap.Func(step) for a plain step)", fn)
	}
	cfg.Gap.Open = true
	capT := rates.ProbeTime
	switch {
	case capT < 0:
		b.Fatalf("%s: Rates.ProbeTime = %v: want > 0, or 0 for %v", fn, capT, DefaultProbeTime)
	case capT == 0:
		capT = DefaultProbeTime
	}
	p, err := readPlan()
	if err != nil {
		b.Fatalf("%s: %v", fn, err)
	}
	search := slo.Search{Start: rates.Start, Max: rates.Max, Tolerance: rates.Tolerance, MaxProbes: rates.MaxProbes}
	var tooLong probeLength
	res, err := search.Run(func(rate float64) (tail.Judgement, error) {
		c := cfg
		c.Gap.Mean = time.Duration(math.Round(float64(time.Second) / rate))
		if c.Gap.Mean <= 0 {
			return tail.Judgement{}, fmt.Errorf("rate %.4g/s is above one arrival per ns", rate)
		}
		if err := c.validate(); err != nil {
			return tail.Judgement{}, err
		}
		// Before the sub-benchmark: a skipped one would print a result
		// line of 0 iterations.
		if need := p.probeTime(c.Warmup, c.Gap.Mean); need > capT {
			tooLong = probeLength{n: p.iters, need: need, limit: capT}
			return tail.Judgement{}, &slo.Stop{Reason: slo.ProbeTooLong}
		}
		var j tail.Judgement
		var stop *slo.Stop
		ok := b.Run("rate="+fmtRate(rate)+"/s", func(b *testing.B) {
			s := c.settings()
			s.fn, s.sloFrom = fn, from
			// testing's first calls of a duration -benchtime are short:
			// windows shrink to fit them (they bound no tail anyway).
			if b.N < 4 {
				j = tail.Judgement{N: b.N}
				return
			}
			if w := s.windowSize(); b.N < 2*w {
				s.window = max(4, b.N/2)
			}
			if err := s.validate(b.N); err != nil {
				b.Fatalf("%s: %v", fn, err)
			}
			if err := c.limitSessions(b.N); err != nil {
				b.Fatalf("%s: %v", fn, err)
			}
			r := runMode(b, s, open, modeFor(&c))
			j = r.slo.j
			if r.sloService.on && r.sloService.j.Verdict == tail.Fail {
				stop = &slo.Stop{Reason: slo.ServiceMisses, Judgement: j}
				tooLong.service = r.sloService.j
			}
		})
		if !ok {
			return tail.Judgement{}, fmt.Errorf("the probe at %.4g/s failed", rate)
		}
		if stop != nil {
			return j, stop
		}
		return j, nil
	})
	if err != nil {
		b.Fatalf("%s: %v", fn, err)
	}
	writeSearch(summaryOut, b.Name(), cfg.SLO, res, tooLong)
	if len(res.Steps) == 0 {
		// Without a sub-benchmark testing would time this function as a
		// leaf and print a result line of its own: fail instead.
		b.Fatalf("%s: no rate was probed: the first probe, %s/s, would take %v, over Rates.ProbeTime (%v): raise Rates.Start or Rates.ProbeTime, or lower -benchtime",
			fn, fmtRate(res.StopRate), tooLong.need.Round(time.Millisecond), tooLong.limit)
	}
	return res.Rate
}

// probeTime is how long a probe of -benchtime's steps (and warm-up) lasts
// at arrivals every interval: N of -benchtime=Nx steps, or about the
// duration of -benchtime=D (testing sizes b.N to fill it).
func (p plan) probeTime(warmup int, interval time.Duration) time.Duration {
	if p.iters == 0 {
		return p.duration
	}
	return time.Duration(float64(p.iters+warmup) * float64(interval))
}

// probeLength is why SearchRate stopped early: the probe that would have
// taken need for n steps, over limit (Rates.ProbeTime); or service, the
// service times' judgement that missed the objective alone.
type probeLength struct {
	n           int
	need, limit time.Duration
	service     tail.Judgement
}

// EnvSLO is the environment variable that sets the latency objective of
// Run and SearchRate in any test binary when RunConfig.SLO is zero
// (RunConfig.SLO set in code wins), in ParseSLO's syntax:
// DECODEGAP_SLO=p99=5ms go test -bench . An invalid value fails the
// benchmark, naming the variable.
const EnvSLO = "DECODEGAP_SLO"

// sloExample is the syntax shown in ParseSLO's errors.
const sloExample = "write pPERCENTILE=LIMIT[@CONFIDENCE], e.g. p99=5ms, p99.9=20ms@90% or p50=800us@0.99"

// ParseSLO parses a latency objective written as pPERCENTILE=LIMIT with an
// optional @CONFIDENCE: "p99=5ms", "p99.9=20ms", "p50=800us",
// "p99=5ms@90%" or "p99=5ms@0.9". LIMIT is a time.ParseDuration duration
// > 0; the percentile is in (0, 100); the confidence, a percentage or a
// fraction in (0, 1), is 0 (meaning 0.95) when left out. The error names
// the bad part and shows an example. SLO.String writes the same syntax.
func ParseSLO(s string) (SLO, error) {
	in := strings.TrimSpace(s)
	bad := func(format string, a ...any) (SLO, error) {
		return SLO{}, fmt.Errorf("SLO %q: %s: %s", s, fmt.Sprintf(format, a...), sloExample)
	}
	if in == "" {
		return bad("empty")
	}
	obj, conf, hasConf := strings.Cut(in, "@")
	pct, limit, ok := strings.Cut(obj, "=")
	if !ok {
		return bad("no '=' between the percentile and the limit")
	}
	var o SLO
	num, isP := strings.CutPrefix(strings.TrimSpace(pct), "p")
	p, err := strconv.ParseFloat(num, 64)
	if !isP || err != nil || !(p > 0 && p < 100) {
		return bad("percentile %q is not p and a number in (0, 100)", pct)
	}
	o.Percentile = p
	d, err := time.ParseDuration(strings.TrimSpace(limit))
	if err != nil || d <= 0 {
		return bad("limit %q is not a duration > 0 with its unit", limit)
	}
	o.Limit = d
	if hasConf {
		c := strings.TrimSpace(conf)
		scale := 1.0
		if n, isPct := strings.CutSuffix(c, "%"); isPct {
			c, scale = n, 100
		}
		v, err := strconv.ParseFloat(c, 64)
		if v /= scale; err != nil || !(v > 0 && v < 1) {
			return bad("confidence %q is not a percentage (90%%) or a fraction (0.9) in (0, 1)", conf)
		}
		o.Confidence = v
	}
	return o, nil
}

// String writes o in ParseSLO's syntax ("p99=5ms", "p99.9=20ms@90%"); the
// zero SLO is "off".
func (o SLO) String() string {
	if o == (SLO{}) {
		return "off"
	}
	s := "p" + strconv.FormatFloat(o.Percentile, 'g', -1, 64) + "=" + o.Limit.String()
	if o.Confidence != 0 {
		s += "@" + strconv.FormatFloat(100*o.Confidence, 'g', 6, 64) + "%"
	}
	return s
}

// resolveSLO fills cfg.SLO from $DECODEGAP_SLO when the config leaves it
// zero, and returns what the objective came from, for the log.
func resolveSLO(cfg *RunConfig) (from string, err error) {
	if cfg.SLO != (SLO{}) {
		return "RunConfig.SLO", nil
	}
	v := os.Getenv(EnvSLO)
	if v == "" {
		return "RunConfig.SLO", nil
	}
	o, err := ParseSLO(v)
	if err != nil {
		return "", fmt.Errorf("$%s: %w", EnvSLO, err)
	}
	cfg.SLO = o
	return "$" + EnvSLO, nil
}
