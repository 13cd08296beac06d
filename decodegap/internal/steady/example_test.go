package steady_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/gapbench/gapbench/decodegap/internal/steady"
)

// A step that takes 2 ms for its first 300 iterations and 1 ms after, with
// 3% noise: a warm-up, steady from the first window boundary after 300.
func ExampleDetect() {
	r := rand.New(rand.NewPCG(1, 2))
	lat := make([]int64, 2000)
	for i := range lat {
		level := 1e6
		if i < 300 {
			level = 2e6
		}
		lat[i] = int64(level * (1 + 0.03*r.NormFloat64()))
	}
	res := steady.Detect(lat, steady.Params{Window: 32})
	fmt.Println(res.Class, res.Reason, res.Start, res.Suggest, res.Ref.Start, res.Ref.End)

	// The first 40 iterations alone are too few to judge.
	res = steady.Detect(lat[:40], steady.Params{Window: 32})
	fmt.Println(res.Class, res.Reason, res.Start, res.Suggest, res.Windows)
	// Output:
	// warm-up faster 320 0 0 320
	// no steady state too-short -1 640 1
}
