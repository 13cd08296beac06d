package main

import (
	"io"

	"github.com/gapbench/gapbench/internal/interleave"
	"github.com/gapbench/gapbench/internal/verdicttext"
	"github.com/gapbench/gapbench/nullband"
)

// judged is one Set with its Verdict, a row of writeTable.
type judged struct {
	Set     interleave.Set
	Verdict nullband.Verdict
}

// writeTable writes the verdict table (internal/verdicttext): one row per
// judged, the reasons under it, naming this command's flags. base and null
// name the base and null arms; rounds names the flag that sets the rounds.
func writeTable(w io.Writer, rows []judged, base, null, rounds string) error {
	vr := make([]verdicttext.Row, len(rows))
	for i, r := range rows {
		vr[i] = verdicttext.Row{Bench: r.Set.Benchmark, Arm: r.Set.Candidate, Metric: r.Set.Unit, Verdict: r.Verdict}
	}
	return verdicttext.Write(w, vr, verdicttext.Names{Base: base, Null: null, Rounds: rounds, MaxRounds: "-max-rounds", Delta: "-delta",
		Family: "each benchmark and arm's units (a p50- unit weighing twice the others)"})
}
