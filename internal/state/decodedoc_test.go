package state

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// docDecoder decodes a document into a new T by json.Unmarshal and by
// decodeDocument, for the comparison below.
func docDecoder[T any]() func(b []byte) (viaJSON, viaDoc any, errJSON, errDoc error) {
	return func(b []byte) (any, any, error, error) {
		var a, d T
		ea := json.Unmarshal(b, &a)
		ed := decodeDocument(b, &d)
		return a, d, ea, ed
	}
}

var docDecoders = []func([]byte) (any, any, error, error){
	docDecoder[State](), docDecoder[Goals](), docDecoder[ActionQueue](), docDecoder[SkillGaps](), docDecoder[Metrics](),
	docDecoder[CostLedger](), docDecoder[Outcomes](), docDecoder[Memos](), docDecoder[Episodes](), docDecoder[Principles](),
	docDecoder[Reflections](), docDecoder[Cascades](), docDecoder[Checkpoints](), docDecoder[Confidence](), docDecoder[Lens](),
	docDecoder[LensChangelog](), docDecoder[RotationCursor](), docDecoder[Outcome](), docDecoder[DecisionEntry](),
	// A type that does not decode itself is json.Unmarshal's alone.
	docDecoder[struct{ A int }](),
}

// sameDocDecode fails unless decodeDocument reads b into every model as
// json.Unmarshal does: the same error, the same value.
func sameDocDecode(t *testing.T, name string, b []byte) {
	t.Helper()
	for i, dec := range docDecoders {
		a, d, ea, ed := dec(b)
		if fmt.Sprint(ea) != fmt.Sprint(ed) {
			t.Fatalf("%s (model %d): error %v, json.Unmarshal's %v\n%s", name, i, ed, ea, b)
		}
		if ea == nil && !reflect.DeepEqual(a, d) {
			t.Fatalf("%s (model %d): decoded\n%#v\njson.Unmarshal decoded\n%#v", name, i, d, a)
		}
	}
}

// A whole file handed to its type's decoder directly reads, and fails,
// exactly as through json.Unmarshal: trailing bytes, bad syntax, a top
// level that is not an object and whitespace around it included.
func TestDecodeDocument_AsJSONUnmarshal(t *testing.T) {
	n := 0
	for _, d := range looseCorpus(t) {
		sameDocDecode(t, d.name, d.doc)
		n++
	}
	for _, s := range decodeOnceEdgeDocs {
		sameDocDecode(t, s, []byte(s))
		sameDocDecode(t, s, []byte(" \n"+s+"\t"))
		n++
	}
	for _, s := range []string{"", " ", "{", "}", `{"a":1}{"b":2}`, `{"a":1},`, "\ufeff{}", "{}\x00", "{\"a\":1}\v", `[{"cycle": 1}]`} {
		sameDocDecode(t, fmt.Sprintf("%q", s), []byte(s))
		n++
	}
	if n < 50 {
		t.Fatalf("only %d documents compared", n)
	}
}

// FuzzDecodeDocument: whatever the bytes, decodeDocument agrees with
// json.Unmarshal.
func FuzzDecodeDocument(f *testing.F) {
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, b := range looseDocs {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameDocDecode(t, "fuzz", b) })
}
