// Command clip writes the synthetic speech clip of decodegap/ort (SynthAudio:
// voiced segments and pauses over noise, 16 kHz mono) as raw little-endian
// float32 samples: the input `decodegap ort -input input=file:PATH` feeds to
// Silero VAD one 512-sample frame per step.
//
//	go run ./examples/ortvad/clip -o clip.f32 [-seed 0] [-frames 320]
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/gapbench/gapbench/decodegap/ort"
)

func main() {
	out := flag.String("o", "clip.f32", "output `file`")
	seed := flag.Uint64("seed", 0, "`seed` of the clip")
	frames := flag.Int("frames", ort.SynthFrames, "length in `frames` of 512 samples (32 ms)")
	flag.Parse()
	if *frames <= 0 {
		fmt.Fprintln(os.Stderr, "clip: -frames must be > 0")
		os.Exit(2)
	}
	clip := ort.SynthAudio(*seed, *frames)
	b := make([]byte, 4*len(clip))
	for i, s := range clip {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(s))
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "clip: %v\n", err)
		os.Exit(1)
	}
}
