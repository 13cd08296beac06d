package interleave

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
)

// maxLine is the longest line given to benchfmt, whose reader stops with
// "token too long" at 64 KiB; a longer line is not a result anyone prints.
const maxLine = 60 << 10

// maxShow is the most bytes of a line of text shown in a RunError; a line
// that is not text shows its first quoteShow bytes, quoted.
const (
	maxShow   = 200
	quoteShow = 60
)

// outputReader reads one stream of a run's output line by line, whatever
// the lines' length. It keeps, when keep is set, the lines benchfmt may
// read (results, configuration and unit lines of text), and for a person
// the first and last lines, shortened.
type outputReader struct {
	keep bool
	// kept are the lines benchfmt may read, without newlines; lineOf[i]
	// is kept[i]'s line number in the output, from 1.
	kept   [][]byte
	lineOf []int
	// long is the first line that begins with "Benchmark" but is longer
	// than maxLine: its number (0 when none) and length.
	long, longLen int
	tail          headTail
	lines         int
}

func (o *outputReader) read(r io.Reader) {
	eachLine(r, maxLine, func(line []byte, n int) {
		o.lines++
		o.tail.add(line, n)
		if !o.keep {
			return
		}
		if n > maxLine {
			if bytes.HasPrefix(line, []byte("Benchmark")) && o.long == 0 {
				o.long, o.longLen = o.lines, n
			}
			return
		}
		if (bytes.HasPrefix(line, []byte("Benchmark")) || bytes.HasPrefix(line, []byte("Unit ")) || isConfigLine(line)) && isText(line) {
			o.kept = append(o.kept, bytes.Clone(line))
			o.lineOf = append(o.lineOf, o.lines)
		}
	})
}

// eachLine calls fn with every line of r without its newline, cut to at
// most max+1 bytes (fn must copy what it keeps); n is the line's full
// length. It returns at the end of r or at a read error.
func eachLine(r io.Reader, max int, fn func(line []byte, n int)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := max + 1 - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if n > 0 {
			full := n
			if err == nil {
				full-- // the newline
			}
			fn(buf[:min(len(buf), full)], full)
		}
		if err != nil {
			return
		}
		buf, n = buf[:0], 0
	}
}

// isConfigLine reports whether line could be a benchfmt configuration line
// ("key: value", the key lower-case first and free of spaces and upper case).
func isConfigLine(line []byte) bool {
	for i, r := range string(line) {
		switch {
		case i == 0 && !unicode.IsLower(r):
			return false
		case unicode.IsSpace(r) || unicode.IsUpper(r):
			return false
		case i > 0 && r == ':':
			return true
		}
	}
	return false
}

// isText reports whether s is UTF-8 of printable characters and tabs.
func isText(s []byte) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n <= 1 || r != '\t' && !unicode.IsPrint(r) {
			return false
		}
		s = s[n:]
	}
	return true
}

// show returns a line of n bytes (line holds at least its first maxShow+4)
// for a person: text up to maxShow bytes as it is, anything else quoted
// with Go's escapes, its first quoteShow bytes; a line cut short says how
// long it was.
func show(line []byte, n int) string {
	head := line[:min(len(line), maxShow)]
	if len(head) < n {
		// A character cut where the line was cut is not the line's fault.
		i := len(head) - 1
		for i > 0 && i > len(head)-4 && !utf8.RuneStart(head[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(head[i:]) {
			head = head[:i]
		}
	}
	if isText(head) {
		if n <= len(head) {
			return string(head)
		}
		return fmt.Sprintf("%s… (%d bytes in all)", head, n)
	}
	q := strconv.Quote(string(line[:min(len(line), quoteShow)]))
	if n > quoteShow {
		q += fmt.Sprintf("… (%d bytes in all)", n)
	}
	return q
}

// headTail keeps the first 5 and the last 16 lines of a stream, shortened
// by show.
type headTail struct {
	head, last []string
	n          int
}

func (h *headTail) add(line []byte, n int) {
	h.n++
	s := show(line, n)
	if len(h.head) < 5 {
		h.head = append(h.head, s)
		return
	}
	h.last = append(h.last, s)
	if len(h.last) > 16 {
		h.last = h.last[1:]
	}
}

// String returns the lines, all of them when there are at most 21; else the
// first 5 and last 15, with a line saying how many were left out between
// them: the cause of a failure is often first (a flag error before the
// usage text), its context last.
func (h *headTail) String() string {
	lines := append([]string(nil), h.head...)
	if h.n <= 21 {
		lines = append(lines, h.last...)
	} else {
		lines = append(lines, fmt.Sprintf("[… %d lines left out]", h.n-20))
		lines = append(lines, h.last[len(h.last)-15:]...)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// parseResults reads the results a run printed, and reports the first line
// at fault: a result line that does not parse or is too long, a value that is
// not a finite number, a result of 0 iterations, a second result of one
// benchmark, or no result.
func parseResults(o *outputReader, arm string) (_ []*benchfmt.Result, _ Cause, line int, _ error) {
	if o.long > 0 {
		return nil, Malformed, o.long, fmt.Errorf("line %d of its output begins with Benchmark but is %d bytes long, too long to be a result", o.long, o.longLen)
	}
	var in bytes.Buffer
	for _, l := range o.kept {
		in.Write(l)
		in.WriteByte('\n')
	}
	rd := benchfmt.NewReader(&in, arm)
	var results []*benchfmt.Result
	seen := map[string]int{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			i := rec.Line - 1
			return nil, Malformed, o.lineOf[i], fmt.Errorf("line %d of its output is not a benchmark result (%s): %s", o.lineOf[i], rec.Msg, show(o.kept[i], len(o.kept[i])))
		case *benchfmt.Result:
			_, l := rec.Pos()
			ln := o.lineOf[l-1]
			if rec.Iters < 1 {
				return nil, Malformed, ln, fmt.Errorf("line %d of its output gives %d iterations: a result measures at least one: %s", ln, rec.Iters, show(o.kept[l-1], len(o.kept[l-1])))
			}
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					val, unit := v.OrigValue, v.OrigUnit
					if unit == "" {
						val, unit = v.Value, v.Unit
					}
					return nil, Malformed, ln, fmt.Errorf("line %d of its output gives %v %s, not a finite number: %s", ln, val, unit, show(o.kept[l-1], len(o.kept[l-1])))
				}
			}
			name := string(rec.Name.Full())
			if prev, dup := seen[name]; dup {
				return nil, Duplicate, ln, fmt.Errorf("lines %d and %d of its output both give a result of Benchmark%s: a run must print one result per benchmark (-test.count=1)", prev, ln, name)
			}
			seen[name] = ln
			results = append(results, rec.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return nil, Malformed, 0, fmt.Errorf("reading its output: %w", err)
	}
	if len(results) == 0 {
		return nil, NoResults, 0, errors.New("it exited 0 but printed no benchmark results: check that the benchmark pattern (-test.bench) matches a benchmark in it")
	}
	return results, 0, 0, nil
}
