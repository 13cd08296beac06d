package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// The file keys decodegap pr and bisect write on every result
// (internal/prreport's KeyPRBase and KeyPRHead): the revision of each
// side, "REF COMMIT", "worktree COMMIT" (a clean work tree),
// "worktree" or "worktree-dirty" (no commit).
const (
	KeyPRBase = "pr-base"
	KeyPRHead = "pr-head"
)

// SplitRevisions splits f, parsed by ParseFile from data, by the commit
// each result measured, when its results carry KeyPRBase and KeyPRHead
// (a file of decodegap pr or bisect, which holds two revisions): the
// arms base and null measured the base's commit, the arm head the
// head's. It returns one File per commit, in order of first appearance,
// each named "NAME@COMMIT" (12 hex digits), keyed by the SHA-256 of f's
// digest and the commit (adding the file again writes nothing), with
// Prov.Commit set, Prov.Date zero (a commit-date: line cannot be of both
// commits: the caller fills each commit's own), Host and GoVersion as f
// has them, the results
// and file configuration lines of that commit's results, and no verdict
// rows. uncommitted counts the result lines that measured no commit (a
// work tree with uncommitted changes) or another arm: they are in no
// returned File. ok is false, and f is to be stored as it is, when no
// result carries both keys.
func SplitRevisions(f *File, data []byte) (files []*File, uncommitted int, ok bool) {
	type line struct {
		commit  string
		configs []Config
	}
	var lines []line
	r := benchfmt.NewReader(bytes.NewReader(data), f.Name)
	for r.Scan() {
		res, isRes := r.Result().(*benchfmt.Result)
		if !isRes {
			continue
		}
		l := line{}
		base, head := res.GetConfig(KeyPRBase), res.GetConfig(KeyPRHead)
		if base != "" && head != "" {
			ok = true
			switch res.GetConfig(KeyArm) {
			case "base", "null":
				l.commit = revisionCommit(base)
			case "head":
				l.commit = revisionCommit(head)
			}
		}
		for _, c := range res.Config {
			if c.File {
				l.configs = append(l.configs, Config{c.Key, string(c.Value)})
			}
		}
		lines = append(lines, l)
	}
	if !ok || r.Err() != nil {
		return nil, 0, false
	}
	values := map[int][]Value{}
	for _, v := range f.Results {
		values[v.Seq] = append(values[v.Seq], v)
	}
	byCommit := map[string]*File{}
	seen := map[string]map[Config]bool{}
	for seq, l := range lines {
		if l.commit == "" {
			uncommitted++
			continue
		}
		p := byCommit[l.commit]
		if p == nil {
			sum := sha256.Sum256([]byte(f.SHA256 + "\x00" + l.commit))
			p = &File{Name: f.Name + "@" + l.commit[:min(12, len(l.commit))], SHA256: hex.EncodeToString(sum[:]), Prov: f.Prov}
			p.Prov.Commit, p.Prov.Date = l.commit, time.Time{}
			byCommit[l.commit], seen[l.commit] = p, map[Config]bool{}
			files = append(files, p)
		}
		for _, c := range l.configs {
			if !seen[l.commit][c] {
				seen[l.commit][c] = true
				p.Configs = append(p.Configs, c)
			}
		}
		p.Results = append(p.Results, values[seq]...)
	}
	return files, uncommitted, true
}

// OptionLike reports whether git would read rev as an option: a revision
// starting with '-' (-commit --output=FILE made git write FILE, a stored
// commit: line --upload-pack=… reached git rev-parse). decodegap refuses
// such a revision wherever one comes in (-base, -head, -good, -bad,
// -commit, -notes, a file's commit: line) and again before git runs.
func OptionLike(rev string) bool { return strings.HasPrefix(rev, "-") }

// revisionCommit is the commit of a KeyPRBase or KeyPRHead value, ""
// when it names none.
func revisionCommit(v string) string {
	_, commit, _ := strings.Cut(v, " ")
	return strings.TrimSpace(commit)
}
