package decodegap

import (
	"fmt"
	"strconv"
	"strings"
)

// This file is how much Compare's blocks say: without -v, a block prints
// its result line only, and each arm, on its last call, one line naming
// the rounds whose blocks were flagged (not steady, contended, a stall, an
// overload, an unwritten trace); a block that fails the benchmark
// (RequireSteady, Screen.FailContended) prints its whole log first. With
// -v every block prints its whole log, as Run does.

// publishBlock reports one of Compare's blocks: its metrics on every call,
// and its log on the last call when verbose or when it fails the benchmark.
func publishBlock(b reporter, s *settings, res *result, last, verbose bool) {
	b.Helper()
	publish(b, s, res, last && (verbose || res.fails(s)))
}

// fails reports whether res fails the benchmark under s (publish's checks).
func (res *result) fails(s *settings) bool {
	return (res.host.ok && res.host.verdict.Contended && s.screen.FailContended) || (!res.reached && s.requireSteady)
}

// blockFlag is one reason a block is named in its arm's note.
type blockFlag int

const (
	flagNotSteady blockFlag = iota
	flagContended
	flagStall
	flagOverloaded
	flagTrace
	nFlags
)

// flagWords are the flags' words in the arm's note, in flag order.
var flagWords = [nFlags]string{
	flagNotSteady:  "not steady",
	flagContended:  "contended",
	flagStall:      "a step ≥10× p50 outside the window (max-ns/op)",
	flagOverloaded: "overloaded",
	flagTrace:      "trace not written",
}

// flagged reports whether res carries flag f.
func (res *result) flagged(f blockFlag) bool {
	switch f {
	case flagNotSteady:
		return !res.reached
	case flagContended:
		return contended(res)
	case flagStall:
		return res.stall.hidden()
	case flagOverloaded:
		return res.open.overloaded()
	case flagTrace:
		return res.traceErr != nil
	}
	return false
}

// armNote is the one line an arm prints without -v: which rounds' blocks
// were flagged, by flag, or "" when none was.
func armNote(arm string, blocks []*result) string {
	var parts []string
	for f := range nFlags {
		var hit []*result
		for _, r := range blocks {
			if r.flagged(f) {
				hit = append(hit, r)
			}
		}
		if len(hit) > 0 {
			parts = append(parts, flagWords[f]+" in "+roundList(hit))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("arm %s: %s; -v prints each block's log", arm, strings.Join(parts, "; "))
}

// roundList writes the rounds of rs, ranges joined ("rounds 1–3, 7"), by
// GOMAXPROCS setting when there are several.
func roundList(rs []*result) string {
	var groups []string
	multi := false
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j].procs == rs[i].procs {
			j++
		}
		multi = multi || i > 0
		g := ranges(rs[i:j])
		groups = append(groups, g+fmt.Sprintf(" at GOMAXPROCS %d", rs[i].procs))
		i = j
	}
	if !multi {
		return strings.TrimSuffix(groups[0], fmt.Sprintf(" at GOMAXPROCS %d", rs[0].procs))
	}
	return strings.Join(groups, ", ")
}

// ranges writes ascending rounds as "round 4" or "rounds 1–3, 7".
func ranges(rs []*result) string {
	var out []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1].round == rs[j].round+1 {
			j++
		}
		if j > i {
			out = append(out, strconv.Itoa(rs[i].round)+"–"+strconv.Itoa(rs[j].round))
		} else {
			out = append(out, strconv.Itoa(rs[i].round))
		}
		i = j + 1
	}
	if len(rs) == 1 {
		return "round " + out[0]
	}
	return "rounds " + strings.Join(out, ", ")
}
