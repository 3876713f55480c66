package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The tests below hold encodeSpliced — a document written indented in
// one pass, an unchanged entry that already is its own indentation
// copied as it is — to the path it shortens: the document encoded
// compact, checked, then indented (encodeDocument with spliceOff).

// withoutSplice runs f with encodeSpliced off.
func withoutSplice(f func()) {
	saved := spliceOff
	spliceOff = true
	defer func() { spliceOff = saved }()
	f()
}

// sameWithoutSplice fails unless v encodes to the same bytes, or the
// same error, with encodeSpliced and without it; it says whether
// encodeSpliced wrote v itself.
func sameWithoutSplice(t *testing.T, name string, v any) (spliced bool) {
	t.Helper()
	got, gotErr := encodeJSON(v)
	var want []byte
	var wantErr error
	withoutSplice(func() { want, wantErr = encodeJSON(v) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("%s: writes\n%s (%v)\nwithout the splice\n%s (%v)", name, got, gotErr, want, wantErr)
	}
	_, spliced = encodeSpliced(v)
	return spliced
}

// spliceModels are the documents encodeSpliced writes, as Load reads them.
var spliceModels = map[string]func([]byte) (any, error){
	StateFile: fileDecoder[State](), OutcomesFile: fileDecoder[Outcomes](), EpisodesFile: fileDecoder[Episodes](),
	ReflectionsFile: fileDecoder[Reflections](), SkillGapsFile: fileDecoder[SkillGaps](), MemosFile: fileDecoder[Memos](),
}

// must is v, for a decoding that succeeded once already.
func must(v any, _ error) any { return v }

// rewrite is the file encodeJSON writes for the document b read by dec:
// what a cycle reads back the next time.
func rewrite(t *testing.T, dec func([]byte) (any, error), b []byte) ([]byte, bool) {
	t.Helper()
	v, err := dec(b)
	if err != nil {
		return nil, false
	}
	out, err := encodeJSON(v)
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// Every document of the corpus, as read and as written back once (the
// file a cycle then reads), writes the same bytes with the splice as
// without it: unchanged, after a cycle's change, and with its first and
// last entries changed in place or given a new value in every field.
func TestSplice_MatchesCompactThenIndent(t *testing.T) {
	compared, spliced := 0, 0
	check := func(name string, v any) {
		compared++
		if sameWithoutSplice(t, name, v) {
			spliced++
		}
	}
	for i, d := range keptCorpus(t) {
		if raceDetector && i%5 != 0 {
			continue
		}
		if v, err := d.decode(d.doc); err != nil {
			continue
		} else if _, ok := v.(keepParter); !ok {
			// Not a document encodeSpliced writes.
			continue
		}
		docs := map[string][]byte{d.name: d.doc}
		if again, ok := rewrite(t, d.decode, d.doc); ok {
			// What a cycle reads back: its entries are copied.
			docs = map[string][]byte{d.name + " (as written)": again}
			check(d.name, must(d.decode(d.doc)))
		}
		for name, doc := range docs {
			v, err := d.decode(doc)
			if err != nil {
				continue
			}
			check(name, v)
			fresh := func() reflect.Value {
				v, _ := d.decode(doc)
				c := reflect.New(reflect.TypeOf(v))
				c.Elem().Set(reflect.ValueOf(v))
				return c
			}
			if c := fresh(); cycleChange(c) {
				check(name+": a cycle's change", c.Elem().Interface())
			}
			n := len(readEntries(fresh()))
			if n == 0 {
				continue
			}
			at := []int{0, n - 1}
			if n > 20 {
				// A long list's entries are alike: its last one (the one
				// a cycle adds) stands for them.
				at = at[1:]
			}
			for _, at := range at {
				entry := readEntries(fresh())[at]
				for fi := 0; fi < entry.NumField(); fi++ {
					if !entry.Type().Field(fi).IsExported() {
						continue
					}
					field := fmt.Sprintf("%s: entry %d, %s", name, at, entry.Type().Field(fi).Name)
					for ci, change := range entryChanges {
						c := fresh()
						e := readEntries(c)[at]
						if nv, ok := change(e.Field(fi)); ok {
							e.Field(fi).Set(nv)
							check(fmt.Sprintf("%s replaced (%d)", field, ci), c.Elem().Interface())
						}
					}
					if c := fresh(); mutateInPlace(readEntries(c)[at].Field(fi)) {
						check(field+" changed in place", c.Elem().Interface())
					}
				}
			}
		}
	}
	if raceDetector && compared < 400 || !raceDetector && (compared < 2000 || spliced < 1000) {
		t.Fatalf("only %d encodings compared, %d of them spliced", compared, spliced)
	}
}

// Generated outcomes.json and state.json documents, written back once
// and then re-spaced at random (a blank added, taken away or changed
// here and there, as a hand edit would), write the same bytes with the
// splice as without it, as read and after a cycle's change.
func TestSplice_MatchesOnGeneratedDocs(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	compared, copied, refused := 0, 0, 0
	n := 600
	if raceDetector {
		n = 100
	}
	for i := 0; i < n; i++ {
		name, dec := OutcomesFile, spliceModels[OutcomesFile]
		doc := randomOutcomeDoc(r, 1+r.Intn(8))
		if i%3 == 0 {
			name, dec = StateFile, spliceModels[StateFile]
			doc = randomStateDoc(r, 1+r.Intn(5))
		}
		written, ok := rewrite(t, dec, doc)
		if !ok {
			continue
		}
		for k, b := range [][]byte{written, respace(r, written), respace(r, respace(r, written))} {
			label := fmt.Sprintf("%s %d.%d", name, i, k)
			v, err := dec(b)
			if err != nil {
				continue
			}
			sameWithoutSplice(t, label, v)
			compared++
			c := reflect.New(reflect.TypeOf(v))
			c.Elem().Set(reflect.ValueOf(v))
			for _, e := range readEntries(c) {
				if re := readOf(e); re != nil {
					if _, ok := canonicalAt(re.raw, 2); ok {
						copied++
					} else {
						refused++
					}
				}
			}
			if cycleChange(c) {
				sameWithoutSplice(t, label+": a cycle's change", c.Elem().Interface())
				compared++
			}
		}
	}
	if raceDetector && compared < 250 || !raceDetector && (compared < 1500 || copied < 500 || refused < 100) {
		t.Fatalf("%d encodings compared; %d entries copied, %d indented again", compared, copied, refused)
	}
}

// randomStateDoc is a state.json document of n decision-log entries,
// with the values a decision holds and a few it does not (unknown keys,
// escapes, nesting deeper than the indentation goes).
func randomStateDoc(r *rand.Rand, n int) []byte {
	values := []string{`"d0"`, `""`, `"a \"quoted\" \\ word"`, `"tab\tand\\"`, `"é ✓ \u00e9"`, `0`, `-0`, `1.5e3`, `true`, `null`,
		`[]`, `{}`, `["x", "y"]`, `{"a": {"b": [1, {"c": [[[[[[[[[1]]]]]]]]]}]}}`, `[[[[[[[[[[[]]]]]]]]]]]`, `{"k": "v\\\"", "n": [null]}`}
	keys := []string{"cycle", "timestamp", "action", "selected_domain", "score", "raw_score", "result", "chain_executed",
		"scores", "prs_created", "skill_gaps_detected", "contrarian_check", "stop_reason", "unknown_key", "lessons", "nested"}
	var sb strings.Builder
	sb.WriteString(`{"cycle_count": 7, "recent_alerts": [null, {"a": 1}], "domain_last_run": {"d0": "2026-03-01T00:00:00Z"}, "decision_log": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"cycle": %d, "timestamp": "2026-03-01T0%d:00:00Z"`, i+1, i%10)
		for j := r.Intn(8); j > 0; j-- {
			k := keys[r.Intn(len(keys))]
			v := values[r.Intn(len(values))]
			switch k {
			case "scores":
				v = `{"d0": 1.25, "d1": -0.5}`
			case "chain_executed", "skill_gaps_detected":
				v = `["/a", "b\"c"]`
			case "cycle":
				continue
			}
			fmt.Fprintf(&sb, `, %q: %s`, k, v)
		}
		sb.WriteString("}")
	}
	sb.WriteString("]}")
	return []byte(sb.String())
}

// respace changes the blanks of the JSON document b at a few random
// places outside its strings: one added, one removed, a run changed.
func respace(r *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	for n := 1 + r.Intn(3); n > 0; n-- {
		var at []int
		for i := 0; i < len(out); i++ {
			switch out[i] {
			case '"':
				i = stringEnd(out, i) - 1
			case ' ', '\n', ',', ':', '{', '[':
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return out
		}
		i := at[r.Intn(len(at))]
		switch r.Intn(4) {
		case 0:
			out = append(out[:i+1], append([]byte(" "), out[i+1:]...)...)
		case 1:
			if isBlank(out[i]) {
				out = append(out[:i], out[i+1:]...)
			}
		case 2:
			out = append(out[:i+1], append([]byte("\r\n\t"), out[i+1:]...)...)
		default:
			out = bytes.ReplaceAll(out, []byte("\n    "), []byte("\n     "))
		}
	}
	return out
}

// indentedAtOracle is what indentCounting makes of the JSON value b when
// it starts at depth d: b nested in d lists, indented, and cut out again.
func indentedAtOracle(b []byte, d int) []byte {
	wrapped := strings.Repeat("[", d) + string(appendStripped(nil, b)) + strings.Repeat("]", d)
	out := indentBounded([]byte(wrapped))
	for k := 1; k <= d; k++ {
		prefix := "[" + "\n" + strings.Repeat("  ", k)
		if k > maxIndentDepth {
			prefix = "["
		}
		out = bytes.TrimPrefix(out, []byte(prefix))
	}
	for k := 0; k < d; k++ {
		suffix := "\n" + strings.Repeat("  ", k) + "]"
		if k+1 > maxIndentDepth {
			suffix = "]"
		}
		out = bytes.TrimSuffix(out, []byte(suffix))
	}
	return out
}

// spliceValues are JSON values at the edges of canonicalAt: empty and
// nested containers, escapes before a closing quote, nesting past
// maxIndentDepth, blanks in strings.
var spliceValues = []string{
	`{}`, `[]`, `0`, `"x"`, `null`, `{"a":1}`, `[1,2]`, `{"a":[],"b":{}}`, `{"a":"\\"}`, `{"a":"\"}\"","b":[" ,:\n"]}`,
	"[\n  \n]", "{\"a\": [ ], \"b\": {\n\n}}", `[[[[[[[[[[[[1,2],{"k":[]}]]]]]]]]]]]`, `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":[1,{"j":2}]}}}}}}}}}`,
	`{"cycle_id":3,"score":-0,"x":[null,true,false,1e-7],"y":{"z":"\u00e9\t"}}`, `[{"a":[{"b":[{"c":[]}]}]}]`,
}

// canonicalAt takes b exactly when b is what indentCounting makes of it
// at its depth: every value above, at every depth, indented and then
// with a blank added, removed or changed anywhere.
func TestSplice_CanonicalAtMatchesIndentation(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	yes, no := 0, 0
	for _, v := range spliceValues {
		for d := 0; d <= maxIndentDepth+2; d++ {
			want := indentedAtOracle([]byte(v), d)
			candidates := [][]byte{want, []byte(v)}
			for k := 0; k < 40; k++ {
				candidates = append(candidates, respace(r, want))
			}
			for _, b := range candidates {
				ws, ok := canonicalAt(b, d)
				if exact := bytes.Equal(b, indentedAtOracle(b, d)); ok != exact {
					t.Fatalf("canonicalAt(%q, %d) = %v, indentation says %v (%q)", b, d, ok, exact, indentedAtOracle(b, d))
				}
				if ok {
					yes++
					if compact := len(appendStripped(nil, b)); ws != len(b)-compact {
						t.Fatalf("canonicalAt(%q, %d): %d blanks, the value holds %d", b, d, ws, len(b)-compact)
					}
				} else {
					no++
				}
			}
		}
	}
	if yes < 100 || no < 1000 {
		t.Fatalf("%d taken, %d refused", yes, no)
	}
}

// The document-level cases encodeSpliced does not write — unknown keys
// of the document, a document whose indentation would pass
// indentCounting's bound — are left to encodeDocument, which writes them
// as it always did.
func TestSplice_FallsBack(t *testing.T) {
	dec := spliceModels[OutcomesFile]
	unknown, err := dec([]byte(`{"schema_version": "1.0.0", "zzz": [1, 2], "entries": [{"cycle_id": 1, "result_type": "futile"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := encodeSpliced(unknown); ok {
		t.Fatal("a document with unknown keys was spliced")
	}
	sameWithoutSplice(t, "unknown keys", unknown)

	// Entries whose unknown key nests eight levels deep: two bytes of
	// value on a line of their own at every level, the indentation
	// soon more than the value plus 64 KiB.
	var sb strings.Builder
	sb.WriteString(`{"schema_version": "1.0.0", "entries": [`)
	for i := 0; i < 1200; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"cycle_id": %d, "result_type": "futile", "deep": [[[[[[1],[2]]]]]]}`, i)
	}
	sb.WriteString("]}")
	deep, err := dec([]byte(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := encodeSpliced(deep); ok {
		t.Fatal("a document past the indentation bound was spliced")
	}
	if spliced := sameWithoutSplice(t, "past the bound", deep); spliced {
		t.Fatal("spliced past the bound")
	}
	got, _ := encodeJSON(deep)
	if last := got[len(got)-200:]; bytes.Contains(last, []byte("\n")) {
		t.Fatalf("the bound was not reached, the test proves nothing: %q", last)
	}

	// A hand-edited entry (blanks of its own) is not copied: its bytes
	// are indented again, as they were without the splice.
	edited, err := dec([]byte("{\"entries\": [\n    {\"cycle_id\": 1,   \"result_type\": \"futile\"},\n    {\n      \"cycle_id\": 2,\n      \"result_type\": \"futile\"\n    }\n  ]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	o := edited.(Outcomes)
	if _, ok := canonicalAt(o.Entries[0].read.raw, 2); ok {
		t.Fatal("a hand-spaced entry taken as its own indentation")
	}
	if _, ok := canonicalAt(o.Entries[1].read.raw, 2); !ok {
		t.Fatal("an entry as ooda writes it not taken as its own indentation")
	}
	if !sameWithoutSplice(t, "hand-edited entry", edited) {
		t.Fatal("the document was not spliced")
	}
}

// FuzzCanonicalAt holds canonicalAt to the indentation itself on any
// JSON value, at any depth.
func FuzzCanonicalAt(f *testing.F) {
	for _, v := range spliceValues {
		f.Add([]byte(v), uint8(2))
		f.Add(indentedAtOracle([]byte(v), 2), uint8(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, depth uint8) {
		d := int(depth % 12)
		start := skipSpace(b, 0)
		end, ok := scanValue(b, start, 0)
		if !ok || start != 0 || end != len(b) {
			return
		}
		_, got := canonicalAt(b, d)
		if want := bytes.Equal(b, indentedAtOracle(b, d)); got != want {
			t.Fatalf("canonicalAt(%q, %d) = %v, indentation says %v", b, d, got, want)
		}
	})
}

// A lens's evidence (raw JSON values kept as read) writes the same bytes,
// or fails alike, with the splice as without it: elements already their
// own indentation, spaced otherwise, with blanks around them, nil,
// empty, not JSON, nested past the indentation's depth.
func TestSplice_RawListsMatch(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	var pool []json.RawMessage
	for _, v := range spliceValues {
		pool = append(pool, json.RawMessage(v), indentedAtOracle([]byte(v), 2), respace(r, indentedAtOracle([]byte(v), 2)))
	}
	pool = append(pool, nil, json.RawMessage{}, json.RawMessage(" 1 "), json.RawMessage("\n{\"a\": 1}\n"), json.RawMessage(`{"a":`),
		json.RawMessage(`"\u00e9 <&> \u2028"`), json.RawMessage("[1,]"), json.RawMessage(`nul`))
	compared, spliced, failed := 0, 0, 0
	for i := 0; i < 3000; i++ {
		l := NewLens("d0", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
		for n := r.Intn(6); n > 0; n-- {
			l.Evidence = append(l.Evidence, pool[r.Intn(len(pool))])
		}
		if r.Intn(4) == 0 {
			l.DeprecatedItems = append(l.DeprecatedItems, pool[r.Intn(len(pool))])
		}
		if sameWithoutSplice(t, fmt.Sprintf("lens %d", i), l) {
			spliced++
		}
		if _, err := encodeJSON(l); err != nil {
			failed++
		}
		compared++
	}
	// And as read back from what was written (evidence then copied).
	root := benchProject(t, 2000)
	for d := 0; d < 8; d++ {
		b, err := os.ReadFile(filepath.Join(root, "agent", "state", fmt.Sprintf("d%d", d), "lens.json"))
		if err != nil {
			t.Fatal(err)
		}
		var l Lens
		if err := decodeFile(b, &l); err != nil {
			t.Fatal(err)
		}
		again, err := encodeJSON(l)
		if err != nil {
			t.Fatal(err)
		}
		var l2 Lens
		if err := decodeFile(again, &l2); err != nil {
			t.Fatal(err)
		}
		for _, ev := range l2.Evidence {
			if _, ok := canonicalAt(ev, 2); !ok {
				t.Fatalf("d%d: evidence as written is not its own indentation: %q", d, ev)
			}
		}
		if !sameWithoutSplice(t, fmt.Sprintf("d%d lens as written", d), l2) {
			t.Fatalf("d%d lens not spliced", d)
		}
	}
	if spliced < 1000 || failed < 100 || compared-spliced < 500 {
		t.Fatalf("%d compared, %d spliced, %d failed alike", compared, spliced, failed)
	}
}

// rawDoc is a document whose encoding is its own bytes: what a type that
// writes the blanks it read with (confidence.json's domains) hands
// encodeDocument.
type rawDoc []byte

func (d rawDoc) MarshalJSON() ([]byte, error) { return d, nil }

// A document that holds blanks is written as its compacted copy's
// indentation without that copy being made, unless the bound on
// indentation might cut either one short: then as before. The sizes
// below sweep across the bound, so that both happen.
func TestEncodeDocument_BlanksKeepTheFirstIndentation(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	kept, redone := 0, 0
	check := func(name string, doc []byte) {
		got, ok := encodeDocument(rawDoc(doc))
		saved := blanksRedoOn
		blanksRedoOn = true
		want, wantOK := encodeDocument(rawDoc(doc))
		blanksRedoOn = saved
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("%s: writes\n%.300q (%v)\nredone\n%.300q (%v)", name, got, ok, want, wantOK)
		}
		if !ok {
			return
		}
		out, blanks := indentCounting(doc)
		if compact := len(doc) - blanks; blanks > 0 && len(out)-compact <= compact+64<<10 {
			kept++
		} else if blanks > 0 {
			redone++
		}
	}
	for _, v := range spliceValues {
		check(v, indentedAtOracle([]byte(v), 0))
		check(v+" respaced", respace(r, indentedAtOracle([]byte(v), 0)))
	}
	for n := 1000; n <= 2400; n += 50 {
		var sb strings.Builder
		sb.WriteString("[")
		for i := 0; i < n; i++ {
			if i > 0 {
				sb.WriteString(" ,\t")
			}
			sb.WriteString("[ [ [ [ 1 ] ] ] ]")
		}
		sb.WriteString("]")
		check(fmt.Sprintf("%d nested lists", n), []byte(sb.String()))
	}
	if kept < 20 || redone < 5 {
		t.Fatalf("%d kept, %d redone: the sweep does not cross the bound", kept, redone)
	}
}
