// Package zstd is a real goroutine-parallel step: klauspost/compress's
// zstd stream decoder, whose concurrency above 1 decodes blocks on
// goroutines of its own (three a stream: frames and literals, sequences,
// execution), on whatever threads the Go scheduler has. It is the
// workload that showed decodegap's old cpu-ns/op (the loop thread and the
// threads the open created) reading a decoder at concurrency 4 as "less
// CPU 0.64" while the process's counters said it cost 1.6–1.8× (DESIGN.md,
// decision 16).
//
// A step decodes one stream of StreamSize bytes, Frames frames of
// compressible, deterministic text:
//
//	go test -run '^$' -bench ZstdConcurrency -benchtime 300x -count 10 ./examples/zstd
//	go run ./examples/zstd/cmd/zstdtime -c 4 -n 20000    # under /usr/bin/time -v
package zstd

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/gapbench/gapbench/decodegap"
)

const (
	// StreamSize is the decoded size of one step's stream, bytes.
	StreamSize = 32 << 10
	// Frames is the number of zstd frames the stream is made of (each
	// StreamSize/Frames bytes decoded, one block each), so that a
	// concurrent decoder has blocks to overlap.
	Frames = 8
)

// Data returns the stream's decoded bytes: StreamSize bytes of words drawn
// from a small vocabulary by xorshift64 from a fixed seed, so that they
// compress about 3× and are the same on every run. The caller must not
// modify it.
func Data() []byte { return data() }

var data = sync.OnceValue(func() []byte {
	words := []string{"the", "decoder", "reads", "a", "frame", "block", "of", "literal", "sequences",
		"and", "matches", "window", "offset", "history", "entropy", "table", "stream", "goroutine"}
	var b bytes.Buffer
	x := uint64(0x9e3779b97f4a7c15)
	for b.Len() < StreamSize {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.WriteString(words[x%uint64(len(words))])
		if x>>60 == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:StreamSize]
})

// Stream returns the compressed stream: Data cut into Frames parts, each
// encoded as its own frame (default level, one encoder goroutine, so the
// bytes are the same on every run) and concatenated. The caller must not
// modify it.
func Stream() ([]byte, error) { return stream() }

var stream = sync.OnceValues(func() ([]byte, error) {
	enc, err := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("zstd: the encoder: %w", err)
	}
	defer enc.Close()
	var out []byte
	d, part := Data(), StreamSize/Frames
	for i := 0; i < len(d); i += part {
		out = enc.EncodeAll(d[i:min(i+part, len(d))], out)
	}
	return out, nil
})

// Open returns an Opener of a decoder of the given concurrency
// (kzstd.WithDecoderConcurrency; 1 decodes on the calling goroutine): each
// step resets it on a new bytes.Reader of Stream (a reader the decoder
// cannot take whole, so it decodes it as a stream, asynchronously above 1)
// and reads all StreamSize bytes with io.ReadFull. The reader is new every
// step because the previous stream's goroutines may still be reading
// theirs (the end of the last frame) until Reset has stopped them. The
// close closes the decoder.
func Open(concurrency int) decodegap.Opener {
	return func() (decodegap.Step, func() error, error) {
		src, err := Stream()
		if err != nil {
			return nil, nil, err
		}
		dec, err := kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(concurrency))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: a decoder at concurrency %d: %w", concurrency, err)
		}
		out := make([]byte, StreamSize)
		return func() error {
				if err := dec.Reset(bytes.NewReader(src)); err != nil {
					return fmt.Errorf("zstd: Reset: %w", err)
				}
				if _, err := io.ReadFull(dec, out); err != nil {
					return fmt.Errorf("zstd: reading the stream at concurrency %d: %w", concurrency, err)
				}
				return nil
			}, func() error {
				dec.Close()
				return nil
			}, nil
	}
}

// Check decodes Stream once at the given concurrency, as a step does, and
// reports an error unless the output is Data and the stream ends there:
// the parity check of the benchmarks.
func Check(concurrency int) error {
	src, err := Stream()
	if err != nil {
		return err
	}
	dec, err := kzstd.NewReader(bytes.NewReader(src), kzstd.WithDecoderConcurrency(concurrency))
	if err != nil {
		return fmt.Errorf("zstd: a decoder at concurrency %d: %w", concurrency, err)
	}
	defer dec.Close()
	got, err := io.ReadAll(dec)
	if err != nil {
		return fmt.Errorf("zstd: decoding at concurrency %d: %w", concurrency, err)
	}
	if !bytes.Equal(got, Data()) {
		return fmt.Errorf("zstd: decoding at concurrency %d gave %d bytes that differ from the %d encoded", concurrency, len(got), StreamSize)
	}
	return nil
}
