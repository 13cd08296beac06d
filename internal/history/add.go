package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// Added is what Add did with one file.
type Added struct {
	// Name and SHA256 name the file.
	Name, SHA256 string
	// New is false when a file with the same bytes was already stored:
	// nothing was written for it.
	New bool
	// Results and Verdicts are the rows the file holds.
	Results, Verdicts int
	// Replaced counts the stored files of the same name removed for it
	// (File.Replaces).
	Replaced int
}

// Add stores files in one transaction: all of them, or, on any error,
// none (the store is left as it was). A file whose SHA-256 is already
// stored is skipped (Added.New false), also when another process stores
// it at the same moment (INSERT … ON CONFLICT DO NOTHING). Every file must
// have a commit and a commit date (see File.Fill); the error for one that
// lacks them is an *InputError.
func (s *Store) Add(ctx context.Context, files []*File) ([]Added, error) {
	for _, f := range files {
		if err := f.Check(); err != nil {
			return nil, err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.Where, err)
	}
	defer tx.Rollback()
	out := make([]Added, 0, len(files))
	now := formatTime(time.Now())
	for _, f := range files {
		a := Added{Name: f.Name, SHA256: f.SHA256, Results: len(f.Results), Verdicts: len(f.Verdicts)}
		var id int64
		err := tx.QueryRowContext(ctx, s.q(`INSERT INTO files (sha256, name, commit_hash, commit_time, host, go_version, added_at, results)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING RETURNING id`),
			f.SHA256, f.Name, f.Prov.Commit, formatTime(f.Prov.Date), f.Prov.Host, f.Prov.GoVersion, now, len(f.Results)).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			out = append(out, a)
			continue
		case err != nil:
			return nil, fmt.Errorf("history: storing %s: %w", f.Name, err)
		}
		a.New = true
		if f.Replaces {
			n, err := s.removeNamed(ctx, tx, f.Name, id)
			if err != nil {
				return nil, fmt.Errorf("history: replacing %s: %w", f.Name, err)
			}
			a.Replaced = n
		}
		if err := s.insertRows(ctx, tx, id, f); err != nil {
			return nil, fmt.Errorf("history: storing %s: %w", f.Name, err)
		}
		out = append(out, a)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.Where, err)
	}
	return out, nil
}

// removeNamed deletes every stored file called name other than the one
// with id keep, with its rows; it returns how many files it removed.
func (s *Store) removeNamed(ctx context.Context, tx *sql.Tx, name string, keep int64) (int, error) {
	others := `SELECT id FROM files WHERE name = ? AND id <> ?`
	for _, table := range []string{"configs", "results", "verdicts"} {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM `+table+` WHERE file_id IN (`+others+`)`), name, keep); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM files WHERE name = ? AND id <> ?`), name, keep)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// insertRows writes a new file's configuration lines, values and
// verdict rows.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, id int64, f *File) error {
	for i, c := range f.Configs {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO configs (file_id, seq, key, value) VALUES (?, ?, ?, ?)`), id, i, c.Key, c.Value); err != nil {
			return err
		}
	}
	st, err := tx.PrepareContext(ctx, s.q(`INSERT INTO results (file_id, seq, vseq, name, unit, value, iters, arm, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer st.Close()
	for _, v := range f.Results {
		if _, err := st.ExecContext(ctx, id, v.Seq, v.VSeq, v.Name, v.Unit, v.Value, v.Iters, v.Arm, v.Config); err != nil {
			return err
		}
	}
	for i, v := range f.Verdicts {
		var ratio any
		if !math.IsNaN(v.Ratio) {
			ratio = v.Ratio
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO verdicts (file_id, seq, benchmark, arm, metric, outcome, ratio, line) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
			id, i, v.Benchmark, v.Arm, v.Metric, v.Outcome, ratio, v.Line); err != nil {
			return err
		}
	}
	return nil
}

// StoredFile is one stored file's provenance.
type StoredFile struct {
	ID           int64
	Name, SHA256 string
	Prov         Provenance
	Results      int
	Configs      []Config
	Verdicts     []Verdict
	AddedAt      time.Time
}

// Files returns every stored file with its configuration lines and
// verdict rows, in commit order (commit date, then the order added).
func (s *Store) Files(ctx context.Context) ([]StoredFile, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, sha256, commit_hash, commit_time, host, go_version, added_at, results FROM files ORDER BY commit_time, id`)
	if err != nil {
		return nil, err
	}
	var out []StoredFile
	idx := map[int64]int{}
	for rows.Next() {
		var f StoredFile
		var ct, at string
		if err := rows.Scan(&f.ID, &f.Name, &f.SHA256, &f.Prov.Commit, &ct, &f.Prov.Host, &f.Prov.GoVersion, &at, &f.Results); err != nil {
			rows.Close()
			return nil, err
		}
		f.Prov.Date, _ = parseTime(ct)
		f.AddedAt, _ = parseTime(at)
		idx[f.ID] = len(out)
		out = append(out, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	crows, err := s.db.QueryContext(ctx, `SELECT file_id, key, value FROM configs ORDER BY file_id, seq`)
	if err != nil {
		return nil, err
	}
	for crows.Next() {
		var id int64
		var c Config
		if err := crows.Scan(&id, &c.Key, &c.Value); err != nil {
			crows.Close()
			return nil, err
		}
		if i, ok := idx[id]; ok {
			out[i].Configs = append(out[i].Configs, c)
		}
	}
	crows.Close()
	vrows, err := s.db.QueryContext(ctx, `SELECT file_id, benchmark, arm, metric, outcome, ratio, line FROM verdicts ORDER BY file_id, seq`)
	if err != nil {
		return nil, err
	}
	defer vrows.Close()
	for vrows.Next() {
		var id int64
		var v Verdict
		var ratio sql.NullFloat64
		if err := vrows.Scan(&id, &v.Benchmark, &v.Arm, &v.Metric, &v.Outcome, &ratio, &v.Line); err != nil {
			return nil, err
		}
		v.Ratio = math.NaN()
		if ratio.Valid {
			v.Ratio = ratio.Float64
		}
		if i, ok := idx[id]; ok {
			out[i].Verdicts = append(out[i].Verdicts, v)
		}
	}
	return out, vrows.Err()
}
