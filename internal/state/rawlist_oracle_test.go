package state

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// rawListValues are array elements as a file may hold them: every JSON
// type, blanks inside, escapes, nesting.
var rawListValues = []string{
	`null`, `true`, `0`, `-1.5e3`, `""`, `"a\"b"`, `"caf\u00e9"`, `[]`, `[ ]`, `{}`, `{ }`,
	`{"timestamp": "2026-05-23T06:00:00Z", "cycle": 1999, "alerts": [], "items_added": 0}`,
	"{\n  \"a\": [1, {\"b\": null}],\n  \"c\": \"]\"\n}", `[[["x"]]]`, `{"k":"}"}`,
}

// randomRawListDoc is a lens document whose evidence and deprecated items
// are random arrays (or not arrays), with blanks of every kind around
// and between their elements; sometimes a key twice.
func randomRawListDoc(r *rand.Rand) []byte {
	blank := func() string { return []string{"", " ", "\n    ", "\t", "\r\n"}[r.Intn(5)] }
	list := func() string {
		switch r.Intn(12) {
		case 0:
			return "null"
		case 1:
			return rawListValues[r.Intn(len(rawListValues))] // not an array, or one nested
		}
		var sb strings.Builder
		sb.WriteString("[" + blank())
		for i, n := 0, r.Intn(6); i < n; i++ {
			if i > 0 {
				sb.WriteString(blank() + "," + blank())
			}
			sb.WriteString(rawListValues[r.Intn(len(rawListValues))])
		}
		sb.WriteString(blank() + "]")
		return sb.String()
	}
	doc := fmt.Sprintf(`{"domain": "d0", "evidence":%s%s, "deprecated_items": %s`, blank(), list(), list())
	if r.Intn(4) == 0 {
		doc += `, "evidence": ` + list() // a second value: into the first, by encoding/json
	}
	return []byte(doc + "}")
}

// A []json.RawMessage field is read as encoding/json reads it: every
// element's bytes as written, nulls, empty lists, a null list, a value
// that is no list (refused the same way), a key twice (the second list
// into the first), through Load's checked path and the plain one alike.
func TestRawListMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewSource(20))
	decode := func(b []byte, off bool) (Lens, Lens, error, error) {
		saved := rawListOff
		rawListOff = off
		defer func() { rawListOff = saved }()
		var plain Lens
		perr := plain.UnmarshalJSON(b)
		file, ferr := decodeAsFile[Lens](b)
		return plain, file, perr, ferr
	}
	taken := 0
	for i := 0; i < 3000; i++ {
		b := randomRawListDoc(r)
		gp, gf, gpe, gfe := decode(b, false)
		wp, wf, wpe, wfe := decode(b, true)
		if fmt.Sprint(gpe, gfe) != fmt.Sprint(wpe, wfe) {
			t.Fatalf("doc %d: errors %v %v, encoding/json's %v %v\n%s", i, gpe, gfe, wpe, wfe, b)
		}
		if !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(gf, wf) {
			t.Fatalf("doc %d: read\n%#v\nencoding/json read\n%#v\nfrom %s", i, gp, wp, b)
		}
		// The same bytes written back.
		gb, gerr := encodeJSON(gp)
		wb, werr := encodeJSON(wp)
		if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("doc %d: writes\n%s\nencoding/json's value writes\n%s", i, gb, wb)
		}
		if gpe == nil && gp.Evidence != nil {
			taken++
		}
	}
	if taken < 1000 {
		t.Fatalf("only %d lists read", taken)
	}
}

// The elements read share one allocation but not their room: appending
// to one does not write over the next, and none shares the document.
func TestRawListElementsAreTheirOwn(t *testing.T) {
	doc := []byte(`{"evidence": [{"a": 1}, 2, "x"]}`)
	l, err := decodeAsFile[Lens](doc)
	if err != nil || len(l.Evidence) != 3 {
		t.Fatalf("%v %q", err, l.Evidence)
	}
	_ = append(l.Evidence[0], '!')
	l.Evidence[1][0] = '3'
	if string(l.Evidence[1]) != "3" || string(l.Evidence[2]) != `"x"` || string(doc) != `{"evidence": [{"a": 1}, 2, "x"]}` {
		t.Fatalf("elements share their room: %q, document %s", l.Evidence, doc)
	}
}

// BenchmarkDecodeLens decodes a lens of a cycle-2,000 project (twenty
// evidence entries) with rawList and with encoding/json.
func BenchmarkDecodeLens(b *testing.B) {
	doc := benchFiles(2000)["d0/lens.json"]
	for _, off := range []bool{false, true} {
		b.Run(map[bool]string{false: "rawList", true: "encoding-json"}[off], func(b *testing.B) {
			saved := rawListOff
			rawListOff = off
			defer func() { rawListOff = saved }()
			b.ReportAllocs()
			for b.Loop() {
				var l Lens
				if err := decodeDocument(doc, &l); err != nil || len(l.Evidence) != 20 {
					b.Fatal(err, len(l.Evidence))
				}
			}
		})
	}
}
