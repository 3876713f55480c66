package state

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// confidenceFastCases are nested files the one-scan reader takes, each
// with something the map-based reader handles in its own way.
var confidenceFastCases = []string{
	nestedConfidence,
	`{"domains":{}}`,
	`{"domains":{"a":{"score":0.7,"last_updated":"2026-03-01T00:00:00Z","note":"x"}},"schema_version":"1.0.0","extra":[1,{"b":2}]}`,
	// Repeated keys: the last value is read, the first place is kept.
	`{"domains":{"a":{"score":0.1},"b":{"score":0.2},"a":{"score":0.3,"score":0.4}},"domains":{"z":{"score":1.0},"y":{"score":2}}}`,
	`{"domains":{"a":{"score":0.1,"score":null}}}`,
	// Scores not written as numbers, out of order so warnings sort.
	`{"domains":{"z":{"score":"0.8"},"m":0.5,"c":"0.25","b":{"score":true},"a":{"score":1e400},"n":null,"o":[1],"p":"x"}}`,
	`{"domains":{"é\u00e9":{"sc\u006fre":0.5},"a/b~c":{"score":"nope"},"\ud800":{"score":0.2}}}`,
	"{ \"domains\" : { \"a\" : { \"score\" : -0.0 , \"x\" : { } } } }\n",
	`{"domains":{"a":{"score":1.0000},"b":{"score":5e-324},"c":{"score":-1E+2}}}`,
}

// checkConfidenceFast decodes doc both ways and fails t when the one-scan
// reader takes it and reads anything else than the map-based one, or
// writes it back differently after the same change.
func checkConfidenceFast(t *testing.T, doc []byte) {
	t.Helper()
	var fast, slow Confidence
	if !fast.unmarshalNested(doc) {
		return
	}
	if err := slow.unmarshalSlow(doc); err != nil {
		t.Fatalf("%q: the scanner took a document encoding/json rejects: %v", doc, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %#v\nslow %#v", doc, fast, slow)
	}
	if f, s := fmt.Sprint(fast.DecodeWarnings()), fmt.Sprint(slow.DecodeWarnings()); f != s {
		t.Fatalf("%q: warnings\nfast %s\nslow %s", doc, f, s)
	}
	// The same document read as a file: split without a second check.
	var checked Confidence
	start := skipSpace(doc, 0)
	end, ok := scanValue(doc, start, 0)
	if !ok || skipSpace(doc, end) != len(doc) {
		t.Fatalf("%q: taken by the one-scan reader, refused by the file's check", doc)
	}
	if !checked.unmarshalNestedIn(bytes.Clone(doc[start:end]), true) {
		t.Fatalf("%q: taken by the one-scan reader, not as checked bytes", doc)
	}
	if !reflect.DeepEqual(checked, slow) {
		t.Fatalf("%q:\nchecked %#v\nslow %#v", doc, checked, slow)
	}
	checked.Set("a", 0.123456, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	checked.Set("new", 0.5, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	cb, cerr := checked.MarshalJSON()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []*Confidence{&fast, &slow} {
		c.Set("a", 0.123456, now)
		c.Set("new", 0.5, now)
	}
	fb, ferr := fast.MarshalJSON()
	sb, serr := slow.MarshalJSON()
	if ferr != nil || serr != nil || !bytes.Equal(fb, sb) {
		t.Fatalf("%q: written\nfast %s (%v)\nslow %s (%v)", doc, fb, ferr, sb, serr)
	}
	if cerr != nil || !bytes.Equal(cb, sb) {
		t.Fatalf("%q: written\nchecked %s (%v)\nslow %s (%v)", doc, cb, cerr, sb, serr)
	}
}

// TestConfidenceFastMatchesMaps compares the one-scan reader with the
// map-based one on the cases above and on a large file.
func TestConfidenceFastMatchesMaps(t *testing.T) {
	for _, doc := range confidenceFastCases {
		var c Confidence
		if !c.unmarshalNested([]byte(doc)) {
			t.Fatalf("%q: not read by the scanner; the case tests nothing", doc)
		}
		checkConfidenceFast(t, []byte(doc))
	}
	checkConfidenceFast(t, largeConfidence(1000))
}

// TestConfidenceCheckedSameAsUnchecked reads documents as files, split
// without a second check and scanned again, and with the checked decoding
// off altogether: the same value, the same warnings, the same bytes
// written after the same change, and the same error.
func TestConfidenceCheckedSameAsUnchecked(t *testing.T) {
	docs := append([]string{
		flatConfidence, `null`, `[]`, `{"domains":null}`, `{"domains":[]}`, `{"domains":{"a":1},"domains":2}`,
		`{"domains":{"a":1,}}`, `{"domains":{"a":01}}`, `{"a":"\x01"}`, `{"domains":{"a":{"score":99e999999}}}`,
		`{"domains":{"a":{"score":0.5,"score":"0.6"},"b":{"Score":1}}}`, ` {"domains" :{ "a" : { "score" : 1 } } } `,
		`{"domains":{"a":{"score":1}}} x`, `{"d1":0.5,"d2":"0.7","schema_version":"1.0.0"}`,
	}, confidenceFastCases...)
	docs = append(docs, string(largeConfidence(300)))
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, doc := range docs {
		var got, want, off Confidence
		gotErr := decodeFile([]byte(doc), &got)
		saved := confidenceCheckedOff
		confidenceCheckedOff = true
		wantErr := decodeFile([]byte(doc), &want)
		confidenceCheckedOff = saved
		savedAll := checkedDecodeOff
		checkedDecodeOff = true
		offErr := decodeFile([]byte(doc), &off)
		checkedDecodeOff = savedAll
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || fmt.Sprint(gotErr) != fmt.Sprint(offErr) {
			t.Fatalf("%q: %v, scanned again %v, unchecked %v", doc, gotErr, wantErr, offErr)
		}
		if gotErr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, off) {
			t.Fatalf("%q:\nchecked %#v\nscanned %#v\nunchecked %#v", doc, got, want, off)
		}
		var written []string
		for _, c := range []*Confidence{&got, &want, &off} {
			c.Set("a", 0.25, now)
			b, err := encodeJSON(*c)
			written = append(written, fmt.Sprintf("%s %v", b, err))
		}
		if written[0] != written[1] || written[0] != written[2] {
			t.Fatalf("%q: written\n%s\n%s\n%s", doc, written[0], written[1], written[2])
		}
	}
}

// TestConfidenceFastLeavesOtherShapes checks that the scanner declines
// what it does not read, so that the map-based reader decides it.
func TestConfidenceFastLeavesOtherShapes(t *testing.T) {
	for _, doc := range []string{
		flatConfidence, `null`, `[]`, `{"domains":null}`, `{"domains":[]}`, `{"domains":{"a":1},"domains":2}`,
		`{"domains":{"a":1,}}`, `{"domains":{"a":01}}`, `{"a":"\x01"}`, ``,
	} {
		var c Confidence
		if c.unmarshalNested([]byte(doc)) {
			t.Errorf("%q: taken by the scanner", doc)
		}
	}
}

// TestConfidenceFastKeepsNoCallerBytes checks that the decoded file does
// not share the caller's buffer, which the reader may reuse.
func TestConfidenceFastKeepsNoCallerBytes(t *testing.T) {
	doc := []byte(`{"domains":{"a":{"score":0.5,"note":"kept"}}}`)
	var c Confidence
	if err := c.UnmarshalJSON(doc); err != nil {
		t.Fatal(err)
	}
	for i := range doc {
		doc[i] = ' '
	}
	b, err := c.MarshalJSON()
	if err != nil || !strings.Contains(string(b), `"note":"kept"`) {
		t.Fatalf("written after the buffer changed: %s (%v)", b, err)
	}
}

// FuzzConfidenceFast compares the two readers on any document.
func FuzzConfidenceFast(f *testing.F) {
	addFixtureSeeds(f, ConfidenceFile)
	for _, doc := range confidenceFastCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkConfidenceFast(t, data) })
}

// largeConfidence is a nested file of n domains as a project writes it.
func largeConfidence(n int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"schema_version\": \"1.0.0\",\n  \"domains\": {\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "    \"d%d\": {\n      \"score\": 0.69,\n      \"last_updated\": \"2026-03-01T01:00:00Z\"\n    }", i)
	}
	b.WriteString("\n  }\n}\n")
	return []byte(b.String())
}

// BenchmarkConfidenceDecode reads a 1,000-domain file with each reader.
func BenchmarkConfidenceDecode(b *testing.B) {
	doc := largeConfidence(1000)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Confidence
			if err := c.UnmarshalJSON(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Confidence
			if err := c.unmarshalSlow(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
