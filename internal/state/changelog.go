package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ChangelogMax is how many cycle entries CHANGELOG.md keeps (6-C3).
const ChangelogMax = 50

const changelogHeader = "# CHANGELOG\n"

// PrependChangelog adds entry (one "## Cycle #N ..." block) at the top of
// CHANGELOG.md, newest first, keeping at most ChangelogMax entries. Text
// before the first entry other than the header is kept.
//
// A CHANGELOG.md that must not be read — too large, not a regular file, a
// symlink out of the project — is moved aside to CHANGELOG.md.corrupt-<UTC>
// (nothing read or copied) and a new one started, so the cycle's record is
// never lost to it.
func (s *Store) PrependChangelog(entry string) error {
	p := s.EvolvePath(ChangelogFile)
	old, _, err := s.readFile(p)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case IsRefused(err) && s.movable(p, err):
		dst := s.freeName(p + ".corrupt-" + time.Now().UTC().Format("20060102T150405Z"))
		if _, merr := s.moveAside(p, dst); merr != nil {
			return errors.Join(err, merr)
		}
		old = nil
	default:
		return fmt.Errorf("read %s: %w", p, err)
	}
	preamble, entries := splitChangelog(string(old))
	entries = append([]string{strings.TrimRight(entry, "\n") + "\n"}, entries...)
	if len(entries) > ChangelogMax {
		entries = entries[:ChangelogMax]
	}
	var b strings.Builder
	if strings.TrimSpace(preamble) == "" {
		preamble = changelogHeader
	}
	b.WriteString(strings.TrimRight(preamble, "\n"))
	b.WriteString("\n")
	for _, e := range entries {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(e, "\n"))
		b.WriteString("\n")
	}
	if err := s.writeFile(p, []byte(b.String())); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// ChangelogEntries returns the entries of CHANGELOG.md, newest first.
func (s *Store) ChangelogEntries() ([]string, error) {
	b, _, err := s.readFile(s.EvolvePath(ChangelogFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	_, entries := splitChangelog(string(b))
	return entries, nil
}

func splitChangelog(s string) (preamble string, entries []string) {
	lines := strings.SplitAfter(s, "\n")
	cur := -1
	var pre strings.Builder
	for _, ln := range lines {
		if strings.HasPrefix(ln, "## Cycle #") {
			entries = append(entries, "")
			cur = len(entries) - 1
		}
		if cur < 0 {
			pre.WriteString(ln)
		} else {
			entries[cur] += ln
		}
	}
	for i := range entries {
		entries[i] = strings.TrimRight(entries[i], "\n") + "\n"
	}
	return pre.String(), entries
}

// RunLogPath is where a skill run's output is kept: runs/<cycle>-<skill>.log.
func (s *Store) RunLogPath(cycle int, skill string) string {
	return filepath.Join(s.EvolveDir, "runs", fmt.Sprintf("%d-%s.log", cycle, safeName(skill)))
}

// ReportPath is the path a skill may write its report to ($OODA_REPORT).
func (s *Store) ReportPath(cycle int, skill string) string {
	return filepath.Join(s.EvolveDir, "runs", fmt.Sprintf("%d-%s.report.json", cycle, safeName(skill)))
}

// SaveRunLog writes a skill run's captured output atomically.
func (s *Store) SaveRunLog(cycle int, skill string, data []byte) error {
	if err := CheckName("skill", skill); err != nil {
		return err
	}
	return s.writeFile(s.RunLogPath(cycle, skill), data)
}

// PrepareRunsDir makes sure the runs directory exists and removes a stale
// report left by an earlier attempt of the same cycle, so a report is only
// ever read from the run that wrote it. A runs that is not a directory (a
// file, a symlink out of the project) is set aside first (see ensureDir).
func (s *Store) PrepareRunsDir(cycle int, skill string) error {
	if err := CheckName("skill", skill); err != nil {
		return err
	}
	if err := s.ensureDir(filepath.Join(s.EvolveDir, "runs")); err != nil {
		return err
	}
	err := s.remove(s.ReportPath(cycle, skill))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ReadReport returns the bytes of a skill's report, nil when it wrote none.
// A report larger than MaxRead, not a regular file, or a symlink out of the
// project is refused (see IsRefused) without being read.
func (s *Store) ReadReport(cycle int, skill string) ([]byte, error) {
	if err := CheckName("skill", skill); err != nil {
		return nil, err
	}
	b, _, err := s.readJSONFile(s.ReportPath(cycle, skill))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func safeName(skill string) string {
	n := strings.TrimPrefix(skill, "/")
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, n)
}

// ProposalsMax caps proposed-skills/: a long run with many recurring gaps
// must not grow the directory without bound.
const ProposalsMax = 50

// ErrProposalsFull is returned by WriteProposal when proposed-skills/
// already holds ProposalsMax proposals.
var ErrProposalsFull = errors.New("proposed-skills/ is full")

// WriteProposal writes proposed-skills/<gap>.md once (5-B); wrote is false
// when the proposal already exists. When the directory already holds
// ProposalsMax proposals nothing is written and the error wraps
// ErrProposalsFull: review and delete old proposals to make room.
func (s *Store) WriteProposal(gap, text string) (bool, error) {
	dir := filepath.Join(s.EvolveDir, "proposed-skills")
	p := filepath.Join(dir, safeName(gap)+".md")
	if err := s.ensureDir(dir); err != nil {
		return false, err
	}
	if _, err := s.lstat(p); err == nil {
		return false, nil
	}
	ents, err := s.readDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	if n >= ProposalsMax {
		return false, fmt.Errorf("%s not written: %w (%d proposals, the cap); review and delete old ones to make room", s.display(p), ErrProposalsFull, n)
	}
	if err := s.writeFile(p, []byte(text)); err != nil {
		return false, err
	}
	s.written[p] = true
	return true, nil
}

// RunsKept is how many recent cycles' run files (logs, reports, active
// lenses) are kept in runs/; older ones are deleted so unattended
// operation does not fill the disk.
const RunsKept = 50

// PruneRuns deletes the run files of cycles older than the last RunsKept.
func (s *Store) PruneRuns(cycle int) (int, error) {
	dir := filepath.Join(s.EvolveDir, "runs")
	ents, err := s.readDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, e := range ents {
		num, _, ok := strings.Cut(e.Name(), "-")
		if !ok || e.IsDir() {
			continue
		}
		c, err := strconv.Atoi(num)
		if err != nil || c > cycle-RunsKept {
			continue
		}
		if err := s.remove(filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}

// ensureDir makes the directory p of the store's own (runs/,
// proposed-skills/). Something else at that name — a regular file, a
// symlink out of the project or to a file — would stop every cycle's
// skill, so it is moved, unread, to <name>.corrupt-<UTC> (a symlink is
// moved itself) and the directory created; Notices says so. A symlink to a
// directory inside the project is followed, as everywhere.
func (s *Store) ensureDir(p string) error {
	err := s.mkdirAll(p)
	if err == nil {
		return nil
	}
	fi, lerr := s.lstat(p)
	if lerr != nil && !IsRefused(lerr) {
		return err
	}
	if lerr == nil && fi.IsDir() {
		return err
	}
	dst := s.freeName(p + ".corrupt-" + time.Now().UTC().Format("20060102T150405Z"))
	if _, merr := s.moveAside(p, dst); merr != nil {
		return errors.Join(err, merr)
	}
	s.notices = append(s.notices, fmt.Sprintf("%s is not a directory (%v); moved to %s and a new directory created", s.display(p), err, s.display(dst)))
	return s.mkdirAll(p)
}

// Notices returns, and forgets, what the store repaired on its own since
// the last call (a runs/ or proposed-skills/ that was not a directory,
// a cycle_log.jsonl that could not be appended to): each names the path
// and where the old one went, for the cycle to print as a warning.
func (s *Store) Notices() []string {
	n := s.notices
	s.notices = nil
	return n
}
