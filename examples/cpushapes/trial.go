package cpushapes

import (
	"fmt"
	"strings"

	"github.com/gapbench/gapbench/decodegap"
)

// TrialShapes are the shapes TrialArms knows, in the order of the trials'
// table: each names arm b against arm a of the same shape, b doing bWork
// times a's work, except "inline-vs-fanout2", where a is Inline(w) and b
// FanOut(2, w·bWork): the same work (at bWork 1) in two shapes.
var TrialShapes = []string{"inline", "fanout2", "fanout4", "background", "exiting-thread", "alloc", "inline-vs-fanout2"}

// TrialArms returns the arms "a" and "b" of a trial of shape (one of
// TrialShapes) at work w, b doing bWork times a's work. Background's
// burner aims at a quarter of a core.
func TrialArms(shape string, w, bWork float64) (a, b decodegap.Arm, err error) {
	var open func(w float64) decodegap.Opener
	switch shape {
	case "inline":
		open = Inline
	case "fanout2":
		open = func(w float64) decodegap.Opener { return FanOut(2, w) }
	case "fanout4":
		open = func(w float64) decodegap.Opener { return FanOut(4, w) }
	case "background":
		open = func(w float64) decodegap.Opener { return Background(0.25, w).Open }
	case "exiting-thread":
		open = ExitingThread
	case "alloc":
		open = Alloc
	case "inline-vs-fanout2":
		return decodegap.Arm{Name: "a", Open: Inline(w)}, decodegap.Arm{Name: "b", Open: FanOut(2, w*bWork)}, nil
	default:
		return a, b, fmt.Errorf("cpushapes: unknown trial shape %q: want one of %s", shape, strings.Join(TrialShapes, ", "))
	}
	return decodegap.Arm{Name: "a", Open: open(w)}, decodegap.Arm{Name: "b", Open: open(w * bWork)}, nil
}
