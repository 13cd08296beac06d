package decodegap_test

import (
	"fmt"

	"github.com/gapbench/gapbench/decodegap"
)

// Every unit Run and Compare report, with its meaning, in the order they
// appear on a result line. (No Output block: adding a metric is one entry
// in metrics.go, nothing more.)
func ExampleMetrics() {
	for _, m := range decodegap.Metrics() {
		fmt.Printf("%s: %s\n", m.Unit, m.Meaning)
	}
}
