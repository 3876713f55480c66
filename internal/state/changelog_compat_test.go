package state

import (
	"fmt"
	"strings"
	"testing"
)

// designEntry is a cycle entry in the shape the original's state design
// documents: an em dash in the heading, a blank line under it, and a "---"
// rule closing it.
func designEntry(n int) string {
	return fmt.Sprintf("## Cycle #%d — 2026-04-%02d 09:00 UTC\n\n- **Domain**: backlog (score: 3.20)\n- **Orient**: backlog most stale\n- **Executed**: /plan-backlog\n- **Result**: success\n- **PR**: none\n\n---\n\n", n, n%28+1)
}

// prependTo writes old as CHANGELOG.md, prepends entry and returns the file.
func prependTo(t *testing.T, old, entry string) (*Store, string) {
	t.Helper()
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(ChangelogFile), old)
	if err := s.PrependChangelog(entry); err != nil {
		t.Fatal(err)
	}
	return s, readString(t, s.EvolvePath(ChangelogFile))
}

// The original's header, a section of the user's between it and the
// entries, entries closed by "---" rules, and a section after them: the new
// entry lands directly above the newest entry, closed the same way, and
// every other byte stays where it was.
func TestChangelogCompat_HeaderAndSectionsKeptNewEntryAboveNewest(t *testing.T) {
	header := "# Evolve Activity Log\n\nNewest entries first, at most fifty.\n\n---\n\n"
	notes := "## Operator notes\n\nPaused the loop on 2026-04-01 for the migration.\n\n"
	tail := "## Archive\n\nOlder entries are in docs/history.md.\n"
	old := header + notes + designEntry(12) + designEntry(11) + tail
	entry := cycleEntry(13)
	s, got := prependTo(t, old, entry)

	inserted := entry + "\n---\n\n"
	if want := header + notes + inserted + designEntry(12) + designEntry(11) + tail; got != want {
		t.Fatalf("CHANGELOG.md after prepend:\n%s\n--- want\n%s", got, want)
	}
	if !strings.HasPrefix(got, header+notes) {
		t.Fatal("header or the section under it changed")
	}
	if strings.Replace(got, inserted, "", 1) != old {
		t.Fatal("something of the old file was lost or moved")
	}
	entries, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{entry, strings.TrimSuffix(designEntry(12), "\n---\n\n"), strings.TrimSuffix(designEntry(11), "\n---\n\n")}
	if len(entries) != len(want) {
		t.Fatalf("entries = %q, want %q", entries, want)
	}
	for i := range want {
		if entries[i] != want[i] {
			t.Errorf("entry %d = %q, want %q", i, entries[i], want[i])
		}
	}
}

// The original's own output (6-C3 shape, "# CHANGELOG" header, entries
// separated by a blank line): byte-for-byte what it was, the new entry
// between the header and the newest entry.
func TestChangelogCompat_CycleCardFixtureByteForByte(t *testing.T) {
	old := string(readFixture(t, "cycle-card", "agent/state/evolve/CHANGELOG.md"))
	const header = "# CHANGELOG\n\n"
	if !strings.HasPrefix(old, header+"## Cycle #152 ") {
		t.Skipf("fixture starts %q", old[:min(len(old), 30)])
	}
	_, got := prependTo(t, old, cycleEntry(153))
	if want := header + cycleEntry(153) + "\n" + old[len(header):]; got != want {
		t.Fatalf("CHANGELOG.md after prepend:\n%s\n--- want\n%s", got, want)
	}
}

// At the cap the oldest cycle entry goes, and only it: sections between
// entries and after the last one are not entries, are not counted, and are
// never dropped with the entry above them.
func TestChangelogCompat_CapDropsOnlyCycleEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString("# CHANGELOG\n\n")
	for n := ChangelogMax; n >= 1; n-- {
		b.WriteString(cycleEntry(n) + "\n")
		if n == 30 {
			b.WriteString("## Note\n- switched the backlog skill after this cycle\n\n")
		}
	}
	b.WriteString("## Archive\n- entries before cycle 1 were not kept\n")
	old := b.String()
	s, got := prependTo(t, old, cycleEntry(ChangelogMax+1))

	for _, keep := range []string{"## Note\n- switched the backlog skill after this cycle\n\n## Cycle #29 ", cycleEntry(2) + "\n## Archive\n- entries before cycle 1 were not kept\n"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost or moved:\n%s", keep, got)
		}
	}
	if strings.Contains(got, "## Cycle #1 ") {
		t.Error("the oldest entry was kept beyond the cap")
	}
	entries, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != ChangelogMax {
		t.Fatalf("%d entries, want %d", len(entries), ChangelogMax)
	}
	for i, e := range entries {
		if want := cycleEntry(ChangelogMax + 1 - i); e != want {
			t.Fatalf("entry %d = %q, want %q (a section is not part of an entry)", i, e, want)
		}
	}
}

// A file with a header and a section of its own but no entry yet: the
// first entry goes under the header, above the section, and the next one
// above it; the section stays at the bottom.
func TestChangelogCompat_FirstEntryGoesUnderHeaderNotBelowASection(t *testing.T) {
	header := "# Project log\n\nWhat the loop did, newest first.\n\n"
	section := "## Conventions\n\n- one entry per cycle\n"
	s, got := prependTo(t, header+section, cycleEntry(1))
	if want := header + cycleEntry(1) + "\n" + section; got != want {
		t.Fatalf("after the first entry:\n%s\n--- want\n%s", got, want)
	}
	if err := s.PrependChangelog(cycleEntry(2)); err != nil {
		t.Fatal(err)
	}
	if got, want := readString(t, s.EvolvePath(ChangelogFile)), header+cycleEntry(2)+"\n"+cycleEntry(1)+"\n"+section; got != want {
		t.Fatalf("after the second entry:\n%s\n--- want\n%s", got, want)
	}
}

// A file whose only text is a header gets the entry under it, one blank
// line between; an entry-only file without a header gets the default one.
func TestChangelogCompat_HeaderOnlyAndHeaderless(t *testing.T) {
	if _, got := prependTo(t, "# Activity", cycleEntry(1)); got != "# Activity\n\n"+cycleEntry(1) {
		t.Errorf("header without a newline: %q", got)
	}
	if _, got := prependTo(t, "# Activity\n", cycleEntry(1)); got != "# Activity\n\n"+cycleEntry(1) {
		t.Errorf("header only: %q", got)
	}
	if _, got := prependTo(t, cycleEntry(1), cycleEntry(2)); got != "# CHANGELOG\n\n"+cycleEntry(2)+"\n"+cycleEntry(1) {
		t.Errorf("no header: %q", got)
	}
}

// A file written with CRLF line ends keeps them, and the new entry takes
// them too.
func TestChangelogCompat_CRLFKept(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	old := crlf("# CHANGELOG\n\n" + cycleEntry(4) + "\n" + cycleEntry(3))
	_, got := prependTo(t, old, cycleEntry(5))
	if want := crlf("# CHANGELOG\n\n"+cycleEntry(5)+"\n") + old[len(crlf("# CHANGELOG\n\n")):]; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// A heading inside a fenced code block of a user's section is text, not an
// entry; a fence that never closes does not hide the entries below it.
func TestChangelogCompat_FencedHeadingIsNotAnEntry(t *testing.T) {
	section := "## How to read this file\n\n```\n## Cycle #0 -- example\n- **Result**: success (action_extracted)\n```\n\n"
	old := "# CHANGELOG\n\n" + section + cycleEntry(7)
	s, got := prependTo(t, old, cycleEntry(8))
	if want := "# CHANGELOG\n\n" + section + cycleEntry(8) + "\n" + cycleEntry(7); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if entries, _ := s.ChangelogEntries(); len(entries) != 2 {
		t.Fatalf("entries = %q", entries)
	}

	open := "# CHANGELOG\n\n## Scratch\n\n```\nunterminated\n\n" + cycleEntry(7)
	_, got = prependTo(t, open, cycleEntry(8))
	if want := "# CHANGELOG\n\n## Scratch\n\n```\nunterminated\n\n" + cycleEntry(8) + "\n" + cycleEntry(7); got != want {
		t.Fatalf("unclosed fence: got:\n%s\nwant:\n%s", got, want)
	}
}
