package history

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A path holding '#', '?', '%' or being ":memory:" names a file of that
// name: stored values are there when it is opened again.
func TestOpenPathIsAFileName(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	for _, name := range []string{"a#b.db", "q?mode=memory.db", "p%41.db", ":memory:", "file:x.db"} {
		s, err := Open(ctx, name)
		require.NoError(t, err, name)
		f, err := ParseFile(name+".txt", []byte("commit: c1\ncommit-date: 2026-11-01T00:00:00Z\nBenchmarkStep-2 100 1000 ns/op\n"))
		require.NoError(t, err)
		_, err = s.Add(ctx, []*File{f})
		require.NoError(t, err, name)
		require.NoError(t, s.Close())
		fi, err := os.Stat(name)
		require.NoError(t, err, "%s: no file of that name", name)
		assert.True(t, fi.Mode().IsRegular(), name)

		s, err = OpenExisting(ctx, name)
		require.NoError(t, err, name)
		files, err := s.Files(ctx)
		require.NoError(t, err)
		assert.Len(t, files, 1, name)
		s.Close()
	}
	ents, _ := os.ReadDir(".")
	for _, e := range ents {
		assert.NotEqual(t, "a", e.Name(), "'#' cut the name")
		assert.NotEqual(t, "q", e.Name(), "'?' cut the name")
		assert.NotEqual(t, "pA.db", e.Name(), "'%41' was decoded")
	}
}

func TestOpenExistingCreatesNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := OpenExisting(context.Background(), "sub/typo.db")
	assert.True(t, errors.Is(err, ErrNoStore), "%v", err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	assert.EqualError(t, err, "history: sub/typo.db: no history store there: file does not exist")
	_, err = os.Stat("sub")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "the folder was created")
}
