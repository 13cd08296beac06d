package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSpinCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := dispatch([]string{"spin", "-cpu", "0", "-duty", "50", "-for", "100ms"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, errb.String(), "decodegap spin: spinning on CPU 0 at 50% duty for 100ms\n")
	assert.Regexp(t, `^spun \d+ms of \d+ms on CPU 0 \(50% duty requested\)\n$`, out.String())
}

func TestSpinCommandErrors(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, dispatch([]string{"spin"}, &out, &errb))
	assert.Contains(t, errb.String(), "-cpu N is required")

	errb.Reset()
	assert.Equal(t, 2, dispatch([]string{"spin", "-cpu", "0", "-duty", "150"}, &out, &errb))
	assert.Contains(t, errb.String(), "-duty 150 must be within 0–100")

	for _, d := range []string{"NaN", "-1", "+Inf"} {
		errb.Reset()
		assert.Equal(t, 2, dispatch([]string{"spin", "-cpu", "0", "-duty", d, "-for", "10ms"}, &out, &errb), "-duty %s", d)
		assert.Contains(t, errb.String(), "decodegap spin: -duty "+d+" must be within 0–100", "-duty %s", d)
	}

	errb.Reset()
	assert.Equal(t, 1, dispatch([]string{"spin", "-cpu", "1023", "-for", "10ms"}, &out, &errb))
	assert.Contains(t, errb.String(), "decodegap spin: hostmon: cannot spin on CPU 1023: invalid argument")
}
