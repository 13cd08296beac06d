package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDispatchUnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"no-such-command"}, &out, &errb)
	assert.Equal(t, 2, code)
	assert.Contains(t, errb.String(), `unknown command "no-such-command"`)
	assert.Contains(t, errb.String(), "usage: decodegap <command>")
}

func TestDispatchRunsRegisteredCommand(t *testing.T) {
	commands["test-echo"] = command{summary: "echo for tests", run: func(args []string, stdout, _ io.Writer) int {
		for _, a := range args {
			stdout.Write([]byte(a))
		}
		return 3
	}}
	defer delete(commands, "test-echo")
	var out, errb bytes.Buffer
	assert.Equal(t, 3, dispatch([]string{"test-echo", "a", "b"}, &out, &errb))
	assert.Equal(t, "ab", out.String())

	errb.Reset()
	assert.Equal(t, 0, dispatch([]string{"help"}, &out, &errb))
	assert.Contains(t, errb.String(), "test-echo")
	assert.Contains(t, errb.String(), "echo for tests")
}
