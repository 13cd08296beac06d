package ort

import (
	"math"
	"math/rand/v2"
	"sync"
)

// Audio format of the Silero VAD step.
const (
	// VADSampleRate is the sample rate fed to the model, in Hz.
	VADSampleRate = 16000
	// VADFrameSamples is the number of samples one step consumes: 32 ms at
	// VADSampleRate.
	VADFrameSamples = 512
	// SynthFrames is the length of the default synthetic clip, in frames:
	// 320 frames, 10.24 s.
	SynthFrames = 320
)

// Shape of the synthetic clip, in frames of VADFrameSamples.
const (
	synthVoiced = 30 // 0.96 s of voiced sound
	synthPause  = 20 // 0.64 s of noise only
)

// SynthAudio returns frames×VADFrameSamples samples of deterministic
// synthetic audio at VADSampleRate, in [-1, 1], the same for the same seed
// and frames on every run:
//
//   - white Gaussian noise of standard deviation 0.01 (−40 dBFS) throughout;
//   - alternating 0.96 s voiced segments and 0.64 s pauses, starting voiced;
//   - a voiced segment is a harmonic series (harmonics 1 to 10 of a
//     fundamental drawn per segment from 100–200 Hz, harmonic k at amplitude
//     1/k), amplitude-modulated by a 4 Hz raised cosine (syllables), peak
//     about 0.3.
//
// The randomness is math/rand/v2's PCG seeded with (seed, 0x9e3779b97f4a7c15).
// A step cycles the clip: after the last frame it starts over at the first,
// with the model's state carried on. The caller owns the returned slice;
// frames ≤ 0 returns nil.
func SynthAudio(seed uint64, frames int) []float32 {
	if frames <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([]float32, frames*VADFrameSamples)
	const period = synthVoiced + synthPause
	var f0 float64
	for i := range out {
		frame := i / VADFrameSamples
		inPeriod := frame % period
		if inPeriod == 0 && i%VADFrameSamples == 0 {
			f0 = 100 + 100*rng.Float64()
		}
		s := 0.01 * rng.NormFloat64()
		if inPeriod < synthVoiced {
			t := float64(i-(frame-inPeriod)*VADFrameSamples) / VADSampleRate
			env := 0.5 * (1 - math.Cos(2*math.Pi*4*t))
			var v float64
			for k := 1; k <= 10; k++ {
				v += math.Sin(2*math.Pi*float64(k)*f0*t) / float64(k)
			}
			s += 0.1 * env * v
		}
		out[i] = float32(max(-1, min(1, s)))
	}
	return out
}

// synthCache holds the default clip per seed, shared read-only by every VAD
// opened with that seed.
var synthCache sync.Map // uint64 → []float32

func defaultAudio(seed uint64) []float32 {
	if a, ok := synthCache.Load(seed); ok {
		return a.([]float32)
	}
	a, _ := synthCache.LoadOrStore(seed, SynthAudio(seed, SynthFrames))
	return a.([]float32)
}
