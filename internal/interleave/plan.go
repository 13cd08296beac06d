package interleave

import (
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/gapbench/gapbench/nullband"
)

// Arm is one configuration measured in every round: a command whose
// standard output is Go benchmark format, usually a test binary.
type Arm struct {
	// Name labels the arm's results (the benchfmt `arm:` key). It must be
	// non-empty, contain no white space and be unique within a Plan.
	Name string
	// Args is the command line: Args[0] is the program, found through
	// PATH when it has no slash (as exec.Command does).
	Args []string
	// Dir is the directory the command runs in; empty means the runner's
	// current directory.
	Dir string
}

// Plan is what to run: at most Rounds rounds, each running every arm once,
// in an order drawn afresh for each round. The orders are drawn one round at
// a time as they are needed, so a plan's size does not grow with Rounds.
type Plan struct {
	// Arms are the arms, in the order given to NewPlan.
	Arms []Arm
	// Seed is the seed the orders are drawn from; the same arms, rounds
	// and seed give the same plan.
	Seed uint64
	// Rounds is the number of rounds; a Runner may stop before (see
	// Runner.OnRun).
	Rounds int
}

// NewPlan checks the arms and returns the plan of rounds rounds of them,
// ordered from seed by nullband.NewOrder: each round a uniformly random
// permutation of the arms, except that no round starts with the arm that
// ended the round before, so no arm runs twice in a row anywhere (with a
// single arm that is impossible, and allowed).
func NewPlan(arms []Arm, rounds int, seed uint64) (*Plan, error) {
	if len(arms) == 0 {
		return nil, errors.New("interleave: NewPlan needs at least one arm")
	}
	if rounds < 1 {
		return nil, fmt.Errorf("interleave: NewPlan needs at least 1 round, got %d", rounds)
	}
	seen := map[string]bool{}
	for i, a := range arms {
		if a.Name == "" || strings.ContainsFunc(a.Name, isSpace) {
			return nil, fmt.Errorf("interleave: arm %d has name %q: a name must be non-empty and contain no white space (it becomes the benchfmt value arm: NAME)", i+1, a.Name)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("interleave: two arms are named %q: give each arm its own name", a.Name)
		}
		seen[a.Name] = true
		if len(a.Args) == 0 || a.Args[0] == "" {
			return nil, fmt.Errorf("interleave: arm %q has no command: Arm.Args[0] must name the program to run", a.Name)
		}
	}
	return &Plan{Arms: arms, Seed: seed, Rounds: rounds}, nil
}

// Runs returns the number of runs in the whole plan: rounds × arms.
func (p *Plan) Runs() int { return p.Rounds * len(p.Arms) }

// Orders yields each round's number (from 1) and order: the indexes into
// Arms in the order that round runs them, a fresh slice per round.
func (p *Plan) Orders() iter.Seq2[int, []int] {
	return func(yield func(int, []int) bool) {
		o := nullband.NewOrder(len(p.Arms), p.Seed)
		for r := 1; r <= p.Rounds; r++ {
			if !yield(r, o.Next()) {
				return
			}
		}
	}
}

// OrderString returns an order as the arms' names: "new null old".
func (p *Plan) OrderString(order []int) string {
	names := make([]string, len(order))
	for i, a := range order {
		names[i] = p.Arms[a].Name
	}
	return strings.Join(names, " ")
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}
