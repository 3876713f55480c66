package present

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestCycleCardManyDomainsReadsAsOneGoroutine builds the card of a
// project of more domains than one goroutine reads the lens changelogs
// of alone — changes of the cycle in several domains, the largest in a
// late one, corrupt and refused changelogs among them — with the reads
// shared among goroutines and made by one, and requires the same card and
// the same corrupt files, in configuration order.
func TestCycleCardManyDomainsReadsAsOneGoroutine(t *testing.T) {
	var doms []string
	files := map[string]string{"agent/state/evolve/state.json": entryState("{" + executed + "}")}
	for i := 0; i < 150; i++ {
		name := fmt.Sprintf("d%03d", i)
		doms = append(doms, fmt.Sprintf(`%q: {"weight": 1, "primary_skill": "/x"}`, name))
		cl := filepath.Join("agent", "state", name, "lens_changelog.json")
		switch i % 10 {
		case 0:
			files[cl] = fmt.Sprintf(`{"domain": %q, "entries": [{"cycle": 9, "item": "i%d", "change_type": "promoted", "before": 0.4, "after": 0.6, "delta": %g, "reason": "r"}]}`, name, i, 0.001*float64(i))
		case 1:
			files[cl] = fmt.Sprintf(`{"entries": [{"cycle": 8, "item": "old", "delta": 0.9}, {"cycle": 9, "item": "late%d", "change_type": "added", "after": 0.5, "delta": %g}]}`, i, 0.0005*float64(i))
		case 2:
			files[cl] = `{"entries": [`
		case 3:
			files[cl] = `[]`
		}
	}
	files["config.json"] = `{"project": {"name": "many"}, "domains": {` + strings.Join(doms, ", ") + `}}`
	_, dir := cardProject(t, files)
	if err := os.MkdirAll(filepath.Join(dir, "agent", "state", "d004"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../outside.json", filepath.Join(dir, "agent", "state", "d004", "lens_changelog.json")); err != nil {
		t.Fatal(err)
	}
	cardWith := func(procs int) CardView {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return cardOf(t, dir)
	}
	one, many := cardWith(1), cardWith(4)
	if !reflect.DeepEqual(one, many) {
		t.Fatalf("one goroutine:\n%+v\n%q\nseveral:\n%+v\n%q", one.Card, one.Corrupt, many.Card, many.Corrupt)
	}
	if many.Card == nil || len(many.Card.Learn) != 1 || !strings.HasPrefix(many.Card.Learn[0].Text, "lens re-aimed → i140 0.4 → 0.6 (r) (+29 more lens changes)") {
		t.Errorf("LEARN = %+v, want the largest of the cycle's 30 lens changes", many.Card)
	}
	if len(many.Corrupt) != 31 || !strings.HasSuffix(many.Corrupt[0], filepath.Join("d002", "lens_changelog.json")) ||
		!strings.HasSuffix(many.Corrupt[1], filepath.Join("d003", "lens_changelog.json")) || !strings.HasSuffix(many.Corrupt[2], filepath.Join("d004", "lens_changelog.json")) {
		t.Errorf("corrupt = %q, want the 30 corrupt changelogs and the refused one, in configuration order", many.Corrupt)
	}
}
