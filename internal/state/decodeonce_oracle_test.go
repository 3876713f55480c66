package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// unmarshalKeepTwice is the decoder unmarshalKeep replaced, kept word for
// word as the oracle of the differential tests below: it decodes the
// object into v, then a second time into a map to find the keys v does
// not declare.
func unmarshalKeepTwice(b []byte, v any, extra *Extra) error {
	if isNull(b) {
		return errNotAnObject
	}
	if err := json.Unmarshal(b, v); err != nil {
		keys, vals, merr := objectMembers(b)
		if merr != nil {
			return err
		}
		decodeFields(keys, vals, v, extra)
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	fields := jsonFields(reflect.TypeOf(v).Elem())
	for k := range m {
		if _, known := fields[foldKey(k)]; known {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		m = nil
	}
	*extra = m
	return nil
}

// withOracle runs f with every object decoded by the oracle (the
// checked path of decodeFile included, which would otherwise bypass it).
func withOracle(f func()) {
	saved, savedChecked := unmarshalKeep, checkedDecodeOff
	unmarshalKeep, checkedDecodeOff = unmarshalKeepTwice, true
	defer func() { unmarshalKeep, checkedDecodeOff = saved, savedChecked }()
	f()
}

// fileModels decodes each state file by name into its model.
var fileModels = map[string]func([]byte) (any, error){
	StateFile: decoder[State](), GoalsFile: decoder[Goals](), ActionQueueFile: decoder[ActionQueue](),
	SkillGapsFile: decoder[SkillGaps](), MetricsFile: decoder[Metrics](), CostLedgerFile: decoder[CostLedger](),
	OutcomesFile: decoder[Outcomes](), MemosFile: decoder[Memos](), EpisodesFile: decoder[Episodes](),
	PrinciplesFile: decoder[Principles](), ReflectionsFile: decoder[Reflections](), CascadesFile: decoder[Cascades](),
	CheckpointsFile: decoder[Checkpoints](), ConfidenceFile: decoder[Confidence](),
	"lens.json": decoder[Lens](), "lens_changelog.json": decoder[LensChangelog](),
	"rotation_cursor.json": decoder[RotationCursor](),
}

// every model, for documents of no known file (fuzz inputs, test docs).
func allModels() []func([]byte) (any, error) {
	names := make([]string, 0, len(fileModels))
	for n := range fileModels {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]func([]byte) (any, error), 0, len(names)+8)
	for _, n := range names {
		out = append(out, fileModels[n])
	}
	return append(out, decoder[Goal](), decoder[Intervention](), decoder[Action](), decoder[Gap](),
		decoder[Counters](), decoder[CostEntry](), decoder[Outcome](), decoder[DecisionEntry](), decoder[LensItem]())
}

// sameAsOracle decodes b with dec by both decoders and fails unless the
// results agree: the error, the value (unexported fields, Extra and the
// entries' remembered bytes included), the encoding, the warnings about
// values not taken as written, and the encoding after a change.
func sameAsOracle(t *testing.T, name string, dec func([]byte) (any, error), b []byte) {
	t.Helper()
	got, gotErr := dec(b)
	var want any
	var wantErr error
	withOracle(func() { want, wantErr = dec(b) })
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: error %v, the oracle's %v\n%s", name, gotErr, wantErr, b)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded\n%#v\nthe oracle decoded\n%#v\nfrom %s", name, got, want, b)
	}
	gb, gerr := json.Marshal(got)
	wb, werr := json.Marshal(want)
	if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: writes\n%s (%v)\nthe oracle's\n%s (%v)", name, gb, gerr, wb, werr)
	}
	if gw, ww := looseWarnings(got, 100), looseWarnings(want, 100); !reflect.DeepEqual(gw, ww) {
		t.Fatalf("%s: warnings %q, the oracle's %q", name, gw, ww)
	}
}

// decodeOnceCorpus is every fixture file of the original project and of
// this package's testdata, by file name.
func decodeOnceCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var paths []string
	for _, dir := range []string{fixturesDir, "testdata"} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return nil
		})
	}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4<<20 {
			out[p] = b
		}
	}
	return out
}

// Every fixture decodes, writes and warns exactly as with the decoder
// that read each object twice, through its own model and through every
// other (a file's nested objects are other models' top levels).
func TestDecodeOnceMatchesOracleOnFixtures(t *testing.T) {
	corpus := decodeOnceCorpus(t)
	if len(corpus) == 0 {
		t.Skip("no fixtures")
	}
	n := 0
	for p, b := range corpus {
		docs := [][]byte{b}
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == "fuzz" {
			docs = fuzzCorpusValues(b)
		}
		for _, doc := range docs {
			if dec, ok := fileModels[filepath.Base(p)]; ok {
				sameAsOracle(t, p, dec, doc)
				n++
			}
			for i, dec := range allModels() {
				sameAsOracle(t, fmt.Sprintf("%s (model %d)", p, i), dec, doc)
			}
		}
	}
	for _, tc := range extraKeyDocs {
		sameAsOracle(t, tc.name, tc.decode, []byte(tc.doc))
		n++
	}
	if n < 20 {
		t.Fatalf("only %d documents compared", n)
	}
}

// fuzzCorpusValues reads the []byte values of a Go fuzz corpus file.
func fuzzCorpusValues(b []byte) [][]byte {
	var out [][]byte
	for _, line := range splitLines(b) {
		var s string
		if _, err := fmt.Sscanf(line, "[]byte(%q)", &s); err == nil {
			out = append(out, []byte(s))
		}
	}
	return out
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

// FuzzDecodeOnceMatchesOracle mutates the fixtures and the documents of
// the other tests: whatever the bytes, every model decodes them as the
// oracle does.
func FuzzDecodeOnceMatchesOracle(f *testing.F) {
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	for _, tc := range extraKeyDocs {
		f.Add([]byte(tc.doc))
	}
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, dec := range allModels() {
			sameAsOracle(t, fmt.Sprintf("model %d", i), dec, b)
		}
	})
}

// decodeOnceEdgeDocs are the shapes where decoding member by member could
// part from decoding the whole object: duplicate and case-variant keys,
// escaped and invalid UTF-8 keys, wrong types, nulls, deep nesting,
// numbers at the edges of their types, trailing bytes.
var decodeOnceEdgeDocs = []string{
	`{"id":"a","ID":"b","Id":null,"x":1,"x":2,"X":3}`,
	`{"goals":[{"id":"g","title":"t"}],"goals":[{"id":"h"}],"GOALS":null}`,
	`{"goals":[{"id":"g","progress":0.5},{"id":"h","progress":"0.5"},"s",null,7]}`,
	`{"\u0069d":"esc","\ud800":"lone surrogate","caf\u00e9":1,"\u212aey":2}`,
	"{\"id\":\"\xff\xfe\",\"\xffkey\":\"\xc3\"}",
	`{"cycle_id":"#12","timestamp":"t","chain":null,"estimated_usd":"0.5"}`,
	`{"cycle_id":9223372036854775808,"estimated_usd":1e400,"synthetic":"true"}`,
	`{"cycle_id":-0,"estimated_usd":-0.0,"synthetic":false,"chain":[]}`,
	`{"entries":[{"cycle_id":1,"result_type":"x","pr_number":null,"quality_multiplier":1e-400}]}`,
	`{"entries":{},"schema_version":1}`,
	`{"interventions":[{"domain":"d","delta":1}],"interventions":[]}`,
	`{"history":[{"cycle":1},{"cycle":"2"}],"memos":[{"cycle":3}],"last_memo":{"a":[{}]}}`,
	`{"domain_last_run":{"a":"x","a":"y"},"decision_log":[{"cycle":1,"chain_executed":null}]}`,
	`{"focus_items":[{"item":"a","confidence":"high"}],"evidence":[1,"two",{"3":null}],"x":[[[[[]]]]]}`,
	`{"a":1}   `, `{"a":1} x`, ` {} `, `{}`, `[]`, `null`, `"s"`, `1`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a" 1}`,
	`{"a":tru}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, "{\"a\":\"\x01\"}", `{"a":"\x"}`,
	`{"a":"\u12"}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b":1,}}`, `{"a":"\"\\\/\b\f\n\r\t\u00e9"}`,
	"{\"id\":\"tab\tin\"}", `{"id":"x"}` + "\n\t\r ",
	// Lists and maps of scalars, decoded without encoding/json when every
	// element is one decodeScalar reads: escapes, nulls, numbers out of
	// range, elements of another type, duplicate and escaped keys, a list
	// or a map given twice.
	`{"decision_log":[{"cycle":1,"scores":{"a":1,"b":null,"a":2,"c":1e400},"chain_executed":["x",null,"y\u00e9"],"skill_gaps_detected":[1,"x"]}]}`,
	`{"contrarian_checks":["a",null,"b"],"contrarian_checks":["c"],"domain_last_run":{"a":"x"},"domain_last_run":{"b":"y"},"counted_prs":[1,2.5],"alert_streaks":{"a":9223372036854775807,"b":-1}}`,
	`{"cycle_range":[1,null,3],"domains_selected":{"a":1,"a":null},"confidence_snapshot":{"x":-0,"y":1.5e-7},"lessons":[],"key_decisions":null}`,
	`{"counted_prs":[9223372036854775808],"alert_streaks":{"\u0061":1,"a":2},"recent_alerts":[["a"],null,[]],"contrarian_checks":{}}`,
	`{"scores":{"a":"1"},"chain_executed":"x","domain_last_run":[],"cycle_range":[true],"lessons":["\ud800",""]}`,
	`{"domain_last_run":{"a":"x"},"domain_last_run":{"b":"y"},"contrarian_checks":["a",null,"b"],"contrarian_checks":["c"]}`,
	`{"domains_selected":{"a":1},"domains_selected":{"b":2},"lessons":["a","b"],"lessons":[null]}`,
}
