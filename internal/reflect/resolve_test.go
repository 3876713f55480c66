package reflect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/state"
)

// rsQueue extracts titles into an empty queue for domain, as the engine
// would from a report of that domain.
func rsQueue(t *testing.T, q state.ActionQueue, domain string, titles ...string) state.ActionQueue {
	t.Helper()
	var actions []act.ReportAction
	for _, ti := range titles {
		actions = append(actions, act.ReportAction{Title: ti, Reach: 1, Impact: 1, Confidence: 1, Effort: 1})
	}
	in := aqExtractIn()
	in.Domain, in.Skill = domain, "/lint"
	out, res := ExtractActions(q, actions, in)
	if len(res.Added) != len(titles) {
		t.Fatalf("extracted %d of %d titles: %+v", len(res.Added), len(titles), res)
	}
	return out
}

func rsIn() ResolveInput {
	return ResolveInput{Cycle: 9, Domain: "code_quality", Skill: "/lint", Now: aqNow}
}

func rsTitles(items []state.Action) []string {
	var out []string
	for _, a := range items {
		out = append(out, a.Title)
	}
	return out
}

// A title names its action again after the normalisation de-duplication
// uses (case, punctuation, stop words, the cut at TitleMax); a title that
// differs by a word does not, even where de-duplication would call the two
// alike.
func TestResolveMatchesTheNormalisedTitleExactly(t *testing.T) {
	long := "Fix 1 go vet finding in a.go: " + strings.Repeat("é", 2*TitleMax)
	q := rsQueue(t, state.ActionQueue{}, "code_quality",
		"Fix 1 go vet finding in a.go: undefined: fmt",
		"Fix the failing test TestParse",
		"Fix 2 gofmt findings in one two three four five six seven eight nine.go",
		long,
	)
	before := aqJSON(t, q)
	out, res := ResolveActions(q, []act.ResolvedAction{
		{Title: "  fix 1 GO VET finding in a_go — undefined fmt  "},
		{Title: "Fix failing test TestParse", Reason: "passes again"},
		// Nine of ten words: Jaccard 0.9, a duplicate for 5-C2, not the same action.
		{Title: "Fix 2 gofmt findings in one two three four five six seven eight.go"},
		// As reported: longer than the queue keeps it.
		{Title: long + " and more that was cut"},
		{Title: "Fix something never queued"},
	}, rsIn())
	if aqJSON(t, q) != before {
		t.Fatal("the caller's queue was modified")
	}
	got := rsTitles(out.Completed)
	want := []string{"Fix 1 go vet finding in a.go: undefined: fmt", "Fix the failing test TestParse", q.Pending[3].Title}
	if !slices.Equal(got, want) {
		t.Fatalf("completed %q, want %q", got, want)
	}
	if len(out.Pending) != 1 || !strings.Contains(out.Pending[0].Title, "nine.go") {
		t.Fatalf("pending %q", rsTitles(out.Pending))
	}
	if len(res.Resolved) != 3 || res.Unmatched != 2 || len(res.Warnings) != 0 {
		t.Fatalf("result %+v", res)
	}
	if res.Resolved[1].Index != 1 || res.Resolved[1].Reason != "passes again" || res.Resolved[0].ID != q.Pending[0].ID {
		t.Fatalf("resolved %+v", res.Resolved)
	}
}

// Only the executing domain's own pending items: never another domain's,
// a person's (no source_domain), one in progress, one blocked.
func TestResolveOnlyTheDomainsOwnPendingItems(t *testing.T) {
	const title = "Fix the failing test TestParse"
	q := rsQueue(t, state.ActionQueue{}, "test_coverage", title)
	q.Pending = append(q.Pending,
		state.Action{ID: "mine", Title: title + " ", SourceDomain: "code_quality", Status: "pending"},
		state.Action{ID: "human", Title: title, Status: "pending"},
		state.Action{ID: "blocked", Title: title, SourceDomain: "code_quality", Status: "blocked"},
		state.Action{ID: "marked", Title: title, SourceDomain: "code_quality", Status: "in_progress"},
		state.Action{ID: "legacy", Title: title, SourceDomain: "code_quality"},
	)
	q.InProgress = []state.Action{{ID: "working", Title: title, SourceDomain: "code_quality", Status: "in_progress", PRNumber: aqInt(4)}}
	out, res := ResolveActions(q, []act.ResolvedAction{{Title: title}}, rsIn())
	if ids := aqIDs(out.Completed); !slices.Equal(ids, []string{"mine", "legacy"}) {
		t.Fatalf("completed %v, want the domain's two pending items", ids)
	}
	if ids := aqIDs(out.Pending); !slices.Equal(ids, []string{q.Pending[0].ID, "human", "blocked", "marked"}) {
		t.Fatalf("pending %v", ids)
	}
	if ids := aqIDs(out.InProgress); !slices.Equal(ids, []string{"working"}) {
		t.Fatalf("in_progress %v", ids)
	}
	if len(res.Resolved) != 2 || res.Unmatched != 0 {
		t.Fatalf("result %+v", res)
	}

	// No domain: nothing is anyone's.
	if out, res := ResolveActions(q, []act.ResolvedAction{{Title: title}}, ResolveInput{Now: aqNow}); len(out.Completed) != 0 || res.Unmatched != 1 {
		t.Fatalf("without a domain: %+v", res)
	}
}

// The resolved item is completed in the original's shape, its history
// kept and extended; the file round-trips.
func TestResolveRecordsTheResolution(t *testing.T) {
	var q state.ActionQueue
	if err := json.Unmarshal([]byte(`{"schema_version": "1.0.0", "pending": [
	  {"id": "2026-01-15-001", "title": "Fix lint in a.go", "source_domain": "code_quality", "rice_score": 75.0, "status": "pending",
	   "extracted_at": "2026-01-15T14:30:00Z", "pr_number": null, "difficulty": "low",
	   "status_history": [{"status": "pending", "at": "2026-01-15T14:30:00Z", "reason": "Extracted."}]},
	  {"id": "2026-01-15-002", "title": "Fix lint in b.go", "source_domain": "code_quality", "status": "pending", "status_history": "damaged"}
	], "in_progress": [], "completed": []}`), &q); err != nil {
		t.Fatal(err)
	}
	out, res := ResolveActions(q, []act.ResolvedAction{{Title: "Fix lint in a.go", Reason: "go vet\x1b[31m no longer\nreports it"}, {Title: "Fix lint in b.go"}}, rsIn())
	if len(res.Resolved) != 2 || len(out.Pending) != 0 || len(out.Completed) != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "2026-01-15-002: status_history is not an array") {
		t.Fatalf("warnings %q", res.Warnings)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Completed []struct {
			ID            string          `json:"id"`
			Status        string          `json:"status"`
			Resolution    string          `json:"resolution"`
			Difficulty    string          `json:"difficulty"`
			PRNumber      json.RawMessage `json:"pr_number"`
			StatusHistory json.RawMessage `json:"status_history"`
		} `json:"completed"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	a := back.Completed[0]
	if a.Status != "completed" || a.Resolution != "no_longer_relevant" || a.Difficulty != "low" || string(a.PRNumber) != "null" {
		t.Fatalf("completed item %s", b)
	}
	var hist []struct{ Status, At, Reason string }
	if err := json.Unmarshal(a.StatusHistory, &hist); err != nil || len(hist) != 2 {
		t.Fatalf("status_history %s: %v", a.StatusHistory, err)
	}
	want := "resolved by /lint (code_quality) in cycle 9: go vet [31m no longer reports it"
	if hist[0].Reason != "Extracted." || hist[1].Status != "completed" || hist[1].At != "2025-06-01T12:00:00Z" || hist[1].Reason != want {
		t.Fatalf("status_history %+v, want the last reason %q", hist, want)
	}
	if c := back.Completed[1]; c.Status != "completed" || string(c.StatusHistory) != `"damaged"` {
		t.Fatalf("damaged history must be kept as written: %+v", c)
	}
}

// A report cannot close more than MaxReportResolved entries' worth, nor
// close items with a title of no words, nor grow the queue with its text.
func TestResolveHostileReports(t *testing.T) {
	q := state.ActionQueue{Pending: []state.Action{
		{ID: "empty", Title: "the — a ...", SourceDomain: "code_quality", Status: "pending"},
		{ID: "late", Title: "Fix late", SourceDomain: "code_quality", Status: "pending"},
		{ID: "ok", Title: "Fix ok", SourceDomain: "code_quality", Status: "pending"},
	}}
	var entries []act.ResolvedAction
	for i := range MaxReportResolved + 50 {
		entries = append(entries, act.ResolvedAction{Title: fmt.Sprintf("Fix nothing %d", i)})
	}
	entries[0] = act.ResolvedAction{Title: "The a of"}
	entries[1] = act.ResolvedAction{Title: "   "}
	entries[2] = act.ResolvedAction{Title: "\x1bFix\x00\tOK\u202e", Reason: strings.Repeat("\u202e\x00x ", 1<<20)}
	entries[MaxReportResolved+10] = act.ResolvedAction{Title: "Fix late"}
	out, res := ResolveActions(q, entries, rsIn())
	if ids := aqIDs(out.Completed); !slices.Equal(ids, []string{"ok"}) {
		t.Fatalf("completed %v, want only ok", ids)
	}
	if ids := aqIDs(out.Pending); !slices.Equal(ids, []string{"empty", "late"}) {
		t.Fatalf("pending %v", ids)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, w := range []string{
		"the report lists 250 resolved actions; only the first 200 are taken, 50 dropped (resolved)",
		"resolved[0].title has no word to match an action by; ignored",
		"resolved[1].title is empty; ignored",
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("no warning %q in\n%s", w, joined)
		}
	}
	r := res.Resolved[0].Reason
	if n := len([]rune(r)); n > ResolveReasonMax || strings.ContainsAny(r, "\x00\u202e\x1b") || !strings.HasSuffix(r, "…") {
		t.Fatalf("reason of %d runes kept unsafe or uncut: %q", n, r)
	}
	if res.Unmatched != MaxReportResolved-1 {
		t.Fatalf("unmatched %d", res.Unmatched)
	}
}

// A title both resolved twice and matching one item resolves it once.
func TestResolveTwiceNamedOnce(t *testing.T) {
	q := rsQueue(t, state.ActionQueue{}, "code_quality", "Fix x")
	out, res := ResolveActions(q, []act.ResolvedAction{{Title: "Fix x"}, {Title: "fix X"}}, rsIn())
	if len(out.Completed) != 1 || len(res.Resolved) != 1 || res.Unmatched != 0 {
		t.Fatalf("completed %v, result %+v", aqIDs(out.Completed), res)
	}
}

// A finding its skill resolved that comes back is new work again: the
// resolved item is not a duplicate of it, while an item completed any
// other way (its PR merged) still is.
func TestResolvedItemDoesNotSwallowTheFindingWhenItReturns(t *testing.T) {
	resolved := state.Action{ID: "A-1-1", Title: "Fix the failing test TestParse", Status: "completed",
		Extra: state.Extra{"resolution": []byte(`"no_longer_relevant"`)}}
	merged := state.Action{ID: "A-1-2", Title: "Fix the failing test TestFlags", Status: "merged"}
	q := state.ActionQueue{Completed: []state.Action{resolved, merged}}
	report := []act.ReportAction{
		{Title: "Fix the failing test TestParse", Reach: 1, Impact: 1, Confidence: 1, Effort: 1},
		{Title: "Fix the failing test TestFlags", Reach: 1, Impact: 1, Confidence: 1, Effort: 1},
	}
	out, _ := ExtractActions(q, report, ExtractInput{Cycle: 9, Domain: "tests", Skill: "/tests", Now: aqNow})
	if len(out.Pending) != 1 || out.Pending[0].Title != "Fix the failing test TestParse" {
		t.Fatalf("pending after the finding came back: %+v", out.Pending)
	}
}
