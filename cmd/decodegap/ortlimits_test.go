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
// thread is started or anything is allocated.
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
