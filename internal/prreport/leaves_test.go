package prreport

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leavesSource is a table-driven benchmark whose two cases differ in cost
// by about 10⁴: hashing 4 bytes and 64 KiB.
const leavesSource = `package leaves

import (
	"fmt"
	"testing"
)

var sink uint64

func hash(b []byte) uint64 {
	x := uint64(14695981039346656037)
	for _, c := range b {
		x ^= uint64(c)
		x *= 1099511628211
	}
	return x
}

func BenchmarkHash(b *testing.B) {
	for _, size := range []int{4, 64 << 10} {
		buf := make([]byte, size)
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += hash(buf)
			}
		})
	}
}
`

// leavesRepo is a git repository of one commit holding the module.
func leavesRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/leaves\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "leaves_test.go"), []byte(leavesSource), 0o644))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "leaves"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return dir
}

// Each leaf benchmark gets its own N: a 4-byte and a 64 KiB case of one
// table-driven benchmark each run about -benchtime a block (N × sec/op),
// where one N for the whole benchmark (the 64 KiB case's) gave the 4-byte
// case a block some 10⁴ times too short.
func TestEachLeafItsOwnIterations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a benchmark")
	}
	repo := leavesRepo(t)
	ctx := context.Background()
	b, err := Prepare(ctx, BuildConfig{Dir: repo, Base: "HEAD", Patterns: []string{"."}})
	require.NoError(t, err)
	defer b.Close()
	jobs := fixtureJobs(b)
	require.Len(t, jobs, 1)
	const d = 40 * time.Millisecond
	var log bytes.Buffer
	p := &ProcessRunner{Benchtime: d.String(), Seed: 1, Log: &log}
	res, err := p.RunRound(ctx, jobs[0], 1)
	require.NoError(t, err)
	t.Logf("calibration:\n%s", log.String())
	load, _ := os.ReadFile("/proc/loadavg")
	type block struct{ wall, cpu float64 }
	blocks := map[string][]block{}
	iters := map[string]int{}
	for _, r := range res {
		v, ok := r.Value("sec/op")
		if !ok {
			v, ok = r.Value("ns/op")
			v *= 1e-9
		}
		require.True(t, ok)
		name := string(r.Name.Full())
		cpu, hasCPU := r.Value(UnitCPU)
		assert.True(t, hasCPU, "%s: a run of one leaf gets %s", name, UnitCPU)
		blocks[name] = append(blocks[name], block{float64(r.Iters) * v, float64(r.Iters+1) * cpu})
		iters[name] = r.Iters
		assert.Equal(t, "1", r.GetConfig("round"))
	}
	require.Len(t, blocks, 2, "two leaves: %v", blocks)
	var small, big string
	for name := range blocks {
		if regexp.MustCompile(`size=4(-\d+)?$`).MatchString(name) {
			small = name
		} else {
			big = name
		}
	}
	require.NotEmpty(t, small)
	for name, bs := range blocks {
		require.Len(t, bs, 3, "%s: base, head and null", name)
		for _, x := range bs {
			t.Logf("%s: N %d, block %.1f ms, process CPU %.1f ms (load %s)", name, iters[name], x.wall*1e3, x.cpu*1e3, bytes.TrimSpace(load))
			// The band: calibration aims a run's process CPU time
			// (its start included) at d; a busy host stretches a
			// block's wall time, never shrinks it below its CPU time,
			// and a calibration run on a busy host can overshoot (3.7×
			// at load 3.5 in CI), so the band is wide: the bug it
			// guards against was a block 20000× too short.
			assert.True(t, x.cpu >= d.Seconds()/2 && x.cpu <= 10*d.Seconds(), "%s: process CPU %.2f ms, want about %v", name, x.cpu*1e3, d)
			assert.True(t, x.wall >= d.Seconds()/4 && x.wall <= 10*d.Seconds(), "%s: block %.3f ms, want about %v", name, x.wall*1e3, d)
		}
	}
	assert.Greater(t, iters[small], 100*iters[big], "the 4-byte case runs far more iterations than the 64 KiB case")
}

func TestLeafPattern(t *testing.T) {
	for name, want := range map[string]string{
		"BenchmarkHash/size=4-2":     `^BenchmarkHash$/^size=4(-2)?$`,
		"BenchmarkHash/size=4":       `^BenchmarkHash$/^size=4$`,
		"BenchmarkA/b.c/[x]#01-16":   `^BenchmarkA$/^b\.c$/^\[x\]#01(-16)?$`,
		"BenchmarkA/gap=1ms-":        `^BenchmarkA$/^gap=1ms-$`,
		"BenchmarkA/n=(1+2)/depth-8": `^BenchmarkA$/^n=\(1\+2\)$/^depth(-8)?$`,
	} {
		assert.Equal(t, want, leafPattern(name), name)
	}
}
