package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The tests below hold Intervention.encodeFast to the generic encoder it
// stands in for (readEntry.encode), kept as the oracle.

// withGenericInterventions runs f with every intervention written by the
// generic encoder.
func withGenericInterventions(f func()) {
	saved := interventionFastOff
	interventionFastOff = true
	defer func() { interventionFastOff = saved }()
	f()
}

// countDown is what a cycle that scored does to every intervention
// (reflect.CountDownInterventions), without removing the expired ones.
func countDown(m *Memos) {
	for i := range m.Interventions {
		m.Interventions[i].AppliedCount++
		m.Interventions[i].ExpiresAfterCycles--
	}
}

// thousandMemos is memos.json as a thousand-domain project holds it: an
// indented file of a thousand starvation interventions, as written by
// the program.
func thousandMemos(tb testing.TB) []byte {
	tb.Helper()
	var m Memos
	for i := 0; i < 1000; i++ {
		m.Interventions = append(m.Interventions, Intervention{
			Domain: fmt.Sprintf("d%d", i), Delta: 1, Type: "starvation",
			Reason: "No executions in last 10 cycles", CreatedAtCycle: 10, ExpiresAfterCycles: 2, AppliedCount: 1,
		})
	}
	b, err := encodeJSON(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// benchMemosFiles is the thousand-domain memos.json, and the one of the
// benchmark project of 1,000 domains when OODA_BENCH_LARGE names one.
func benchMemosFiles(tb testing.TB) map[string][]byte {
	files := map[string][]byte{"generated": thousandMemos(tb)}
	if dir := benchLargeEvolve(); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, MemosFile)); err == nil {
			files["d-bin-large"] = b
		}
	}
	return files
}

// encodeBoth writes m (read from b, then changed by change) as the
// program does and as the generic encoder does, each from its own
// decoding of b.
func encodeBoth(t *testing.T, b []byte, change func(*Memos)) (got, want []byte, gotErr, wantErr error) {
	t.Helper()
	var cur, old Memos
	gotErr = decodeFile(bytes.Clone(b), &cur)
	withGenericInterventions(func() { wantErr = decodeFile(bytes.Clone(b), &old) })
	if gotErr != nil || wantErr != nil {
		return nil, nil, gotErr, wantErr
	}
	change(&cur)
	change(&old)
	got, gotErr = encodeJSON(cur)
	withGenericInterventions(func() { want, wantErr = encodeJSON(old) })
	return
}

func TestInterventionFastSameAsGenericOnProjectFiles(t *testing.T) {
	changes := map[string]func(*Memos){
		"unchanged":  func(*Memos) {},
		"counted":    countDown,
		"counted x2": func(m *Memos) { countDown(m); countDown(m) },
		"new ones": func(m *Memos) {
			countDown(m)
			m.Interventions = append(m.Interventions, Intervention{Domain: "d1", Delta: -10, Type: "monopoly_breaker", CreatedAtCycle: 11, ExpiresAfterCycles: 3})
		},
		"reason dropped": func(m *Memos) { m.Interventions[3].Reason = "" },
	}
	for name, b := range benchMemosFiles(t) {
		for cname, change := range changes {
			got, want, gotErr, wantErr := encodeBoth(t, b, change)
			if gotErr != nil || wantErr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: writes %d bytes (%v), the generic encoder %d (%v)", name, cname, len(got), gotErr, len(want), wantErr)
			}
		}
		// The fast path is the one taken: every entry of the file.
		var m Memos
		if err := decodeFile(bytes.Clone(b), &m); err != nil {
			t.Fatal(err)
		}
		countDown(&m)
		for i := range m.Interventions {
			if _, ok := m.Interventions[i].encodeFast(); !ok {
				t.Fatalf("%s: interventions[%d] is left to the generic encoder", name, i)
			}
		}
	}
}

// ivSpellings are ways a file may spell an intervention's members: each
// is a key (as written) and a value.
var ivSpellings = []struct{ key, val string }{
	{`"domain"`, `"d7"`}, {`"domain"`, `"caf\u00e9 <b>"`}, {`"domain"`, `"é\"x"`}, {`"domain"`, `null`},
	{`"Domain"`, `"d8"`}, {`"dom\u0061in"`, `"d9"`},
	{`"delta"`, `-10.0`}, {`"delta"`, `1`}, {`"delta"`, `1e2`}, {`"delta"`, `-0`}, {`"delta"`, `0.0000001`}, {`"delta"`, `null`},
	{`"type"`, `"starvation"`}, {`"type"`, `""`}, {`"type"`, `null`}, {`"TYPE"`, `"x"`},
	{`"reason"`, `"No executions"`}, {`"reason"`, `""`}, {`"reason"`, "\"tab\\tin\""},
	{`"created_at_cycle"`, `10`}, {`"created_at_cycle"`, `0`}, {`"created_at_cycle"`, `null`},
	{`"expires_after_cycles"`, `2`}, {`"expires_after_cycles"`, `1`},
	{`"applied_count"`, `0`}, {`"applied_count"`, `7`},
	{`"note"`, `{"a": [1, 2]}`}, {`"extra"`, `"kept"`},
	// Values encoding/json does not read into the field as written.
	{`"domain"`, `5`}, {`"domain"`, `"é"`}, {`"reason"`, `"\u00e9"`}, {`"type"`, `true`},
	{`"delta"`, `"x"`}, {`"delta"`, `1e400`}, {`"delta"`, `-1.5e-3`},
	{`"applied_count"`, `1.5`}, {`"applied_count"`, `1e2`}, {`"applied_count"`, `99999999999999999999`},
	{`"created_at_cycle"`, `-3`}, {`"expires_after_cycles"`, `[]`},
}

// randomIntervention is an object of random members of ivSpellings, in
// random order, keys repeated at times, with random blanks.
func randomIntervention(rng *rand.Rand) string {
	n := rng.Intn(9)
	var parts []string
	blank := func() string { return []string{"", " ", "\n  "}[rng.Intn(3)] }
	for i := 0; i < n; i++ {
		s := ivSpellings[rng.Intn(len(ivSpellings))]
		parts = append(parts, blank()+s.key+blank()+":"+blank()+s.val+blank())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// ivChanges are changes a cycle, or a bug, may make to an intervention.
var ivChanges = []func(*Intervention){
	func(iv *Intervention) {},
	func(iv *Intervention) { iv.AppliedCount++; iv.ExpiresAfterCycles-- },
	func(iv *Intervention) { iv.Delta = -iv.Delta },
	func(iv *Intervention) { iv.Delta = math.Copysign(0, -1) },
	func(iv *Intervention) { iv.Delta = 1e-7 },
	func(iv *Intervention) { iv.Delta = 1e21 },
	func(iv *Intervention) { iv.Delta = 2.5 },
	func(iv *Intervention) { iv.Delta = math.NaN() },
	func(iv *Intervention) { iv.Type = "" },
	func(iv *Intervention) { iv.Type = "monopoly_breaker" },
	func(iv *Intervention) { iv.Reason = "<&> \u2028" },
	func(iv *Intervention) { iv.Reason = "" },
	func(iv *Intervention) { iv.Domain = "d1" },
	func(iv *Intervention) { iv.CreatedAtCycle = 0 },
	func(iv *Intervention) { iv.Extra = Extra{"note": json.RawMessage(`1`)} },
	func(iv *Intervention) { delete(iv.Extra, "note") },
	func(iv *Intervention) { iv.read = nil },
}

func TestInterventionFastSameAsGenericOnMutatedEntries(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	fast, generic := 0, 0
	for i := 0; i < 20000; i++ {
		entry := randomIntervention(rng)
		doc := []byte(`{"interventions":[` + entry + `]}`)
		var c1, c2 = rng.Intn(len(ivChanges)), rng.Intn(len(ivChanges))
		change := func(m *Memos) {
			if len(m.Interventions) == 1 {
				ivChanges[c1](&m.Interventions[0])
				ivChanges[c2](&m.Interventions[0])
			}
		}
		// Read both as a file (checked bytes) and as a value alone.
		got, want, gotErr, wantErr := encodeBoth(t, doc, change)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%s, changes %d %d: writes\n%s (%v)\nthe generic encoder\n%s (%v)", entry, c1, c2, got, gotErr, want, wantErr)
		}
		var iv, ov Intervention
		err := json.Unmarshal([]byte(entry), &iv)
		var oerr error
		withGenericInterventions(func() { oerr = json.Unmarshal([]byte(entry), &ov) })
		if fmt.Sprint(err) != fmt.Sprint(oerr) {
			t.Fatalf("%s: %v, the generic decoding %v", entry, err, oerr)
		}
		if err != nil {
			continue
		}
		ivChanges[c1](&iv)
		ivChanges[c2](&iv)
		ivChanges[c1](&ov)
		ivChanges[c2](&ov)
		if _, ok := iv.encodeFast(); ok {
			fast++
		} else {
			generic++
		}
		g, gErr := json.Marshal(iv)
		var w []byte
		var wErr error
		withGenericInterventions(func() { w, wErr = json.Marshal(ov) })
		if fmt.Sprint(gErr) != fmt.Sprint(wErr) || !bytes.Equal(g, w) {
			t.Fatalf("%s, changes %d %d: marshals\n%s (%v)\nthe generic encoder\n%s (%v)", entry, c1, c2, g, gErr, w, wErr)
		}
	}
	// Both paths are exercised: the generated entries are not all of one
	// kind.
	if fast < 1000 || generic < 1000 {
		t.Fatalf("fast path %d times, generic %d times", fast, generic)
	}
}

func TestInterventionFastFallsBack(t *testing.T) {
	cases := map[string]struct {
		entry  string
		change func(*Intervention)
	}{
		"case variant key":  {`{"Domain":"d1","delta":1}`, func(iv *Intervention) { iv.AppliedCount++ }},
		"escaped key":       {`{"dom\u0061in":"d1","delta":1}`, func(iv *Intervention) { iv.AppliedCount++ }},
		"key twice":         {`{"delta":1,"delta":2}`, func(iv *Intervention) { iv.AppliedCount++ }},
		"unknown key":       {`{"domain":"d1","note":1}`, func(iv *Intervention) { iv.AppliedCount++ }},
		"escaped string":    {`{"domain":"d1"}`, func(iv *Intervention) { iv.Reason = "tab\there" }},
		"exponent float":    {`{"domain":"d1"}`, func(iv *Intervention) { iv.Delta = 1e-9 }},
		"NaN":               {`{"domain":"d1"}`, func(iv *Intervention) { iv.Delta = math.NaN() }},
		"unknown key added": {`{"domain":"d1"}`, func(iv *Intervention) { iv.Extra = Extra{"x": json.RawMessage(`1`)} }},
	}
	for name, c := range cases {
		var iv Intervention
		if err := json.Unmarshal([]byte(c.entry), &iv); err != nil {
			t.Fatal(name, err)
		}
		c.change(&iv)
		if b, ok := iv.encodeFast(); ok {
			t.Errorf("%s: the fast path wrote %s", name, b)
		}
	}
}

// BenchmarkSaveMemos1000 encodes memos.json of a thousand-domain project
// after a cycle counted its interventions down, as SaveMemos does.
func BenchmarkSaveMemos1000(b *testing.B) {
	for name, file := range benchMemosFiles(b) {
		dir := b.TempDir()
		path := filepath.Join(dir, "memos.json")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			b.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var m Memos
		if err := decodeFile(raw, &m); err != nil {
			b.Fatal(err)
		}
		countDown(&m)
		for _, generic := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/generic=%v", name, generic), func(b *testing.B) {
				saved := interventionFastOff
				interventionFastOff = generic
				defer func() { interventionFastOff = saved }()
				for b.Loop() {
					if _, err := encodeJSON(m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLoadMemos1000 decodes memos.json of a thousand-domain project.
func BenchmarkLoadMemos1000(b *testing.B) {
	for name, file := range benchMemosFiles(b) {
		for _, generic := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/generic=%v", name, generic), func(b *testing.B) {
				saved := interventionFastOff
				interventionFastOff = generic
				defer func() { interventionFastOff = saved }()
				for b.Loop() {
					var m Memos
					if err := decodeFile(bytes.Clone(file), &m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestRememberInterventionSameAsGeneric holds the entry an intervention
// keeps of what it was read from to the one rememberEntryIn keeps, for
// entries with and without unknown keys, read as a file or alone.
func TestRememberInterventionSameAsGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 5000; i++ {
		entry := randomIntervention(rng)
		for _, checked := range []bool{false, true} {
			var iv, ov Intervention
			err := iv.decode([]byte(entry), checked)
			var oerr error
			withGenericInterventions(func() { oerr = ov.decode([]byte(entry), checked) })
			if fmt.Sprint(err) != fmt.Sprint(oerr) {
				t.Fatalf("%s: %v, the generic decoding %v", entry, err, oerr)
			}
			if !reflect.DeepEqual(iv, ov) {
				t.Fatalf("%s (checked %v): keeps\n%#v\nthe generic decoding\n%#v", entry, checked, iv.read, ov.read)
			}
		}
	}
}

// TestMemberWriterKeysAsJSONMarshal holds the keys memberWriter writes
// itself to json.Marshal's, which it calls for any other key.
func TestMemberWriterKeysAsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	alphabet := []rune{'a', 'Z', '0', ' ', '"', '\\', '<', '>', '&', '\n', '\x00', '\x7f', 'é', '\u2028', '/', '\'', '~', '{'}
	plain := 0
	for i := 0; i < 20000; i++ {
		var sb strings.Builder
		for n := rng.Intn(6); n > 0; n-- {
			sb.WriteRune(alphabet[rng.Intn(len(alphabet))])
		}
		k := sb.String()
		if i < 256 {
			k = string([]byte{byte(i)})
		}
		var buf bytes.Buffer
		first := true
		memberWriter(&buf, &first)(k, []byte("1"))
		want, _ := json.Marshal(k)
		if got := buf.String(); got != string(want)+":1" {
			t.Fatalf("key %q: writes %s, json.Marshal %s", k, got, want)
		}
		if plainKeyJSON(k) {
			plain++
		}
	}
	if plain < 1000 {
		t.Fatalf("only %d keys written without json.Marshal", plain)
	}
}
