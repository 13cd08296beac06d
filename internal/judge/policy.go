package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gapbench/gapbench/nullband"
)

// DefaultUnits are the units every route judges unless told otherwise,
// those present, in this order: the mean step (sec/op: decodegap's ns/op,
// or testing's own), the median step (p50-sec/op), the CPU time per step
// (cpu-sec/op: decodegap's cpu-ns/op, or pr's process CPU time per op),
// and in an open loop the median and 99th percentile response times.
var DefaultUnits = []string{"sec/op", "p50-sec/op", "cpu-sec/op", "resp-p50-sec/op", "resp-p99-sec/op"}

// DefaultUnitList is DefaultUnits as a -unit flag's value.
var DefaultUnitList = strings.Join(DefaultUnits, ",")

// Weight is a unit's weight in its family under weighted Holm: a median
// step (a unit starting "p50-"), the figure users quote, weighs 2, every
// other unit 1. It is the one weighting of every route.
func Weight(unit string) float64 {
	if strings.HasPrefix(unit, "p50-") {
		return 2
	}
	return 1
}

// Policy is how a table is judged. The zero Policy is valid for a table
// whose arms are named "base" and "null": DefaultUnits, nullband's
// default options (95%, δ = 2%, fixed sample).
type Policy struct {
	// Base and Null name the base arm A and the null arm A' (a second
	// instance of A). Empty means "base" and "null".
	Base, Null string
	// Units are the tidied units judged, those present, in this order;
	// nil means DefaultUnits.
	Units []string
	// Options are nullband's options. Options.Confidence is the family's:
	// every candidate row of a table (every benchmark, candidate arm and
	// unit) is one family under weighted Holm (Weight), so that a run in
	// which nothing changed calls any row faster or slower at most
	// 1 − Confidence of the time. MaxRounds > 0 is sequential mode.
	Options nullband.Options
}

func (p Policy) base() string {
	if p.Base == "" {
		return "base"
	}
	return p.Base
}

func (p Policy) null() string {
	if p.Null == "" {
		return "null"
	}
	return p.Null
}

func (p Policy) units() []string {
	if p.Units == nil {
		return DefaultUnits
	}
	return p.Units
}

// ParseUnits splits a -unit flag's comma-separated list; empty items are
// dropped. An empty list is an error: judge at least one unit.
func ParseUnits(s string) ([]string, error) {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-unit %q: name at least one unit, e.g. %s", s, DefaultUnitList)
	}
	return out, nil
}

// ParseDelta parses an equivalence margin, the one syntax of every
// route's -delta: a percentage ("2%", "0.5%") or a fraction ("0.02"),
// in (0, 1) as a fraction.
func ParseDelta(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("%q: write a percentage (2%%) or a fraction (0.02)", s)
	}
	if pct {
		v /= 100
	}
	if !(v > 0 && v < 1) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q: the margin must lie between 0 and 100%% (e.g. 2%% or 0.02)", s)
	}
	return v, nil
}

// Delta is a flag.Value for -delta in ParseDelta's syntax; it prints as a
// percentage.
type Delta float64

// String prints the margin as a percentage ("2%").
func (d *Delta) String() string {
	return strconv.FormatFloat(100*float64(*d), 'g', -1, 64) + "%"
}

// Set parses ParseDelta's syntax.
func (d *Delta) Set(s string) error {
	v, err := ParseDelta(s)
	if err != nil {
		return err
	}
	*d = Delta(v)
	return nil
}
