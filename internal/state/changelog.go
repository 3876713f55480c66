package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// ChangelogMax is how many cycle entries CHANGELOG.md keeps (6-C3).
const ChangelogMax = 50

// changelogHeader starts a CHANGELOG.md that has no text of its own above
// its entries; a header already there (the original's "# CHANGELOG" or
// "# Evolve Activity Log" preamble, a user's own) is kept as it is.
const changelogHeader = "# CHANGELOG\n\n"

// PrependChangelog adds entry (one "## Cycle #N ..." block) directly above
// the newest cycle entry of CHANGELOG.md, keeping at most ChangelogMax
// cycle entries (the oldest, at the bottom, are dropped). Everything else
// is kept byte-for-byte where it is: the header, and any section that is
// not a cycle entry (a level-1 or level-2 heading other than "## Cycle #"),
// whether above the entries, between them or below them. A file with no
// cycle entry yet gets the new one after its header, above its first
// level-2 section. The new entry is separated from the one below it the
// way that one is separated from what follows it (a blank line, or the
// original's "---" rule), and takes the file's CRLF line endings if it
// has them.
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
		dst := s.asideName(p)
		if _, merr := s.moveAside(p, dst); merr != nil {
			return errors.Join(err, merr)
		}
		old = nil
	default:
		return fmt.Errorf("read %s: %w", p, err)
	}
	// old is this read's own, and only read: the text is cut from it
	// in place rather than from a copy (a full CHANGELOG.md is 25 KB).
	if err := s.writeFile(p, prependChangelog(bytesKey(old), entry)); err != nil {
		return err
	}
	s.written[p] = true
	return nil
}

// ChangelogEntries returns the cycle entries of CHANGELOG.md, newest
// first, each without the blank lines and "---" rule that separate it from
// the next; sections that are not cycle entries are not returned.
func (s *Store) ChangelogEntries() ([]string, error) {
	b, _, err := s.readFile(s.EvolvePath(ChangelogFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	// b is this read's own, and only read: the entries are cut from it
	// in place.
	return changelogEntriesFromText(bytesKey(b)), nil
}

// changelogEntriesFromText is ChangelogEntries on the file's text. An
// entry that already ends with a single line end (as every entry ooda
// writes does) is a slice of text, not a copy.
func changelogEntriesFromText(text string) []string {
	var entries []string
	for _, bl := range splitChangelog(text) {
		if bl.cycle {
			body, _ := cutSeparator(bl.text)
			entries = append(entries, entryWithOneLineEnd(body))
		}
	}
	return entries
}

// entryWithOneLineEnd is strings.TrimRight(body, "\r\n") + "\n": body
// itself when it already ends so.
func entryWithOneLineEnd(body string) string {
	if n := len(body); n >= 2 && body[n-1] == '\n' && body[n-2] != '\n' && body[n-2] != '\r' {
		return body
	}
	return strings.TrimRight(body, "\r\n") + "\n"
}

// clBlock is one piece of CHANGELOG.md: the text before the first heading,
// or a level-1/level-2 heading with everything up to the next one.
type clBlock struct {
	text  string
	cycle bool // a "## Cycle #" entry
	h2    bool // any level-2 heading, cycle entries included
}

// prependChangelog is PrependChangelog on the file's text: the new
// file's bytes, written once into a buffer of their size (the file is
// rewritten whole every cycle, and its blocks are slices of old).
func prependChangelog(old, entry string) []byte {
	blocks := splitChangelog(old)
	nl := "\n"
	if strings.Contains(old, "\r\n") {
		nl = "\r\n"
	}
	at, sep := -1, ""
	for i, bl := range blocks {
		if bl.cycle {
			at = i
			_, sep = cutSeparator(bl.text)
			break
		}
	}
	if at < 0 {
		// No cycle entry yet: after the header, above any other section.
		at = len(blocks)
		for i, bl := range blocks {
			if bl.h2 {
				at = i
				break
			}
		}
	}
	sep = strings.ReplaceAll(sep, "\r\n", "\n")
	if sep != "\n" && !strings.HasSuffix(sep, "\n\n") {
		// The newest entry may end the file without a blank line after it.
		sep = strings.TrimRight(sep, "\r\n")
		if sep != "" {
			sep += "\n"
		}
		sep += "\n"
	}
	text := strings.ReplaceAll(lf(strings.TrimRight(entry, "\r\n"))+"\n"+sep, "\n", nl)

	// The blocks cover old in order, so the head — every block above
	// the newest entry — is the start of old.
	headLen := 0
	for _, bl := range blocks[:at] {
		headLen += len(bl.text)
	}
	h := old[:headLen]
	out := make([]byte, 0, len(old)+len(text)+len(changelogHeader)+2*len(nl))
	switch {
	case strings.TrimSpace(h) == "":
		out = append(out, strings.ReplaceAll(changelogHeader, "\n", nl)...)
	case !strings.HasSuffix(h, "\n"):
		out = append(append(append(out, h...), nl...), nl...)
	case at == len(blocks) && !strings.HasSuffix(lf(h), "\n\n"):
		out = append(append(out, h...), nl...)
	default:
		out = append(out, h...)
	}
	out = append(out, text...)
	// The oldest cycle entries beyond the cap go; nothing else does.
	n, last, dropped := 1, true, false
	for _, bl := range blocks[at:] {
		if bl.cycle {
			if n++; n > ChangelogMax {
				dropped = true
				continue
			}
		}
		out = append(out, bl.text...)
		last = bl.cycle
	}
	if last && (at == len(blocks) || dropped) {
		// The file now ends with an entry that was followed by another:
		// one line end, not the separator that came before the next.
		out = append(bytes.TrimRight(out, "\r\n"), nl...)
	}
	return out
}

// lf turns CRLF line ends into LF.
func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// cutSeparator splits a block into its body and its trailing separator:
// the blank lines and thematic breaks ("---") after its last line of
// content.
//
// It walks the lines back from the end without listing them: the
// newest entry is cut to prepend, and every entry to show the card.
func cutSeparator(block string) (body, sep string) {
	end := len(block)
	for end > 0 {
		// The last line of block[:end], with its line end if it has one.
		start := strings.LastIndexByte(block[:end-1], '\n') + 1
		if t := strings.TrimSpace(block[start:end]); t != "" && !isBreak(t) {
			break
		}
		end = start
	}
	return block[:end], block[end:]
}

// isBreak reports whether a trimmed line is a Markdown thematic break.
func isBreak(ln string) bool {
	ln = strings.ReplaceAll(strings.ReplaceAll(ln, " ", ""), "\t", "")
	if len(ln) < 3 {
		return false
	}
	for _, c := range []byte{'-', '*', '_'} {
		if strings.Trim(ln, string(c)) == "" {
			return true
		}
	}
	return false
}

// splitChangelog cuts the file at its level-1 and level-2 headings outside
// fenced code blocks, so every byte lands in exactly one block. A fence
// that never closes is not taken as one: it would hide every entry below it.
func splitChangelog(s string) []clBlock {
	fences := 0
	for ln := range strings.Lines(s) {
		if isFence(ln) {
			fences++
		}
	}
	// Each block is the text from its first line to the next block's: a
	// slice of s, not a copy built line by line.
	var blocks []clBlock
	var starts []int
	in, seen, pos := false, 0, 0
	for ln := range strings.Lines(s) {
		if isFence(ln) {
			seen++
			if in || seen < fences || fences%2 == 0 {
				in = !in
			}
		}
		if lvl := headingLevel(ln); !in && (lvl == 1 || lvl == 2) {
			blocks = append(blocks, clBlock{cycle: strings.HasPrefix(ln, "## Cycle #"), h2: lvl == 2})
			starts = append(starts, pos)
		} else if len(blocks) == 0 {
			blocks = append(blocks, clBlock{})
			starts = append(starts, pos)
		}
		pos += len(ln)
	}
	for i := range blocks {
		end := len(s)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		blocks[i].text = s[starts[i]:end]
	}
	return blocks
}

// headingLevel is the level of a Markdown ATX heading line at the left
// margin, 0 when the line is not one.
func headingLevel(ln string) int {
	n := 0
	for n < len(ln) && ln[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return 0
	}
	if rest := ln[n:]; rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' {
		return n
	}
	return 0
}

func isFence(ln string) bool {
	t := strings.TrimLeft(ln, " ")
	return len(ln)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"))
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

// ProposalWritten says whether proposed-skills/<gap>.md exists (anything
// at that name, as WriteProposal tests it): a gap that recurs every cycle
// asks every cycle, and its proposal's text need not be made again to be
// refused.
func (s *Store) ProposalWritten(gap string) bool {
	_, err := s.lstat(filepath.Join(s.EvolveDir, "proposed-skills", safeName(gap)+".md"))
	return err == nil
}

// ProposalsWritten is ProposalWritten for the gaps of a whole cycle:
// proposed-skills/ is listed once and each gap's proposal looked for in
// the listing — a name listed is one that something is at, as the lookup
// of each would find it — instead of a lookup of the path of each, which
// walks it from the project's root. A directory that cannot be listed
// (refused, unreadable) leaves each answer to ProposalWritten.
func (s *Store) ProposalsWritten() func(gap string) bool {
	names, err := s.readDirNames(filepath.Join(s.EvolveDir, "proposed-skills"))
	switch {
	case err == nil:
		listed := make(map[string]bool, len(names))
		for _, n := range names {
			listed[n] = true
		}
		return func(gap string) bool { return listed[safeName(gap)+".md"] }
	case errors.Is(err, fs.ErrNotExist):
		return func(string) bool { return false }
	}
	return s.ProposalWritten
}

// WriteProposal writes proposed-skills/<gap>.md once (5-B); wrote is false
// when the proposal already exists. When the directory already holds
// ProposalsMax proposals nothing is written and the error wraps
// ErrProposalsFull: review and delete old proposals to make room.
func (s *Store) WriteProposal(gap, text string) (bool, error) {
	dir := filepath.Join(s.EvolveDir, "proposed-skills")
	p := filepath.Join(dir, safeName(gap)+".md")
	// A proposal already written is one lstat: its directory is there,
	// and ensureDir has nothing to make or repair. (The engine asks
	// ProposalsWritten first, one listing for all its gaps; a caller
	// that does not is answered here.)
	if _, err := s.lstat(p); err == nil {
		return false, nil
	}
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
	// The names alone: listing the types of a hundred files costs a
	// hundred lstat calls on a file system that does not say them, and
	// only the few files old enough to go need one.
	names, err := s.readDirNames(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, name := range names {
		num, _, ok := strings.Cut(name, "-")
		if !ok {
			continue
		}
		c, err := strconv.Atoi(num)
		if err != nil || c > cycle-RunsKept {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := s.lstat(p); err != nil || fi.IsDir() {
			continue
		}
		if err := s.remove(p); err == nil {
			n++
		}
	}
	return n, nil
}

// readDirNames is readDir's names, in directory order, without the type
// of each entry.
func (s *Store) readDirNames(p string) ([]string, error) {
	r, done, err := s.readRoot()
	if err != nil {
		if _, rerr := s.rel(p); rerr != nil {
			return nil, rerr
		}
		return nil, fsErr("open", p, err)
	}
	defer done()
	d, err := s.openDirChecked(r, p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return names, fsErr("readdir", p, err)
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
	dst := s.asideName(p)
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
