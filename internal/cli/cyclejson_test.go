package cli

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/present"
)

// TestCycleJSONIsEncodingJSONs writes cycle documents of every shape the
// score table can take — numbers of every magnitude and sign (the ones
// encoding/json writes with an exponent too), null and set pointers, the
// virtual domain's queue, empty and missing reasons, strings it must
// escape — and requires printCycleJSON's bytes to be printJSON's: the
// score table written straight when it can be, and the whole document
// left to encoding/json when it cannot (the escaped strings, a NaN).
func TestCycleJSONIsEncodingJSONs(t *testing.T) {
	nums := []float64{0, 1, -1, 0.5, 44.4802, -0.995, 1e-7, -1e-7, 2.5e-6, 1e20, 1e21, -1e21, 123456789.1234, 6628, 1e-320, math.MaxFloat64}
	strs := []string{"d0", "lower score than d0 (49.7723 < 49.7732)", "a&b<c>", "", "tab\there", "quote\"", "back\\slash", "é", "\u2028", "del\x7f"}
	r := rand.New(rand.NewPCG(5, 6))
	f := func() float64 { return nums[r.IntN(len(nums))] }
	fp := func() *float64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := f()
		return &v
	}
	plain, fallback := 0, 0
	for n := 0; n < 400; n++ {
		doc := cycleJSON(engineResultFixture(), nil)
		if r.IntN(4) == 0 {
			doc.Card = &present.Card{Project: "p", Cycle: 3, Learn: []present.CardLearn{{Kind: "observing", Text: "x"}}}
		}
		for i := 0; i < r.IntN(5); i++ {
			s := scoreDoc{Domain: strs[r.IntN(3)], Weight: f(), Hours: fp(), Staleness: f(), Queue: fp(), Alert: f(), Mission: f(), Goal: f(),
				Confidence: f(), ConfidenceTerm: f(), Memo: f(), Balance: f(), RawScore: f(), Score: f(), Reasons: []string{}}
			if r.IntN(3) == 0 {
				p := r.IntN(100)
				s.Pending = &p
			}
			if r.IntN(3) == 0 {
				e := strs[r.IntN(len(strs))]
				s.Excluded = &e
			}
			switch r.IntN(4) {
			case 0:
				s.Reasons = nil
			case 1:
				s.Reasons = []string{strs[r.IntN(len(strs))], strs[r.IntN(2)]}
			case 2:
				s.Reasons = []string{strs[r.IntN(2)]}
			}
			if n%50 == 7 {
				s.Score = math.NaN()
			}
			doc.Scores = append(doc.Scores, s)
		}
		want, werr := encodeIndented(doc)
		got, gerr := encodeCycleDoc(doc)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("document %d:\n got (%v):\n%s\n want (%v):\n%s", n, gerr, got, werr, want)
		}
		if len(doc.Scores) > 0 {
			if _, ok := appendScores(nil, doc.Scores); ok {
				plain++
			} else {
				fallback++
			}
		}
	}
	if plain == 0 || fallback == 0 {
		t.Fatalf("%d documents written straight, %d left to encoding/json: both paths must be exercised", plain, fallback)
	}
}

// engineResultFixture is a completed cycle's result with a winner, notes
// and a summary, so that every field around the score table is written.
func engineResultFixture() engine.Result {
	q, pr := 0.2, 29
	w := decide.Option{Domain: "d0", Skill: "/true", Score: 49.77321, Confidence: 0.69}
	return engine.Result{Status: engine.StatusCompleted, Cycle: 7, Result: "success", ResultType: "futile", Quality: &q, PRNumber: &pr,
		Notes: []string{"a note"}, Elapsed: 71 * time.Millisecond, Summary: "found <3> things",
		Decision: &decide.Decision{CycleMode: "feature", Winner: &w, ScoreVerified: true, Notes: []string{"3-A scored"}}, WinnerChain: []string{"/x"}}
}

// TestNotificationValuesOfValidIsTheStream finds the notifications values
// of documents of every shape — the key in any case, twice, escaped,
// nested (not a top-level key), first or last, with every kind of value
// around it — splitting a valid document at its keys, and requires what
// reading it as a stream gives; a document that is not valid JSON, or
// has an escaped key, is left to the stream.
func TestNotificationValuesOfValidIsTheStream(t *testing.T) {
	n := `{"slack": {"webhook_env": "HOOK"}}`
	docs := []string{
		`{}`, ` { } `, `[]`, `"x"`, `null`,
		`{"notifications": ` + n + `}`,
		`{"a": 1, "Notifications": ` + n + `, "b": [1, {"notifications": 2}], "NOTIFICATIONS": "x"}`,
		`{"domains": {"d": {"notifications": 1}}, "notifications" : [ 1 , "a\"b\\\\" ] }`,
		"{\n\t\"notifications\":\n\t\t" + n + "\r\n}\n",
		`{"s": "} ] , \" {", "notifications": true, "t": -1.5e3}`,
		`{"notificationſ": 3}`,
		`{"notif\u0069cations": ` + n + `}`,
		`{"notifications": ` + n + `, "x": }`,
		`{"notifications": ` + n + `} trailing`,
		`{"notifications": ` + n + `}{"notifications": 2}`,
		`{"a": "` + "\xff" + `", "notifications": 1}`,
	}
	fast, slow := 0, 0
	for _, d := range docs {
		want := notificationValuesStream([]byte(d))
		got, ok := notificationValuesOfValid([]byte(d))
		if !ok {
			slow++
			got = notificationValuesStream([]byte(d))
		} else {
			fast++
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n split: %q\n stream: %q", d, got, want)
		}
		if all := notificationValues([]byte("\xef\xbb\xbf" + d)); !reflect.DeepEqual(all, want) {
			t.Errorf("%s with a byte order mark: %q, want %q", d, all, want)
		}
	}
	if fast == 0 || slow == 0 {
		t.Errorf("%d documents split, %d streamed: both paths must be exercised", fast, slow)
	}
}
