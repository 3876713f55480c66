package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `ooda run` over a project of many domains reads each card's lens
// changelogs while its cycle records itself, as `ooda cycle` does: every
// card it prints is the card `ooda status --share` builds from the files.
func TestRunManyDomainsCardsAreTheFilesCards(t *testing.T) {
	var doms []string
	for i := range lensPrefetchMin + 6 {
		doms = append(doms, fmt.Sprintf(`"d%02d": {"weight": 1.0, "primary_skill": "/noop", "fallback": true, "mission_alignment": 1.0}`, i))
	}
	cfg := `{"mission": "Many domains.", "domains": {` + strings.Join(doms, ",") + `},
  "skills": {"/noop": {"builtin": "noop"}}, "safety": {"skill_allowlist": ["/noop"], "first_cycle_observe_only": false},
  "saturation": {"auto_halt": false}, "progressive_complexity": {"current_level": 2}}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, now := range []string{"2026-03-02T09:00:00Z", "2026-03-02T10:00:00Z", "2026-03-02T11:00:00Z"} {
		code, out, errOut := run(t, dir, "run", "--now", now, "--max-cycles", "1", "--session", fmt.Sprintf("many-%d", i))
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
		_, share, serr := run(t, dir, "status", "--share")
		card := cardBlock(share)
		if card == "" {
			t.Fatalf("status --share shows no card:\n%s\n%s", share, serr)
		}
		if !strings.Contains(out+errOut, card) {
			t.Errorf("run %d printed a card other than the files':\n--- status --share\n%s\n--- run\n%s%s", i, card, out, errOut)
		}
	}
}

// cardBlock is the Cycle Card in text: from its title line to the line
// before the HALT line.
func cardBlock(s string) string {
	i := strings.Index(s, " · ooda cycle #")
	if i < 0 {
		return ""
	}
	i = strings.LastIndex(s[:i], "\n") + 1
	j := strings.Index(s[i:], "HALT:")
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}
