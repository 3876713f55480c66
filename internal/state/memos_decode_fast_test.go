package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// The tests below hold Intervention.decodeFast to the generic decoder,
// and the interventions encodeSpliced is handed already encoded
// (encodedInterventions) to the encoder of entries and to the
// compact-then-indent path, each kept as the oracle.

// decodeBoth decodes the document b as a file both ways.
func decodeBoth(b []byte) (fast, generic Memos, fastErr, genericErr error) {
	fastErr = decodeFile(bytes.Clone(b), &fast)
	withGenericInterventions(func() { genericErr = decodeFile(bytes.Clone(b), &generic) })
	return
}

func TestInterventionDecodeFastSameAsGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	taken, left := 0, 0
	for i := 0; i < 20000; i++ {
		entry := randomIntervention(rng)
		doc := []byte(`{"interventions":[` + entry + `, {"domain":"d1","delta":1}]}`)
		fast, generic, ferr, gerr := decodeBoth(doc)
		if fmt.Sprint(ferr) != fmt.Sprint(gerr) {
			t.Fatalf("%s: %v, the generic decoder %v", entry, ferr, gerr)
		}
		if !reflect.DeepEqual(fast, generic) {
			t.Fatalf("%s: reads\n%#v\nthe generic decoder\n%#v", entry, fast.Interventions, generic.Interventions)
		}
		var iv Intervention
		if iv.decodeFast([]byte(entry[skipSpace([]byte(entry), 0):])) {
			taken++
		} else {
			left++
		}
	}
	if taken < 1000 || left < 1000 {
		t.Fatalf("decodeFast took %d entries and left %d", taken, left)
	}
}

func TestInterventionDecodeFastLeavesTheRest(t *testing.T) {
	for _, entry := range []string{
		`[]`, `"x"`, `null`,
		`{"Domain":"d1"}`, `{"dom\u0061in":"d1"}`, `{"domain":"d1","domain":"d2"}`, `{"domain":"d1","note":1}`,
		`{"domain":null}`, `{"domain":5}`, `{"domain":"caf\u00e9"}`, `{"domain":"é"}`, `{"domain":"a\"b"}`, "{\"domain\":\"\x7f\"}",
		`{"delta":"1"}`, `{"delta":null}`, `{"delta":1e400}`, `{"delta":true}`,
		`{"applied_count":1.0}`, `{"applied_count":1e2}`, `{"applied_count":99999999999999999999}`, `{"applied_count":"1"}`, `{"applied_count":null}`,
		`{"type":["starvation"]}`, `{"reason":{"a":1}}`,
	} {
		var iv Intervention
		if iv.decodeFast([]byte(entry)) {
			t.Errorf("%s: read by decodeFast as %+v", entry, iv)
		}
		if !reflect.DeepEqual(iv, Intervention{}) {
			t.Errorf("%s: decodeFast set %+v", entry, iv)
		}
	}
	// What it takes, read as the generic decoder reads it.
	for _, entry := range []string{
		`{}`, `{"delta":-0}`, `{"delta":1E5,"applied_count":-0}`, `{"applied_count":-7,"domain":""}`,
		`{"reason":"","type":"","domain":"d1","delta":0.0000001,"created_at_cycle":9223372036854775807}`,
	} {
		var iv, ov Intervention
		if !iv.decodeFast([]byte(entry)) {
			t.Errorf("%s: left to the generic decoder", entry)
			continue
		}
		var err error
		withGenericInterventions(func() { err = ov.decode([]byte(entry), true) })
		if err != nil || !reflect.DeepEqual(iv, ov) || math.Signbit(iv.Delta) != math.Signbit(ov.Delta) {
			t.Errorf("%s: reads %+v, the generic decoder %+v (%v)", entry, iv, ov, err)
		}
	}
}

// encodeAll writes m (read from b, then changed by change) as the
// program does, and with every fast path off: the interventions by the
// generic encoder, the document encoded compact, checked and indented.
func encodeAll(t *testing.T, b []byte, change func(*Memos)) (got, want []byte, gotErr, wantErr error) {
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
	withGenericInterventions(func() {
		saved, savedDoc := spliceOff, encodeFastOff
		spliceOff, encodeFastOff = true, true
		defer func() { spliceOff, encodeFastOff = saved, savedDoc }()
		want, wantErr = encodeJSON(old)
	})
	return
}

func TestEncodedInterventionsSameAsOracles(t *testing.T) {
	files := benchMemosFiles(t)
	// A file whose entries are not all as the program writes them, and
	// one with unknown keys at its own level and in an entry.
	files["spelled otherwise"] = []byte(`{"interventions":[{"domain":"d1","delta":1.0,"applied_count":0},` +
		`{"applied_count":2,"domain":"d2","delta":-10},{"domain":"d3", "delta" : 1 ,"type":"starvation"}],"history":[]}`)
	files["unknown keys"] = []byte(`{"interventions":[{"domain":"d1","delta":1,"applied_count":0,"note":[1]}],"x":{"y":1}}`)
	files["entry with unknown key"] = []byte(`{"interventions":[{"domain":"d1","delta":1,"applied_count":0,"note":[1]},{"domain":"d2","delta":1}]}`)
	files["legacy"] = []byte(`{"schema_version":"1.0.0","memos":[{"cycle":1,"message":"m"}]}`)
	changes := map[string]func(*Memos){
		"unchanged": func(*Memos) {},
		"counted":   countDown,
		"new and dropped": func(m *Memos) {
			countDown(m)
			if len(m.Interventions) > 1 {
				m.Interventions = m.Interventions[1:]
			}
			m.Interventions = append(m.Interventions, Intervention{Domain: "d1", Delta: -10, Type: "monopoly_breaker", CreatedAtCycle: 11, ExpiresAfterCycles: 3})
		},
		"strings changed": func(m *Memos) {
			countDown(m)
			for i := range m.Interventions {
				m.Interventions[i].Reason = []string{"", "r", "tab\there", "é"}[i%4]
				m.Interventions[i].Type = []string{"t", ""}[i%2]
			}
		},
		"delta changed": func(m *Memos) {
			for i := range m.Interventions {
				m.Interventions[i].Delta = []float64{0.5, 1e-9, math.Copysign(0, -1), 1e21, 3}[i%5]
			}
		},
		"none":  func(m *Memos) { m.Interventions = nil },
		"first": func(m *Memos) { m.Interventions = append(m.Interventions, Intervention{Domain: "new"}) },
	}
	for name, b := range files {
		for cname, change := range changes {
			got, want, gotErr, wantErr := encodeAll(t, b, change)
			if gotErr != nil || wantErr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: writes\n%s (%v)\nthe oracle\n%s (%v)", name, cname, got, gotErr, want, wantErr)
			}
			g2, w2, gotErr, wantErr := encodeBoth(t, b, change)
			if gotErr != nil || wantErr != nil || !bytes.Equal(g2, w2) || !bytes.Equal(g2, got) {
				t.Fatalf("%s, %s: writes\n%s (%v)\nthe encoder of entries\n%s (%v)", name, cname, g2, gotErr, w2, wantErr)
			}
		}
	}
}

func TestEncodedInterventionsRandomEntries(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for i := 0; i < 5000; i++ {
		var entries []string
		for n := rng.Intn(4); n >= 0; n-- {
			entries = append(entries, randomIntervention(rng))
		}
		doc := []byte("{\n  \"interventions\": [\n    " + joinComma(entries) + "\n  ]\n}")
		c1, c2 := rng.Intn(len(ivChanges)), rng.Intn(len(ivChanges))
		change := func(m *Memos) {
			for j := range m.Interventions {
				if j%2 == 0 {
					ivChanges[c1](&m.Interventions[j])
				} else {
					ivChanges[c2](&m.Interventions[j])
				}
			}
		}
		got, want, gotErr, wantErr := encodeAll(t, doc, change)
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s, changes %d %d: writes\n%s (%v)\nthe oracle\n%s (%v)", doc, c1, c2, got, gotErr, want, wantErr)
		}
	}
}

func joinComma(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteString(",\n    ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// TestEncodedInterventionsFallsBack checks that the list is handed back
// to the encoder of entries when an entry does not encode, so that the
// file fails as it did, and that the file's unknown keys keep the
// interventions' own type.
func TestEncodedInterventionsFallsBack(t *testing.T) {
	m := Memos{Interventions: []Intervention{{Domain: "d1", Delta: 1}, {Domain: "d2", Delta: math.NaN()}}}
	if _, ok := encodedInterventions(m.Interventions); ok {
		t.Fatal("a NaN delta was encoded")
	}
	if _, err := encodeJSON(m); err == nil {
		t.Fatal("a NaN delta was written")
	}
	m.Interventions[1].Delta = 2
	v, _ := m.keepParts()
	if _, ok := v.(memosEncoded); !ok {
		t.Fatalf("keepParts gives %T", v)
	}
	m.Extra = Extra{"x": json.RawMessage(`1`)}
	v, _ = m.keepParts()
	if _, ok := v.(memosEncoded); ok {
		t.Fatal("keepParts encoded the interventions of a file with unknown keys")
	}
}

// TestMemosEncodedHasMemosFields holds memosEncoded to Memos: the same
// keys in the same order, so that a field added to one and not the other
// fails here rather than drop out of the file.
func TestMemosEncodedHasMemosFields(t *testing.T) {
	mt, et := reflect.TypeFor[Memos](), reflect.TypeFor[memosEncoded]()
	var mk, ek []string
	for i := 0; i < mt.NumField(); i++ {
		if f := mt.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
			mk = append(mk, f.Name+" "+string(f.Tag))
		}
	}
	for i := 0; i < et.NumField(); i++ {
		f := et.Field(i)
		ek = append(ek, f.Name+" "+string(f.Tag))
		if f.Name != "Interventions" {
			if g, ok := mt.FieldByName(f.Name); !ok || g.Type != f.Type {
				t.Errorf("memosEncoded.%s is not Memos's", f.Name)
			}
		}
	}
	if fmt.Sprint(mk) != fmt.Sprint(ek) {
		t.Fatalf("Memos has %v, memosEncoded %v", mk, ek)
	}
}
