package main

import (
	"fmt"

	"github.com/gapbench/gapbench/internal/sim"
)

// docMixture writes the mixture family's table (issue 33): a candidate
// slow in a share of its rounds, with the screen's marks on those rounds.
func docMixture(p printer, rep sim.Report) {
	if len(rep.Mixtures) == 0 {
		return
	}
	p("\n## A candidate slow in some sessions only (mixture, issue 33)\n\n")
	p("B is worse by e in a share p of the rounds (its other rounds are A's), and the contention screen marks the slow rounds (the adversary: marks that follow the effect). Each trial judges an arm's three rows (%v) as one weighted-Holm family (p50 × 2, as Compare does), sequential up to %d rounds (Compare's stopping rule decides each row at its first decided look). Model: %s.\n\n",
		sim.MixtureMetrics, sim.MixtureRounds, sim.MixtureParams)
	p("\"p50 equivalent\": the median row called equivalent (the certification issue 33 saw); \"arm equivalent\": that, with no row slower or faster; \"some row slower\": the mean, median or tail row called slower (the regression caught); \"faster\": some row called faster (wrong); \"set aside\": rounds quarantined over the median rows' rounds judged.\n\n")
	p("| e | p | mean effect | p50 equivalent | arm equivalent | some row slower | mean row slower | tail row slower | faster | mean rounds | set aside |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range rep.Mixtures {
		c := m.Counts
		r := func(k int) string { return pct(float64(k) / float64(c.Trials)) }
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s |\n", effectPct(m.Cell.Effect), effectPct(m.Cell.Share), fmt.Sprintf("%.3g%%", 100*m.Cell.Effect*m.Cell.Share),
			r(c.P50Equivalent), r(c.ArmEquivalent), r(c.AnySlower), r(c.Slower[0]), r(c.Slower[2]), r(c.Faster),
			float64(c.Rounds)/float64(c.Trials), pct(float64(c.Quarantined)/float64(max(c.Rounds, 1))))
	}
}

// targetsMixture writes the mixture family's target rows.
func targetsMixture(p printer, rep sim.Report) {
	var worstEq, worstCatch *sim.MixtureRow
	var aa *sim.MixtureRow
	k := 0
	for i := range rep.Mixtures {
		m := &rep.Mixtures[i]
		if m.Cell.Effect == 0 {
			aa = m
			continue
		}
		k++
		if worstEq == nil || m.Counts.P50Equivalent > worstEq.Counts.P50Equivalent {
			worstEq = m
		}
		if worstCatch == nil || m.Counts.AnySlower < worstCatch.Counts.AnySlower {
			worstCatch = m
		}
	}
	if worstEq == nil {
		return
	}
	n := worstEq.Counts.Trials
	z := sim.FamilyZ(k)
	rate := func(x int) float64 { return float64(x) / float64(n) }
	cell := func(m *sim.MixtureRow) string {
		return fmt.Sprintf("e %s in %s of rounds", effectPct(m.Cell.Effect), effectPct(m.Cell.Share))
	}
	bound := 0.05 + sim.MarginZ(0.05, n, z)
	p("| mixture (B worse by 5–20%% in 20–50%% of rounds, marks on the slow rounds): median row \"equivalent\" ≤ 5%% (%d cells; bound %.1f%%) | highest %s (%s) | %s |\n",
		k, 100*bound, pct(rate(worstEq.Counts.P50Equivalent)), cell(worstEq), yes(rate(worstEq.Counts.P50Equivalent) <= bound))
	lo := 0.80 - sim.MarginZ(0.80, n, z)
	p("| mixture: the mean, median or tail row called slower within %d rounds ≥ 80%% (%d cells; bound %.1f%%) | lowest %s (%s) | %s |\n",
		sim.MixtureRounds, k, 100*lo, pct(rate(worstCatch.Counts.AnySlower)), cell(worstCatch), yes(rate(worstCatch.Counts.AnySlower) >= lo))
	if aa != nil {
		fp := aa.Counts.Faster + aa.Counts.AnySlower // trials with a faster and a slower row count twice: an upper bound
		b := 0.05 + sim.Margin(0.05, aa.Counts.Trials)
		p("| mixture A/A (marks on 10%% of rounds): some row called faster or slower ≤ 5%% (bound %.1f%%) | at most %s | %s |\n",
			100*b, pct(float64(fp)/float64(aa.Counts.Trials)), yes(float64(fp)/float64(aa.Counts.Trials) <= b))
	}
}
