package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gapbench/gapbench/internal/trace"
	"github.com/gapbench/gapbench/internal/traceplot"
)

func init() {
	commands["plot"] = command{
		summary: "draw a trace (" + trace.EnvDir + ") as an SVG or PNG picture",
		run:     runPlot,
	}
}

// plotUsage is printed by `decodegap plot -h` and on a usage error.
const plotUsage = `usage: decodegap plot [-o out.svg|out.png] [-format svg|png] TRACE...

Draws each trace file written by a benchmark run with DECODEGAP_TRACE=DIR:
step latency over iterations with the warm-up shaded and the steady window's
mean and p90, the achieved and requested gap, and the contention figures.

With -o, draws the one TRACE to that file, SVG or PNG by its extension.
Without it, draws each TRACE beside itself (a.jsonl -> a.svg), in -format.

flags:
`

// runPlot is the plot command. Flags may come before or after the trace
// files ("decodegap plot TRACE -o out.svg").
func runPlot(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the picture to write, `out.svg` or out.png (one TRACE only)")
	format := fs.String("format", "svg", "the picture format when drawing beside each TRACE: svg or png")
	fs.Usage = func() {
		fmt.Fprint(stderr, plotUsage)
		fs.PrintDefaults()
	}
	var traces []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		traces = append(traces, fs.Arg(0))
		args = fs.Args()[1:]
	}

	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "decodegap plot: %s\n", msg)
		fs.Usage()
		return 2
	}
	switch {
	case len(traces) == 0:
		return usageErr("no TRACE given: name a trace file written with " + trace.EnvDir + "=DIR")
	case *out != "" && len(traces) > 1:
		return usageErr(fmt.Sprintf("-o names one picture but %d traces were given: drop -o to draw each beside its trace", len(traces)))
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	if *out != "" {
		f, err := traceplot.FormatOf(*out)
		if err != nil {
			return usageErr(err.Error())
		}
		if formatSet && f != *format {
			return usageErr(fmt.Sprintf("-format %s but -o %s: the extension of -o sets the format; drop -format", *format, *out))
		}
	} else if !validFormat(*format) {
		return usageErr(fmt.Sprintf("-format %q: use one of %s", *format, strings.Join(traceplot.Formats, ", ")))
	}

	status := 0
	for _, path := range traces {
		dst := *out
		if dst == "" {
			dst = traceplot.BesidePath(path, *format)
		}
		if err := plotOne(path, dst); err != nil {
			fmt.Fprintf(stderr, "decodegap plot: %v\n", err)
			status = 1
			continue
		}
		fmt.Fprintf(stdout, "%s -> %s\n", path, dst)
	}
	return status
}

// plotOne draws the trace file src to the picture dst.
func plotOne(src, dst string) error {
	t, err := trace.ReadFile(src)
	if err != nil {
		return err
	}
	return traceplot.Render(t, dst)
}

// validFormat reports whether f is a picture format traceplot writes.
func validFormat(f string) bool {
	for _, g := range traceplot.Formats {
		if f == g {
			return true
		}
	}
	return false
}
