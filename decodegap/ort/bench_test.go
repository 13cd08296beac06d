package ort

import (
	"testing"
	"time"
)

// warm runs a few steps so that ONNX Runtime's first-run allocations fall
// outside the timed loop.
func warm(b *testing.B, v *VAD) {
	for range 20 {
		if err := v.Step(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdapter checks the adapter's speed target: VAD.Step adds at most
// 2 µs per step over calling AdvancedSession.Run directly on the same
// tensors, with 0 allocs. Run it as
//
//	go test -run '^$' -bench Adapter -benchtime=3000x -count 3 ./decodegap/ort/
//
// Its sub-benchmarks:
//
//   - direct and step time whole steps (about 120–250 µs here) in separate
//     loops, one after the other;
//   - interleaved alternates the two within each iteration, so drift and
//     co-tenant load hit both alike, and reports direct-ns/op, step-ns/op
//     and step/direct (its ns/op is the pair);
//   - adapter-only times exactly the work Step adds around Run (the frame
//     copy in, the state copy back, the probability read): the overhead
//     itself, which whole-step timings cannot resolve at 2 µs in 200.
func BenchmarkAdapter(b *testing.B) {
	v := openVAD(b, VADConfig{Options: Options{IntraOpThreads: 1}})
	raw := v.sess.sess
	warm(b, v)
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := raw.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("step", func(b *testing.B) {
		step := v.Step
		b.ReportAllocs()
		for b.Loop() {
			if err := step(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		// raw.Run only writes the outputs, which the next Step overwrites
		// before reading: the Step sequence is the same as without it.
		step := v.Step
		var direct, stepped time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			if err := raw.Run(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := step(); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			direct += t1.Sub(t0)
			stepped += t2.Sub(t1)
		}
		b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N), "direct-ns/op")
		b.ReportMetric(float64(stepped.Nanoseconds())/float64(b.N), "step-ns/op")
		b.ReportMetric(float64(stepped)/float64(direct), "step/direct")
	})
	b.Run("adapter-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v.feed()
			v.collect()
		}
	})
}

// BenchmarkStepOptions times back-to-back steps (no gap) for 1 and 2
// intra-op threads, spinning on and off: latency only, no verdict (gaps and
// verdicts are decodegap's).
func BenchmarkStepOptions(b *testing.B) {
	for _, o := range []Options{
		{IntraOpThreads: 1, Spinning: SpinOn},
		{IntraOpThreads: 1, Spinning: SpinOff},
		{IntraOpThreads: 2, Spinning: SpinOn},
		{IntraOpThreads: 2, Spinning: SpinOff},
	} {
		b.Run(o.String(), func(b *testing.B) {
			v := openVAD(b, VADConfig{Options: o})
			warm(b, v)
			b.ReportAllocs()
			for b.Loop() {
				if err := v.Step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkModelStep checks the generic step's speed target: Model.Step
// (file input fed, sr constant, stateN carried into state by the rule) adds
// at most 2 µs per step over AdvancedSession.Run on the same session, with 0
// allocs. Run it as
//
//	go test -run '^$' -bench ModelStep -benchtime=3000x -count 3 ./decodegap/ort/
//
// interleaved runs Run and Step in each iteration, alternating which goes
// first, so drift and co-tenant load hit both alike, and reports direct-ns/op, step-ns/op,
// step-minus-direct-ns/op and step/direct; overhead-only times exactly what
// Step adds around Run (the feed and carry copies).
func BenchmarkModelStep(b *testing.B) {
	m := openModel(b, vadModelConfig(b, Options{IntraOpThreads: 1}, SynthFrames))
	raw := m.Raw()
	for range 20 {
		if err := m.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("interleaved", func(b *testing.B) {
		// The two alternate which goes first, so that neither always runs
		// right after the other.
		step := m.Step
		var direct, stepped time.Duration
		odd := false
		b.ReportAllocs()
		for b.Loop() {
			odd = !odd
			if odd {
				t0 := time.Now()
				if err := raw.Run(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := step(); err != nil {
					b.Fatal(err)
				}
				direct += t1.Sub(t0)
				stepped += time.Since(t1)
				continue
			}
			t0 := time.Now()
			if err := step(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := raw.Run(); err != nil {
				b.Fatal(err)
			}
			stepped += t1.Sub(t0)
			direct += time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/op")
		b.ReportMetric(float64(stepped.Nanoseconds())/n, "step-ns/op")
		b.ReportMetric(float64((stepped-direct).Nanoseconds())/n, "step-minus-direct-ns/op")
		b.ReportMetric(float64(stepped)/float64(direct), "step/direct")
	})
	b.Run("overhead-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range m.feeds {
				f := &m.feeds[i]
				n := copy(f.dst, f.src[f.pos:])
				f.pos += n
				if f.pos == len(f.src) {
					f.pos = 0
				}
			}
			for _, s := range m.stores {
				s.store()
			}
			for i := range m.carry {
				m.carry[i].do()
			}
		}
	})
}
