package decodegap

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Counter is a user counter that Run reads at window boundaries and reports
// per op over the counter span, such as a cache-miss count read from perf,
// or an engine's own statistic.
type Counter struct {
	// Name is the metric's name: Run reports it as Name+"/op". It must be
	// non-empty and without white space, and must not collide with a unit
	// decodegap or testing reports (ns/op, p50-ns/op, vcsw/op, gc/op, B/op,
	// every unit of Metrics, sN-p50-ns/op; compared as benchstat reads them,
	// so "sec" collides with ns/op): such a counter would replace the
	// built-in figure in the result line, and Run refuses it, naming both.
	Name string
	// Read returns the counter's cumulative value now. It runs at window
	// boundaries (rate-limited like Run's own counters), never per step, so
	// it may make a system call but should not take long.
	Read func() (float64, error)
	// Probe, when set, does something that must move the counter if it is
	// alive (a cache-miss probe touches a large buffer, say). Run calls it
	// only when the counter read zero over a span in which steps ran, to say
	// whether that zero is a true zero (the probe moved it) or a dead
	// instrument (it did not). Without a Probe such a zero is reported as
	// unverified.
	Probe func()
}

// userSpan is one user counter over the counter span.
type userSpan struct {
	name  string
	delta float64
	// err is why the counter could not be read, or "".
	err string
	// zero says which zero a zero delta is: "true", "dead" or "unverified";
	// probeMoved is how far the probe moved it.
	zero       string
	probeMoved float64
}

// validateCounters checks the config's Counters; typ names the config.
func validateCounters(typ string, cs []Counter) error {
	seen := map[string]bool{}
	for i, c := range cs {
		switch {
		case c.Name == "" || strings.ContainsAny(c.Name, " \t\n"):
			return fmt.Errorf("%s.Counters[%d].Name = %q: want a non-empty name without white space", typ, i, c.Name)
		case c.Read == nil:
			return fmt.Errorf("%s.Counters[%d].Read (counter %q) is nil: give the function that reads it", typ, i, c.Name)
		case seen[c.Name]:
			return fmt.Errorf("%s.Counters[%d].Name = %q is used twice", typ, i, c.Name)
		}
		if u := builtinUnit(c.Name); u != "" {
			return fmt.Errorf("%s.Counters[%d].Name = %q would be reported as %s/op, which collides with decodegap's own unit %s: rename the counter (e.g. %q)", typ, i, c.Name, c.Name, u, "my-"+c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// testingUnits are the units package testing itself reports.
var testingUnits = []string{"ns/op", "B/op", "allocs/op", "MB/s"}

// sessionUnit matches the per-session units (RunConfig.Sessions).
var sessionUnit = regexp.MustCompile(`^s[0-9]+-p(50|90)-ns/op$`)

// builtinUnit returns the built-in unit that a counter named name collides
// with, or "": the same unit as name+"/op" once benchunit tidies both (so
// that benchstat would put them in one row), or a unit that reads as name
// itself (a counter "threads" beside the figure "threads").
func builtinUnit(name string) string {
	u := name + "/op"
	_, tu := benchunit.Tidy(1, u)
	if sessionUnit.MatchString(u) || sessionUnit.MatchString(tu) {
		return u
	}
	units := append([]string(nil), testingUnits...)
	for _, m := range metricTable {
		units = append(units, m.unit)
	}
	for _, b := range units {
		if _, tb := benchunit.Tidy(1, b); b == u || tb == tu || b == name {
			return b
		}
	}
	return ""
}

// readCounters reads every user counter into vals (len(cs)); errs[i] is set
// when counter i failed.
func readCounters(cs []Counter, vals []float64, errs []error) {
	for i, c := range cs {
		vals[i], errs[i] = c.Read()
	}
}

// userSpans returns the user counters between two snapshots, probing each
// counter that read zero.
func userSpans(cs []Counter, first, last *snapshot, iters int) []userSpan {
	out := make([]userSpan, len(cs))
	for i, c := range cs {
		u := userSpan{name: c.Name}
		switch {
		case first.userErrs[i] != nil:
			u.err = first.userErrs[i].Error()
		case last.userErrs[i] != nil:
			u.err = last.userErrs[i].Error()
		case !finite(first.userVals[i]):
			u.err = fmt.Sprintf("it read %v at the start of the span", first.userVals[i])
		case !finite(last.userVals[i]):
			u.err = fmt.Sprintf("it read %v at the end of the span", last.userVals[i])
		default:
			u.delta = last.userVals[i] - first.userVals[i]
			if !finite(u.delta) {
				u.err, u.delta = fmt.Sprintf("its change over the span is %v", u.delta), 0
			}
		}
		if u.err == "" && u.delta == 0 && iters > 0 {
			u.zero, u.probeMoved = probeZero(c)
		}
		out[i] = u
	}
	return out
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// probeZero runs c's probe and says whether it moved the counter.
func probeZero(c Counter) (string, float64) {
	if c.Probe == nil {
		return "unverified", 0
	}
	before, err := c.Read()
	if err != nil {
		return "dead", 0
	}
	c.Probe()
	after, err := c.Read()
	if err != nil || after == before {
		return "dead", 0
	}
	return "true", after - before
}

// userLine reports the user counters per op, saying which zero each zero is.
func userLine(us []userSpan, iters int) string {
	if len(us) == 0 {
		return ""
	}
	parts := make([]string, len(us))
	for i, u := range us {
		switch {
		case u.err != "":
			parts[i] = fmt.Sprintf("%s unavailable (%s)", u.name, u.err)
		case u.delta != 0:
			parts[i] = fmt.Sprintf("%s %.4g/op", u.name, u.delta/float64(iters))
		case u.zero == "true":
			parts[i] = fmt.Sprintf("%s 0/op (a true zero: its Counter.Probe moved it by %g)", u.name, u.probeMoved)
		case u.zero == "dead":
			parts[i] = fmt.Sprintf("%s 0/op (a dead instrument: its Counter.Probe did not move it either)", u.name)
		default:
			parts[i] = fmt.Sprintf("%s 0/op (unverified: set Counter.Probe to tell a true zero from a dead counter)", u.name)
		}
	}
	return "counters: " + strings.Join(parts, "; ")
}
