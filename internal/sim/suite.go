package sim

// Config is a whole suite: every model × effect × rounds × method in fixed
// mode, and every model × effect of the methods with a sequential mode.
type Config struct {
	Models  []Model
	Methods []Method
	// Effects are the true effects on B (0.02 = 2% slower).
	Effects []float64
	// Rounds are the fixed round counts.
	Rounds []int
	// Trials per fixed cell; SeqTrials per sequential cell and per point
	// of its fixed grid.
	Trials, SeqTrials int
	// MaxRounds is the sequential mode's maximum; Grid the fixed round
	// counts it is compared with (increasing).
	MaxRounds int
	Grid      []int
	// MarginRounds are the fixed round counts of the margin suite (B/A
	// exactly 1+δ or 1/(1+δ)); it also runs the sequential mode there.
	MarginRounds []int
	// Seed is the base seed.
	Seed uint64
}

// DefaultConfig is the suite docs/verdict-accuracy.md is made from, with
// trials trials per fixed cell and seqTrials per sequential cell.
func DefaultConfig(methods []Method, trials, seqTrials int) Config {
	return Config{
		Models:       Models(),
		Methods:      methods,
		Effects:      []float64{0, 0.01, 0.02, 0.05, 0.10},
		Rounds:       []int{10, 20},
		Trials:       trials,
		SeqTrials:    seqTrials,
		MaxRounds:    40,
		Grid:         []int{4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80},
		MarginRounds: []int{10, 20, 40},
		Seed:         1,
	}
}

// FixedRow is one fixed-mode cell's counts.
type FixedRow struct {
	Model  string
	Effect float64
	Rounds int
	Method string
	Counts Counts
}

// SeqRow is one sequential cell and its fixed-N comparison.
type SeqRow struct {
	Model   string
	Effect  float64
	Method  string
	Savings Savings
}

// FamilyRow is one cell of the family suite: an arm's three metrics
// (FamilyMetrics) judged alone and as a Holm family.
type FamilyRow struct {
	Effect float64
	Rounds int
	Counts FamilyCounts
}

// FamilyEffects are the effects of the family suite.
var FamilyEffects = []float64{0, 0.02, 0.05}

// MarginRow is one cell of the margin suite: B/A exactly at an edge of
// the verdict's equivalence margin, where "equivalent" is the wrong call
// and TOST allows it in at most α of trials. Rounds is 0 for the
// sequential mode (Config.MaxRounds).
type MarginRow struct {
	Model  string
	Effect float64
	Rounds int
	Method string
	Counts Counts
}

// MarginEffects are the margin suite's effects: B/A = 1.02 and 1/1.02,
// the edges of the verdict's default ±2%.
var MarginEffects = []float64{0.02, 1/1.02 - 1}

// MixtureRow is one cell of the mixture suite (issue 33): an arm's rows
// judged as one family, sequential up to Rounds rounds.
type MixtureRow struct {
	Cell   MixtureCell
	Rounds int
	Counts MixtureCounts
}

// MixtureRounds is the mixture suite's most rounds (Compare's -count).
const MixtureRounds = 30

// Report holds every cell of a suite.
type Report struct {
	Config   Config
	Fixed    []FixedRow
	Seq      []SeqRow
	Families []FamilyRow
	Margins  []MarginRow
	Mixtures []MixtureRow
}

// Run runs the suite. progress, when not nil, is called after each cell
// with a short label.
func Run(cfg Config, progress func(label string)) Report {
	rep := Report{Config: cfg}
	for _, m := range cfg.Models {
		for _, e := range cfg.Effects {
			for _, n := range cfg.Rounds {
				for _, meth := range cfg.Methods {
					c := Case{Model: m, Effect: e, Rounds: n, Trials: cfg.Trials, Seed: cfg.Seed}
					rep.Fixed = append(rep.Fixed, FixedRow{m.Name, e, n, meth.Name, Fixed(c, meth)})
				}
			}
			for _, meth := range cfg.Methods {
				if meth.Sequential == nil {
					continue
				}
				c := Case{Model: m, Effect: e, Rounds: cfg.MaxRounds, Trials: cfg.SeqTrials, Seed: cfg.Seed}
				rep.Seq = append(rep.Seq, SeqRow{m.Name, e, meth.Name, CompareSequential(c, meth, cfg.Grid)})
			}
			if progress != nil {
				progress(m.Name)
			}
		}
	}
	for _, e := range FamilyEffects {
		for _, n := range cfg.Rounds {
			rep.Families = append(rep.Families, FamilyRow{e, n, Family(cfg.Seed, cfg.Trials, n, e)})
		}
	}
	if progress != nil {
		progress("families")
	}
	for _, c := range MixtureCells() {
		rep.Mixtures = append(rep.Mixtures, MixtureRow{c, MixtureRounds, Mixture(cfg.Seed, cfg.SeqTrials, MixtureRounds, c)})
	}
	if progress != nil {
		progress("mixtures")
	}
	// The margin suite judges the methods with a ±δ answer in both
	// modes: those with a sequential mode (the band rule's "inside" has
	// no margin, the U-test no equivalence).
	for _, meth := range cfg.Methods {
		if meth.Sequential == nil || len(cfg.MarginRounds) == 0 {
			continue
		}
		for _, m := range cfg.Models {
			for _, e := range MarginEffects {
				for _, n := range cfg.MarginRounds {
					c := Case{Model: m, Effect: e, Rounds: n, Trials: cfg.Trials, Seed: cfg.Seed}
					rep.Margins = append(rep.Margins, MarginRow{m.Name, e, n, meth.Name, Fixed(c, meth)})
				}
				c := Case{Model: m, Effect: e, Rounds: cfg.MaxRounds, Trials: cfg.SeqTrials, Seed: cfg.Seed}
				rep.Margins = append(rep.Margins, MarginRow{m.Name, e, 0, meth.Name, Sequential(c, meth)})
			}
		}
		if progress != nil {
			progress("margins")
		}
	}
	return rep
}

// Find returns the fixed cell's counts, and false when there is none.
func (r Report) Find(model string, effect float64, rounds int, method string) (Counts, bool) {
	for _, f := range r.Fixed {
		if f.Model == model && f.Effect == effect && f.Rounds == rounds && f.Method == method {
			return f.Counts, true
		}
	}
	return Counts{}, false
}
