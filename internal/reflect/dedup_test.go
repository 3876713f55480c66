package reflect

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/state"
)

// linearFirst is the duplicate rule of 5-C2 spelled as its definition: the
// first corpus entry, in order, whose similarity reaches the threshold.
func linearFirst(corpus []dedupEntry, t map[string]bool) (string, float64, bool) {
	for _, e := range corpus {
		if s := actionJaccard(t, e.tokens); s >= DuplicateThreshold {
			return e.id, s, true
		}
	}
	return "", 0, false
}

// The index answers exactly what the scan over every entry answers: same
// entry, same similarity, for titles built from a small vocabulary so that
// near-duplicates at every distance (and empty titles) are common.
func TestDedupIndexMatchesTheLinearScan(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	vocab := strings.Fields("add fix test parser retry cache docs the a to of for log api db ui")
	title := func() string {
		n := rng.Intn(9)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[rng.Intn(len(vocab))]
		}
		return strings.Join(ws, " ")
	}
	for round := 0; round < 200; round++ {
		var queued []dedupEntry
		for i := 0; i < rng.Intn(40); i++ {
			queued = append(queued, dedupEntry{fmt.Sprintf("Q%d", i), actionTitleTokens(title())})
		}
		var reported []map[string]bool
		for i := 0; i < 40; i++ {
			reported = append(reported, actionTitleTokens(title()))
		}
		x := newDedupIndex(queued, reported)
		corpus := append([]dedupEntry(nil), queued...)
		for i, r := range reported {
			gotID, gotSim, gotOK := x.first(r)
			wantID, wantSim, wantOK := linearFirst(corpus, r)
			if gotID != wantID || gotSim != wantSim || gotOK != wantOK {
				t.Fatalf("round %d, title %d %v: index says (%q, %v, %v), scan says (%q, %v, %v)", round, i, r, gotID, gotSim, gotOK, wantID, wantSim, wantOK)
			}
			if !gotOK && rng.Intn(2) == 0 {
				e := dedupEntry{fmt.Sprintf("N%d", i), r}
				x.add(e)
				corpus = append(corpus, e)
			}
		}
	}
}

// A report of 100,000 actions (a skill gone wrong, or a hostile one) adds
// at most MaxReportActions items, warns once with the count, and does not
// compare every title with every other.
func TestStep5C2_HugeReportIsCapped(t *testing.T) {
	actions := make([]act.ReportAction, 100_000)
	for i := range actions {
		actions[i] = act.ReportAction{Title: fmt.Sprintf("fix issue %d in module %d", i, i%97), Reach: 1, Impact: 1, Confidence: 1, Effort: 1}
	}
	q, res := ExtractActions(state.ActionQueue{}, actions, aqExtractIn())
	if n := len(res.Added) + len(res.Duplicates) + len(res.Rejected); n != MaxReportActions {
		t.Errorf("%d actions considered, want %d", n, MaxReportActions)
	}
	if len(res.Added) == 0 || len(res.Added) > MaxReportActions {
		t.Errorf("%d actions added", len(res.Added))
	}
	want := "the report lists 100000 actions; only the first 200 are taken, 99800 dropped"
	if len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("warnings = %q, want [%q]", res.Warnings, want)
	}
	if total := len(q.Pending) + len(q.Completed); total != len(res.Added) {
		t.Errorf("queue holds %d items for %d added", total, len(res.Added))
	}
}

// 6-C2: an in-progress list longer than InProgressCap keeps its first
// items; the rest are superseded, never lost.
func TestStep6C2_InProgressIsCapped(t *testing.T) {
	var q0 state.ActionQueue
	for i := 0; i < InProgressCap+5; i++ {
		q0.InProgress = append(q0.InProgress, state.Action{ID: fmt.Sprintf("I%d", i), Title: "t", Status: "in_progress"})
	}
	q := PersistQueue(q0)
	if len(q.InProgress) != InProgressCap || q.InProgress[0].ID != "I0" || q.InProgress[InProgressCap-1].ID != fmt.Sprintf("I%d", InProgressCap-1) {
		t.Fatalf("in_progress = %d items", len(q.InProgress))
	}
	if len(q.Completed) != 5 || q.Completed[0].ID != fmt.Sprintf("I%d", InProgressCap) || q.Completed[0].Status != "superseded" {
		t.Errorf("completed = %+v", q.Completed)
	}
}

// BenchmarkDedup20000 measures duplicate detection over 20,000 titles
// (each compared with everything before it), the size that took 21 s with
// a scan over every entry.
func BenchmarkDedup20000(b *testing.B) {
	titles := make([]map[string]bool, 20_000)
	for i := range titles {
		titles[i] = actionTitleTokens(fmt.Sprintf("fix flaky test %d in the parser module %d", i, i%50))
	}
	b.ResetTimer()
	for b.Loop() {
		x := newDedupIndex(nil, titles)
		for i, t := range titles {
			if _, _, dup := x.first(t); !dup {
				x.add(dedupEntry{fmt.Sprint(i), t})
			}
		}
	}
}
