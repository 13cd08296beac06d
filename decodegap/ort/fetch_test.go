package ort

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNPM stands in for npm in tests of scripts/fetch-ort.sh. FAKE_NPM says
// what `npm pack PKG` does: "fail" (a 404), "junk" (a tarball holding
// files with the wrong contents) or "real" (a tarball holding FAKE_LIB or
// FAKE_MODEL, the real files). Every call is appended to FAKE_LOG.
const fakeNPM = `#!/bin/sh
for last; do :; done
echo "$*" >>"$FAKE_LOG"
lib=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
model=package/dist/silero_vad_v5.onnx
case "$FAKE_NPM" in
fail)
	echo "npm error 404 Not Found - $last" >&2
	exit 1 ;;
junk)
	mkdir -p package/bin/napi-v6/linux/x64 package/dist
	echo junk >$lib
	echo junk >$model ;;
real)
	case "$last" in
	onnxruntime-node@*) m=$lib; src=$FAKE_LIB ;;
	*) m=$model; src=$FAKE_MODEL ;;
	esac
	mkdir -p "$(dirname $m)"
	cp "$src" $m ;;
esac
tar -cf - package | gzip -1 >fake-1.0.0.tgz
rm -rf package
`

type fetchRun struct {
	code           int
	stdout, stderr string
	calls          []string // npm command lines
}

// runFetch runs scripts/fetch-ort.sh with the fake npm first on PATH,
// GAPBENCH_CACHE=cache and the given FAKE_ variables.
func runFetch(t *testing.T, cache string, env ...string) fetchRun {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "npm"), []byte(fakeNPM), 0o755))
	log := filepath.Join(t.TempDir(), "npm.log")
	script, err := filepath.Abs("../../scripts/fetch-ort.sh")
	require.NoError(t, err)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		CacheEnv+"="+cache, "FAKE_LOG="+log, "TMPDIR="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	r := fetchRun{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	if b, err := os.ReadFile(log); err == nil {
		r.calls = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return r
}

func TestFetchScriptInstallsThenOnlyVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: packs and checks 48 MB (about 2 s); run without -short")
	}
	parts := Require(t)
	cache := t.TempDir()
	first := runFetch(t, cache, "FAKE_NPM=real", "FAKE_LIB="+parts.Library, "FAKE_MODEL="+parts.Model)
	require.Equal(t, 0, first.code, first.stderr)
	assert.Equal(t, []string{"pack --ignore-scripts onnxruntime-node@1.30.0", "pack --ignore-scripts @ricky0123/vad-web@0.0.31"}, first.calls)
	assert.Contains(t, first.stdout, "fetch-ort.sh: installed "+filepath.Join(cache, cacheLibrary)+" (sha256 ffb75a92")
	assert.Contains(t, first.stdout, "fetch-ort.sh: installed "+filepath.Join(cache, cacheModel)+" (sha256 2623a295")
	got, err := find(envOf(map[string]string{CacheEnv: cache}), "")
	require.NoError(t, err, "Find sees what the script installed")
	assert.Equal(t, filepath.Join(cache, cacheLibrary), got.Library)

	second := runFetch(t, cache, "FAKE_NPM=fail")
	require.Equal(t, 0, second.code, second.stderr)
	assert.Empty(t, second.calls, "a second run does not call npm")
	assert.Equal(t, "fetch-ort.sh: ONNX Runtime 1.30.0 and Silero VAD v5 present and verified in "+cache+"\n", second.stdout)
	assert.Empty(t, second.stderr)
}

func TestFetchScriptRejectsWrongChecksum(t *testing.T) {
	cache := t.TempDir()
	stale := filepath.Join(cache, cacheLibrary)
	writeFile(t, stale)

	r := runFetch(t, cache, "FAKE_NPM=junk")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "fetch-ort.sh: "+stale+" has the wrong SHA-256; removed it, fetching it again\n")
	assert.Contains(t, r.stderr, "fetch-ort.sh: SHA-256 mismatch for package/bin/napi-v6/linux/x64/libonnxruntime.so.1 from onnxruntime-node@1.30.0:\n"+
		"  want ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23\n"+
		"  got  ")
	assert.Contains(t, r.stderr, "clear npm's cache ('npm cache clean --force') and run\n'make deps' again.")
	assert.NoFileExists(t, stale, "a file that fails the check is removed, and a fetched one that fails is never installed")
	assert.NoFileExists(t, filepath.Join(cache, cacheModel))
}

func TestFetchScriptReportsNpmFailure(t *testing.T) {
	r := runFetch(t, t.TempDir(), "FAKE_NPM=fail")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "fetch-ort.sh: 'npm pack onnxruntime-node@1.30.0' failed:\nnpm error 404 Not Found - onnxruntime-node@1.30.0\n"+
		"Check that npm can reach its registry ('npm ping', 'npm config get registry'), then run 'make deps' again.")
}

func TestFetchScriptNeedsNpm(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"bash", "dirname"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	script, err := filepath.Abs("../../scripts/fetch-ort.sh")
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(bin, "bash"), script)
	cmd.Env = []string{"PATH=" + bin, CacheEnv + "=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, "fetch-ort.sh: 'npm' is not installed; install it (npm comes with Node.js) and run 'make deps' again\n", string(out))
}
