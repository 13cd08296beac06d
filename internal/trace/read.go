package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// maxPrealloc caps the samples preallocated from the header's iteration
// count, so that a corrupt header cannot ask for gigabytes up front.
const maxPrealloc = 1 << 22

// wireSamples is a samples line.
type wireSamples struct {
	First     *int    `json:"first"`
	Latency   []int64 `json:"latency_ns"`
	Gap       []int64 `json:"gap_ns"`
	Requested []int64 `json:"requested_ns"`
}

// Read reads one trace from r, in the format described in the package doc.
// The returned Trace is the caller's. A malformed trace gives a
// *SyntaxError with the line number; an error of r is returned as is.
func Read(r io.Reader) (*Trace, error) {
	return read(r, "")
}

// ReadFile reads the trace file at path; a *SyntaxError names the file.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

func read(r io.Reader, file string) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	t := &Trace{}
	var (
		line    int
		samples = -1 // from the header; -1 until the header is read
		gapCols = -1 // 1 if samples carry gap columns, 0 if not, -1 before the first chunk
	)
	fail := func(format string, args ...any) error {
		return &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	for {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		eof := err != nil
		if eof && len(b) == 0 {
			break // errors at the end name the last line read
		}
		line++
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			if eof {
				break
			}
			continue
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(b, &k); err != nil {
			return nil, fail("not a JSON object: %v", err)
		}
		if samples < 0 && k.Kind != kindHeader {
			return nil, fail("first line has kind %q, want %q: is this a gapbench trace?", k.Kind, kindHeader)
		}
		switch k.Kind {
		case kindHeader:
			if samples >= 0 {
				return nil, fail("a second header: one trace per file")
			}
			var h wireHeader
			if err := json.Unmarshal(b, &h); err != nil {
				return nil, fail("header: %v", err)
			}
			if h.Format != Format {
				return nil, fail("format %q, want %q: read it with the gapbench version that wrote it", h.Format, Format)
			}
			if h.Samples < 0 {
				return nil, fail("header: samples = %d, want >= 0", h.Samples)
			}
			if h.Stride < 1 {
				return nil, fail("header: stride = %d, want >= 1", h.Stride)
			}
			if h.Samples > 0 && h.Stride > math.MaxInt/h.Samples {
				return nil, fail("header: %d samples at stride %d: the iteration count overflows", h.Samples, h.Stride)
			}
			samples = h.Samples
			t.Header = h.Header
			t.Header.Iterations = t.Header.iterations(samples)
			t.Latency = make([]int64, 0, min(samples, maxPrealloc))
		case kindBoundary:
			var wb wireBoundary
			if err := json.Unmarshal(b, &wb); err != nil {
				return nil, fail("boundary: %v", err)
			}
			if wb.TimeNs < 0 {
				return nil, fail("boundary: time_ns = %d: a time since the start cannot be negative", wb.TimeNs)
			}
			if n := len(t.Boundaries); n > 0 && wb.TimeNs < t.Boundaries[n-1].TimeNs {
				return nil, fail("boundary: time_ns = %d is before the previous boundary's %d: want nondecreasing times", wb.TimeNs, t.Boundaries[n-1].TimeNs)
			}
			t.Boundaries = append(t.Boundaries, wb.Boundary)
		case kindSamples:
			var s wireSamples
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, fail("samples: %v", err)
			}
			if s.First == nil || *s.First != len(t.Latency) {
				return nil, fail("samples chunk starts at iteration %v, want %d: chunks must be in order, without holes or overlaps", deref(s.First), len(t.Latency))
			}
			if (s.Gap != nil && len(s.Gap) != len(s.Latency)) || (s.Requested != nil && len(s.Requested) != len(s.Latency)) {
				return nil, fail("samples: %d latencies, %d gaps, %d requested gaps: want the same number of each", len(s.Latency), len(s.Gap), len(s.Requested))
			}
			cols := 0
			if s.Gap != nil {
				cols |= 1
			}
			if s.Requested != nil {
				cols |= 2
			}
			if gapCols >= 0 && cols != gapCols {
				return nil, fail("samples: gap_ns or requested_ns present in some chunks and absent in others")
			}
			gapCols = cols
			for _, col := range []struct {
				name string
				v    []int64
			}{{"latency_ns", s.Latency}, {"gap_ns", s.Gap}, {"requested_ns", s.Requested}} {
				for i, x := range col.v {
					if x < 0 {
						return nil, fail("samples: %s[%d] = %d (sample %d): a duration cannot be negative", col.name, i, x, len(t.Latency)+i)
					}
				}
			}
			if len(t.Latency)+len(s.Latency) > samples {
				return nil, fail("samples run past the header's %d", samples)
			}
			first := len(t.Latency) == 0
			t.Latency = append(t.Latency, s.Latency...)
			if s.Gap != nil {
				if first {
					t.Gap = make([]int64, 0, cap(t.Latency))
				}
				t.Gap = append(t.Gap, s.Gap...)
			}
			if s.Requested != nil {
				if first {
					t.Requested = make([]int64, 0, cap(t.Latency))
				}
				t.Requested = append(t.Requested, s.Requested...)
			}
		default:
			// A later writer of the same major version may add kinds of
			// line; the package doc promises readers skip them.
		}
		if eof {
			break
		}
	}
	if samples < 0 {
		return nil, &SyntaxError{File: file, Line: max(line, 1), Msg: "empty: no header line"}
	}
	if len(t.Latency) != samples {
		return nil, &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf("%d samples, the header says %d: the file is truncated", len(t.Latency), samples)}
	}
	if err := t.validate(); err != nil {
		return nil, &SyntaxError{File: file, Line: line, Msg: err.Error()}
	}
	return t, nil
}

func deref(p *int) any {
	if p == nil {
		return "(missing)"
	}
	return *p
}
