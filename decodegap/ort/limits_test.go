package ort

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// identityModel writes a one-node model y = Identity(x), x and y declared
// with dims (ints are sizes, strings names).
func identityModel(t *testing.T, dims ...any) string {
	t.Helper()
	g := pb(nil).str(graphName, "identity").
		msg(1, node("Identity", []string{"x"}, []string{"y"}, -1)).
		msg(graphInput, valueInfo("x", dims...)).
		msg(graphOutput, valueInfo("y", dims...))
	m := pb(nil).varint(modelIRVersion, 8).msg(modelOpset, pb(nil).str(1, "").varint(2, 17)).msg(modelGraph, g)
	p := filepath.Join(t.TempDir(), "identity.onnx")
	require.NoError(t, os.WriteFile(p, m, 0o644))
	return p
}

// TestOverflowingShapesAreRefused: a shape whose element count overflows
// int64, from the model file's static dims or from ModelConfig.Shapes,
// is a *LimitError, not a makeslice panic (issue 24 item 6).
func TestOverflowingShapesAreRefused(t *testing.T) {
	var le *LimitError
	static := identityModel(t, 1<<40, 1<<40)
	_, err := OpenModel(ModelConfig{Path: static})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, int64(-1), le.Size)
	assert.Contains(t, err.Error(), `input "x" of shape [1099511627776 1099511627776] needs more than 2⁶³ bytes, over the limit of 4294967296 bytes (ort.MaxTensorBytes)`)

	dyn := identityModel(t, 1, "n")
	_, err = OpenModel(ModelConfig{Path: dyn, Shapes: map[string][]int64{"x": {1, 9223372036854775807}}})
	require.ErrorAs(t, err, &le)
	_, err = OpenModel(ModelConfig{Path: dyn, Dims: map[string]int64{"n": 1 << 31}})
	require.ErrorAs(t, err, &le, "8 GiB of float32 is past the 4 GiB limit")
	assert.Equal(t, int64(8<<30), le.Size)

	// Under each limit one by one, five 4 GiB tensors pass MaxModelBytes
	// together (checked on the signature: nothing is allocated).
	big := Port{Name: "kv", Kind: Tensor, DType: Float32, Shape: []int64{1 << 30}}
	sig := Signature{Path: "m.onnx", Inputs: []Port{big, big, big}, Outputs: []Port{big, big}}
	err = checkSizes(sig)
	require.ErrorAs(t, err, &le)
	assert.EqualError(t, err, `the tensors of m.onnx up to output "kv" need 21474836480 bytes, over the limit of 17179869184 bytes (ort.MaxModelBytes)`)
	sig.Outputs = sig.Outputs[:1]
	assert.NoError(t, checkSizes(sig))
}

func TestThreadLimits(t *testing.T) {
	var le *LimitError
	err := Options{IntraOpThreads: 1000000}.Validate()
	require.ErrorAs(t, err, &le)
	assert.EqualError(t, err, "Options.IntraOpThreads needs 1000000 threads, over the limit of 1024 threads (ort.MaxThreads)")
	require.ErrorAs(t, Options{InterOpThreads: MaxThreads + 1}.Validate(), &le)
	assert.NoError(t, Options{IntraOpThreads: MaxThreads}.Validate())
}

// TestReadsAreBounded: a device or a named pipe given as a model (or a
// fill file) is refused at once instead of read without bound or waited
// on forever.
func TestReadsAreBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	for _, p := range []string{"/dev/zero", fifo, t.TempDir()} {
		done := make(chan error, 1)
		go func() { _, err := Inspect(p); done <- err }()
		select {
		case err := <-done:
			assert.True(t, errors.Is(err, ErrNotRegular), "%s: %v", p, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("Inspect(%s) did not return", p)
		}
	}
	_, err := Inspect("/dev/zero")
	assert.EqualError(t, err, "reading the ONNX model: /dev/zero: not a regular file (it is a character device)")

	m := &Model{}
	b := &Buffer{Port: Port{Name: "x", DType: Float32, Shape: []int64{1}}, Bytes: make([]byte, 4)}
	assert.ErrorIs(t, m.fill(0, b, Fill{Kind: File, Path: "/dev/zero"}), ErrNotRegular)
}
