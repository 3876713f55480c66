package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/reflect"
	"github.com/ooda-loop/ooda/internal/state"
)

// Files ooda writes from what others wrote must stay below its own read
// limit and cost a cycle bounded work, whatever those files held.

// A skill_gaps.json of 60,000 gaps at the proposal threshold, with
// proposed-skills/ already full, made every cycle scan the gaps once per
// gap, list the directory once per gap and print 60,000 "is full"
// warnings. The gaps are cut to reflect.GapsKept with one warning, the
// first "full" ends 5-B with one warning, and the file is rewritten cut.
func TestStep5B_SixtyThousandGapsAndAFullProposalDirectory(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"gaps": [`)
	for i := 0; i < 60_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "g%d", "type": "report_error", "frequency": %d, "resolved": false}`, i, 3+i%7)
	}
	b.WriteString(`]}`)
	files := map[string]string{"agent/state/evolve/skill_gaps.json": b.String()}
	for i := 0; i < state.ProposalsMax; i++ {
		files[fmt.Sprintf("agent/state/evolve/proposed-skills/old%d.md", i)] = "# old\n"
	}
	dir := hardProject(t, "", "", skillScript, files)
	res, out := mustComplete(t, dir, t0)
	if res.Cycle != 1 {
		t.Fatalf("%+v\n%s", res, out)
	}
	if n := strings.Count(out, "is full"); n != 1 {
		t.Errorf("%d \"is full\" warnings, want 1", n)
	}
	if !strings.Contains(out, "[WARN] skill_gaps.json: gaps held 60000 entries, more than the 50 kept; the 59950 oldest (resolved first) were dropped.") ||
		!strings.Contains(out, "more gap(s) at frequency 3 or more were not looked at.") {
		t.Errorf("output:\n%.3000s", out)
	}
	var gaps state.SkillGaps
	evolveJSON(t, dir, "skill_gaps.json", &gaps)
	if len(gaps.Gaps) != reflect.GapsKept || gaps.Gaps[len(gaps.Gaps)-1].Name != "g59999" {
		t.Errorf("skill_gaps.json holds %d gaps", len(gaps.Gaps))
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "agent/state/evolve/proposed-skills"))
	if len(ents) != state.ProposalsMax {
		t.Errorf("proposed-skills/ holds %d files", len(ents))
	}
	assertStateParses(t, dir)
}

// 25 actions with 600,000-character titles grew action_queue.json past
// the 16 MiB read limit; the next cycle refused it and set it aside with
// every pending action. Titles are cut to reflect.TitleMax characters.
func TestStep5C2_HugeTitlesAreCutAndTheQueueStaysReadable(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"actions": [`)
	for i := 0; i < 25; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		// 600,000 characters, a two-byte one where the cut falls: the
		// report stays below the read limit, 25 such titles do not.
		fmt.Fprintf(&b, `{"title": "%d %s%s", "reach": 1, "impact": %d, "confidence": 1, "effort": 1, "related_files": ["a.go", "%s"]}`,
			i, strings.Repeat("é", 600), strings.Repeat("x", 599_400), i+1, strings.Repeat("d/", 3000))
	}
	b.WriteString(`]}`)
	dir := hardProject(t, "", "", skillScript+`cp big.json "$OODA_REPORT"`+"\n", map[string]string{"big.json": b.String()})
	_, out := mustComplete(t, dir, t0)
	if !strings.Contains(out, "[WARN] 25 action title(s) longer than 500 characters were cut (actions[].title)") ||
		!strings.Contains(out, "[WARN] 25 related_files entr(ies) dropped") {
		t.Errorf("output:\n%.3000s", out)
	}
	st, err := os.Stat(filepath.Join(dir, "agent/state/evolve/action_queue.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 1<<20 {
		t.Fatalf("action_queue.json: %d bytes", st.Size())
	}
	var q state.ActionQueue
	evolveJSON(t, dir, "action_queue.json", &q)
	if len(q.Pending) == 0 {
		t.Fatal("no pending action")
	}
	for _, a := range append(q.Pending, q.Completed...) {
		if n := utf8.RuneCountInString(a.Title); n > reflect.TitleMax || !strings.HasSuffix(a.Title, "…") {
			t.Errorf("%s: title of %d characters", a.ID, n)
		}
		if len(a.RelatedFiles) != 1 || a.RelatedFiles[0] != "a.go" {
			t.Errorf("%s: related_files %d entries", a.ID, len(a.RelatedFiles))
		}
	}
	// The next cycle reads the queue back: nothing set aside.
	_, out = mustComplete(t, dir, t0.Add(time.Hour))
	if strings.Contains(out, "action_queue.json") && strings.Contains(out, "corrupt") {
		t.Errorf("queue refused:\n%s", out)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "agent/state/evolve/action_queue.json.*")); len(m) > 0 {
		t.Errorf("queue set aside: %v", m)
	}
}

// After state.json was set aside, cycle_count started again and the
// reconciliation lowered a valid total_cycles of 4 to the new cycle's
// number. Outside crash recovery the higher count is kept, with a warning.
func TestStep6C5_ReconciliationNeverLowersTotalCyclesAfterAReset(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/state.json":   `{"cycle_count": `,
		"agent/state/evolve/metrics.json": `{"schema_version": "1.0.0", "counters": {"total_cycles": 4, "domain_executions": {}}, "cost": {"total_estimated_usd": 0}}`})
	res, out := mustComplete(t, dir, t0)
	if strings.Contains(out, "reconciled to") {
		t.Errorf("total_cycles lowered:\n%s", out)
	}
	var m state.Metrics
	evolveJSON(t, dir, "metrics.json", &m)
	if want := max(5, res.Cycle); m.Counters.TotalCycles != want {
		t.Errorf("total_cycles = %d after cycle #%d, want %d\n%s", m.Counters.TotalCycles, res.Cycle, want, out)
	}
}

// A cost ledger dated after today (the clock went back, or a hand edit)
// is kept rather than reset, so its spend still counts; the cycle says so.
func TestStep1A_AFutureLedgerDateIsKeptWithAWarning(t *testing.T) {
	dir := hardProject(t, "", "", skillScript, map[string]string{
		"agent/state/evolve/cost_ledger.json": `{"schema_version": "1.0.0", "date": "2030-01-01", "entries": [{"cycle": 1, "estimated_usd": 2}], "total_estimated_usd": 2}`})
	_, out := mustComplete(t, dir, t0)
	if !strings.Contains(out, `[WARN] cost_ledger.json: date "2030-01-01" is after today (2026-04-14 UTC)`) {
		t.Errorf("output:\n%s", out)
	}
}
