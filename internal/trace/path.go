package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ext is the file name extension of trace files.
const Ext = ".jsonl"

// EnvDir is the environment variable that asks a benchmark run for traces:
// it names the folder each run writes its trace to (DECODEGAP_TRACE=DIR);
// unset or empty, no trace is written. `decodegap plot DIR` draws them.
const EnvDir = "DECODEGAP_TRACE"

// FileName returns the base name of the trace of benchmark benchName at
// -count index count: the name sanitized for file systems (sub-benchmark
// '/' becomes '.', '=' becomes '-', and every other byte outside
// [A-Za-z0-9._-] becomes '_'), then ".count<N>" and Ext.
//
//	FileName("BenchmarkVAD/gap=32ms threads", 2) == "BenchmarkVAD.gap-32ms_threads.count2.jsonl"
func FileName(benchName string, count int) string {
	var b strings.Builder
	for i := 0; i < len(benchName); i++ {
		c := benchName[i]
		switch {
		case c == '/':
			b.WriteByte('.')
		case c == '=':
			b.WriteByte('-')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		b.WriteString("trace")
	}
	return fmt.Sprintf("%s.count%d%s", b.String(), count, Ext)
}

// Path returns dir joined with FileName(benchName, count), or, when that
// file exists, with the name of the next free count index: a trace is never
// overwritten. Between Path and creating the file another process may take
// the name; Create does both atomically.
func Path(dir, benchName string, count int) string {
	for c := count; ; c++ {
		p := filepath.Join(dir, FileName(benchName, c))
		if _, err := os.Lstat(p); err != nil {
			return p // free, or unreadable: Create reports why
		}
	}
}

// Create creates a new trace file in dir, named by FileName from benchName
// and the first count index from count on whose file does not exist yet
// (O_EXCL: an existing trace is never overwritten). It creates dir when
// missing. The caller closes the file.
func Create(dir, benchName string, count int) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("trace: creating the trace folder (DECODEGAP_TRACE): %w", err)
	}
	for c := count; ; c++ {
		f, err := os.OpenFile(filepath.Join(dir, FileName(benchName, c)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		return f, nil
	}
}

// WriteFile writes t to a new file in dir named from t.Header.Benchmark and
// t.Header.Count (see Create) and returns its path. On failure it removes
// the partial file.
func WriteFile(dir string, t *Trace) (path string, err error) {
	if err := t.validate(); err != nil {
		return "", err
	}
	f, err := Create(dir, t.Header.Benchmark, t.Header.Count)
	if err != nil {
		return "", err
	}
	path = f.Name()
	err = Write(f, t)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("trace: writing %s: %w", path, err)
	}
	return path, nil
}
