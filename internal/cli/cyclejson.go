package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/ooda-loop/ooda/internal/decide"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
)

// The --json document of `ooda cycle` holds a score per domain: with a
// thousand domains, encoding/json's reflection over them, then its second
// pass to indent them, is most of what printing costs. The score table is
// written here instead, straight in its indented form, and so is the rest
// of the document (cyclejson_direct.go); the bytes are printJSON's. A
// value this writer cannot be sure to write as encoding/json does (a
// string with a byte to escape, a number that is not finite) leaves the
// rest of the document to encoding/json, with the score table spliced in
// when the table holds no such value, else the whole document.

// printCycleJSON is printJSON(doc), the same bytes.
func (g *globals) printCycleJSON(doc cycleDoc) error {
	b, err := encodeCycleDoc(doc)
	if err != nil {
		return err
	}
	_, err = g.stdout.Write(safetext.JSON(secret.RedactBytes(b)))
	return err
}

// encodeCycleDoc is doc as printJSON encodes it, before the redaction:
// written directly (appendCycleDoc) when every value is one it writes as
// encoding/json does, else by encodeCycleDocSpliced.
func encodeCycleDoc(doc cycleDoc) ([]byte, error) {
	if b, ok := appendCycleDoc(make([]byte, 0, 2048+640*doc.scoreCount()), doc); ok {
		return b, nil
	}
	return encodeCycleDocSpliced(doc)
}

// encodeCycleDocSpliced is encodeCycleDoc through encoding/json, with the
// score table written directly when it can be.
func encodeCycleDocSpliced(doc cycleDoc) ([]byte, error) {
	doc = doc.withScores()
	if len(doc.Scores) == 0 {
		return encodeIndented(doc)
	}
	rest := doc
	rest.Scores = []scoreDoc{}
	b, err := encodeIndented(rest)
	if err != nil {
		return nil, err
	}
	// The first key after status, reason and cycle: none of their values
	// holds a raw newline (a string's is escaped), so the first match is
	// the key itself.
	const empty = "\n  \"scores\": []"
	i := bytes.Index(b, []byte(empty))
	if i < 0 {
		return encodeIndented(doc)
	}
	// One buffer for the whole document, the scores written in place
	// (about 600 bytes each).
	out := make([]byte, 0, len(b)+640*len(doc.Scores))
	out = append(out, b[:i+len(empty)-2]...)
	out, ok := appendScores(out, doc.Scores)
	if !ok {
		return encodeIndented(doc)
	}
	return append(out, b[i+len(empty):]...), nil
}

// encodeIndented is v as printJSON encodes it (a cycleDoc with its
// scores in Scores: see withScores).
func encodeIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// appendScores appends the scores as the value of the document's
// "scores" key (an array at depth 1, indented by two spaces a level),
// or reports false.
func appendScores(b []byte, scores []scoreDoc) ([]byte, bool) {
	b = append(b, '[')
	for i, s := range scores {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {"...)
		var ok bool
		if b, ok = appendScore(b, s); !ok {
			return nil, false
		}
		b = append(b, "\n    }"...)
	}
	return append(b, "\n  ]"...), true
}

// appendOptionScores is appendScores of the scores of opts (scoreDocOf
// of each), written from the options one by one.
func appendOptionScores(b []byte, opts []decide.Option) ([]byte, bool) {
	var v scoreValues
	b = append(b, '[')
	for i := range opts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {"...)
		v.set(&opts[i])
		var ok bool
		if b, ok = appendScore(b, v.doc); !ok {
			return nil, false
		}
		b = append(b, "\n    }"...)
	}
	return append(b, "\n  ]"...), true
}

// appendScore appends the members of one score, as encoding/json writes
// scoreDoc's fields at depth 3.
func appendScore(b []byte, s scoreDoc) ([]byte, bool) {
	ok := true
	key := func(k string, first bool) {
		if !first {
			b = append(b, ',')
		}
		b = append(b, "\n      \""...)
		b = append(b, k...)
		b = append(b, "\": "...)
	}
	num := func(k string, v float64) {
		key(k, false)
		var good bool
		if b, good = appendJSONFloat(b, v); !good {
			ok = false
		}
	}
	nump := func(k string, v *float64) {
		if v == nil {
			key(k, false)
			b = append(b, "null"...)
			return
		}
		num(k, *v)
	}
	str := func(v string) {
		if !plainJSONString(v) {
			ok = false
			return
		}
		b = append(b, '"')
		b = append(b, v...)
		b = append(b, '"')
	}
	key("domain", true)
	str(s.Domain)
	num("weight", s.Weight)
	nump("hours", s.Hours)
	key("pending", false)
	if s.Pending == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*s.Pending), 10)
	}
	num("staleness", s.Staleness)
	if s.Queue != nil {
		num("queue", *s.Queue)
	}
	num("alert", s.Alert)
	num("mission", s.Mission)
	num("goal", s.Goal)
	num("confidence", s.Confidence)
	num("confidence_term", s.ConfidenceTerm)
	num("memo", s.Memo)
	num("balance", s.Balance)
	if s.Value != nil {
		num("value", *s.Value)
	}
	num("raw_score", s.RawScore)
	num("score", s.Score)
	key("excluded", false)
	if s.Excluded == nil {
		b = append(b, "null"...)
	} else {
		str(*s.Excluded)
	}
	key("reasons", false)
	switch {
	case s.Reasons == nil:
		b = append(b, "null"...)
	case len(s.Reasons) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, r := range s.Reasons {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n        "...)
			str(r)
		}
		b = append(b, "\n      ]"...)
	}
	return b, ok
}

// appendJSONFloat appends v as encoding/json writes a float64; false for
// a value it refuses (NaN, an infinity).
func appendJSONFloat(b []byte, v float64) ([]byte, bool) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return b, false
	}
	// A whole number (most of a score table: weights, hours, zeros) is
	// its integer's digits, as strconv's shortest form writes it; -0 is
	// not (encoding/json writes "-0").
	if v == math.Trunc(v) && math.Abs(v) < 1e15 && (v != 0 || !math.Signbit(v)) {
		return strconv.AppendInt(b, int64(v), 10), true
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// As encoding/json: e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// plainJSONString reports whether encoding/json writes s as it is between
// quotes: printable ASCII, no quote and no backslash.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
