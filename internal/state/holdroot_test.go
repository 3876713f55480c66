package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readOutcome is what a lens and a domain state read returned, as text.
func readOutcome(s *Store, domain string) string {
	l, found, err := s.ReadLens(domain)
	ds, derr := s.ReadDomainState(filepath.Join("agent", "state", domain+".json"))
	cl, cerr := s.ReadLensChangelog(domain)
	return fmt.Sprintf("lens %q %v %v | state %v %q %v | changelog %d %v", l.Domain, found, err, ds.Found, ds.Bytes, derr, len(cl.Entries), cerr)
}

// TestHoldRoot_ReadsAsWithout reads lenses, lens changelogs and state files
// planted every way a skill or a merged pull request could plant them —
// through symlinks that stay in agent/state/, that leave it for elsewhere
// in the project, that leave the project, absolute ones, a named pipe, a
// directory — with the root held and without, and requires the same
// outcome, error for error: a symlink that leaves agent/state/ but stays
// in the project is still followed, and one that leaves the project is
// still refused.
func TestHoldRoot_ReadsAsWithout(t *testing.T) {
	outer, root, secretPath := hostileProject(t)
	s := New(root)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	lens := func(d string) string {
		return fmt.Sprintf(`{"schema_version":"1.0.0","domain":%q,"last_updated":%q}`, d, FormatTime(now))
	}
	st := filepath.Join(root, "agent", "state")
	writeFile(t, filepath.Join(st, "plain", "lens.json"), lens("plain"))
	writeFile(t, filepath.Join(st, "plain.json"), `{"last_run":"2026-03-01T00:00:00Z"}`)
	writeFile(t, filepath.Join(st, "plain", "lens_changelog.json"), `{"domain":"plain","entries":[{"cycle":1,"item":"x"}]}`)
	// Inside agent/state/: another domain's lens.
	symlink(t, "../plain/lens.json", filepath.Join(st, "sibling", "lens.json"))
	// Out of agent/state/ but inside the project.
	writeFile(t, filepath.Join(root, "lenses", "elsewhere.json"), lens("elsewhere"))
	symlink(t, "../../../lenses/elsewhere.json", filepath.Join(st, "elsewhere", "lens.json"))
	symlink(t, "../../lenses", filepath.Join(st, "linkeddir"))
	writeFile(t, filepath.Join(root, "lenses", "lens.json"), lens("linkeddir"))
	writeFile(t, filepath.Join(root, "lenses", "lens_changelog.json"), `{"domain":"linkeddir","entries":[]}`)
	symlink(t, "../lenses/elsewhere.json", filepath.Join(st, "elsewhere.json"))
	// Out of the project: relative and absolute.
	symlink(t, "../../../../secret.txt", filepath.Join(st, "escape", "lens.json"))
	symlink(t, secretPath, filepath.Join(st, "absolute", "lens.json"))
	symlink(t, secretPath, filepath.Join(st, "absolute.json"))
	symlink(t, "../../..", filepath.Join(st, "updir"))
	// Not regular files.
	mkfifo(t, filepath.Join(st, "pipe", "lens.json"))
	if err := os.MkdirAll(filepath.Join(st, "dir", "lens.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(st, "corrupt", "lens.json"), "{not json")
	domains := []string{"plain", "sibling", "elsewhere", "linkeddir", "escape", "absolute", "updir", "pipe", "dir", "corrupt", "missing"}

	without := map[string]string{}
	for _, d := range domains {
		without[d] = readOutcome(s, d)
	}
	release := s.HoldRoot()
	if s.held() == nil || s.held().state == nil {
		t.Fatal("HoldRoot did not hold the root and agent/state/")
	}
	inner := s.HoldRoot()
	for _, d := range domains {
		if got := readOutcome(s, d); got != without[d] {
			t.Errorf("%s with the root held:\n%s\nwithout:\n%s", d, got, without[d])
		}
	}
	inner()
	if s.held() == nil {
		t.Fatal("releasing a nested hold released the outer one")
	}
	release()
	if s.held() != nil {
		t.Fatal("the root is still held after its release")
	}
	for d, want := range map[string]string{"elsewhere": `lens "elsewhere" true <nil>`, "linkeddir": `lens "linkeddir" true <nil>`, "sibling": `lens "plain" true <nil>`} {
		if !strings.HasPrefix(without[d], want) {
			t.Errorf("%s: %s, want it read (%s)", d, without[d], want)
		}
	}
	for _, d := range []string{"escape", "absolute", "updir"} {
		if !strings.Contains(without[d], "outside the project") {
			t.Errorf("%s: %s, want it refused", d, without[d])
		}
	}
	assertOutsideUntouched(t, outer)
}

// TestRemoveTempFiles_NotThroughSymlinkedDir plants a temporary-looking
// file in a directory of the project reached from agent/state/ through a
// symlink: the symlinked directory is not entered, so the file stays.
func TestRemoveTempFiles_NotThroughSymlinkedDir(t *testing.T) {
	_, root, _ := hostileProject(t)
	s := New(root)
	other := filepath.Join(root, "notes", "."+"lens.json.tmp-42")
	writeFile(t, other, "keep")
	symlink(t, "../../notes", filepath.Join(root, "agent", "state", "linked"))
	own := filepath.Join(root, "agent", "state", "d1", ".lens.json.tmp-7")
	writeFile(t, own, "partial")
	removed, err := s.RemoveTempFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != filepath.Join("agent", "state", "d1", ".lens.json.tmp-7") {
		t.Fatalf("removed %v", removed)
	}
	if got := readString(t, other); got != "keep" {
		t.Fatalf("%s became %q", other, got)
	}
}
