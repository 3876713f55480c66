package observe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

var firstNow = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// observeOne observes a project with one domain "tests" whose state file
// holds content ("" for no file) and whose engine record of its last run
// is rec ("" for none).
func observeOne(t *testing.T, content, rec string) (*Observation, Domain) {
	t.Helper()
	dir := t.TempDir()
	if content != "" {
		p := filepath.Join(dir, "agent", "state", "tests.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Domains = config.Domains{{Name: "tests", Weight: 1, PrimarySkill: "/tests", Status: "active", StateFile: "agent/state/tests.json"}}
	snap := &state.Snapshot{}
	if rec != "" {
		snap.State.DomainLastRun = map[string]string{"tests": rec}
	}
	o := Observe(Input{Now: firstNow, Config: cfg, Store: state.New(dir), Snap: snap})
	if len(o.Domains) != 1 {
		t.Fatalf("observed %d domains", len(o.Domains))
	}
	return o, o.Domains[0]
}

func warningWith(o *Observation, sub string) string {
	for _, w := range o.Warnings {
		if strings.Contains(w, sub) {
			return w
		}
	}
	return ""
}

// A state file that is not JSON: the hours the score uses and the
// message agree. With the engine's record of a run 4 h ago the domain is
// 4 h stale and the message says so; without a record it is never run,
// and the message says that, with the hours used.
func TestFirstDomainState_UnreadableMessageMatchesHours(t *testing.T) {
	t.Run("with the engine's record", func(t *testing.T) {
		o, d := observeOne(t, "not json {", "2026-03-02T05:00:00Z")
		if d.NeverRun || d.Hours != 4 {
			t.Fatalf("never run %v, hours %v; want 4 h from domain_last_run", d.NeverRun, d.Hours)
		}
		w := warningWith(o, "state file unreadable")
		if w == "" || strings.Contains(w, "never run") {
			t.Fatalf("warning %q: it must not say never run while the score uses 4 h", w)
		}
		for _, sub := range []string{"tests.json", "domain_last_run 2026-03-02T05:00:00Z, 4.0 h ago", "fix or delete agent/state/tests.json; /tests rewrites it"} {
			if !strings.Contains(w, sub) {
				t.Errorf("warning %q lacks %q", w, sub)
			}
		}
	})
	t.Run("with a record ahead of now", func(t *testing.T) {
		o, d := observeOne(t, "not json {", "2026-03-02T11:00:00Z")
		if d.NeverRun || d.Hours != 0 {
			t.Fatalf("never run %v, hours %v; want 0 h (a run recorded later than now)", d.NeverRun, d.Hours)
		}
		if w := warningWith(o, "state file unreadable"); !strings.Contains(w, "domain_last_run 2026-03-02T11:00:00Z, 2.0 h from now)") {
			t.Fatalf("warning %q", w)
		}
	})
	t.Run("without a record", func(t *testing.T) {
		o, d := observeOne(t, "not json {", "")
		if !d.NeverRun || d.Hours != 168 {
			t.Fatalf("never run %v, hours %v; want never run at 168 h", d.NeverRun, d.Hours)
		}
		if w := warningWith(o, "state file unreadable"); !strings.Contains(w, "treating as never run (168 h, scoring.hours_if_never_run)") {
			t.Fatalf("warning %q", w)
		}
	})
}

// Wrong types in the state file reach the cycle's warnings, each naming
// the file and the JSON pointer; the score still uses the engine's record.
func TestFirstDomainState_WrongTypesReachTheCycle(t *testing.T) {
	o, d := observeOne(t, `{"last_run": 1767225600, "alerts": "disk full", "status": {"ok": true}}`, "2026-03-02T07:00:00Z")
	for _, sub := range []string{
		"[WARN] agent/state/tests.json: /last_run: 1767225600 is not a string; not used",
		`[WARN] agent/state/tests.json: /alerts: "disk full" is not an array of alerts; no alert read`,
		"[WARN] agent/state/tests.json: /status: an object is not a string; not used",
	} {
		if warningWith(o, sub) == "" {
			t.Errorf("no warning %q in %q", sub, o.Warnings)
		}
	}
	if d.StateErr != nil || d.Hours != 2 {
		t.Fatalf("state err %v, hours %v; want a readable file scored from the record (2 h)", d.StateErr, d.Hours)
	}
}
