package ort

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The package's size limits. A request beyond one is refused with a
// *LimitError before anything is allocated or started, so that a typo in
// a shape, a corrupt model or a named pipe given as a model ends in an
// error, never in a panic, an out-of-memory kill or a hang.
const (
	// MaxTensorBytes is the largest tensor the generic step allocates:
	// 4 GiB (a 7B decoder's whole float16 KV cache at 4,096 tokens is
	// about 2 GiB).
	MaxTensorBytes = 4 << 30
	// MaxModelBytes is the most memory OpenModel allocates for all of a
	// model's tensors together: 16 GiB.
	MaxModelBytes = 16 << 30
	// MaxFileBytes is the largest model file read: 2 GiB, protobuf's own
	// limit (larger ONNX models keep their weights in external data
	// files, which ONNX Runtime reads itself). Fill files (Fill.Path) have
	// the same limit.
	MaxFileBytes = 2 << 30
	// MaxThreads is the most intra- or inter-op threads Options may ask
	// for.
	MaxThreads = 1024
)

// LimitError says which request went past which limit.
type LimitError struct {
	// What names the request: `input "x" of shape [1,9223372036854775807]`.
	What string
	// Size is the request in Unit, or -1 when it overflows int64.
	Size int64
	// Limit is the limit in Unit; Unit is "bytes" or "threads".
	Limit int64
	Unit  string
}

// Error names the request, its size and the limit.
func (e *LimitError) Error() string {
	size := "more than 2⁶³"
	if e.Size >= 0 {
		size = fmt.Sprint(e.Size)
	}
	verb := "needs"
	if strings.HasPrefix(e.What, "the tensors") {
		verb = "need"
	}
	return fmt.Sprintf("%s %s %s %s, over the limit of %d %s (ort.Max%s)", e.What, verb, size, e.Unit, e.Limit, e.Unit, limitName(e))
}

func limitName(e *LimitError) string {
	switch {
	case e.Unit == "threads":
		return "Threads"
	case e.Limit == MaxModelBytes:
		return "ModelBytes"
	case e.Limit == MaxFileBytes:
		return "FileBytes"
	}
	return "TensorBytes"
}

// tensorBytes returns the bytes of a tensor of p's (resolved) shape, or a
// *LimitError when it overflows or passes MaxTensorBytes.
func tensorBytes(p Port, what string) (int64, error) {
	n := uint64(max(p.DType.Size(), 1))
	over := false
	for _, d := range p.Shape {
		if d < 0 {
			continue
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			over = true
			n = math.MaxInt64
			continue
		}
		n = lo
	}
	e := &LimitError{What: fmt.Sprintf("%s %q of shape %v", what, p.Name, p.Shape), Size: int64(n), Limit: MaxTensorBytes, Unit: "bytes"}
	if over {
		e.Size = -1
		return 0, e
	}
	if n > MaxTensorBytes {
		return 0, e
	}
	return int64(n), nil
}

// checkSizes refuses a signature whose resolved inputs and outputs (those
// with every axis known) overflow or pass MaxTensorBytes one by one or
// MaxModelBytes together.
func checkSizes(sig Signature) error {
	var total int64
	for _, side := range []struct {
		what  string
		ports []Port
	}{{"input", sig.Inputs}, {"output", sig.Outputs}} {
		for _, p := range side.ports {
			n, err := tensorBytes(p, side.what)
			if err != nil {
				return err
			}
			total += n
			if total > MaxModelBytes {
				return &LimitError{What: fmt.Sprintf("the tensors of %s up to %s %q", sig.Path, side.what, p.Name), Size: total, Limit: MaxModelBytes, Unit: "bytes"}
			}
		}
	}
	return nil
}

// ErrNotRegular is returned (wrapped) for a model or fill file that is not
// a regular file: a named pipe, a device such as /dev/zero, a directory.
var ErrNotRegular = errors.New("not a regular file")

// readFile reads a regular file of at most MaxFileBytes. It opens without
// blocking (a named pipe with no writer would block the open), refuses
// anything but a regular file, and reads at most one byte past the limit.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (it is a %s)", path, ErrNotRegular, fileKind(st.Mode()))
	}
	if st.Size() > MaxFileBytes {
		return nil, &LimitError{What: "file " + path, Size: st.Size(), Limit: MaxFileBytes, Unit: "bytes"}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &LimitError{What: "file " + path, Size: int64(len(b)), Limit: MaxFileBytes, Unit: "bytes"}
	}
	return b, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "non-regular file"
}
