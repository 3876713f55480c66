package state

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// Every intervention encodedInterventions marks as written indented by
// itself is what canonicalAt finds it to be at its depth, blank for
// blank, and valid JSON: the check appendRawList spares it. Random
// entries, spelled every way a file may spell them, after random
// changes.
func TestEncodedInterventionsBlanksAsCanonicalAt(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	marked, checked := 0, 0
	for i := 0; i < 5000; i++ {
		var entries []string
		for n := rng.Intn(4); n >= 0; n-- {
			entries = append(entries, randomIntervention(rng))
		}
		doc := []byte("{\n  \"interventions\": [\n    " + joinComma(entries) + "\n  ]\n}")
		var m Memos
		if decodeFile(doc, &m) != nil {
			continue
		}
		c := rng.Intn(len(ivChanges))
		for j := range m.Interventions {
			if j%2 == 0 {
				ivChanges[c](&m.Interventions[j])
			}
		}
		l, ok := encodedInterventions(m.Interventions)
		if !ok {
			continue
		}
		if l.at != ivEntryDepth || len(l.ws) != len(l.list) {
			t.Fatalf("at %d, %d counts for %d entries", l.at, len(l.ws), len(l.list))
		}
		for j, el := range l.list {
			if l.ws[j] < 0 {
				checked++
				continue
			}
			marked++
			if end, ok := scanValue(el, 0, l.at); !ok || end != len(el) {
				t.Fatalf("%s: marked, not one JSON value", el)
			}
			if ws, ok := canonicalAt(el, l.at); !ok || ws != int(l.ws[j]) {
				t.Fatalf("%s: marked with %d blanks, canonicalAt %d %v", el, l.ws[j], ws, ok)
			}
		}
	}
	if marked < 500 || checked < 500 {
		t.Fatalf("%d entries marked, %d left to the check", marked, checked)
	}
}

// memos.json of a thousand interventions is written the same with the
// marks and without them, after each change a cycle makes.
func TestIndentedRawListSameAsChecked(t *testing.T) {
	for name, b := range benchMemosFiles(t) {
		for cname, change := range map[string]func(*Memos){"unchanged": func(*Memos) {}, "counted": countDown} {
			var m Memos
			if err := decodeFile(bytes.Clone(b), &m); err != nil {
				t.Fatal(err)
			}
			change(&m)
			got, err := encodeJSON(m)
			indentedRawListOff = true
			want, werr := encodeJSON(m)
			indentedRawListOff = false
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: writes %d bytes (%v), with every entry checked %d (%v)", name, cname, len(got), err, len(want), werr)
			}
			if cname == "counted" {
				l, _ := encodedInterventions(m.Interventions)
				for j := range l.ws {
					if l.ws[j] < 0 {
						t.Fatalf("%s: interventions[%d] not marked", name, j)
					}
				}
			}
		}
	}
}

// A list marked for another depth than the one it is written at, or
// with marks that do not fit it, is checked element by element: what
// it writes is the []json.RawMessage's indentation, not its marks.
func TestIndentedRawListOtherDepthChecked(t *testing.T) {
	type inner struct {
		L indentedRawList `json:"l"`
	}
	type doc struct {
		A inner           `json:"a"`
		L indentedRawList `json:"l"`
	}
	// Not its own indentation: trusting a mark would copy it compact.
	el := json.RawMessage(`{"x":1}`)
	for _, l := range []indentedRawList{
		{list: []json.RawMessage{el}, ws: []int32{0}, at: 5},
		{list: []json.RawMessage{el}, ws: []int32{0, 0}, at: 2},
		{list: []json.RawMessage{el}, ws: []int32{-1}, at: 2},
		{list: []json.RawMessage{el, json.RawMessage("{\n      \"x\": 1\n    }")}, ws: []int32{-1, -1}, at: 2},
		{list: nil},
		{list: []json.RawMessage{}},
		{list: []json.RawMessage{nil}, ws: []int32{-1}, at: 2},
	} {
		w := indentWriter{}
		p := encPlanFor(reflect.TypeFor[doc]())
		if p == nil {
			t.Fatal("no plan")
		}
		v := doc{L: l}
		if !w.appendStruct(p, reflect.ValueOf(v), 0) {
			t.Fatalf("%v: not written", l)
		}
		raw := make([]json.RawMessage, len(l.list))
		copy(raw, l.list)
		if l.list == nil {
			raw = nil
		}
		want, err := json.MarshalIndent(struct {
			A struct {
				L []json.RawMessage `json:"l"`
			} `json:"a"`
			L []json.RawMessage `json:"l"`
		}{L: raw}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.out, want) {
			t.Fatalf("%v: writes\n%s\nwant\n%s", l, w.out, want)
		}
	}
}
