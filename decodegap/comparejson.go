package decodegap

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/atomicfile"
	"github.com/gapbench/gapbench/internal/report"
)

// JSONEnv names the environment variable that gives CompareConfig.JSON
// when the field is empty.
const JSONEnv = "GAPBENCH_JSON"

// jsonDir is the folder Compare writes its JSON report to, "" for none.
func (c *comparison) jsonDir() string {
	if c.cfg.JSON != "" {
		return c.cfg.JSON
	}
	return os.Getenv(JSONEnv)
}

// writeJSON writes every setting's rows as one JSON report in jsonDir,
// beside the file's final name and renamed over it.
func (c *comparison) writeJSON() error {
	dir := c.jsonDir()
	if dir == "" || c.cfg.NoNullArm {
		return nil
	}
	var rows []report.Row
	for pi, procs := range c.plan.procs {
		if c.judgeErr[pi] != nil {
			continue
		}
		for _, r := range c.rows[pi] {
			r.Bench = fmt.Sprintf("%s-%d", strings.TrimPrefix(c.bench, "Benchmark"), procs)
			rows = append(rows, r)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("CompareConfig.JSON %s: %w", dir, err)
	}
	name := strings.NewReplacer("/", "_", " ", "_", string(os.PathSeparator), "_").Replace(c.bench) + ".json"
	err := atomicfile.Write(filepath.Join(dir, name), func(w io.Writer) error {
		return report.WriteJSON(w, "compare", time.Now(), rows)
	})
	if err != nil {
		return fmt.Errorf("CompareConfig.JSON %s: %w", dir, err)
	}
	return nil
}
