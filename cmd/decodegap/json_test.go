package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gapbench/gapbench/internal/report"
)

// readJSONReport reads a command's -json file and checks what every route
// writes: its schema, its command, and rows that name their arms and unit.
func readJSONReport(t *testing.T, path, command string) report.Doc {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	d, err := report.ReadJSON(f)
	require.NoError(t, err)
	assert.Equal(t, command, d.Command)
	require.NotEmpty(t, d.Rows)
	for _, r := range d.Rows {
		assert.NotEmpty(t, r.Arm)
		assert.NotEmpty(t, r.Base)
		assert.NotEmpty(t, r.Unit)
		assert.Contains(t, report.Outcomes, r.Outcome)
	}
	return d
}

// rowsByKind counts a report's rows by kind and arm ("candidate new").
func rowsByKind(d report.Doc) map[string]int {
	n := map[string]int{}
	for _, r := range d.Rows {
		n[r.Kind+" "+r.Arm]++
	}
	return n
}
