package decodegap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("CompareConfig.JSON %s: %w", dir, err)
	}
	err = report.WriteJSON(f, "compare", time.Now(), rows)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("CompareConfig.JSON %s: %w", dir, err)
	}
	return nil
}
