package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The tests below hold two shortcuts of the encoder to the steps they
// replaced: an entry unchanged since it was read has its bytes stripped
// of blanks without being checked again (isKeptBytes), and a document is
// indented first and found compact after (indentCounting) instead of
// being searched for blanks first.

// withoutKeptBytes runs f with both shortcuts off.
func withoutKeptBytes(f func()) {
	savedKept, savedFirst := keptBytesOff, compactCheckFirst
	keptBytesOff, compactCheckFirst = true, true
	defer func() { keptBytesOff, compactCheckFirst = savedKept, savedFirst }()
	f()
}

// fileDecoder reads a document as Store.Load does (decodeFile: the
// entries keep slices of one checked copy of the file).
func fileDecoder[T any]() func([]byte) (any, error) {
	return func(b []byte) (any, error) {
		var v T
		err := decodeFile(b, &v)
		return v, err
	}
}

var keptFileModels = map[string]func([]byte) (any, error){
	StateFile: fileDecoder[State](), GoalsFile: fileDecoder[Goals](), ActionQueueFile: fileDecoder[ActionQueue](),
	SkillGapsFile: fileDecoder[SkillGaps](), MetricsFile: fileDecoder[Metrics](), CostLedgerFile: fileDecoder[CostLedger](),
	OutcomesFile: fileDecoder[Outcomes](), MemosFile: fileDecoder[Memos](), EpisodesFile: fileDecoder[Episodes](),
	PrinciplesFile: fileDecoder[Principles](), ReflectionsFile: fileDecoder[Reflections](), CascadesFile: fileDecoder[Cascades](),
	CheckpointsFile: fileDecoder[Checkpoints](), ConfidenceFile: fileDecoder[Confidence](),
}

// sameWithoutKeptBytes fails unless v encodes to the same bytes, or the
// same error, with the shortcuts and without them.
func sameWithoutKeptBytes(t *testing.T, name string, v any) {
	t.Helper()
	got, gotErr := encodeJSON(v)
	var want []byte
	var wantErr error
	withoutKeptBytes(func() { want, wantErr = encodeJSON(v) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
		t.Fatalf("%s: writes\n%s (%v)\nwithout the shortcuts\n%s (%v)", name, got, gotErr, want, wantErr)
	}
}

// keptCorpus is every document of the long-run project (cycle 2,000, every
// capped list full), of the fixtures, and of the edge documents, each
// with the decoder Load uses and the one json.Unmarshal uses.
func keptCorpus(t *testing.T) []struct {
	name   string
	decode func([]byte) (any, error)
	doc    []byte
} {
	type doc = struct {
		name   string
		decode func([]byte) (any, error)
		doc    []byte
	}
	var out []doc
	root := benchProject(t, 2000)
	paths, _ := filepath.Glob(filepath.Join(root, "agent", "state", "*", "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if dec, ok := keptFileModels[filepath.Base(p)]; ok {
			out = append(out, doc{"cycle 2000 " + filepath.Base(p) + " (file)", dec, b})
		}
		if dec, ok := fileModels[filepath.Base(p)]; ok {
			out = append(out, doc{"cycle 2000 " + filepath.Base(p), dec, b})
		}
	}
	for _, d := range encodeCorpus(t) {
		out = append(out, d)
	}
	for _, d := range entryCorpus(t) {
		for name, dec := range keptFileModels {
			out = append(out, doc{d.name + " as " + name + " (file)", dec, d.doc})
		}
	}
	return out
}

// Every document writes the same bytes with the shortcuts as without
// them: as read, after a cycle's change (the oldest entry gone, a new
// one added), and with its first and last entries changed in place or
// given a new value in every field.
func TestKeptBytes_MatchesTheEncodingWithoutThem(t *testing.T) {
	compared, kept := 0, 0
	for _, d := range keptCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		sameWithoutKeptBytes(t, d.name, v)
		compared++
		for _, e := range readEntries(reflect.ValueOf(&v).Elem().Elem()) {
			if r := readOf(e); r != nil && len(r.raw) > 0 {
				kept++
			}
		}
		fresh := func() reflect.Value {
			v, _ := d.decode(d.doc)
			c := reflect.New(reflect.TypeOf(v))
			c.Elem().Set(reflect.ValueOf(v))
			return c
		}
		if c := fresh(); cycleChange(c) {
			sameWithoutKeptBytes(t, d.name+": a cycle's change", c.Elem().Interface())
			compared++
		}
		n := len(readEntries(fresh()))
		if n == 0 {
			continue
		}
		at := []int{0, n - 1}
		if len(d.doc) > 16<<10 {
			// A long document's entries are alike: its last one (the one a
			// cycle adds) stands for them.
			at = at[1:]
		}
		for _, at := range at {
			entry := readEntries(fresh())[at]
			for fi := 0; fi < entry.NumField(); fi++ {
				if !entry.Type().Field(fi).IsExported() {
					continue
				}
				name := fmt.Sprintf("%s: entry %d, %s", d.name, at, entry.Type().Field(fi).Name)
				for ci, change := range entryChanges {
					c4 := fresh()
					e4 := readEntries(c4)[at]
					nv, ok := change(e4.Field(fi))
					if !ok {
						continue
					}
					e4.Field(fi).Set(nv)
					sameWithoutKeptBytes(t, fmt.Sprintf("%s replaced (%d)", name, ci), c4.Elem().Interface())
					compared++
				}
				c5 := fresh()
				if mutateInPlace(readEntries(c5)[at].Field(fi)) {
					sameWithoutKeptBytes(t, name+" changed in place", c5.Elem().Interface())
					compared++
				}
			}
		}
	}
	if compared < 2000 || kept < 500 {
		t.Fatalf("only %d encodings compared, %d entries kept their bytes", compared, kept)
	}
}

// The shortcut is taken for an entry as read, and only for it: an entry
// changed, a new entry, bytes equal to those read but not the same
// memory, and bytes read with blanks around them are checked as before.
func TestKeptBytes_OnlyTheBytesAsRead(t *testing.T) {
	root := benchProject(t, 2000)
	b, err := os.ReadFile(filepath.Join(root, "agent", "state", "evolve", OutcomesFile))
	if err != nil {
		t.Fatal(err)
	}
	var o Outcomes
	if err := decodeFile(b, &o); err != nil {
		t.Fatal(err)
	}
	readAt := readFieldIndex(reflect.TypeFor[Outcome]())
	kept := func(e *Outcome) bool {
		enc, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return isKeptBytes(reflect.ValueOf(e).Elem().Field(readAt), enc)
	}
	if len(o.Entries) < 100 {
		t.Fatalf("only %d outcomes", len(o.Entries))
	}
	for i := range o.Entries {
		if !kept(&o.Entries[i]) {
			t.Fatalf("outcome %d, unchanged, is not taken as its bytes", i)
		}
	}
	changed := o.Entries[0]
	changed.Domain += "x"
	if kept(&changed) {
		t.Fatal("a changed outcome is taken as the bytes it was read from")
	}
	if kept(&Outcome{CycleID: 1}) {
		t.Fatal("a new outcome is taken as read")
	}
	e := o.Entries[1]
	r := readOf(reflect.ValueOf(&e).Elem())
	if isKeptBytes(reflect.ValueOf(&e).Elem().Field(readAt), bytes.Clone(r.raw)) {
		t.Fatal("a copy of the bytes read is taken as the bytes read")
	}
	// A record whose bytes have blanks around them (bytes handed to the
	// checked decoder as they are; the decoders of a file never do): they
	// are checked and compacted as before.
	var withRead Outcome
	if err := withRead.decode([]byte(" {\"cycle_id\": 3} "), true); err != nil {
		t.Fatal(err)
	}
	if r := readOf(reflect.ValueOf(&withRead).Elem()); r == nil || r.raw[0] != ' ' {
		t.Fatalf("the record does not keep the blanks: %+v", r)
	}
	if kept(&withRead) {
		t.Fatal("bytes with blanks around them are taken as kept")
	}
	doc := Outcomes{Entries: []Outcome{withRead}}
	sameWithoutKeptBytes(t, "padded record", doc)
	got, err := encodeJSON(doc)
	if err != nil || !bytes.Contains(got, []byte(`"cycle_id": 3`)) {
		t.Fatalf("padded record: %s, %v", got, err)
	}
}

// A document that is not compact once encoded (an unknown value kept with
// the blanks it was read with) is compacted before it is indented, as
// before: its indentation's bound is the compacted size's. The value
// below is long and deep enough that the bound cuts the indentation
// short, where indenting it with its blanks would not.
func TestIndentCounting_BlanksFallBack(t *testing.T) {
	var inner []string
	for i := range 6000 {
		inner = append(inner, fmt.Sprintf("[[%d, %d], [%d]]", i, i+1, i+2))
	}
	doc := `{"entries": [], "kept": [` + strings.Join(inner, ", ") + `]}`
	for name, dec := range map[string]func([]byte) (any, error){"file": fileDecoder[Outcomes](), "unmarshal": decoder[Outcomes]()} {
		v, err := dec([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := v.(Outcomes).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, blanks := indentCounting(enc); blanks == 0 {
			t.Fatalf("%s: the encoding holds no blank; the test does not reach the fallback", name)
		}
		compact := appendStripped(nil, enc)
		if bytes.Equal(indentBounded(compact), indentBounded(enc)) {
			t.Fatalf("%s: the bound cuts the same with blanks; the test cannot tell the fallback from none", name)
		}
		sameWithoutKeptBytes(t, name, v)
		got, _ := encodeJSON(v)
		var want []byte
		withOldEncoding(func() { want, _ = encodeJSON(v) })
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: writes\n%.300s\nencoding/json writes\n%.300s", name, got, want)
		}
	}
}

// Whatever the bytes, a model that decodes them writes them, as read and
// after a cycle's change, as without the shortcuts.
func FuzzKeptBytesMatchesTheEncodingWithoutThem(f *testing.F) {
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"entries": [{"cycle_id": 1, "x": [1, 2]}, {"cycle_id": 2}], "k": {"a": [ ]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, dec := range keptFileModels {
			v, err := dec(b)
			if err != nil {
				continue
			}
			sameWithoutKeptBytes(t, name, v)
			c := reflect.New(reflect.TypeOf(v))
			c.Elem().Set(reflect.ValueOf(v))
			if cycleChange(c) {
				sameWithoutKeptBytes(t, name+": a cycle's change", c.Elem().Interface())
			}
		}
	})
}
