package act

import (
	"strings"
	"testing"
)

// "resolved" takes titles and {title, reason} objects, and an entry of
// another shape rejects the report with an error naming the entry.
func TestReportResolved(t *testing.T) {
	r, err := ParseReport([]byte(`{"resolved": ["Fix a", {"title": "Fix b", "reason": "gone"}, {"title": "Fix c", "reason": null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ResolvedList{{Title: "Fix a"}, {Title: "Fix b", Reason: "gone"}, {Title: "Fix c"}}
	if len(r.Resolved) != 3 || r.Resolved[0] != want[0] || r.Resolved[1] != want[1] || r.Resolved[2] != want[2] {
		t.Fatalf("resolved %+v", r.Resolved)
	}
	if !r.HadOutputDefault(false) {
		t.Error("a report that resolves actions has output by default")
	}
	for doc, msg := range map[string]string{
		`{"resolved": "Fix a"}`:                            `resolved is not an array`,
		`{"resolved": ["Fix a", 3]}`:                       `resolved[1] is neither a title nor a {"title", "reason"} object`,
		`{"resolved": [{"title": ["x"]}]}`:                 `resolved[0].title is not a string`,
		`{"resolved": ["a", {"title": "b", "reason": 1}]}`: `resolved[1].reason is not a string`,
		`{"resolved": [null]}`:                             `resolved[0] is neither`,
	} {
		if _, err := ParseReport([]byte(doc)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", doc, err, msg)
		}
	}
}
