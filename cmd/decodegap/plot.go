package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gapbench/gapbench/internal/trace"
	"github.com/gapbench/gapbench/internal/traceplot"
)

func init() {
	commands["plot"] = command{
		summary: "draw the traces in a folder (" + trace.EnvDir + "=DIR) as SVG or PNG pictures",
		run:     runPlot,
	}
}

// plotUsage is printed by `decodegap plot -h` and on a usage error.
const plotUsage = `usage: decodegap plot [-o out.svg|out.png] [-format svg|png] DIR|TRACE...

Draws the trace files a benchmark run writes with ` + trace.EnvDir + `=DIR:
every trace (*` + trace.Ext + `) in each DIR, and each TRACE file named. A
picture shows step latency over iterations (the part before the steady window
shaded and named by the steady-state class, the steady window with its mean
and p90, the change points), the achieved and requested gap, and the
contention figures (percentages and load1 on their own axes).

Without -o, draws each trace beside itself (a.jsonl -> a.svg), in -format.
With -o, draws the one trace to that file, SVG or PNG by its extension.

  ` + trace.EnvDir + `=traces go test -bench . -benchtime=2000x
  decodegap plot traces

flags:
`

// runPlot is the plot command. Flags may come before or after the folders
// and files ("decodegap plot traces -format png").
func runPlot(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the picture to write, `out.svg` or out.png (one trace only)")
	format := fs.String("format", "svg", "the picture format when drawing beside each trace: svg or png")
	fs.Usage = func() {
		fmt.Fprint(stderr, plotUsage)
		fs.PrintDefaults()
	}
	var names []string
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
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}

	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "decodegap plot: %s\n", msg)
		fs.Usage()
		return 2
	}
	if len(names) == 0 {
		return usageErr("no DIR or TRACE given: name the folder a benchmark run wrote with " + trace.EnvDir + "=DIR")
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
	} else if !slices.Contains(traceplot.Formats, *format) {
		return usageErr(fmt.Sprintf("-format %q: use one of %s", *format, strings.Join(traceplot.Formats, ", ")))
	}

	traces, err := traceFiles(names)
	if err != nil {
		fmt.Fprintf(stderr, "decodegap plot: %v\n", err)
		return 1
	}
	if *out != "" && len(traces) > 1 {
		return usageErr(fmt.Sprintf("-o names one picture but there are %d traces: drop -o to draw each beside its trace", len(traces)))
	}

	failed := 0
	for _, path := range traces {
		dst := *out
		if dst == "" {
			dst = traceplot.BesidePath(path, *format)
		}
		if err := plotOne(path, dst); err != nil {
			fmt.Fprintf(stderr, "decodegap plot: %v\n", err)
			failed++
			continue
		}
		fmt.Fprintf(stdout, "%s -> %s\n", path, dst)
	}
	if failed > 0 {
		if len(traces) > 1 {
			fmt.Fprintf(stderr, "decodegap plot: %d of %d traces not drawn\n", failed, len(traces))
		}
		return 1
	}
	return 0
}

// traceFiles expands names into the trace files to draw: a folder gives
// its *.jsonl files (not those of its subfolders), sorted; a file is taken
// as it is. A folder without traces is an error, so that a mistyped folder
// does not pass in silence.
func traceFiles(names []string) ([]string, error) {
	var out []string
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, name)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(globEscape(name), "*"+trace.Ext))
		if err != nil {
			return nil, err
		}
		var files []string
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no trace files (*%s): a benchmark run writes them with %s=%s", name, trace.Ext, trace.EnvDir, name)
		}
		slices.Sort(files)
		out = append(out, files...)
	}
	return out, nil
}

// globEscape escapes the characters filepath.Glob treats specially.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// plotOne draws the trace file src to the picture dst.
func plotOne(src, dst string) error {
	t, err := trace.ReadFile(src)
	if err != nil {
		return err
	}
	return traceplot.Render(t, dst)
}
