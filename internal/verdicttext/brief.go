package verdicttext

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gapbench/gapbench/nullband"
)

// The lines under the table when Names.Brief is set: the stalled and the
// quarantined rounds counted, one line each; Names.Brief lists them.

// briefStalls counts the stalled rounds of every row, one entry per arm
// when the arm's rows share them, and names flag, which lists them; ""
// when no row has a stalled round.
func briefStalls(rows []Row, flag string) string {
	var arms []string
	by := map[string][]Row{}
	for _, r := range rows {
		if r.Err != nil {
			continue
		}
		a := armLabel(r)
		if by[a] == nil {
			arms = append(arms, a)
		}
		by[a] = append(by[a], r)
	}
	var parts []string
	for _, a := range arms {
		rs := by[a]
		shared := true
		for _, r := range rs {
			shared = shared && len(r.Stalled) > 0 && joinInts(r.Stalled) == joinInts(rs[0].Stalled)
		}
		if shared {
			parts = append(parts, fmt.Sprintf("%d of %d for %s", len(rs[0].Stalled), given(rs[0]), a))
			continue
		}
		for _, r := range rs {
			if len(r.Stalled) > 0 {
				parts = append(parts, fmt.Sprintf("%d of %d for %s", len(r.Stalled), given(r), label(r)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return wrap(fmt.Sprintf("stalled rounds (a step of 10× the median or more in some arm's block): %s; %s lists them.", strings.Join(parts, ", "), flag), Width)
}

// briefQuarantine counts the quarantined rounds of every row, by cause, and
// names flag, which lists them with their values; "" when none was.
func briefQuarantine(rows []Row, flag string) string {
	total, inRows := 0, 0
	byCause := map[nullband.Cause]int{}
	for _, r := range rows {
		if r.Err != nil {
			continue
		}
		k := 0
		for _, q := range r.Verdict.Rounds {
			if q.Quarantined {
				byCause[q.Cause]++
				k++
			}
		}
		total += k
		if k > 0 {
			inRows++
		}
	}
	if total == 0 {
		return ""
	}
	causes := make([]nullband.Cause, 0, len(byCause))
	for c := range byCause {
		causes = append(causes, c)
	}
	sort.Slice(causes, func(i, j int) bool { return causes[i] < causes[j] })
	var parts []string
	for _, c := range causes {
		parts = append(parts, fmt.Sprintf("%d %s", byCause[c], briefCause(c)))
	}
	return wrap(fmt.Sprintf("quarantined rounds (the +Nq of the rounds column, left out of the test): %d in %d %s: %s; %s lists them with their values.",
		total, inRows, plural(inRows, "row", "rows"), strings.Join(parts, ", "), flag), Width)
}

// briefCause is cause in a few words.
func briefCause(c nullband.Cause) string {
	switch c {
	case nullband.Missing:
		return "missing (a value is absent)"
	case nullband.NonPositive:
		return "non-positive (a value is ≤ 0)"
	case nullband.Contended:
		return "contended (marked by the contention screen)"
	case nullband.Extreme:
		return "extreme (the arms spread past the row's limit)"
	}
	return c.String()
}

// armLabel is a row's label without its metric: "bench arm" or "arm".
func armLabel(r Row) string {
	return strings.TrimSuffix(strings.TrimSuffix(label(r), r.Metric), " ")
}

// given is the number of rounds r's verdict was given.
func given(r Row) int {
	if r.Verdict.Given > 0 {
		return r.Verdict.Given
	}
	return len(r.Verdict.Rounds)
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
