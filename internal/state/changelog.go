package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ChangelogMax is how many cycle entries CHANGELOG.md keeps (6-C3).
const ChangelogMax = 50

const changelogHeader = "# CHANGELOG\n"

// PrependChangelog adds entry (one "## Cycle #N ..." block) at the top of
// CHANGELOG.md, newest first, keeping at most ChangelogMax entries. Text
// before the first entry other than the header is kept.
func (s *Store) PrependChangelog(entry string) error {
	p := s.EvolvePath(ChangelogFile)
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	if err := WriteFileAtomic(p, []byte(b.String()), 0o644); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// ChangelogEntries returns the entries of CHANGELOG.md, newest first.
func (s *Store) ChangelogEntries() ([]string, error) {
	b, err := os.ReadFile(s.EvolvePath(ChangelogFile))
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
	p := s.RunLogPath(cycle, skill)
	if err := WriteFileAtomic(p, data, 0o644); err != nil {
		return err
	}
	return nil
}

// PrepareRunsDir makes sure the runs directory exists and removes a stale
// report left by an earlier attempt of the same cycle, so a report is only
// ever read from the run that wrote it.
func (s *Store) PrepareRunsDir(cycle int, skill string) error {
	if err := os.MkdirAll(filepath.Join(s.EvolveDir, "runs"), 0o755); err != nil {
		return err
	}
	err := os.Remove(s.ReportPath(cycle, skill))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ReadReport returns the bytes of a skill's report, nil when it wrote none.
func (s *Store) ReadReport(cycle int, skill string) ([]byte, error) {
	b, err := os.ReadFile(s.ReportPath(cycle, skill))
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

// WriteProposal writes proposed-skills/<gap>.md once (5-B); wrote is false
// when the proposal already exists.
func (s *Store) WriteProposal(gap, text string) (bool, error) {
	p := filepath.Join(s.EvolveDir, "proposed-skills", safeName(gap)+".md")
	if _, err := os.Stat(p); err == nil {
		return false, nil
	}
	if err := WriteFileAtomic(p, []byte(text), 0o644); err != nil {
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
	ents, err := os.ReadDir(dir)
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
		if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}
