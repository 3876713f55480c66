package state

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// scanDocumentOracle is what scanDocument replaced: the document checked
// by scanValue, then its keys looked at by hasDuplicateKeys.
func scanDocumentOracle(b []byte) (start, end int, ok, dup bool) {
	start = skipSpace(b, 0)
	end, ok = scanValue(b, start, 0)
	if !ok || skipSpace(b, end) != len(b) {
		return start, 0, false, false
	}
	return start, end, true, hasDuplicateKeys(b)
}

// randomDupDoc is a JSON document whose objects draw their keys from a
// few names, some spelled with escapes that make them equal to others
// ("\u0061" is "a"), so that duplicates turn up at every depth, and
// objects of more than dupKeysLinear keys turn up too.
func randomDupDoc(rng *rand.Rand, depth int) string {
	keys := []string{`"a"`, `"b"`, `"\u0061"`, `"a\""`, `"é"`, `"k"`, `"\\"`, `""`, `"a "`, `"A"`}
	scalar := func() string {
		return []string{`1`, `-0.5e3`, `"s"`, `"a"`, `"\"a\":"`, `true`, `null`, `"{["`, `"]}"`}[rng.Intn(9)]
	}
	if depth > 4 || rng.Intn(4) == 0 {
		return scalar()
	}
	ws := func() string { return []string{"", " ", "\n  ", "\t", "\r\n"}[rng.Intn(5)] }
	var sb strings.Builder
	if rng.Intn(2) == 0 {
		sb.WriteString("[" + ws())
		for i, n := 0, rng.Intn(4); i < n; i++ {
			if i > 0 {
				sb.WriteString("," + ws())
			}
			sb.WriteString(randomDupDoc(rng, depth+1))
		}
		sb.WriteString(ws() + "]")
		return sb.String()
	}
	sb.WriteString("{" + ws())
	n := rng.Intn(5)
	if rng.Intn(8) == 0 {
		n = dupKeysLinear + rng.Intn(8)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString("," + ws())
		}
		k := keys[rng.Intn(len(keys))]
		if n > 8 && rng.Intn(10) > 0 {
			k = fmt.Sprintf(`"k%d"`, rng.Intn(4*n))
		}
		sb.WriteString(k + ws() + ":" + ws() + randomDupDoc(rng, depth+1))
	}
	sb.WriteString(ws() + "}")
	return sb.String()
}

// breakJSON damages a document in one of the ways a file can be broken:
// cut short, a byte dropped, a byte inserted, a byte replaced, trailing
// bytes.
func breakJSON(rng *rand.Rand, doc string) string {
	if doc == "" {
		return "{"
	}
	junk := []string{"{", "}", "[", "]", ",", ":", `"`, `\`, "\x00", "\x1f", "x", "0", "-", ".", "e", "\xff", " ", "\n", "tru", "nul"}
	i := rng.Intn(len(doc))
	switch rng.Intn(5) {
	case 0:
		return doc[:i]
	case 1:
		return doc[:i] + doc[i+1:]
	case 2:
		return doc[:i] + junk[rng.Intn(len(junk))] + doc[i:]
	case 3:
		return doc[:i] + junk[rng.Intn(len(junk))] + doc[i+1:]
	default:
		return doc + junk[rng.Intn(len(junk))]
	}
}

// TestScanDocumentMatchesTwoWalks holds scanDocument to the check and the
// duplicate-key pre-check it merges, on documents with duplicated keys at
// every depth, keys made equal by escapes, objects past the linear scan,
// and broken documents of every kind; its verdict on validity is also
// encoding/json's.
func TestScanDocumentMatchesTwoWalks(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	docs := []string{
		``, ` `, `{`, `}`, `[`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"b":1,"b":2}}`,
		`[{"a":1},{"a":1}]`, `{"a":[{"b":1},{"b":{"c":1,"c":2}}]}`, `{"a\"":1,"a":2}`, `{"a":1}x`, `{"a":1} `,
		`{"a" 1}`, `{"a":1,}`, `[1,]`, `{,}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":"\x"}`, `{"a":"\u12"}`,
		"{\"a\":\"\x01\"}", `{"a":tru}`, `{"a":nulll}`, `{1:2}`, `"\ud800"`, `{"\ud800":1,"\ud800":2}`,
		strings.Repeat("[", maxScanDepth) + strings.Repeat("]", maxScanDepth),
		strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1),
		strings.Repeat(`{"a":`, 50) + "1" + strings.Repeat("}", 50),
		strings.Repeat(`{"a":1,"a":`, 50) + "1" + strings.Repeat("}", 50),
	}
	// Under the race detector a fifth of them (see raceDetector).
	n, least := 20000, 1000
	if raceDetector {
		n, least = 4000, 200
	}
	for i := 0; i < n; i++ {
		d := randomDupDoc(rng, 0)
		docs = append(docs, d)
		if i%2 == 0 {
			docs = append(docs, breakJSON(rng, d))
		}
	}
	dups, invalid := 0, 0
	for _, d := range docs {
		b := []byte(d)
		gs, ge, gok, gdup := scanDocument(b)
		ws, we, wok, wdup := scanDocumentOracle(b)
		if gs != ws || ge != we || gok != wok || gdup != wdup {
			t.Fatalf("%q: scanDocument %d %d %v %v, the two walks %d %d %v %v", d, gs, ge, gok, gdup, ws, we, wok, wdup)
		}
		if len(d) < 1000 && gok != json.Valid(b) {
			t.Fatalf("%q: scanDocument says valid %v, encoding/json %v", d, gok, json.Valid(b))
		}
		if gdup {
			dups++
		}
		if !gok {
			invalid++
		}
	}
	if dups < least || invalid < least || len(docs)-dups-invalid < least {
		t.Fatalf("only %d documents with duplicates, %d invalid, of %d", dups, invalid, len(docs))
	}
}

func FuzzScanDocument(f *testing.F) {
	f.Add([]byte(`{"a": {"b": 1, "b": 2}}`))
	f.Add([]byte(`[{"a":1,"\u0061":2}]`))
	f.Add([]byte(`{"a":1,}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		gs, ge, gok, gdup := scanDocument(b)
		ws, we, wok, wdup := scanDocumentOracle(b)
		if gs != ws || ge != we || gok != wok || gdup != wdup {
			t.Fatalf("%q: scanDocument %d %d %v %v, the two walks %d %d %v %v", b, gs, ge, gok, gdup, ws, we, wok, wdup)
		}
	})
}

// Load finds duplicated keys in the walk that checks each file: the
// same snapshot and the same warnings as when the files were checked
// and searched for duplicates in two walks, for files with duplicates
// at several depths (some made by escapes, some only look-alikes the
// precise walk clears), files without, files of a type decoded the
// general way (metrics.json) and broken files.
func TestLoadDuplicateKeysOneWalk(t *testing.T) {
	files := map[string]string{
		StateFile:       `{"cycle_count": 3, "cycle_count": 4, "domain_last_run": {"d1": "2026-03-01T00:00:00Z", "d\u0031": "2026-03-02T00:00:00Z"}, "decision_log": [{"cycle": 1, "action": "execute", "scores": {"a": 1, "a": 2}}]}`,
		OutcomesFile:    `{"schema_version": "1.0.0", "entries": [{"cycle_id": 1, "domain": "d0", "x": {"y": 1, "y": 2}}, {"cycle_id": 2, "cycle_id": 3}]}`,
		MemosFile:       `{"schema_version": "1.1.0", "interventions": [{"domain": "d1", "delta": 1, "delta": 2}], "note": {"a\"": 1, "a": 2}}`,
		ConfidenceFile:  `{"d0": 0.5, "d1": 0.5}`,
		SkillGapsFile:   `{"schema_version": "1.0.0", "gaps": [{"id": "g1", "id": "g2"}]}`,
		MetricsFile:     `{"schema_version": "1.0.0", "counters": {"total_cycles": 1, "total_cycles": 2}}`,
		EpisodesFile:    `{"schema_version": "1.0.0", "episodes": [{"id": "EP-1", "lessons": ["a", "a"]}]}`,
		ReflectionsFile: `{"schema_version": "1.0.0", "reflections": [{"cycle": 1,}]}`,
	}
	root := t.TempDir()
	evolve := filepath.Join(root, "agent", "state", "evolve")
	if err := os.MkdirAll(evolve, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(evolve, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := New(root)
	got, gerr := s.Load()
	scanDocumentOff = true
	want, werr := s.Load()
	scanDocumentOff = false
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("Load: %v, with two walks %v", gerr, werr)
	}
	if !reflect.DeepEqual(got.Warnings, want.Warnings) {
		t.Fatalf("warnings\n%s\nwith two walks\n%s", strings.Join(got.Warnings, "\n"), strings.Join(want.Warnings, "\n"))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the snapshot differs from the one read with two walks")
	}
	joined := strings.Join(got.Warnings, "\n")
	for _, p := range []string{"state.json: /cycle_count", "state.json: /domain_last_run/d1", "state.json: /decision_log/0/scores/a",
		"outcomes.json: /entries/0/x/y", "outcomes.json: /entries/1/cycle_id", "memos.json: /interventions/0/delta",
		"skill_gaps.json: /gaps/0/id", "metrics.json: /counters/total_cycles"} {
		if !strings.Contains(joined, p+": the key appears more than once") {
			t.Errorf("no warning for %s in\n%s", p, joined)
		}
	}
	for _, p := range []string{"memos.json: /note", "confidence.json", "episodes.json"} {
		if strings.Contains(joined, p) {
			t.Errorf("a warning for %s in\n%s", p, joined)
		}
	}
	if len(got.Corrupt) != 1 || got.Corrupt[0].File != ReflectionsFile {
		t.Errorf("corrupt: %v", got.Corrupt)
	}
}

// An object of a thousand keys — a state file of a thousand domains — is
// checked for duplicates without a set of its keys: scanDocument
// allocates nothing once its key stack has grown, and still finds the
// one key written twice.
func TestScanDocumentLargeObjectAllocatesNothing(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"domains": {`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, `"d%d": {"score": 0.5, "history": [0.5]}`, i)
	}
	sb.WriteString(`}}`)
	doc := []byte(sb.String())
	if _, _, ok, dup := scanDocument(doc); !ok || dup {
		t.Fatalf("ok %v, dup %v for a document without duplicates", ok, dup)
	}
	twice := []byte(strings.Replace(sb.String(), `"d999"`, `"d17"`, 1))
	if _, _, ok, dup := scanDocument(twice); !ok || !dup {
		t.Fatalf("ok %v, dup %v for a document naming d17 twice", ok, dup)
	}
	if raceDetector {
		t.Skip("allocation counts vary at random under -race (sync.Pool drops items)")
	}
	if a := testing.AllocsPerRun(20, func() { _, _, _, _ = scanDocument(doc) }); a != 0 {
		t.Errorf("scanDocument allocates %v times for a 1,000-key object", a)
	}
}
