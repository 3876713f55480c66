package state

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// marshalMaps is Confidence.MarshalJSON as it was written before it
// copied only the domains that changed: every domain through maps and the
// names sorted whole. It is the oracle of MarshalJSON.
func (c Confidence) marshalMaps() ([]byte, error) {
	names := make([]string, 0, len(c.Scores))
	for d := range c.Scores {
		names = append(names, d)
	}
	sort.Strings(names)
	changed := func(d string) bool {
		v, set := c.Scores[d]
		o, ok := c.orig[d]
		return set && (!ok || o != v)
	}
	top := map[string]json.RawMessage{}
	for k, v := range c.top {
		top[k] = v
	}
	order := append([]string(nil), c.topOrder...)
	if _, ok := top["schema_version"]; !ok {
		top["schema_version"] = json.RawMessage(`"1.0.0"`)
		order = append(order, "schema_version")
	}
	if !c.nested {
		for _, d := range names {
			if !changed(d) {
				continue
			}
			if _, ok := top[d]; !ok {
				order = append(order, d)
			}
			b, _ := json.Marshal(round4(c.Scores[d]))
			top[d] = b
		}
		return writeOrdered(order, top), nil
	}
	domains := map[string]json.RawMessage{}
	for d, raw := range c.domainRaw {
		domains[d] = raw
	}
	dorder := append([]string(nil), c.domainOrder...)
	for _, d := range names {
		if !changed(d) {
			continue
		}
		raw, ok := domains[d]
		if !ok {
			dorder = append(dorder, d)
		}
		nb, _ := json.Marshal(round4(c.Scores[d]))
		vals := map[string]json.RawMessage{"score": nb}
		if !c.now.IsZero() {
			vals["last_updated"], _ = json.Marshal(FormatTime(c.now))
		}
		domains[d] = withMembers(raw, vals, []string{"score", "last_updated"})
	}
	if _, ok := top["domains"]; !ok {
		order = append(order, "domains")
	}
	top["domains"] = writeOrdered(dorder, domains)
	return writeOrdered(order, top), nil
}

// TestConfidenceMarshalSameAsMaps writes documents of every shape, after
// changes of every kind, with MarshalJSON and with marshalMaps.
func TestConfidenceMarshalSameAsMaps(t *testing.T) {
	docs := append([]string{
		flatConfidence, `{}`, `{"domains":{}}`, `{"domains":{"a":1},"domains":2}`,
		`{"d1":0.5,"d2":"0.7","schema_version":"1.0.0","x":[1]}`,
		`{"domains":{"a":{"score":0.5,"score":"0.6"},"b":{"Score":1},"c":null,"d":0.5,"e":"x"},"z":1}`,
		`{"domains":{"\u0061":{"score":0.1},"a":{"score":0.2},"é\u00e9":{"score":0.3}}}`,
		`{"domains":{"a":{"score":1,"last_updated":"x","note":{"k":[1, 2]}}},"schema_version":"9"}`,
	}, confidenceFastCases...)
	docs = append(docs, string(largeConfidence(200)))
	rng := rand.New(rand.NewSource(3))
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	scores := []float64{0.5, 0.123456, 1, 0, math.Copysign(0, -1), math.NaN(), math.Inf(1), 1e300, 5e-324}
	names := []string{"a", "b", "c", "d", "e", "new", "é\u00e9", "d7", "d150", "x", "schema_version", "domains", "<&>", "\u2028"}
	for _, doc := range docs {
		for round := 0; round < 40; round++ {
			var c Confidence
			if err := decodeFile([]byte(doc), &c); err != nil {
				t.Fatalf("%q: %v", doc, err)
			}
			if round == 0 {
				c = NewConfidence()
			}
			for n := rng.Intn(4); n > 0; n-- {
				at := now
				if rng.Intn(3) == 0 {
					at = time.Time{}
				}
				c.Set(names[rng.Intn(len(names))], scores[rng.Intn(len(scores))], at)
			}
			if rng.Intn(5) == 0 {
				// A score set back to its value as read is no change.
				for d, v := range c.orig {
					c.Scores[d] = v
					break
				}
			}
			got, gerr := c.MarshalJSON()
			want, werr := c.marshalMaps()
			if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%q round %d: writes\n%s (%v)\nthe maps\n%s (%v)", doc, round, got, gerr, want, werr)
			}
		}
	}
}

// TestConfidenceMarshalKeepsOrder checks a new domain goes after the
// file's own, in the order of the names, and no domain twice.
func TestConfidenceMarshalKeepsOrder(t *testing.T) {
	var c Confidence
	if err := decodeFile([]byte(`{"domains":{"z":{"score":0.1},"b":{"score":0.2}},"schema_version":"1.0.0"}`), &c); err != nil {
		t.Fatal(err)
	}
	c.Set("y", 0.5, time.Time{})
	c.Set("a", 0.5, time.Time{})
	c.Set("z", 0.3, time.Time{})
	got, err := c.MarshalJSON()
	want := `{"domains":{"z":{"score":0.3},"b":{"score":0.2},"a":{"score":0.5},"y":{"score":0.5}},"schema_version":"1.0.0"}`
	if err != nil || string(got) != want {
		t.Fatalf("writes %s (%v), want %s", got, err, want)
	}
}

// TestConfidenceMarshalNoDomainTwice writes a domain listed in the
// file's order but missing from its values (keys that unquote otherwise
// in the two readers) once, where the file had it, as the maps did.
func TestConfidenceMarshalNoDomainTwice(t *testing.T) {
	c := Confidence{nested: true, Scores: map[string]float64{}, domainOrder: []string{"a", "b"},
		domainRaw: map[string]json.RawMessage{"b": json.RawMessage(`{"score":0.2}`)}}
	c.Set("a", 0.5, time.Time{})
	got, err := c.MarshalJSON()
	want, werr := c.marshalMaps()
	if err != nil || werr != nil || !bytes.Equal(got, want) {
		t.Fatalf("writes %s (%v), the maps %s (%v)", got, err, want, werr)
	}
}
