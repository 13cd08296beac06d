package nullband

import (
	"errors"
	"fmt"
	"strings"
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

// Plan is the order of every run: Rounds rounds, each running every arm
// once, in an order drawn afresh for each round.
type Plan struct {
	// Arms are the arms, in the order given to NewPlan.
	Arms []Arm
	// Seed is the seed the orders were drawn from; the same arms, rounds
	// and seed give the same plan.
	Seed uint64
	// Order[r] lists the indexes into Arms in the order round r+1 runs
	// them; each round is a permutation of all arms.
	Order [][]int
}

// NewPlan draws the order of rounds rounds of arms from seed with Orders:
// each round a uniformly random permutation of the arms, except that no round
// starts with the arm that ended the round before, so no arm runs twice in a
// row anywhere (with a single arm that is impossible, and allowed).
func NewPlan(arms []Arm, rounds int, seed uint64) (*Plan, error) {
	if len(arms) == 0 {
		return nil, errors.New("nullband: NewPlan needs at least one arm")
	}
	if rounds < 1 {
		return nil, fmt.Errorf("nullband: NewPlan needs at least 1 round, got %d", rounds)
	}
	seen := map[string]bool{}
	for i, a := range arms {
		if a.Name == "" || strings.ContainsFunc(a.Name, isSpace) {
			return nil, fmt.Errorf("nullband: arm %d has name %q: a name must be non-empty and contain no white space (it becomes the benchfmt value arm: NAME)", i+1, a.Name)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("nullband: two arms are named %q: give each arm its own name", a.Name)
		}
		seen[a.Name] = true
		if len(a.Args) == 0 || a.Args[0] == "" {
			return nil, fmt.Errorf("nullband: arm %q has no command: Arm.Args[0] must name the program to run", a.Name)
		}
	}
	p := &Plan{Arms: arms, Seed: seed, Order: Orders(len(arms), rounds, seed)}
	return p, nil
}

// Runs returns the number of runs in the plan: rounds × arms.
func (p *Plan) Runs() int { return len(p.Order) * len(p.Arms) }

// String returns one line per round: "round 1: new null old".
func (p *Plan) String() string {
	var b strings.Builder
	for i, o := range p.Order {
		fmt.Fprintf(&b, "round %d:", i+1)
		for _, a := range o {
			b.WriteString(" " + p.Arms[a].Name)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}
