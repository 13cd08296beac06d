// Package openloop shows what an open loop measures that a closed loop
// hides (coordinated omission), and how to find the highest arrival rate
// that meets a latency objective.
//
// BenchmarkStall runs one step of about 50 µs that stalls for 50 ms once in
// 2000 steps, with arrivals every millisecond, twice: loop=closed waits a
// gap after each step (a plain benchmark's loop, paced), loop=open schedules
// arrivals independent of completions (decodegap.Gap.Open). Compare
// p99-ns/op of the closed loop with resp-p99-ns/op of the open one:
//
//	go test -run '^$' -bench Stall -benchtime=2000x ./examples/openloop
//
// BenchmarkCapacity searches for the highest arrival rate at which a 200 µs
// step keeps p99 response under 2 ms (decodegap.SearchRate); every probe is
// a sub-benchmark line:
//
//	go test -run '^$' -bench Capacity -benchtime=2000x ./examples/openloop
package openloop
