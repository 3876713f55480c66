package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// The oracle tests of the shortcuts taken for the files a long-lived
// project rewrites every cycle: each against the general path it
// shortens, on random and hostile inputs.

// hadOracle is readEntry.had as it was: the key looked for among
// scanObject's members.
func hadOracle(b []byte, key string) bool {
	members, ok := scanObject(b)
	if !ok {
		return false
	}
	for _, m := range members {
		if m.key == key {
			return true
		}
	}
	return false
}

// objectHasKey answers as scanObject's members do, on objects with
// duplicated keys, keys spelled with escapes, keys of invalid UTF-8 (which
// unquote to U+FFFD), nested objects, and every kind of broken document.
func TestObjectHasKeyMatchesScanObject(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	keys := []string{"a", "b", "a\"", "é", "k", "\\", "", "a ", "A", "k1", "k7", "\ufffd", "frequency", "x"}
	docs := []string{``, ` `, `{`, `{}`, ` {} `, `{"a":1}`, `{"\u0061":1}`, `{"a":1,"a":2}`, `{"\xff":1}`, `{"\xff\xfe":1}`,
		`{"a":1} x`, `{"a":1}}`, `[{"a":1}]`, `{"b":{"a":1}}`, `{"a":1,}`, `{"a" 1}`, `"a"`, `null`, `{"k\u0031":true}`,
		`{"frequency":3,"Frequency":4}`, "{\"a\":1}\n", `{"a":"\u00"}`}
	n := 4000
	if raceDetector {
		n /= 5
	}
	for i := 0; i < n; i++ {
		d := randomDupDoc(rng, 0)
		docs = append(docs, d)
		if i%3 == 0 {
			docs = append(docs, breakJSON(rng, d))
		}
	}
	found := 0
	for _, d := range docs {
		for _, k := range keys {
			if got, want := objectHasKey([]byte(d), k), hadOracle([]byte(d), k); got != want {
				t.Fatalf("objectHasKey(%q, %q) = %v, scanObject's members say %v", d, k, got, want)
			}
			if hadOracle([]byte(d), k) {
				found++
			}
		}
	}
	if found < 1000/(1+4*btoi(raceDetector)) {
		t.Fatalf("only %d keys found: the documents do not exercise the match", found)
	}
}

// A gap's Record asks its entry which keys it had without allocating:
// it runs for every gap that recurs, every cycle.
func TestGapHasDoesNotAllocate(t *testing.T) {
	var g Gap
	if err := json.Unmarshal([]byte(`{"id": "gap-x", "name": "x", "frequency": 3, "last_seen": "2026-03-01T00:00:00Z", "detail": "d"}`), &g); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if !g.has("last_seen") || g.has("last_seen_cycle") {
			t.Fatal("wrong answer")
		}
	})
	if allocs != 0 {
		t.Fatalf("has allocates %v times", allocs)
	}
}

// entryKeysOf is the JSON keys of the fields of the struct type t.
func entryKeysOf(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// randomEntry is one JSON object for an entry of type t: most of its
// keys the type's own, with values of their type or null, some spelled
// another way (another case, an escape, HTML characters, a character
// outside ASCII), some repeated, some unknown, sometimes more than
// changedPlainMax of them; its blanks are those ooda writes, or random.
func randomEntry(rng *rand.Rand, t reflect.Type) string {
	keys := entryKeysOf(t)
	scalar := func() string {
		return []string{`0`, `1`, `-3`, `2.5`, `-0`, `1e2`, `"s"`, `""`, `"a\"b"`, `"\u00e9"`, `"<&>"`, `true`, `false`, `null`, `[]`, `{}`, `[1,"x"]`, `{"k":[null]}`}[rng.Intn(18)]
	}
	value := func(k string) string {
		f, ok := t.FieldByNameFunc(func(n string) bool {
			sf, _ := t.FieldByName(n)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			return strings.EqualFold(name, k)
		})
		if !ok || rng.Intn(8) == 0 {
			return scalar()
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			if rng.Intn(3) == 0 {
				return "null"
			}
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.String:
			return []string{`"v"`, `"2026-03-01T00:00:00Z"`, `"line\nbreak"`, `"\u00e9t\u00e9"`, `"<b>"`, `""`}[rng.Intn(6)]
		case reflect.Int, reflect.Int64:
			return fmt.Sprint(rng.Intn(3000) - 5)
		case reflect.Float64:
			return []string{`0`, `0.5`, `-0`, `1e-3`, `70.6`, `3`}[rng.Intn(6)]
		case reflect.Bool:
			return []string{`true`, `false`}[rng.Intn(2)]
		case reflect.Slice:
			if ft.Elem().Kind() == reflect.String {
				return []string{`[]`, `["a","b"]`, `null`}[rng.Intn(3)]
			}
			if ft.Elem().Kind() == reflect.Int {
				return []string{`[]`, `[1,2]`, `null`}[rng.Intn(3)]
			}
		case reflect.Map:
			return []string{`{}`, `{"d0":1}`, `null`}[rng.Intn(3)]
		}
		return scalar()
	}
	n := rng.Intn(len(keys) + 3)
	if rng.Intn(10) == 0 {
		n = changedPlainMax - 2 + rng.Intn(6)
	}
	type member struct{ quoted, val string }
	var ms []member
	for i := 0; i < n; i++ {
		k := keys[rng.Intn(len(keys))]
		q := `"` + k + `"`
		switch rng.Intn(14) {
		case 0:
			q = `"` + strings.ToUpper(k) + `"`
		case 1:
			q = `"\u00` + fmt.Sprintf("%x", k[0]) + k[1:] + `"`
		case 2:
			q = fmt.Sprintf(`"x_%d"`, rng.Intn(2*changedPlainMax))
		case 3:
			q = []string{`"a<b"`, `"é"`, `"k&"`, `"tab\t"`, `""`, `"\ufffd"`}[rng.Intn(6)]
		}
		if i > 10 && n > changedPlainMax/2 && rng.Intn(2) == 0 {
			q = fmt.Sprintf(`"x_%d"`, i)
		}
		ms = append(ms, member{q, value(strings.Trim(q, `"`))})
	}
	indented := rng.Intn(3) > 0
	var b strings.Builder
	b.WriteString("{")
	for i, m := range ms {
		if i > 0 {
			b.WriteString(",")
		}
		if indented {
			b.WriteString("\n      ")
			b.WriteString(m.quoted + ": " + m.val)
		} else {
			b.WriteString([]string{"", " ", "\n", "\t"}[rng.Intn(4)] + m.quoted + []string{":", ": ", " :"}[rng.Intn(3)] + m.val)
		}
	}
	if indented && len(ms) > 0 {
		b.WriteString("\n    ")
	}
	b.WriteString("}")
	return b.String()
}

// A changed entry is written by encodeChangedPlain exactly as by the
// maps of the general path, whenever it takes it: entries of every type
// that remembers its bytes, read from random objects (keys in other
// cases, escaped, repeated, unknown, HTML characters, more members than
// it takes), then changed in one to three fields (zeroed, moved on,
// made -0, a key added to a map or to the unknown keys). It must take
// most of them, and leave the others to the general path.
func TestEncodeChangedPlainMatchesGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	types := []reflect.Type{reflect.TypeFor[Gap](), reflect.TypeFor[Outcome](), reflect.TypeFor[Reflection](),
		reflect.TypeFor[Episode](), reflect.TypeFor[LensChange](), reflect.TypeFor[DecisionEntry](), reflect.TypeFor[Intervention]()}
	taken, general, compared := 0, 0, 0
	n := 12000
	if raceDetector {
		n /= 5
	}
	for i := 0; i < n; i++ {
		typ := types[i%len(types)]
		doc := randomEntry(rng, typ)
		pv := reflect.New(typ)
		if json.Unmarshal([]byte(doc), pv.Interface()) != nil {
			continue
		}
		e := pv.Elem()
		for c, n := 0, 1+rng.Intn(3); c < n; c++ {
			fi := rng.Intn(e.NumField())
			if !e.Type().Field(fi).IsExported() {
				continue
			}
			if nv, ok := entryChanges[rng.Intn(len(entryChanges))](e.Field(fi)); ok {
				e.Field(fi).Set(nv)
			}
		}
		m := pv.Interface().(json.Marshaler)
		got, gotErr := m.MarshalJSON()
		changedPlainOff = true
		want, wantErr := m.MarshalJSON()
		changedPlainOff = false
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%s read from\n%s\nchanged to %+v\nwrites\n%s (%v)\nthe general path writes\n%s (%v)", typ, doc, e.Interface(), got, gotErr, want, wantErr)
		}
		compared++
		// Which path wrote it, asked directly.
		r := readOf(e)
		if r == nil {
			continue
		}
		base, baseExtra, ok := r.decoded()
		// What MarshalJSON hands to encode: the alias value the entry
		// was read as (its own readAs for a rereader).
		view, extra := entryView(e)
		if _, own := pv.Interface().(rereader); !own {
			view = view.Convert(r.typ)
		}
		if !ok || sameEntry(base, view) && sameValue(reflect.ValueOf(baseExtra), reflect.ValueOf(extra)) {
			continue
		}
		enc, err := marshalKeep(view.Interface(), extra)
		if err != nil {
			continue
		}
		if out, done, err := encodeChangedPlain(r.raw, enc, base, baseExtra); done {
			taken++
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(out, want) {
				t.Fatalf("%s read from\n%s\nencodeChangedPlain writes\n%s (%v)\nthe general path\n%s (%v)", typ, doc, out, err, want, wantErr)
			}
		} else {
			general++
		}
	}
	t.Logf("%d entries compared; the shortcut took %d changed ones, left %d", compared, taken, general)
	if taken < n/6 || general < n/40 {
		t.Fatalf("the shortcut took %d changed entries and left %d: the inputs do not exercise both paths", taken, general)
	}
}

// prependChangelogOracle is prependChangelog as it was, building the
// head and the file in strings, kept word for word as its oracle.
func prependChangelogOracle(old, entry string) string {
	blocks := splitChangelog(old)
	nl := "\n"
	if strings.Contains(old, "\r\n") {
		nl = "\r\n"
	}
	at, sep := -1, ""
	for i, bl := range blocks {
		if bl.cycle {
			at = i
			_, sep = cutSeparator(bl.text)
			break
		}
	}
	if at < 0 {
		// No cycle entry yet: after the header, above any other section.
		at = len(blocks)
		for i, bl := range blocks {
			if bl.h2 {
				at = i
				break
			}
		}
	}
	sep = strings.ReplaceAll(sep, "\r\n", "\n")
	if sep != "\n" && !strings.HasSuffix(sep, "\n\n") {
		// The newest entry may end the file without a blank line after it.
		sep = strings.TrimRight(sep, "\r\n")
		if sep != "" {
			sep += "\n"
		}
		sep += "\n"
	}
	text := lf(strings.TrimRight(entry, "\r\n")) + "\n" + sep

	var head strings.Builder
	for _, bl := range blocks[:at] {
		head.WriteString(bl.text)
	}
	h := head.String()
	switch {
	case strings.TrimSpace(h) == "":
		h = strings.ReplaceAll(changelogHeader, "\n", nl)
	case !strings.HasSuffix(h, "\n"):
		h += nl + nl
	case at == len(blocks) && !strings.HasSuffix(lf(h), "\n\n"):
		h += nl
	}
	var b strings.Builder
	b.WriteString(h)
	b.WriteString(strings.ReplaceAll(text, "\n", nl))
	// The oldest cycle entries beyond the cap go; nothing else does.
	n, last, dropped := 1, true, false
	for _, bl := range blocks[at:] {
		if bl.cycle {
			if n++; n > ChangelogMax {
				dropped = true
				continue
			}
		}
		b.WriteString(bl.text)
		last = bl.cycle
	}
	out := b.String()
	if last && (at == len(blocks) || dropped) {
		// The file now ends with an entry that was followed by another:
		// one line end, not the separator that came before the next.
		out = strings.TrimRight(out, "\r\n") + nl
	}
	return out
}

// changelogEntriesOracle is ChangelogEntries as it was, on the file's text.
func changelogEntriesOracle(text string) []string {
	var entries []string
	for _, bl := range splitChangelog(text) {
		if bl.cycle {
			body, _ := cutSeparator(bl.text)
			entries = append(entries, strings.TrimRight(body, "\r\n")+"\n")
		}
	}
	return entries
}

// randomChangelog is a CHANGELOG.md of random pieces: headers or none,
// cycle entries (up to past the cap), other sections above, between and
// below them, fenced blocks (closed or not) holding headings, separators
// of blank lines and rules, CRLF line ends, a last line without one.
func randomChangelog(rng *rand.Rand) string {
	pieces := []string{"# CHANGELOG\n\n", "# Evolve Activity Log\n", "intro text\n", "\n", "## Notes\nsome notes\n\n",
		"```\n## Cycle #999 -- fenced\n```\n", "~~~\n# not a heading\n", "---\n", "\n---\n\n", "### sub\n", "## \n", "##\n",
		"  ```\n", "## Cycle #x\n", "- **Skill**: /s\n", "\r\n", "# Other\n\n"}
	var b strings.Builder
	if rng.Intn(3) > 0 {
		b.WriteString(pieces[rng.Intn(3)])
	}
	n := rng.Intn(ChangelogMax + 8)
	if rng.Intn(4) == 0 {
		n = rng.Intn(4)
	}
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, "## Cycle #%d -- 2026-03-01 00:00 UTC -- d%d\n- **Skill**: /true\n- **Result**: success\n", i, i%3)
		switch rng.Intn(6) {
		case 0:
			b.WriteString("\n---\n\n")
		case 1:
			b.WriteString("")
		case 2:
			b.WriteString("\n\n\n")
		default:
			b.WriteString("\n")
		}
		if rng.Intn(12) == 0 {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
	}
	for i := rng.Intn(3); i > 0; i-- {
		b.WriteString(pieces[rng.Intn(len(pieces))])
	}
	s := b.String()
	if rng.Intn(5) == 0 {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if rng.Intn(5) == 0 {
		s = strings.TrimRight(s, "\r\n")
	}
	if rng.Intn(10) == 0 && len(s) > 0 {
		s = s[:rng.Intn(len(s))]
	}
	return s
}

// randomChangelogEntry is a new entry as record.Changelog writes it, or
// with the line ends a hand or another program might give it.
func randomChangelogEntry(rng *rand.Rand) string {
	e := "## Cycle #1000 -- 2026-05-23 07:00 UTC -- d0\n- **Skill**: /true\n"
	switch rng.Intn(5) {
	case 0:
		return strings.TrimRight(e, "\n")
	case 1:
		return e + "\n\n"
	case 2:
		return strings.ReplaceAll(e, "\n", "\r\n")
	case 3:
		return ""
	}
	return e
}

// The file is rewritten byte for byte as the string-building version
// wrote it, and its entries read back as the copying version read them,
// for every seed and thousands of random files.
func TestChangelogMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(50))
	docs := changelogSeeds(t)
	for i := 0; i < 6000; i++ {
		docs = append(docs, randomChangelog(rng))
	}
	for _, d := range docs {
		entry := randomChangelogEntry(rng)
		if got, want := prependChangelog(d, entry), prependChangelogOracle(d, entry); string(got) != want {
			t.Fatalf("prependChangelog(%q, %q) =\n%q\nthe oracle\n%q", d, entry, got, want)
		}
		if got, want := changelogEntriesFromText(d), changelogEntriesOracle(d); !reflect.DeepEqual(got, want) {
			t.Fatalf("entries of %q =\n%q\nthe oracle\n%q", d, got, want)
		}
	}
}

// The entries read from a file on disk are the oracle's, and an entry
// that ends with one line end is a slice of the file, not a copy.
func TestChangelogEntriesFromFile(t *testing.T) {
	root := benchProject(t, 2000)
	s := New(root)
	b, err := os.ReadFile(filepath.Join(root, "agent", "state", "evolve", ChangelogFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ChangelogEntries()
	if err != nil {
		t.Fatal(err)
	}
	if want := changelogEntriesOracle(string(b)); !reflect.DeepEqual(got, want) || len(got) != ChangelogMax {
		t.Fatalf("entries =\n%q\nthe oracle\n%q", got, want)
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = entryWithOneLineEnd(got[0]) }); allocs != 0 {
		t.Fatalf("an entry ending with one line end is copied (%v allocations)", allocs)
	}
}

func FuzzPrependChangelogMatchesOracle(f *testing.F) {
	for _, s := range changelogSeeds(f) {
		f.Add(s, "## Cycle #7 -- x\n- a\n")
	}
	f.Add("## Cycle #1\r\n", "## Cycle #2\r\n\r\n")
	f.Fuzz(func(t *testing.T, old, entry string) {
		if got, want := prependChangelog(old, entry), prependChangelogOracle(old, entry); string(got) != want {
			t.Fatalf("prependChangelog(%q, %q) =\n%q\nthe oracle\n%q", old, entry, got, want)
		}
		if got, want := changelogEntriesFromText(old), changelogEntriesOracle(old); !reflect.DeepEqual(got, want) {
			t.Fatalf("entries of %q =\n%q\nthe oracle\n%q", old, got, want)
		}
	})
}

// cutSeparatorOracle is cutSeparator as it was, over the list of lines.
func cutSeparatorOracle(block string) (body, sep string) {
	lines := strings.SplitAfter(block, "\n")
	end := len(block)
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" && !isBreak(t) {
			break
		}
		end -= len(lines[i])
	}
	return block[:end], block[end:]
}

// cutSeparator splits every block as the line-listing version did: the
// blocks of random files, and random runs of text, blanks, rules and
// line ends.
func TestCutSeparatorMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var blocks []string
	for i := 0; i < 2000; i++ {
		for _, bl := range splitChangelog(randomChangelog(rng)) {
			blocks = append(blocks, bl.text)
		}
		var b strings.Builder
		for j := rng.Intn(8); j > 0; j-- {
			b.WriteString([]string{"x", " ", "\t", "\n", "\r\n", "---", "* * *", "__", "-", "\r", "## Cycle #1"}[rng.Intn(11)])
		}
		blocks = append(blocks, b.String())
	}
	for _, bl := range blocks {
		gb, gs := cutSeparator(bl)
		wb, ws := cutSeparatorOracle(bl)
		if gb != wb || gs != ws {
			t.Fatalf("cutSeparator(%q) = %q, %q; the oracle %q, %q", bl, gb, gs, wb, ws)
		}
	}
}

// One buffer reused across comparisons, whatever it held before and
// however large, answers as a new one each time: every case of
// readsAsCases, in random order, against reading the file whole.
func TestReadsAsInReusedBufferMatches(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	cases := readsAsCases()
	var scratch []byte
	for i := 0; i < 2000; i++ {
		c := cases[rng.Intn(len(cases))]
		if rng.Intn(10) == 0 {
			// Left full of bytes that would match the next data.
			scratch = append(scratch[:0], c.data...)
		}
		want := readsAsWhole(bytes.NewReader(c.file), c.data)
		if got := readsAsIn(bytes.NewReader(c.file), c.data, &scratch); got != want {
			t.Fatalf("case %d bytes against %d, buffer of %d: %v, reading whole %v", len(c.file), len(c.data), cap(scratch), got, want)
		}
		if got := readsAsIn(&oneByteReader{bytes.NewReader(c.file)}, c.data, &scratch); got != want {
			t.Fatalf("a byte at a time, %d bytes against %d: %v, reading whole %v", len(c.file), len(c.data), got, want)
		}
	}
}

// An entry is written alike whether or not its unchanged case is asked
// before it is boxed: every document of the corpus, and each with every
// field of its first and last entries changed in turn.
func TestUnboxedShortcutsMatch(t *testing.T) {
	compared := 0
	same := func(name string, v any) {
		t.Helper()
		got, gotErr := encodeJSON(v)
		unboxedOff = true
		want, wantErr := encodeJSON(v)
		unboxedOff = false
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%s: writes\n%s (%v)\nboxed, it writes\n%s (%v)", name, got, gotErr, want, wantErr)
		}
		compared++
	}
	for _, d := range entryCorpus(t) {
		v, err := d.decode(d.doc)
		if err != nil {
			continue
		}
		same(d.name, v)
		entries := readEntries(reflect.ValueOf(v))
		if len(entries) == 0 {
			continue
		}
		for _, at := range []int{0, len(entries) - 1} {
			for fi := 0; fi < entries[at].NumField(); fi++ {
				if !entries[at].Type().Field(fi).IsExported() {
					continue
				}
				for ci, change := range entryChanges {
					v, _ := d.decode(d.doc)
					e := readEntries(reflect.ValueOf(v))[at]
					if nv, ok := change(e.Field(fi)); ok {
						e.Field(fi).Set(nv)
						same(fmt.Sprintf("%s: entry %d, %s changed (%d)", d.name, at, e.Type().Field(fi).Name, ci), v)
					}
				}
			}
		}
	}
	if compared < 500 {
		t.Fatalf("only %d documents compared", compared)
	}
}

// An unchanged outcome, decision, episode or reflection is written from
// its bytes without a copy of itself on the heap; a changed one is
// encoded again.
func TestUnchangedEntriesWriteWithoutAllocating(t *testing.T) {
	files := benchFiles(2000)
	var st State
	var oc Outcomes
	var ep Episodes
	var rf Reflections
	for name, v := range map[string]any{StateFile: &st, OutcomesFile: &oc, EpisodesFile: &ep, ReflectionsFile: &rf} {
		if _, _, err := decodeFileScan(files["evolve/"+name], v, true, false); err != nil {
			t.Fatal(err)
		}
	}
	for name, m := range map[string]json.Marshaler{"outcome": oc.Entries[0], "decision": st.DecisionLog[0], "episode": ep.Episodes[0], "reflection": rf.Reflections[0]} {
		if a := testing.AllocsPerRun(20, func() { _, _ = m.MarshalJSON() }); a != 0 {
			t.Errorf("an unchanged %s: %v allocations", name, a)
		}
	}
	oc.Entries[0].Domain = "changed"
	b, err := oc.Entries[0].MarshalJSON()
	if err != nil || !bytes.Contains(b, []byte(`"changed"`)) {
		t.Fatalf("a changed outcome writes %s (%v)", b, err)
	}
}

// The walks over a file read (the values not taken as written, the
// numbers out of range) take their arena from a pool: a clean file costs
// them no allocation, and an arena given back after a walk that reported
// from deep inside a file reports as a new one does.
func TestWalksReuseTheirArena(t *testing.T) {
	var st State
	if _, _, err := decodeFileScan(benchFiles(2000)["evolve/"+StateFile], &st, true, false); err != nil {
		t.Fatal(err)
	}
	// An arena is 64 steps of a pointer, a few kilobytes: a walk that
	// allocates less than one has not made its own.
	arena := int(reflect.TypeFor[pathArena]().Size())
	if n := allocatedBytes(20, func() { _ = looseWarnings(&st, 5) }); n >= arena {
		t.Errorf("looseWarnings of a clean state: %d bytes a walk (an arena is %d)", n, arena)
	}
	report := func(string, float64, float64) {}
	if n := allocatedBytes(20, func() { clampFloats(reflect.ValueOf(&st), "", report) }); n >= arena {
		t.Errorf("clampFloats of a clean state: %d bytes a walk (an arena is %d)", n, arena)
	}
	doc := []byte(`{"cycle_count": 3, "decision_log": [{"cycle": 1, "scores": {"a": "x"}, "confidence": 1e308}, {"cycle": "two"}]}`)
	var first []string
	for i := 0; i < 3; i++ {
		var bad State
		if _, _, err := decodeFileScan(doc, &bad, true, false); err != nil {
			t.Fatal(err)
		}
		w := looseWarnings(&bad, 5)
		var clamped []string
		clampFloats(reflect.ValueOf(&bad), "/x", func(p string, _, _ float64) { clamped = append(clamped, p) })
		w = append(w, clamped...)
		if want := looseWarningsOracle(&bad, 5); !reflect.DeepEqual(w[:len(want)], want) {
			t.Fatalf("walk %d: %q, the oracle %q", i, w, want)
		}
		if i == 0 {
			first = w
		} else if !reflect.DeepEqual(w, first) {
			t.Fatalf("walk %d with a reused arena: %q, the first %q", i, w, first)
		}
	}
}

// allocatedBytes is how many bytes f allocates a run, on average over n
// runs after a first one.
func allocatedBytes(n int, f func()) int {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return int(after.TotalAlloc-before.TotalAlloc) / n
}

// A file's first encoding in a process starts with room for the file of
// its type that was read: one buffer, not one per doubling (nor a second
// one when the first entry of a list is longer than most). The bytes do
// not depend on the room: the splice oracle tests run with and without
// sizes known.
func TestFirstEncodingHasRoomForTheFileRead(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's instrumentation allocates on its own")
	}
	root := benchProject(t, 2000)
	s := New(root)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	// Written once as ooda writes them, then read back.
	for _, err := range []error{s.SaveState(snap.State), s.SaveOutcomes(snap.Outcomes), s.SaveEpisodes(snap.Episodes)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if snap, err = s.Load(); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{StateFile: snap.State, OutcomesFile: snap.Outcomes, EpisodesFile: snap.Episodes} {
		out, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		cold := func() {
			forgetEncodedSizes()
			_, _ = encodeJSON(v)
		}
		withRoom, withRoomAllocs := allocatedBytes(5, cold), testing.AllocsPerRun(5, cold)
		t.Logf("%s (%d bytes): %d bytes, %v allocations", name, len(out), withRoom, withRoomAllocs)
		size, _ := readSizes.LoadAndDelete(reflect.TypeOf(v))
		without, withoutAllocs := allocatedBytes(5, cold), testing.AllocsPerRun(5, cold)
		readSizes.Store(reflect.TypeOf(v), size)
		t.Logf("%s without the size read: %d bytes, %v allocations", name, without, withoutAllocs)
		if withRoom > len(out)+len(out)/4+8192 || withRoomAllocs >= withoutAllocs {
			t.Errorf("%s (%d bytes): its first encoding allocates %d bytes in %v allocations (%d in %v without the size read)",
				name, len(out), withRoom, withRoomAllocs, without, withoutAllocs)
		}
	}
}

// ProposalWritten, and ProposalsWritten's listing, say yes exactly where
// WriteProposal would write nothing because something is at the
// proposal's name: a proposal, a directory, a dangling symlink, a name
// made plain (a/b is a_b).
func TestProposalWrittenAgreesWithWriteProposal(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	dir := filepath.Join(s.EvolveDir, "proposed-skills")
	if err := os.MkdirAll(filepath.Join(dir, "a_dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "written.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a_b.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	listed := s.ProposalsWritten()
	for _, gap := range []string{"written", "a_dir", "dangling", "a/b", "new", "/other", "gap.with.dots"} {
		before := s.ProposalWritten(gap)
		if l := listed(gap); l != before {
			t.Fatalf("%s: the listing says %v, the lookup %v", gap, l, before)
		}
		wrote, err := s.WriteProposal(gap, "text")
		if err != nil {
			t.Fatalf("%s: %v", gap, err)
		}
		if before == wrote {
			t.Fatalf("%s: ProposalWritten said %v, WriteProposal wrote %v", gap, before, wrote)
		}
		if !s.ProposalWritten(gap) {
			t.Fatalf("%s: not seen once written", gap)
		}
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Without proposed-skills/, no proposal is written; with one that is a
// symlink out of the project, the listing is refused and each gap is
// looked up on its own, as ProposalWritten does.
func TestProposalsWrittenWithoutTheDirectory(t *testing.T) {
	root := t.TempDir()
	s := New(root)
	if err := os.MkdirAll(s.EvolveDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if s.ProposalsWritten()("gap") {
		t.Fatal("a proposal found without proposed-skills/")
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "gap.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.EvolveDir, "proposed-skills")); err != nil {
		t.Fatal(err)
	}
	if got, want := s.ProposalsWritten()("gap"), s.ProposalWritten("gap"); got != want {
		t.Fatalf("through a symlink out of the project: the listing says %v, the lookup %v", got, want)
	}
}
