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
	"syscall"
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
// path must be a regular file: a fifo or a device is refused without
// waiting for a writer or reading without end.
func ReadFile(path string) (*Trace, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v): a trace is a file written by DECODEGAP_TRACE", path, fi.Mode().Type())
	}
	return read(f, path)
}

// MaxLineBytes bounds one line of a trace: a samples line of ChunkLen
// numbers in three columns is far shorter. A longer line (a file that is
// not a trace, such as /dev/zero) is a *SyntaxError, read no further.
const MaxLineBytes = 4 << 20

// reader is the state of one trace being read, line by line.
type reader struct {
	file    string
	line    int
	t       *Trace
	samples int // from the header; -1 until the header is read
	gapCols int // 1 if samples carry gap columns, 0 if not, -1 before the first chunk
}

func (rd *reader) fail(format string, args ...any) error {
	return &SyntaxError{File: rd.file, Line: rd.line, Msg: fmt.Sprintf(format, args...)}
}

// readLine returns the next line of br, without its newline, and whether
// it was the last; a line over MaxLineBytes is an error.
func readLine(br *bufio.Reader) (b []byte, eof bool, err error) {
	for {
		part, err := br.ReadSlice('\n')
		if len(b)+len(part) > MaxLineBytes {
			return nil, false, errLineTooLong
		}
		b = append(b, part...)
		switch {
		case err == nil:
			return b, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return b, true, nil
		default:
			return nil, false, err
		}
	}
}

var errLineTooLong = errors.New("line too long")

func read(r io.Reader, file string) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rd := &reader{file: file, t: &Trace{}, samples: -1, gapCols: -1}
	for {
		b, eof, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			rd.line++
			return nil, rd.fail("a line over %d bytes: is this a gapbench trace?", MaxLineBytes)
		}
		if err != nil {
			return nil, err
		}
		if eof && len(b) == 0 {
			break // errors at the end name the last line read
		}
		rd.line++
		if b = bytes.TrimSpace(b); len(b) > 0 {
			if err := rd.parse(b); err != nil {
				return nil, err
			}
		}
		if eof {
			break
		}
	}
	return rd.finish()
}

// parse reads one non-empty line.
func (rd *reader) parse(b []byte) error {
	var k struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return rd.fail("not a JSON object: %v", err)
	}
	if rd.samples < 0 && k.Kind != kindHeader {
		return rd.fail("first line has kind %q, want %q: is this a gapbench trace?", k.Kind, kindHeader)
	}
	switch k.Kind {
	case kindHeader:
		return rd.header(b)
	case kindBoundary:
		return rd.boundary(b)
	case kindSamples:
		return rd.chunk(b)
	}
	// A later writer of the same major version may add kinds of line;
	// the package doc promises readers skip them.
	return nil
}

func (rd *reader) header(b []byte) error {
	if rd.samples >= 0 {
		return rd.fail("a second header: one trace per file")
	}
	var h wireHeader
	if err := json.Unmarshal(b, &h); err != nil {
		return rd.fail("header: %v", err)
	}
	if h.Format != Format {
		return rd.fail("format %q, want %q: read it with the gapbench version that wrote it", h.Format, Format)
	}
	if h.Samples < 0 {
		return rd.fail("header: samples = %d, want >= 0", h.Samples)
	}
	if h.Stride < 1 {
		return rd.fail("header: stride = %d, want >= 1", h.Stride)
	}
	if h.Samples > 0 && h.Stride > math.MaxInt/h.Samples {
		return rd.fail("header: %d samples at stride %d: the iteration count overflows", h.Samples, h.Stride)
	}
	rd.samples = h.Samples
	rd.t.Header = h.Header
	rd.t.Header.Iterations = rd.t.Header.iterations(rd.samples)
	rd.t.Latency = make([]int64, 0, min(rd.samples, maxPrealloc))
	return nil
}

func (rd *reader) boundary(b []byte) error {
	var wb wireBoundary
	if err := json.Unmarshal(b, &wb); err != nil {
		return rd.fail("boundary: %v", err)
	}
	if wb.TimeNs < 0 {
		return rd.fail("boundary: time_ns = %d: a time since the start cannot be negative", wb.TimeNs)
	}
	t := rd.t
	if n := len(t.Boundaries); n > 0 && wb.TimeNs < t.Boundaries[n-1].TimeNs {
		return rd.fail("boundary: time_ns = %d is before the previous boundary's %d: want nondecreasing times", wb.TimeNs, t.Boundaries[n-1].TimeNs)
	}
	t.Boundaries = append(t.Boundaries, wb.Boundary)
	return nil
}

func (rd *reader) chunk(b []byte) error {
	var s wireSamples
	if err := json.Unmarshal(b, &s); err != nil {
		return rd.fail("samples: %v", err)
	}
	t := rd.t
	if s.First == nil || *s.First != len(t.Latency) {
		return rd.fail("samples chunk starts at iteration %v, want %d: chunks must be in order, without holes or overlaps", deref(s.First), len(t.Latency))
	}
	if (s.Gap != nil && len(s.Gap) != len(s.Latency)) || (s.Requested != nil && len(s.Requested) != len(s.Latency)) {
		return rd.fail("samples: %d latencies, %d gaps, %d requested gaps: want the same number of each", len(s.Latency), len(s.Gap), len(s.Requested))
	}
	cols := 0
	if s.Gap != nil {
		cols |= 1
	}
	if s.Requested != nil {
		cols |= 2
	}
	if rd.gapCols >= 0 && cols != rd.gapCols {
		return rd.fail("samples: gap_ns or requested_ns present in some chunks and absent in others")
	}
	rd.gapCols = cols
	for _, col := range []struct {
		name string
		v    []int64
	}{{"latency_ns", s.Latency}, {"gap_ns", s.Gap}, {"requested_ns", s.Requested}} {
		for i, x := range col.v {
			if x < 0 {
				return rd.fail("samples: %s[%d] = %d (sample %d): a duration cannot be negative", col.name, i, x, len(t.Latency)+i)
			}
		}
	}
	if len(t.Latency)+len(s.Latency) > rd.samples {
		return rd.fail("samples run past the header's %d", rd.samples)
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
	return nil
}

// finish checks the whole trace once every line is read.
func (rd *reader) finish() (*Trace, error) {
	if rd.samples < 0 {
		return nil, &SyntaxError{File: rd.file, Line: max(rd.line, 1), Msg: "empty: no header line"}
	}
	if len(rd.t.Latency) != rd.samples {
		return nil, &SyntaxError{File: rd.file, Line: rd.line, Msg: fmt.Sprintf("%d samples, the header says %d: the file is truncated", len(rd.t.Latency), rd.samples)}
	}
	if err := rd.t.validate(); err != nil {
		return nil, &SyntaxError{File: rd.file, Line: rd.line, Msg: err.Error()}
	}
	return rd.t, nil
}

func deref(p *int) any {
	if p == nil {
		return "(missing)"
	}
	return *p
}
