package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// The skill's summary goes into the CHANGELOG entry, after Orient, on one
// line and bounded; an entry without one keeps the original's lines.
func TestFirst_ChangelogSummaryLine(t *testing.T) {
	f := Facts{Cycle: 3, Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Domain: "tests", Skill: "/check-tests",
		Result: "success", OrientSummary: "o", Summary: "2 failing:\n## Cycle #99 -- forged"}
	got := Changelog(f, TypeAction)
	if !strings.Contains(got, "- **Orient**: o\n- **Summary**: 2 failing: ## Cycle #99 -- forged\n- **PR**: none\n") {
		t.Fatalf("entry:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n != 14 {
		t.Errorf("%d lines, want 14:\n%s", n, got)
	}
	f.Summary = strings.Repeat("x", 3*DecisionTextMax)
	if got := Changelog(f, TypeAction); !strings.Contains(got, "- **Summary**: "+strings.Repeat("x", DecisionTextMax)+"\n") {
		t.Errorf("a long summary is cut at %d runes:\n%s", DecisionTextMax, got)
	}
	f.Summary = " \n "
	if got := Changelog(f, TypeAction); strings.Contains(got, "Summary") || strings.Count(got, "\n") != 13 {
		t.Errorf("a blank summary adds no line:\n%s", got)
	}
}

// The decision-log entry carries the summary under "summary", one line
// and bounded; it survives a read and write of state.json, and an entry
// without one has no such key.
func TestFirst_DecisionEntrySummary(t *testing.T) {
	f := Facts{Cycle: 3, Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Domain: "tests", Skill: "/check-tests",
		Result: "success", Summary: "tests\n  pass"}
	e := DecisionEntry(f, TypeAction, 0.2)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m[SummaryKey] != "tests pass" {
		t.Fatalf("entry %s: %v", b, err)
	}
	var back state.DecisionEntry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b2) != string(b) {
		t.Errorf("read and written back:\n%s\n%s", b, b2)
	}

	f.Summary = strings.Repeat("y", 2*DecisionTextMax)
	b, _ = json.Marshal(DecisionEntry(f, TypeAction, 0.2))
	m = nil
	_ = json.Unmarshal(b, &m)
	if s, _ := m[SummaryKey].(string); len(s) != DecisionTextMax {
		t.Errorf("summary of %d bytes kept", len(s))
	}

	f.Summary = ""
	b, _ = json.Marshal(DecisionEntry(f, TypeAction, 0.2))
	m = nil
	_ = json.Unmarshal(b, &m)
	if _, ok := m[SummaryKey]; ok {
		t.Errorf("no summary, no key: %s", b)
	}
}

// Step 7: the lessons 2-F recalled go into the entry (one line each,
// bounded, blanks dropped), so the Cycle Card after the cycle and
// `ooda status --share` later can say which lesson informed it; an entry
// that recalled none has no such key.
func TestStep7_DecisionEntryLessonsRecalled(t *testing.T) {
	f := Facts{Cycle: 3, Now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Domain: "tests", Skill: "/check-tests",
		Result: "success", Summary: "ok",
		LessonsRecalled: []string{"Skip backlog\nafter 2x no_remote.", " ", strings.Repeat("y", 3*DecisionTextMax)}}
	e := DecisionEntry(f, TypeAction, 0.2)
	var got []string
	if err := json.Unmarshal(e.Extra[LessonsRecalledKey], &got); err != nil {
		t.Fatalf("lessons_recalled = %s: %v", e.Extra[LessonsRecalledKey], err)
	}
	if len(got) != 2 || got[0] != "Skip backlog after 2x no_remote." || got[1] != strings.Repeat("y", DecisionTextMax) {
		t.Errorf("lessons_recalled = %q", got)
	}
	if string(e.Extra[SummaryKey]) != `"ok"` {
		t.Errorf("summary lost beside the lessons: %s", e.Extra[SummaryKey])
	}
	f.LessonsRecalled = nil
	if _, ok := DecisionEntry(f, TypeAction, 0.2).Extra[LessonsRecalledKey]; ok {
		t.Error("an entry that recalled nothing has lessons_recalled")
	}
}
