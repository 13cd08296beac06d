// Package traceplot draws gapbench's pictures with gonum.org/v1/plot: a
// trace (internal/trace) as three panels — step latency with the warm-up and
// the steady window, the achieved and requested gap, the contention figures
// — and the verdict of an interleaved A/B comparison against its null band.
//
// Every picture is written as SVG or PNG, chosen by the output file's
// extension (".svg", ".png") or, for the writer forms, by a format name
// ("svg", "png"). Text in an SVG is real <text>, so a test or a person can
// search it.
package traceplot

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/trace"
)

// Formats are the picture formats the package writes, by name.
var Formats = []string{"svg", "png"}

// FormatOf returns the picture format named by path's extension, "svg" or
// "png", or an error that lists the extensions to use.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("traceplot: %q: cannot tell the picture format from the extension %q: name the output .svg or .png", path, filepath.Ext(path))
}

// newCanvas returns a w×h canvas that writes format.
func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case "svg":
		return vgsvg.New(w, h), nil
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.New(w, h)}, nil
	}
	return nil, fmt.Errorf("traceplot: unknown picture format %q: use %q", format, Formats)
}

// writeFile writes a picture to path with write, in the format of path's
// extension. It writes a new file beside path and renames it over path
// (atomicfile.Write), so that a reader never sees a half-written picture;
// a symlink, device or fifo at path is refused, never written through or
// replaced. On failure path is untouched.
func writeFile(path string, write func(w io.Writer, format string) error) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return write(w, format) }); err != nil {
		return fmt.Errorf("traceplot: %w", err)
	}
	return nil
}

// xmlSafe passes an SVG through with the bytes XML 1.0 forbids in any form
// (the control characters but tab, newline and carriage return, which a
// benchmark name can hold) replaced by '?', so that the picture parses as
// XML. A UTF-8 multi-byte sequence never holds such a byte.
type xmlSafe struct{ w io.Writer }

func (x xmlSafe) Write(p []byte) (int, error) {
	q := p
	for i, c := range p {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			if &q[0] == &p[0] {
				q = append([]byte(nil), p...)
			}
			q[i] = '?'
		}
	}
	return x.w.Write(q)
}

// pictureWriter returns w for format, made XML-safe for SVG.
func pictureWriter(w io.Writer, format string) io.Writer {
	if format == "svg" {
		return xmlSafe{w}
	}
	return w
}

// BesidePath returns the path of the picture drawn beside the trace file
// tracePath: the same name with its extension (".jsonl") replaced by
// "." + format ("svg" or "png"), or, for a name without it, with
// "." + format added.
func BesidePath(tracePath, format string) string {
	return strings.TrimSuffix(tracePath, trace.Ext) + "." + format
}
