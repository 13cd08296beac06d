package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// TestORTRefusesRunawayRequests: -sessions 100000, -arm intra=1000000,
// -shape X=1x9223372036854775807 and -list on a device or a named pipe end
// at once with a usage error or a named one (issue 24 item 6), before any
// thread is started or anything is allocated; so does -decode 1000000,
// which ran 120 s without a finished block (issue 39 item 2).
func TestORTRefusesRunawayRequests(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "m.onnx")
	assert.NoError(t, unix.Mkfifo(fifo, 0o644))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-sessions", "100000", "-arm", "intra=1", "m.onnx"}, 2, "decodegap ort: -sessions 100000: at most 256 (each session is a locked OS thread and a whole ONNX Runtime session)\n"},
		{[]string{"-arm", "intra=1000000", "m.onnx"}, 2, `decodegap ort: -arm "intra=1000000": Options.IntraOpThreads needs 1000000 threads, over the limit of 1024 threads (ort.MaxThreads)` + "\n"},
		{[]string{"-arm", "intra=1", "-dims", "batch=1", "-decode", "1000000", "-prefill", "1", "m.onnx"}, 2, "decodegap ort: -decode 1000000: at most 8192 tokens a generation (each step reads the whole KV cache, so a generation's time grows with the square of -decode: 32768 tokens took 50 s a block with a 2-layer test model); for a deep context give -prefill N and a short -decode\n"},
		{[]string{"-arm", "intra=1", "-decode", "10", "-prefill", "2000000", "m.onnx"}, 2, "decodegap ort: -prefill 2000000 + -decode 10: the context may hold at most 1048576 tokens\n"},
		{[]string{"-list", "/dev/zero"}, 1, "decodegap ort: reading the ONNX model: /dev/zero: not a regular file (it is a character device)\n"},
		{[]string{"-list", fifo}, 1, "decodegap ort: reading the ONNX model: " + fifo + ": not a regular file (it is a named pipe)\n"},
	} {
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- runORT(append([]string{"-lock=false"}, c.args...), &out, &errb) }()
		select {
		case code := <-done:
			assert.Equal(t, c.code, code, "%v", c.args)
			assert.Contains(t, errb.String(), c.want, "%v", c.args)
		case <-time.After(20 * time.Second):
			t.Fatalf("%v did not return", c.args)
		}
	}
}
