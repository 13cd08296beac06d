package trace

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeros is /dev/zero: an endless stream without a newline.
type zeros struct{ read int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += len(p)
	return len(p), nil
}

// A stream with no end of line (plot /dev/zero) is refused after at most
// MaxLineBytes and a buffer, not read until memory runs out.
func TestReadBoundsALine(t *testing.T) {
	z := &zeros{}
	_, err := Read(z)
	var se *SyntaxError
	require.True(t, errors.As(err, &se), "err = %v", err)
	assert.Equal(t, 1, se.Line)
	assert.Contains(t, se.Msg, "a line over 4194304 bytes")
	assert.LessOrEqual(t, z.read, MaxLineBytes+2*64<<10)
}

// A fifo is refused at once, without waiting for a writer.
func TestReadFileRefusesAFifo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	_, err := ReadFile(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")
}
