package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Kinds of line, the value of every line's "kind" field.
const (
	kindHeader   = "header"
	kindBoundary = "boundary"
	kindSamples  = "samples"
)

// wireHeader is the header line: the Header with the line's kind and the
// number of samples, which Read checks the chunks against.
type wireHeader struct {
	Kind string `json:"kind"`
	Header
	Samples int `json:"samples"`
}

// wireBoundary is a boundary line.
type wireBoundary struct {
	Kind string `json:"kind"`
	Boundary
}

// Write writes t to w in the format described in the package doc. It
// streams: the samples are formatted chunk by chunk through a small buffer,
// never copied whole, and t is neither modified nor retained. The header's
// Format is always written as the constant Format, Start in UTC, and a zero
// Iterations or Stride as the value it stands for.
//
// Write fails, writing nothing, when t breaks an invariant documented on its
// fields (lengths, ranges, a non-finite counter); the error names the field.
func Write(w io.Writer, t *Trace) error {
	if err := t.validate(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)

	h := wireHeader{Kind: kindHeader, Header: t.Header, Samples: len(t.Latency)}
	h.Format = Format
	h.Iterations, h.Stride = h.iterations(len(t.Latency)), h.stride()
	h.Start = h.Start.UTC()
	if err := writeJSONLine(bw, &h); err != nil {
		return err
	}
	for i := range t.Boundaries {
		if err := writeJSONLine(bw, &wireBoundary{Kind: kindBoundary, Boundary: t.Boundaries[i]}); err != nil {
			return fmt.Errorf("trace: Boundaries[%d]: %w", i, err)
		}
	}
	// buf holds one formatted column at a time: at most ChunkLen numbers of
	// at most 20 bytes each plus commas.
	buf := make([]byte, 0, ChunkLen*21+64)
	for first := 0; first < len(t.Latency); first += ChunkLen {
		var err error
		if buf, err = writeChunk(bw, buf, t, first); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeChunk writes the samples line of t's chunk that starts at first,
// formatting each column in buf (returned for the next chunk; it grows
// only when a column does not fit). It allocates nothing when buf has
// room: Write streams.
func writeChunk(bw *bufio.Writer, buf []byte, t *Trace, first int) ([]byte, error) {
	end := min(first+ChunkLen, len(t.Latency))
	buf = append(buf[:0], `{"kind":"samples","first":`...)
	buf = strconv.AppendInt(buf, int64(first), 10)
	if _, err := bw.Write(buf); err != nil {
		return buf, err
	}
	cols := [...]struct {
		name string
		v    []int64
	}{{"latency_ns", t.Latency}, {"gap_ns", t.Gap}, {"requested_ns", t.Requested}}
	for _, c := range cols {
		if c.v == nil {
			continue
		}
		buf = append(buf[:0], `,"`...)
		buf = append(buf, c.name...)
		buf = append(buf, `":[`...)
		for i, x := range c.v[first:end] {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, x, 10)
		}
		buf = append(buf, ']')
		if _, err := bw.Write(buf); err != nil {
			return buf, err
		}
	}
	_, err := bw.WriteString("}\n")
	return buf, err
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(bw *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = bw.Write(b)
	return err
}

// checkFinite returns an error naming the first non-finite value of m, which
// JSON cannot carry.
func checkFinite(field string, m map[string]float64) error {
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("trace: %s[%q] = %v: JSON has no such number; leave the name out and give the reason in Unavailable", field, k, v)
		}
	}
	return nil
}
