package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gapbench/gapbench/internal/history"
)

// maxNoteBytes bounds one note read from git: a benchfmt file of a CI
// run is kilobytes; a note larger than this is not one.
const maxNoteBytes = 64 << 20

// noteFile is one git note parsed as a benchfmt file, with the
// provenance of the commit it is attached to.
type noteFile struct {
	file *history.File
	prov history.Provenance
}

// notesFiles reads every note of git notes ref (as 'git notes --ref'
// takes it: "gapbench" is refs/notes/gapbench) in the repository holding
// the current directory and parses each as a benchfmt file named
// "REF:COMMIT", with File.Replaces set (a note rewritten or merged
// replaces its earlier version in the store). Each gets its commit (the
// annotated one) and that commit's committer date as its default
// provenance, oldest commit first. Notes on objects that are not commits
// here (a shallow clone's missing history) are left out and counted in
// skipped. A note that does not parse is an error naming its commit; an
// empty or missing ref is an error naming the ref.
func notesFiles(ctx context.Context, ref string) (files []noteFile, skipped int, err error) {
	git := func(stdin []byte, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
			}
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return out, nil
	}
	full, err := git(nil, "notes", "--ref", ref, "get-ref")
	if err != nil {
		return nil, 0, err
	}
	fullRef := strings.TrimSpace(string(full))
	list, err := git(nil, "notes", "--ref", ref, "list")
	if err != nil {
		return nil, 0, err
	}
	type note struct{ blob, commit string }
	var notes []note
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			notes = append(notes, note{f[0], f[1]})
		}
	}
	if len(notes) == 0 {
		return nil, 0, fmt.Errorf("no notes in %s (git notes --ref %s list is empty): fetch them first, e.g. git fetch origin %s:%s", fullRef, ref, fullRef, fullRef)
	}
	// One git for every commit's date: %H %cI per line; objects this
	// clone lacks are passed over (--ignore-missing), and blobs or trees
	// print nothing.
	var in bytes.Buffer
	for _, n := range notes {
		in.WriteString(n.commit + "\n")
	}
	dates, err := git(in.Bytes(), "log", "--no-walk=unsorted", "--ignore-missing", "--stdin", "--format=%H %cI")
	if err != nil {
		return nil, 0, err
	}
	when := map[string]time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(string(dates)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			t, err := time.Parse(time.RFC3339, f[1])
			if err != nil {
				return nil, 0, fmt.Errorf("commit %s: date %q: %w", short(f[0]), f[1], err)
			}
			when[f[0]] = t
		}
	}
	out := make([]noteFile, 0, len(notes))
	for _, n := range notes {
		t, ok := when[n.commit]
		if !ok {
			skipped++
			continue
		}
		size, err := git(nil, "cat-file", "-s", n.blob)
		if err != nil {
			return nil, 0, err
		}
		sz, err := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: the note on %s: git cat-file -s printed %q", fullRef, short(n.commit), strings.TrimSpace(string(size)))
		}
		if sz > maxNoteBytes {
			return nil, 0, fmt.Errorf("%s: the note on %s is %d bytes, more than a benchfmt file can be (%d)", fullRef, short(n.commit), sz, maxNoteBytes)
		}
		data, err := git(nil, "cat-file", "blob", n.blob)
		if err != nil {
			return nil, 0, err
		}
		name := strings.TrimPrefix(fullRef, "refs/notes/") + ":" + n.commit
		f, err := history.ParseFile(name, data)
		if err != nil {
			return nil, 0, err
		}
		f.Replaces = true
		out = append(out, noteFile{file: f, prov: history.Provenance{Commit: n.commit, Date: t}})
	}
	if len(out) == 0 {
		return nil, skipped, fmt.Errorf("none of the %d notes in %s is on a commit of this clone (a shallow clone? git fetch --unshallow)", len(notes), fullRef)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].prov.Date.Before(out[j].prov.Date) })
	return out, skipped, nil
}
