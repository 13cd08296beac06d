package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	var here []note
	for _, n := range notes {
		if _, ok := when[n.commit]; ok {
			here = append(here, n)
		}
	}
	skipped = len(notes) - len(here)
	if len(here) == 0 {
		return nil, skipped, fmt.Errorf("none of the %d notes in %s is on a commit of this clone (a shallow clone? git fetch --unshallow)", len(notes), fullRef)
	}
	out := make([]noteFile, 0, len(here))
	var blobs strings.Builder
	for _, n := range here {
		blobs.WriteString(n.blob + "\n")
	}
	i := 0
	err = catBlobs(ctx, blobs.String(), func(size int64, data func() ([]byte, error)) error {
		n := here[i]
		i++
		if size > maxNoteBytes {
			return fmt.Errorf("%s: the note on %s is %d bytes, more than a benchfmt file can be (%d)", fullRef, short(n.commit), size, maxNoteBytes)
		}
		b, err := data()
		if err != nil {
			return err
		}
		f, err := history.ParseFile(strings.TrimPrefix(fullRef, "refs/notes/")+":"+n.commit, b)
		if err != nil {
			return err
		}
		f.Replaces = true
		out = append(out, noteFile{file: f, prov: history.Provenance{Commit: n.commit, Date: when[n.commit]}})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].prov.Date.Before(out[j].prov.Date) })
	return out, skipped, nil
}

// catBlobs streams the blobs named one per line in ids through one 'git
// cat-file --batch', calling each with the blob's size before its bytes
// are read: each may refuse a size without the bytes ever being held,
// and must call data to go on to the next blob. An
// error from each, or a missing object, stops git and is returned.
func catBlobs(ctx context.Context, ids string, each func(size int64, data func() ([]byte, error)) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(ids)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file --batch: %w", err)
	}
	r := bufio.NewReader(pipe)
	read := func() error {
		for range strings.Count(ids, "\n") {
			hdr, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("git cat-file --batch: %w: %s", err, strings.TrimSpace(stderr.String()))
			}
			// "<oid> blob <size>", or "<oid> missing".
			f := strings.Fields(hdr)
			if len(f) != 3 || f[1] != "blob" {
				return fmt.Errorf("git cat-file --batch: %q is not a note's blob", strings.TrimSpace(hdr))
			}
			size, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return fmt.Errorf("git cat-file --batch: size in %q: %w", strings.TrimSpace(hdr), err)
			}
			if err := each(size, func() ([]byte, error) {
				b := make([]byte, size+1) // the blob and its LF
				_, err := io.ReadFull(r, b)
				return b[:size], err
			}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := read(); err != nil {
		cancel()
		_ = cmd.Wait()
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git cat-file --batch: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
