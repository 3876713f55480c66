package reflect

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/state"
)

var aqNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func aqFloat(v float64) *float64 { return &v }
func aqInt(v int) *int           { return &v }

// ago is the extracted_at of an item the given number of days before aqNow.
func aqAgo(days float64) string {
	return state.FormatTime(aqNow.Add(-time.Duration(days * float64(24*time.Hour))))
}

func aqJSON(t testing.TB, q state.ActionQueue) string {
	t.Helper()
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatalf("marshal queue: %v", err)
	}
	return string(b)
}

func aqIDs(items []state.Action) []string {
	var out []string
	for _, a := range items {
		out = append(out, a.ID)
	}
	return out
}

func aqFind(q state.ActionQueue, id string) (state.Action, string, bool) {
	for name, list := range map[string][]state.Action{"pending": q.Pending, "in_progress": q.InProgress, "completed": q.Completed} {
		for _, a := range list {
			if a.ID == id {
				return a, name, true
			}
		}
	}
	return state.Action{}, "", false
}

func aqExtractIn() ExtractInput {
	return ExtractInput{Cycle: 7, Domain: "backlog", Skill: "/plan-backlog", ImplementationSkill: "/dev-cycle", Now: aqNow}
}

func TestStep5C2_RiceWithExtensions(t *testing.T) {
	tests := []struct {
		name    string
		weights map[string]float64
		action  act.ReportAction
		want    float64
	}{
		{"plain RICE", nil, act.ReportAction{Title: "x", Reach: 100, Impact: 2, Confidence: 0.8, Effort: 4}, 4000},
		{"effort below the 0.5 floor", nil, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 0.1}, 200},
		{"missing effort takes the floor", nil, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1}, 200},
		{"missing numbers score 0", nil, act.ReportAction{Title: "x"}, 0},
		{"rounded to 2 decimals", nil, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 3}, 33.33},
		{"configured extension multiplies", map[string]float64{"security": 2}, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 1, Extensions: map[string]float64{"security": 0.5}}, 200},
		{"unconfigured extension ignored", map[string]float64{"security": 2}, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 1, Extensions: map[string]float64{"security": 0.5, "chore": 3}}, 200},
		{"no extensions configured", nil, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 1, Extensions: map[string]float64{"security": 0.5}}, 100},
		{"extensions sum", map[string]float64{"security": 2, "chore": -0.5}, act.ReportAction{Title: "x", Reach: 1, Impact: 1, Confidence: 1, Effort: 1, Extensions: map[string]float64{"security": 0.25, "chore": 1, "ux": 9}}, 100},
		{"configured but not reported", map[string]float64{"security": 2}, act.ReportAction{Title: "x", Reach: 2, Impact: 1, Confidence: 0.5, Effort: 1}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := aqExtractIn()
			in.RiceExtensions = tc.weights
			q, res := ExtractActions(state.ActionQueue{}, []act.ReportAction{tc.action}, in)
			if len(res.Added) != 1 || len(q.Pending) != 1 {
				t.Fatalf("added %v, pending %d; want one item", res.Added, len(q.Pending))
			}
			got := q.Pending[0]
			if got.RiceScore == nil || *got.RiceScore != tc.want {
				t.Errorf("rice_score = %v, want %v", got.RiceScore, tc.want)
			}
			if got.EffectiveRice == nil || *got.EffectiveRice != tc.want {
				t.Errorf("effective_rice = %v, want %v", got.EffectiveRice, tc.want)
			}
		})
	}

	t.Run("non-finite score rejected", func(t *testing.T) {
		q, res := ExtractActions(state.ActionQueue{}, []act.ReportAction{
			{Title: "infinite", Reach: math.Inf(1), Impact: 1, Confidence: 1, Effort: 1},
			{Title: "not a number", Reach: math.NaN(), Impact: 1, Confidence: 1, Effort: 1},
		}, aqExtractIn())
		if len(q.Pending) != 0 || len(res.Rejected) != 2 {
			t.Fatalf("pending %d, rejected %v; want both rejected", len(q.Pending), res.Rejected)
		}
		if _, err := json.Marshal(q); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStep5C2_JaccardDedup(t *testing.T) {
	tests := []struct {
		name     string
		existing state.ActionQueue
		title    string
		wantDup  string // id of the item it duplicates, "" when new
	}{
		{"stop words and case ignored",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "Add tests for the parser"}}},
			"add tests to parser", "P1"},
		{"only stop words differ",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "Fix the bug in a parser"}}},
			"fix bug parser", "P1"},
		{"punctuation splits words",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "Refactor: Cache-Layer!"}}},
			"refactor cache layer", "P1"},
		{"exactly 0.8 is a duplicate (4 of 5 words)",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "alpha beta gamma delta"}}},
			"alpha beta gamma delta epsilon", "P1"},
		{"0.75 is not (3 of 4 words)",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "alpha beta gamma"}}},
			"alpha beta gamma delta", ""},
		{"stop words do not pad the union",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "alpha beta gamma delta"}}},
			"the alpha of beta in gamma to delta for a epsilon", "P1"},
		{"digits are words",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "Upgrade node 18"}}},
			"Upgrade node 20", ""},
		{"against in_progress",
			state.ActionQueue{InProgress: []state.Action{{ID: "I1", Title: "Rotate the API keys"}}},
			"rotate api keys", "I1"},
		{"against completed, superseded included",
			state.ActionQueue{Completed: []state.Action{{ID: "C1", Title: "Rotate API keys", Status: "superseded"}}},
			"Rotate API keys", "C1"},
		{"titles without significant words match each other",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "The"}}},
			"a?!", "P1"},
		{"a titleless legacy item matches nothing",
			state.ActionQueue{Pending: []state.Action{{ID: "a1"}}},
			"!!!", ""},
		{"significant against empty is new",
			state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "The"}}},
			"parser", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := aqJSON(t, tc.existing)
			q, res := ExtractActions(tc.existing, []act.ReportAction{{Title: tc.title, Reach: 1, Impact: 1, Confidence: 1, Effort: 1}}, aqExtractIn())
			if aqJSON(t, tc.existing) != before {
				t.Fatal("input queue was modified")
			}
			if tc.wantDup == "" {
				if len(res.Added) != 1 || len(res.Duplicates) != 0 {
					t.Fatalf("added %v, duplicates %v; want a new item", res.Added, res.Duplicates)
				}
				return
			}
			if len(res.Added) != 0 || len(res.Duplicates) != 1 || res.Duplicates[0].ExistingID != tc.wantDup {
				t.Fatalf("added %v, duplicates %+v; want a duplicate of %s", res.Added, res.Duplicates, tc.wantDup)
			}
			for _, pair := range [][2][]state.Action{{q.Pending, tc.existing.Pending}, {q.InProgress, tc.existing.InProgress}, {q.Completed, tc.existing.Completed}} {
				if !slices.Equal(aqIDs(pair[0]), aqIDs(pair[1])) {
					t.Errorf("a duplicate changed the queue: %s", aqJSON(t, q))
				}
			}
		})
	}

	t.Run("within one report the first wins", func(t *testing.T) {
		q, res := ExtractActions(state.ActionQueue{}, []act.ReportAction{
			{Title: "Add retry to webhook sender", Reach: 1, Impact: 1, Confidence: 1, Effort: 1},
			{Title: "add a retry to the webhook sender", Reach: 9, Impact: 9, Confidence: 1, Effort: 1},
		}, aqExtractIn())
		if !slices.Equal(res.Added, []string{"A-7-1"}) || len(res.Duplicates) != 1 || res.Duplicates[0].ExistingID != "A-7-1" {
			t.Fatalf("added %v, duplicates %+v", res.Added, res.Duplicates)
		}
		if len(q.Pending) != 1 || *q.Pending[0].RiceScore != 100 {
			t.Fatalf("pending %+v; want the first action only", q.Pending)
		}
	})
}

func TestStep5C2_RequiredFieldsAndRiskRules(t *testing.T) {
	t.Run("new item fields", func(t *testing.T) {
		files := []string{"src/a.go"}
		actions := []act.ReportAction{{Title: "  Cache the config  ", Reach: 1, Impact: 1, Confidence: 1, Effort: 1, RelatedFiles: files}}
		q, res := ExtractActions(state.ActionQueue{}, actions, aqExtractIn())
		want := state.Action{
			ID: "A-7-1", Title: "Cache the config", SourceDomain: "backlog",
			RiceScore: aqFloat(100), EffectiveRice: aqFloat(100), RelatedFiles: []string{"src/a.go"},
			Status: "pending", ExtractedAt: "2025-06-01T12:00:00Z", DecayApplied: aqFloat(0),
		}
		if len(q.Pending) != 1 || !reflect.DeepEqual(q.Pending[0], want) {
			t.Fatalf("pending = %+v\nwant %+v", q.Pending, want)
		}
		if !slices.Equal(res.Added, []string{"A-7-1"}) {
			t.Errorf("added = %v", res.Added)
		}
		b, _ := json.Marshal(q.Pending[0])
		for _, key := range []string{`"decay_applied":0`, `"status":"pending"`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("item JSON %s lacks %s", b, key)
			}
		}
		for _, key := range []string{"pr_number", "risk_tier"} {
			if strings.Contains(string(b), key) {
				t.Errorf("item JSON %s has %s; want it null (omitted)", b, key)
			}
		}
		q.Pending[0].RelatedFiles[0] = "changed"
		if files[0] != "src/a.go" {
			t.Error("the item shares related_files with the report")
		}
	})

	t.Run("empty titles rejected with a reason", func(t *testing.T) {
		q, res := ExtractActions(state.ActionQueue{}, []act.ReportAction{
			{Title: "", Reach: 5, Impact: 5, Confidence: 1, Effort: 1},
			{Title: "   ", Reach: 5, Impact: 5, Confidence: 1, Effort: 1},
			{Title: "kept"},
		}, aqExtractIn())
		if len(res.Rejected) != 2 || res.Rejected[0].Index != 0 || res.Rejected[1].Index != 1 || res.Rejected[0].Reason == "" {
			t.Fatalf("rejected = %+v", res.Rejected)
		}
		if !slices.Equal(aqIDs(q.Pending), []string{"A-7-1"}) || *q.Pending[0].RiceScore != 0 {
			t.Fatalf("pending = %+v; want only the titled action, scored 0", q.Pending)
		}
	})

	t.Run("ids skip those already used in the cycle", func(t *testing.T) {
		existing := state.ActionQueue{Completed: []state.Action{{ID: "A-7-1", Title: "earlier"}}, Pending: []state.Action{{ID: "A-7-2", Title: "other"}}}
		q, res := ExtractActions(existing, []act.ReportAction{{Title: "new one"}, {Title: "another new"}}, aqExtractIn())
		if !slices.Equal(res.Added, []string{"A-7-3", "A-7-4"}) || !slices.Equal(aqIDs(q.Pending), []string{"A-7-2", "A-7-3", "A-7-4"}) {
			t.Fatalf("added %v, pending %v", res.Added, aqIDs(q.Pending))
		}
	})

	rules := `[{"pattern": "migrations/*", "tier": 3}, {"pattern": "*.md", "tier": 1}, {"pattern": "src/**", "tier": 2}]`
	tierTests := []struct {
		name  string
		rules string
		files []string
		want  *int
		warns int
	}{
		{"dir/* covers the subtree", rules, []string{"migrations/2024/01_init.sql"}, aqInt(3), 0},
		{"shell glob", rules, []string{"README.md"}, aqInt(1), 0},
		{"star does not cross a slash", rules, []string{"docs/guide.md"}, nil, 0},
		{"first rule matching any file wins", rules, []string{"README.md", "migrations/x.sql"}, aqInt(3), 0},
		{"dir/** covers the subtree", rules, []string{"src/a/b.go"}, aqInt(2), 0},
		{"leading ./ ignored", rules, []string{"./README.md"}, aqInt(1), 0},
		{"no files, no tier", rules, nil, nil, 0},
		{"absent rules", "", []string{"README.md"}, nil, 0},
		{"null rules", "null", []string{"README.md"}, nil, 0},
		{"empty rules", "[]", []string{"README.md"}, nil, 0},
		{"not an array ignored", `{"pattern": "*.md", "tier": 1}`, []string{"README.md"}, nil, 1},
		{"not JSON ignored", `*.md=1`, []string{"README.md"}, nil, 1},
		{"bad rules skipped, good kept",
			`[{"pattern": "[", "tier": 1}, {"pattern": "*.md", "tier": "high"}, {"tier": 2}, {"pattern": "*.md", "tier": 1.5}, "x", {"pattern": "*.md", "tier": 2.0}]`,
			[]string{"README.md"}, aqInt(2), 5},
	}
	for _, tc := range tierTests {
		t.Run("risk tier: "+tc.name, func(t *testing.T) {
			in := aqExtractIn()
			in.RiskRules = json.RawMessage(tc.rules)
			q, res := ExtractActions(state.ActionQueue{}, []act.ReportAction{{Title: "touch files", RelatedFiles: tc.files}}, in)
			got := q.Pending[0].RiskTier
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("risk_tier = %v, want %v", got, tc.want)
			}
			if len(res.Warnings) != tc.warns {
				t.Errorf("warnings = %q, want %d", res.Warnings, tc.warns)
			}
		})
	}
}

func TestStep5C2_CapTwentySupersedesLowest(t *testing.T) {
	pendingWith := func(n int) []state.Action {
		var out []state.Action
		for i := 1; i <= n; i++ {
			out = append(out, state.Action{ID: fmt.Sprintf("E-%d", i), Title: fmt.Sprintf("existing item %d", i),
				RiceScore: aqFloat(float64(10 + i)), EffectiveRice: aqFloat(float64(10 + i)), Status: "pending", ExtractedAt: aqAgo(1)})
		}
		return out
	}
	// One report action per RICE value; titles are distinct words so
	// none is a duplicate.
	report := func(rices ...float64) []act.ReportAction {
		var out []act.ReportAction
		for i, r := range rices {
			out = append(out, act.ReportAction{Title: fmt.Sprintf("new work %c", 'a'+i), Reach: r, Impact: 1, Confidence: 1, Effort: 100})
		}
		return out
	}
	tests := []struct {
		name           string
		pending        []state.Action
		actions        []act.ReportAction
		wantSuperseded []string
	}{
		{"under the cap nothing moves", pendingWith(17), report(100, 50, 5), nil},
		{"lowest go, new or old", pendingWith(19), report(100, 50, 5), []string{"E-1", "A-7-3"}},
		{"a tie drops the newer item", pendingWith(20), report(11), []string{"A-7-1"}},
		{"effective_rice decides, not rice_score", func() []state.Action {
			p := pendingWith(20)
			p[19].EffectiveRice = aqFloat(0.5) // E-20 decayed far down
			return p
		}(), report(50), []string{"E-20"}},
		{"an oversized queue is cut back", pendingWith(25), nil, []string{"E-5", "E-4", "E-3", "E-2", "E-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q0 := state.ActionQueue{Pending: tc.pending}
			before := aqJSON(t, q0)
			q, res := ExtractActions(q0, tc.actions, aqExtractIn())
			if aqJSON(t, q0) != before {
				t.Fatal("input queue was modified")
			}
			if !slices.Equal(res.Superseded, tc.wantSuperseded) {
				t.Fatalf("superseded = %v, want %v", res.Superseded, tc.wantSuperseded)
			}
			if len(q.Pending) > PendingCap {
				t.Errorf("pending = %d items", len(q.Pending))
			}
			for _, id := range tc.wantSuperseded {
				a, list, ok := aqFind(q, id)
				if !ok || list != "completed" || a.Status != "superseded" {
					t.Errorf("%s is in %q with status %q; want completed, superseded", id, list, a.Status)
				}
			}
		})
	}
}

func TestStep5C2_SkippedForImplementationSkill(t *testing.T) {
	actions := []act.ReportAction{{Title: "follow-up work", Reach: 1, Impact: 1, Confidence: 1, Effort: 1}}
	tests := []struct {
		skill, impl string
		skipped     bool
	}{
		{"/dev-cycle", "/dev-cycle", true},
		{"dev-cycle", "/dev-cycle", true},
		{"/dev-cycle", " dev-cycle ", true},
		{"/plan-backlog", "/dev-cycle", false},
		{"/dev-cycle", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.skill+" vs "+tc.impl, func(t *testing.T) {
			in := aqExtractIn()
			in.Skill, in.ImplementationSkill = tc.skill, tc.impl
			q0 := state.ActionQueue{Pending: []state.Action{{ID: "P1", Title: "existing"}}}
			q, res := ExtractActions(q0, actions, in)
			if res.Skipped != tc.skipped {
				t.Fatalf("skipped = %v, want %v", res.Skipped, tc.skipped)
			}
			if tc.skipped && (aqJSON(t, q) != aqJSON(t, q0) || len(res.Added) != 0) {
				t.Errorf("a skipped extraction changed the queue: %s", aqJSON(t, q))
			}
			if !tc.skipped && len(res.Added) != 1 {
				t.Errorf("added = %v, want one", res.Added)
			}
		})
	}
}

func TestStep6C2_QueuePersistence(t *testing.T) {
	t.Run("effective_rice initialised then sorted", func(t *testing.T) {
		q0 := state.ActionQueue{
			Pending: []state.Action{
				{ID: "none"},
				{ID: "raw", RiceScore: aqFloat(40)},
				{ID: "eff", RiceScore: aqFloat(90), EffectiveRice: aqFloat(30)},
				{ID: "tie-b", EffectiveRice: aqFloat(50), ExtractedAt: aqAgo(1)},
				{ID: "tie-a", EffectiveRice: aqFloat(50), ExtractedAt: aqAgo(1)},
				{ID: "tie-old", EffectiveRice: aqFloat(50), ExtractedAt: aqAgo(9)},
				{ID: "tie-undated", EffectiveRice: aqFloat(50)},
			},
			InProgress: []state.Action{{ID: "ip", RiceScore: aqFloat(7)}},
		}
		before := aqJSON(t, q0)
		q := PersistQueue(q0)
		if aqJSON(t, q0) != before {
			t.Fatal("input queue was modified")
		}
		want := []string{"tie-old", "tie-a", "tie-b", "tie-undated", "raw", "eff", "none"}
		if !slices.Equal(aqIDs(q.Pending), want) {
			t.Fatalf("pending order = %v, want %v", aqIDs(q.Pending), want)
		}
		for _, a := range append(q.Pending, q.InProgress...) {
			if a.EffectiveRice == nil {
				t.Errorf("%s has no effective_rice", a.ID)
			}
		}
		if *q.Pending[4].EffectiveRice != 40 || *q.Pending[6].EffectiveRice != 0 || *q.InProgress[0].EffectiveRice != 7 {
			t.Errorf("initialised effective_rice wrong: %+v", q.Pending)
		}
		if q.Pending[6].RiceScore != nil {
			t.Error("rice_score invented for an item without one")
		}
	})

	t.Run("caps pending at 20 and completed at the last 30", func(t *testing.T) {
		var q0 state.ActionQueue
		for i := 1; i <= 23; i++ {
			q0.Pending = append(q0.Pending, state.Action{ID: fmt.Sprintf("P%02d", i), EffectiveRice: aqFloat(float64(i)), Status: "pending"})
		}
		for i := 1; i <= 29; i++ {
			q0.Completed = append(q0.Completed, state.Action{ID: fmt.Sprintf("C%02d", i), Status: "done"})
		}
		q := PersistQueue(q0)
		if len(q.Pending) != 20 || q.Pending[0].ID != "P23" || q.Pending[19].ID != "P04" {
			t.Fatalf("pending = %v", aqIDs(q.Pending))
		}
		if len(q.Completed) != 30 {
			t.Fatalf("completed = %d items, want 30", len(q.Completed))
		}
		// 29 + 3 superseded = 32: the two oldest completed items fall off.
		if q.Completed[0].ID != "C03" {
			t.Errorf("completed starts with %s, want C03", q.Completed[0].ID)
		}
		for _, a := range q.Completed[27:] {
			if a.Status != "superseded" || !strings.HasPrefix(a.ID, "P0") {
				t.Errorf("completed tail %s has status %q; want a superseded pending item", a.ID, a.Status)
			}
		}
	})

	t.Run("unknown keys kept", func(t *testing.T) {
		var q0 state.ActionQueue
		if err := json.Unmarshal([]byte(`{"pending":[{"id":"x","rice_score":3,"owner":"ops"}],"completed":[],"note":"keep"}`), &q0); err != nil {
			t.Fatal(err)
		}
		got := aqJSON(t, PersistQueue(q0))
		for _, want := range []string{`"owner":"ops"`, `"note":"keep"`, `"effective_rice":3`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %s", got, want)
			}
		}
	})
}

func TestStep6C6_DecaySchedule(t *testing.T) {
	const D, amount = 14.0, 0.05
	item := func(age float64) state.Action {
		return state.Action{ID: "X", Title: "x", RiceScore: aqFloat(100), EffectiveRice: aqFloat(100), DecayApplied: aqFloat(0), Status: "pending", ExtractedAt: aqAgo(age)}
	}
	withLastDecay := func(a state.Action, daysAgo float64, eff, applied float64) state.Action {
		stamp, _ := json.Marshal(aqAgo(daysAgo))
		a.Extra = state.Extra{"last_decay_at": stamp, "owner": json.RawMessage(`"ops"`)}
		a.EffectiveRice, a.DecayApplied = aqFloat(eff), aqFloat(applied)
		return a
	}
	tests := []struct {
		name       string
		item       state.Action
		days, amt  float64
		wantFactor float64 // 0: not decayed
		wantEff    float64
		superseded bool
	}{
		{"younger than D", item(13.9), D, amount, 0, 100, false},
		{"0.05 at 14 days", item(14), D, amount, 0.05, 95, false},
		{"still one step at 27 days", item(27), D, amount, 0.05, 95, false},
		{"0.10 at 28 days", item(28), D, amount, 0.10, 90, false},
		{"0.15 at 42 days", item(42), D, amount, 0.15, 85, false},
		{"capped at 1 and superseded", item(14 * 25), D, amount, 1, 0, true},
		{"reaches 1 exactly at step 20", item(14 * 20), D, amount, 1, 0, true},
		{"large amount", item(42), D, 0.3, 0.9, 10, false},
		{"no second decay within D days", withLastDecay(item(28), 13, 95, 0.05), D, amount, 0, 95, false},
		{"decays again after D days, not compounded", withLastDecay(item(28), 14, 95, 0.05), D, amount, 0.10, 90, false},
		{"decay off when D is 0", item(400), 0, amount, 0, 100, false},
		{"decay off when amount is 0", item(400), D, 0, 0, 100, false},
		{"zero RICE is superseded at its first decay", func() state.Action {
			a := item(14)
			a.RiceScore, a.EffectiveRice = aqFloat(0), aqFloat(0)
			return a
		}(), D, amount, 0.05, 0, true},
		{"missing rice_score measured from effective_rice", func() state.Action {
			a := item(14)
			a.RiceScore, a.EffectiveRice = nil, aqFloat(50)
			return a
		}(), D, amount, 0.05, 47.5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q0 := state.ActionQueue{Pending: []state.Action{tc.item}}
			before := aqJSON(t, q0)
			q, res := DecayQueue(q0, DecayInput{Now: aqNow, DecayDays: tc.days, DecayAmount: tc.amt})
			if aqJSON(t, q0) != before {
				t.Fatal("input queue was modified")
			}
			a, list, _ := aqFind(q, "X")
			if tc.wantFactor == 0 {
				if len(res.Decayed) != 0 || aqJSON(t, q) != before {
					t.Fatalf("decayed %+v; want no change", res.Decayed)
				}
				return
			}
			if len(res.Decayed) != 1 || res.Decayed[0].Factor != tc.wantFactor || res.Decayed[0].EffectiveRice != tc.wantEff {
				t.Fatalf("decayed = %+v, want factor %v effective %v", res.Decayed, tc.wantFactor, tc.wantEff)
			}
			if *a.DecayApplied != tc.wantFactor || *a.EffectiveRice != tc.wantEff {
				t.Errorf("item decay_applied %v effective_rice %v", *a.DecayApplied, *a.EffectiveRice)
			}
			wantRice := tc.item.Rice()
			if tc.item.RiceScore != nil {
				wantRice = *tc.item.RiceScore
			}
			if a.RiceScore == nil || *a.RiceScore != wantRice {
				t.Errorf("rice_score changed to %v", *a.RiceScore)
			}
			if got := string(a.Extra["last_decay_at"]); got != `"2025-06-01T12:00:00Z"` {
				t.Errorf("last_decay_at = %s", got)
			}
			if tc.item.Extra != nil && string(a.Extra["owner"]) != `"ops"` {
				t.Error("unknown keys lost")
			}
			if tc.superseded {
				if list != "completed" || a.Status != "superseded" || !slices.Equal(res.Superseded, []string{"X"}) {
					t.Errorf("item in %q with status %q, superseded %v; want completed as superseded", list, a.Status, res.Superseded)
				}
			} else if list != "pending" || len(res.Superseded) != 0 {
				t.Errorf("item in %q, superseded %v; want it pending", list, res.Superseded)
			}
		})
	}

	t.Run("two cycles in a row decay once", func(t *testing.T) {
		in := DecayInput{Now: aqNow, DecayDays: D, DecayAmount: amount}
		q1, r1 := DecayQueue(state.ActionQueue{Pending: []state.Action{item(30)}}, in)
		in.Now = aqNow.Add(4 * time.Hour)
		q2, r2 := DecayQueue(q1, in)
		if len(r1.Decayed) != 1 || len(r2.Decayed) != 0 || aqJSON(t, q1) != aqJSON(t, q2) {
			t.Fatalf("first %+v, second %+v", r1.Decayed, r2.Decayed)
		}
	})

	t.Run("unreadable extracted_at left alone", func(t *testing.T) {
		a := item(0)
		a.ExtractedAt = "yesterday"
		q, res := DecayQueue(state.ActionQueue{Pending: []state.Action{a}}, DecayInput{Now: aqNow, DecayDays: D, DecayAmount: amount})
		if len(res.Decayed) != 0 || len(res.Warnings) != 1 || len(q.Pending) != 1 {
			t.Fatalf("decayed %+v, warnings %q", res.Decayed, res.Warnings)
		}
	})
}

func TestStep6C6_InProgressRequeuedAndBlockedCompleted(t *testing.T) {
	q0 := state.ActionQueue{
		Pending: []state.Action{
			{ID: "P1", Title: "fine", Status: "pending", EffectiveRice: aqFloat(10), ExtractedAt: aqAgo(1)},
			{ID: "P2", Title: "stuck", Status: "blocked", EffectiveRice: aqFloat(10), ExtractedAt: aqAgo(1)},
		},
		InProgress: []state.Action{
			{ID: "I1", Title: "stalled without PR", Status: "in_progress", ExtractedAt: aqAgo(40), EffectiveRice: aqFloat(80)},
			{ID: "I2", Title: "PR open", Status: "in_progress", PRNumber: aqInt(7)},
			{ID: "I3", Title: "PR gone", Status: "in_progress", PRNumber: aqInt(8)},
			{ID: "I4", Title: "picked up this cycle", Status: "in_progress"},
			{ID: "I5", Title: "blocked in progress", Status: "blocked"},
		},
		Completed: []state.Action{{ID: "C1", Status: "blocked"}},
	}
	before := aqJSON(t, q0)
	q, res := DecayQueue(q0, DecayInput{
		Now: aqNow, DecayDays: 14, DecayAmount: 0.05,
		InProgressAtStart: map[string]bool{"I1": true, "I2": true, "I3": true, "I5": true},
		OpenPRs:           map[int]bool{7: true},
	})
	if aqJSON(t, q0) != before {
		t.Fatal("input queue was modified")
	}
	if got, want := aqIDs(q.Pending), []string{"P1", "I1", "I3"}; !slices.Equal(got, want) {
		t.Errorf("pending = %v, want %v", got, want)
	}
	if got, want := aqIDs(q.InProgress), []string{"I2", "I4"}; !slices.Equal(got, want) {
		t.Errorf("in_progress = %v, want %v", got, want)
	}
	if got, want := aqIDs(q.Completed), []string{"C1", "P2", "I5"}; !slices.Equal(got, want) {
		t.Errorf("completed = %v, want %v", got, want)
	}
	if got, want := res.CompletedBlocked, []string{"P2", "I5"}; !slices.Equal(got, want) {
		t.Errorf("completed blocked = %v, want %v", got, want)
	}
	for _, a := range q.Completed {
		if a.Status != "blocked" {
			t.Errorf("completed %s has status %q, want blocked kept", a.ID, a.Status)
		}
	}
	for _, id := range []string{"I1", "I3"} {
		if a, _, _ := aqFind(q, id); a.Status != "pending" {
			t.Errorf("%s status = %q, want pending", id, a.Status)
		}
	}
	if len(res.Requeued) != 2 || res.Requeued[0].ID != "I1" || res.Requeued[1].ID != "I3" {
		t.Fatalf("requeued = %+v", res.Requeued)
	}
	if m := res.Requeued[0].Memo; !strings.Contains(m, "I1") || !strings.Contains(m, "stalled without PR") {
		t.Errorf("memo %q does not name the action", m)
	}
	if m := res.Requeued[1].Memo; !strings.Contains(m, "PR #8") {
		t.Errorf("memo %q does not name the closed PR", m)
	}
	// A requeued item is old enough to decay, but it returns this cycle
	// and is not decayed in the same one.
	if len(res.Decayed) != 0 {
		t.Errorf("decayed = %+v, want none", res.Decayed)
	}
}

func FuzzExtractActions(f *testing.F) {
	f.Add("Add tests for the parser", "add tests to parser", "", 10.0, 2.0, 0.8, 1.0, 0.5, uint8(19), 3)
	f.Add("alpha beta gamma delta", "alpha beta gamma delta epsilon", "x", 1.0, 1.0, 1.0, 0.0, -2.0, uint8(25), 1)
	f.Add("!!!", "the a an", "\xff", -1.0, 1e308, 1e308, 0.1, 1e300, uint8(0), 0)
	f.Fuzz(func(t *testing.T, t1, t2, t3 string, reach, impact, conf, effort, ext float64, existing uint8, cycle int) {
		var q0 state.ActionQueue
		for i := 0; i < int(existing)%30; i++ {
			a := state.Action{ID: fmt.Sprintf("E-%d", i), Title: fmt.Sprintf("existing %d %s", i, t3), Status: "pending"}
			if i%3 != 0 {
				a.RiceScore = aqFloat(float64(i))
			}
			if i%4 == 0 {
				a.EffectiveRice = aqFloat(float64(i) / 2)
			}
			q0.Pending = append(q0.Pending, a)
		}
		q0.Completed = []state.Action{{ID: fmt.Sprintf("A-%d-1", cycle), Title: t3, Status: "superseded"}}
		q0.InProgress = []state.Action{{ID: fmt.Sprintf("A-%d-3", cycle), Title: t2 + " in progress"}}
		actions := []act.ReportAction{
			{Title: t1, Reach: reach, Impact: impact, Confidence: conf, Effort: effort, Extensions: map[string]float64{"security": ext}, RelatedFiles: []string{t2}},
			{Title: t2, Reach: impact, Impact: reach, Confidence: conf, Effort: effort},
			{Title: t3, Reach: conf, Impact: conf, Confidence: conf, Effort: ext},
			{Title: t1 + " " + t2, Reach: 1, Impact: 1, Confidence: 1, Effort: 1},
		}
		in := ExtractInput{Cycle: cycle, Domain: "d", Skill: "s", Now: aqNow,
			RiceExtensions: map[string]float64{"security": 2},
			RiskRules:      json.RawMessage(`[{"pattern": "*", "tier": 2}]`)}
		before := aqJSON(t, q0)
		actionsBefore, _ := json.Marshal(actions)

		q, res := ExtractActions(q0, actions, in)

		if aqJSON(t, q0) != before {
			t.Fatal("input queue was modified")
		}
		if b, _ := json.Marshal(actions); string(b) != string(actionsBefore) {
			t.Fatal("input actions were modified")
		}
		if len(q.Pending) > PendingCap {
			t.Fatalf("pending = %d items", len(q.Pending))
		}
		seen := map[string]bool{}
		for _, list := range [][]state.Action{q.Pending, q.InProgress, q.Completed} {
			for _, a := range list {
				if seen[a.ID] {
					t.Fatalf("duplicate id %q", a.ID)
				}
				seen[a.ID] = true
			}
		}
		for _, a := range q.Pending {
			if a.EffectiveRice == nil || math.IsNaN(*a.EffectiveRice) || math.IsInf(*a.EffectiveRice, 0) {
				t.Fatalf("pending %s has effective_rice %v", a.ID, a.EffectiveRice)
			}
		}
		if n := len(res.Added) + len(res.Duplicates) + len(res.Rejected); n != len(actions) {
			t.Fatalf("accounted for %d of %d actions: %+v", n, len(actions), res)
		}
		if got := len(q.Pending) + len(q.Completed) + len(q.InProgress); got != len(q0.Pending)+len(q0.Completed)+len(q0.InProgress)+len(res.Added) {
			t.Fatalf("items lost or invented: %d", got)
		}
		if _, err := json.Marshal(q); err != nil {
			t.Fatal(err)
		}
	})
}
