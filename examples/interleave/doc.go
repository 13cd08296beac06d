// Package interleave is a worked example of `decodegap interleave`: one
// benchmark, two arms that differ by a known amount of work, and the null
// arm, measured in separate processes in randomized order per round.
//
// BenchmarkStep runs Step(-work percent). The base arm runs the default,
// -work=100; the candidate arm passes -work=110, 10% more work per step. From
// the repository root:
//
//	go run ./cmd/decodegap interleave -rounds 10 -benchtime 2000x \
//	    base=./examples/interleave 'more=./examples/interleave -work=110'
//
// builds the package once (go test -c), then runs base, more and null (a
// second process of base) once per round in a fresh order each round, and
// prints a verdict: more/base ≈ 1.10, outside the null band. With -work=100
// on both arms the same command is an A/A run and is called noise. README.md
// shows a real run.
package interleave
