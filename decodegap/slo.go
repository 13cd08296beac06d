package decodegap

import (
	"fmt"
	"math"
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
}

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
// indented line per probe, after the sub-benchmarks' lines.
func SearchRate(b *testing.B, cfg RunConfig, open Opener, rates Rates) float64 {
	b.Helper()
	const fn = "decodegap.SearchRate"
	if !cfg.SLO.on() {
		b.Fatalf("%s: RunConfig.SLO.Limit is 0: set the objective to search for (e.g. SLO{Percentile: 99, Limit: 5 * time.Millisecond})", fn)
	}
	if open == nil {
		b.Fatalf("%s: open is nil: pass an Opener (decodegap.Func(step) for a plain step)", fn)
	}
	cfg.Gap.Open = true
	search := slo.Search{Start: rates.Start, Max: rates.Max, Tolerance: rates.Tolerance, MaxProbes: rates.MaxProbes}
	res, err := search.Run(func(rate float64) (tail.Judgement, error) {
		c := cfg
		c.Gap.Mean = time.Duration(math.Round(float64(time.Second) / rate))
		if c.Gap.Mean <= 0 {
			return tail.Judgement{}, fmt.Errorf("rate %.4g/s is above one arrival per ns", rate)
		}
		if err := c.validate(); err != nil {
			return tail.Judgement{}, err
		}
		var j tail.Judgement
		ok := b.Run("rate="+fmtRate(rate)+"/s", func(b *testing.B) {
			s := c.settings()
			s.fn = fn
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
			j = runMode(b, s, open, modeFor(&c)).slo.j
		})
		if !ok {
			return tail.Judgement{}, fmt.Errorf("the probe at %.4g/s failed", rate)
		}
		return j, nil
	})
	if err != nil {
		b.Fatalf("%s: %v", fn, err)
	}
	writeSearch(summaryOut, b.Name(), cfg.SLO, res)
	return res.Rate
}
