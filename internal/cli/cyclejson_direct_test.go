package cli

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/present"
)

// TestCycleDocDirectIsEncodingJSONs writes documents of every shape a
// cycle prints — each pointer null and set, empty and missing lists,
// every optional key present and absent, cards with every field, numbers
// of every magnitude, text with quotes, backslashes, line breaks, tabs,
// non-ASCII, control characters, invalid UTF-8, U+2028 — and requires
// encodeCycleDoc's bytes to be encodeIndented's: written directly when
// appendCycleDoc can, by encoding/json when it reports it cannot (both
// paths taken).
func TestCycleDocDirectIsEncodingJSONs(t *testing.T) {
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 6, 1917, -42, 1e15 - 1, 1e15, -1e15 + 1, 999999999999999.9, 0.5, 44.4802, -0.995, 1e-7, 2.5e-6, 1e20, 1e21, -1e21,
		123456789.1234, 1e-320, math.MaxFloat64}
	strs := []string{"", "d0", "quickstart · ooda cycle #7", "PR #28 rejected → svc confidence 0.74 → 0.54 (-0.20)", "a&b<c>", "quote\"d",
		"back\\slash", "two\nlines\r\n", "tab\there", "é—🔭", "del\x7f"}
	// Text the direct writer leaves to encoding/json, rarely, so that
	// most documents are written directly.
	odd := []string{"bell\x07", "nul\x00", "bad\xffutf8", "ls\u2028", "ps\u2029", "\x1b[31mred"}
	r := rand.New(rand.NewPCG(13, 4))
	s := func() string {
		if r.IntN(150) == 0 {
			return odd[r.IntN(len(odd))]
		}
		return strs[r.IntN(len(strs))]
	}
	sp := func() *string {
		if r.IntN(3) == 0 {
			return nil
		}
		v := s()
		return &v
	}
	f := func() float64 { return nums[r.IntN(len(nums))] }
	fp := func() *float64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := f()
		return &v
	}
	ip := func() *int {
		if r.IntN(3) == 0 {
			return nil
		}
		v := r.IntN(3000) - 5
		return &v
	}
	bp := func() *bool {
		if r.IntN(3) == 0 {
			return nil
		}
		v := r.IntN(2) == 0
		return &v
	}
	ss := func() []string {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = s()
		}
		return out
	}
	direct, fallback := 0, 0
	for n := 0; n < 3000; n++ {
		doc := cycleJSON(engineResultFixture(), nil)
		doc.Status, doc.Reason, doc.Cycle, doc.Result, doc.ResultType = s(), sp(), ip(), sp(), sp()
		doc.Quality, doc.PRNumber, doc.HaltCreated, doc.Notes, doc.Elapsed = fp(), ip(), r.IntN(2) == 0, ss(), f()
		doc.Summary, doc.Error = sp(), sp()
		switch r.IntN(3) {
		case 0:
			doc.Winner = nil
		case 1:
			doc.Winner = &winnerDoc{Domain: s(), Skill: s(), Score: fp(), Confidence: f(), Gated: r.IntN(2) == 0, Guidance: sp(), Chain: ss()}
		}
		switch r.IntN(3) {
		case 0:
			doc.Decide = nil
		case 1:
			doc.Decide = &decideNote{ScoreVerified: r.IntN(2) == 0, CycleMode: s(), Steps: ss()}
		}
		switch r.IntN(3) {
		case 0:
			doc.Scores = nil
		case 1:
			doc.Scores = []scoreDoc{}
		default:
			for i := 0; i < 1+r.IntN(3); i++ {
				doc.Scores = append(doc.Scores, scoreDoc{Domain: strs[1+r.IntN(3)], Weight: f(), Hours: fp(), Pending: ip(), Staleness: f(), Queue: fp(),
					Alert: f(), Confidence: f(), Score: f(), Excluded: sp(), Reasons: ss()})
			}
		}
		if r.IntN(4) > 0 {
			c := &present.Card{Project: s(), Cycle: r.IntN(2001), Timestamp: sp(), Orient: sp(), Level: r.IntN(4), LevelName: s(), Share: s(),
				Observe: present.CardObserve{DomainsScanned: ip(), NotableChange: sp()},
				Decide:  present.CardDecide{Domain: sp(), Skill: sp(), Score: fp(), Confidence: fp(), GatePassed: bp(), Guidance: sp(), Reason: sp()},
				Act:     present.CardAct{Action: sp(), Result: sp(), ResultType: sp(), PRNumber: ip(), RiskTier: ip(), Text: s()},
				Cost:    present.CardCost{CycleUSD: fp(), TodayUSD: fp(), CapUSD: fp()},
				Halt:    present.CardHalt{Active: r.IntN(2) == 0, Reason: sp()}}
			switch r.IntN(4) {
			case 0:
				c.Learn = nil
			case 1:
				c.Learn = []present.CardLearn{}
			default:
				for i := 0; i < 1+r.IntN(2); i++ {
					c.Learn = append(c.Learn, present.CardLearn{Kind: s(), Text: s()})
				}
			}
			doc.Card = c
		}
		if n%211 == 5 {
			doc.Elapsed = math.Inf(1)
		}
		want, werr := encodeIndented(doc)
		got, gerr := encodeCycleDoc(doc)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("document %d:\n got (%v):\n%s\n want (%v):\n%s", n, gerr, got, werr, want)
		}
		if _, ok := appendCycleDoc(nil, doc); ok {
			direct++
		} else {
			fallback++
		}
	}
	if direct < 100 || fallback < 100 {
		t.Fatalf("%d documents written directly, %d by encoding/json: both paths must be exercised", direct, fallback)
	}
}

// TestCycleDocDirectOfRealResults writes the documents real cycles make
// (a completed cycle with its card, an error, a skip) and requires the
// direct writer to take them and give encoding/json's bytes.
func TestCycleDocDirectOfRealResults(t *testing.T) {
	lvl, one := 2, 1
	card := &present.Card{Project: "quickstart", Cycle: 7, Learn: []present.CardLearn{{Kind: present.LearnObserving, Text: "no new orientation this cycle (observing)"}},
		Observe: present.CardObserve{DomainsScanned: &lvl}, Act: present.CardAct{Text: "/true → futile", RiskTier: &one}, Level: 2, LevelName: "Full observation",
		Share: "quickstart ran ooda cycle #7: d0 → futile; cost +$0.02 ($0.16 today)."}
	withCard := cycleJSON(engineResultFixture(), nil)
	withCard.Card = card
	skipped := cycleJSON(engine.Result{Status: "skipped", Reason: "too soon"}, nil)
	failed := cycleJSON(engineResultFixture(), errTest("step 6: state.json: disk full"))
	for i, doc := range []cycleDoc{withCard, skipped, failed} {
		want, err := encodeIndented(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendCycleDoc(nil, doc)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("document %d (direct: %v):\n got:\n%s\n want:\n%s", i, ok, got, want)
		}
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestCycleDocDirectKnowsEveryField lists the JSON members of every type
// appendCycleDoc writes, in order, and requires them to be the ones the
// direct writer writes: a field added to cycleDoc, winnerDoc, decideNote
// or the card's types must be added to the writer too, or this fails
// (the differential test above cannot see a field it does not set).
func TestCycleDocDirectKnowsEveryField(t *testing.T) {
	want := map[reflect.Type]string{
		reflect.TypeFor[cycleDoc]():            "status reason cycle scores winner result result_type quality_multiplier pr_number halt_created notes elapsed_seconds summary error decide card",
		reflect.TypeFor[winnerDoc]():           "domain skill score confidence gated guidance chain",
		reflect.TypeFor[decideNote]():          "score_verified cycle_mode steps",
		reflect.TypeFor[present.Card]():        "project cycle timestamp observe orient decide act learn cost halt level level_name share",
		reflect.TypeFor[present.CardObserve](): "domains_scanned notable_change",
		reflect.TypeFor[present.CardDecide]():  "domain skill score confidence gate_passed guidance reason",
		reflect.TypeFor[present.CardAct]():     "action result result_type pr_number risk_tier text",
		reflect.TypeFor[present.CardLearn]():   "kind text",
		reflect.TypeFor[present.CardCost]():    "cycle_usd today_usd cap_usd",
		reflect.TypeFor[present.CardHalt]():    "active reason",
	}
	for typ, names := range want {
		var got []string
		for i := range typ.NumField() {
			fld := typ.Field(i)
			if !fld.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(fld.Tag.Get("json"), ",")
			got = append(got, name)
		}
		if !slices.Equal(got, strings.Fields(names)) {
			t.Errorf("%s has the JSON members %q; the direct writer writes %q", typ, got, names)
		}
	}
}
