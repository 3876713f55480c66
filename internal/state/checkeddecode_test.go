package state

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// fileTypes are the models of every state file, as pointers to new
// values, for decodeFile.
var fileTypes = []func() any{
	func() any { return new(State) }, func() any { return new(Outcomes) }, func() any { return new(Episodes) },
	func() any { return new(Reflections) }, func() any { return new(SkillGaps) }, func() any { return new(Memos) },
	func() any { return new(Metrics) }, func() any { return new(Goals) }, func() any { return new(ActionQueue) },
	func() any { return new(CostLedger) }, func() any { return new(Principles) }, func() any { return new(Cascades) },
	func() any { return new(Checkpoints) }, func() any { return new(Lens) },
}

// sameAsUnchecked decodes b into a new value of each model by decodeFile
// and by decodeDocument (which checks every object it splits and copies
// every entry's bytes) and fails unless the two agree: the error, the
// value (the entries' bytes and copies included), its encoding, its
// warnings. The bytes decodeFile read are then overwritten: the value
// must hold nothing of them.
func sameAsUnchecked(t *testing.T, name string, b []byte) {
	t.Helper()
	for _, model := range fileTypes {
		got, want := model(), model()
		in := bytes.Clone(b)
		gotErr := decodeFile(in, got)
		wantErr := decodeDocument(b, want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: %T: error %v, unchecked %v", name, got, gotErr, wantErr)
		}
		if gotErr != nil {
			continue
		}
		for i := range in {
			in[i] = 'x'
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %T: decoded\n%#v\nunchecked\n%#v", name, got, got, want)
		}
		gb, gerr := encodeJSON(reflect.ValueOf(got).Elem().Interface())
		wb, werr := encodeJSON(reflect.ValueOf(want).Elem().Interface())
		if !bytes.Equal(gb, wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%s: %T: writes\n%s (%v)\nunchecked\n%s (%v)", name, got, gb, gerr, wb, werr)
		}
		if gw, ww := looseWarnings(got, 100), looseWarnings(want, 100); !reflect.DeepEqual(gw, ww) {
			t.Fatalf("%s: %T: warnings %q, unchecked %q", name, got, gw, ww)
		}
		if dw, ok := got.(interface{ DecodeWarnings() []string }); ok {
			if g, w := dw.DecodeWarnings(), want.(interface{ DecodeWarnings() []string }).DecodeWarnings(); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: %T: decode warnings %q, unchecked %q", name, got, g, w)
			}
		}
	}
}

// Every document of the corpus, and every edge document, decodes through
// decodeFile, which splits a checked document without checking it again
// and lets its entries keep slices of it, exactly as through
// decodeDocument.
func TestDecodeFile_MatchesUnchecked(t *testing.T) {
	n := 0
	for _, d := range entryCorpus(t) {
		sameAsUnchecked(t, d.name, d.doc)
		n++
	}
	for i, s := range decodeOnceEdgeDocs {
		sameAsUnchecked(t, fmt.Sprintf("edge %d", i), []byte(s))
		n++
	}
	for _, s := range checkedEdgeDocs {
		sameAsUnchecked(t, s, []byte(s))
		n++
	}
	if n < 100 {
		t.Fatalf("only %d documents compared", n)
	}
}

// checkedEdgeDocs are shapes where splitting without checking could
// part from the checking scanner: escaped quotes and backslashes at the
// end of strings, strings holding brackets, nested lists of entries,
// entries that are not objects, whitespace everywhere, duplicate lists.
var checkedEdgeDocs = []string{
	`{"entries":[{"cycle_id":1,"result":"a\"b\\","domain":"\\\\"},{"cycle_id":2,"x":"}]{[\"","result_type":"]"}]}`,
	` { "entries" : [ { "cycle_id" : 1 , "score" : 1.5e3 , "x" : [ 1 , { "a" : [ ] } ] } , null , "s" , 7 , [ ] ] } `,
	`{"entries":[{"cycle_id":1}],"entries":[{"cycle_id":2},{"cycle_id":3}],"ENTRIES":[{"cycle_id":4}]}`,
	`{"decision_log":[{"cycle":1,"scores":{"a":1,"a":2},"chain_executed":["x","y\u00e9"],"contrarian_check":{"argument":"\"q\""}}],"cycle_count":"1"}`,
	`{"episodes":[{"week":"2026-W01","x_nested":{"a":{"b":{"c":[[["\\"]]]}}}}],"schema_version":"1.0.0"}`,
	`{"reflections":[{"cycle":1,"lesson":"l"},{"cycle":"2"},{}],"reflections_more":[]}`,
	`{"gaps":[{"id":"g","occurrences":"3"},{"id":"h","occurrences":-0}],"schema_version":1}`,
	`{"history":[{"cycle":1,"message":"m\n"}],"interventions":[{"domain":"d","delta":"x"}],"memos":[{"cycle":2}]}`,
	`{"entries":[{"cycle_id":1,"\u0063ycle_id":2,"Cycle_ID":3}]}`,
	"{\"entries\":[{\"cycle_id\":1,\"result\":\"\xff\xfe\"}],\"\xffk\":1}",
}

// FuzzDecodeFileMatchesUnchecked: whatever the bytes, decodeFile and
// decodeDocument decode them alike.
func FuzzDecodeFileMatchesUnchecked(f *testing.F) {
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, s := range checkedEdgeDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameAsUnchecked(t, "fuzz", b)
	})
}

// Splitting without checking finds the members and elements the checking
// scanner finds, in every valid document of the corpus.
func TestSplitObject_MatchesScanObject(t *testing.T) {
	n := 0
	var walk func(b []byte)
	walk = func(b []byte) {
		if members, ok := scanMembers(b); ok {
			got := splitObject(b[skipSpace(b, 0):])
			if !reflect.DeepEqual(got, members) {
				t.Fatalf("splitObject(%s) = %q, scanObject %q", b, got, members)
			}
			n++
			for _, m := range members {
				walk(m.val)
			}
		}
		if elems, ok := scanArray(b); ok {
			got := splitArray(b[skipSpace(b, 0):])
			if len(got) != len(elems) || (len(elems) > 0 && !reflect.DeepEqual(got, elems)) {
				t.Fatalf("splitArray(%s) = %q, scanArray %q", b, got, elems)
			}
			n++
			for _, e := range elems {
				walk(e)
			}
		}
	}
	for _, d := range entryCorpus(t) {
		walk(bytes.TrimSpace(d.doc))
	}
	for _, s := range checkedEdgeDocs {
		walk(bytes.TrimSpace([]byte(s)))
	}
	if n < 1000 {
		t.Fatalf("only %d containers compared", n)
	}
}
