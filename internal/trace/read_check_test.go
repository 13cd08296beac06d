package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Read rejects negative durations and times, times that run backwards, and
// a stride whose iteration count overflows, naming the line.
func TestReadRejectsImpossibleValues(t *testing.T) {
	const hdr = `{"kind":"header","format":"gapbench-trace/1","benchmark":"B","samples":3,"stride":1,"steady":{"start":-1}}` + "\n"
	for _, tc := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"negative latency", hdr + `{"kind":"samples","first":0,"latency_ns":[1,-2,3]}`, 2, "samples: latency_ns[1] = -2 (sample 1): a duration cannot be negative"},
		{"negative gap column", hdr + `{"kind":"samples","first":0,"latency_ns":[1,2,3],"gap_ns":[5,-1,5],"requested_ns":[5,5,5]}`, 2, "samples: gap_ns[1] = -1 (sample 1): a duration cannot be negative"},
		{"negative requested", hdr + `{"kind":"samples","first":0,"latency_ns":[1,2],"requested_ns":[5,5]}` + "\n" + `{"kind":"samples","first":2,"latency_ns":[1],"requested_ns":[-9]}`, 3, "samples: requested_ns[0] = -9 (sample 2): a duration cannot be negative"},
		{"negative time", hdr + `{"kind":"boundary","iter":0,"time_ns":-1}`, 2, "boundary: time_ns = -1: a time since the start cannot be negative"},
		{"time backwards", hdr + `{"kind":"boundary","iter":0,"time_ns":10}` + "\n" + `{"kind":"boundary","iter":1,"time_ns":9}`, 3, "boundary: time_ns = 9 is before the previous boundary's 10: want nondecreasing times"},
		{"stride overflows", `{"kind":"header","format":"gapbench-trace/1","samples":3,"stride":4611686018427387904,"steady":{"start":-1}}`, 1, "header: 3 samples at stride 4611686018427387904: the iteration count overflows"},
		{"stride overflows at 2 samples", `{"kind":"header","format":"gapbench-trace/1","samples":2,"stride":4611686018427387904,"steady":{"start":-1}}` + "\n" + `{"kind":"samples","first":0,"latency_ns":[1,2]}`, 1, "header: 2 samples at stride 4611686018427387904: the iteration count overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.line, se.Line)
			assert.Equal(t, tc.msg, se.Msg)
		})
	}
	// The largest stride that does not overflow is read.
	tr, err := Read(strings.NewReader(`{"kind":"header","format":"gapbench-trace/1","samples":2,"stride":4611686018427387903,"steady":{"start":-1}}` + "\n" + `{"kind":"samples","first":0,"latency_ns":[1,2]}`))
	require.NoError(t, err)
	assert.Equal(t, 2*4611686018427387903, tr.Header.Iterations)
}

// FuzzRead: Read never panics; whatever it accepts holds no negative
// duration, writes back, and reads back the same.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"kind":"header","format":"gapbench-trace/1","samples":2,"stride":3,"steady":{"start":-1}}` + "\n" + `{"kind":"samples","first":0,"latency_ns":[1,2]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, col := range [][]int64{tr.Latency, tr.Gap, tr.Requested} {
			for i, x := range col {
				if x < 0 {
					t.Fatalf("accepted a negative duration at %d: %d", i, x)
				}
			}
		}
		if tr.Header.Iterations < len(tr.Latency) {
			t.Fatalf("accepted %d iterations for %d samples", tr.Header.Iterations, len(tr.Latency))
		}
		var b bytes.Buffer
		if err := Write(&b, tr); err != nil {
			t.Fatalf("Write refused what Read accepted: %v", err)
		}
		again, err := Read(&b)
		if err != nil {
			t.Fatalf("Read refused what Write wrote: %v\n%s", err, b.String())
		}
		assert.Equal(t, tr.Latency, again.Latency)
		assert.Equal(t, tr.Header.Iterations, again.Header.Iterations)
		assert.Equal(t, len(tr.Boundaries), len(again.Boundaries))
	})
}
