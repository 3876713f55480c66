package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Confidence is agent/state/evolve/confidence.json. Two shapes exist in the
// wild and both are read: flat {"d": 0.7} (fixtures, early projects) and
// nested {"domains": {"d": {"score": 0.7, ...}}} (live deployments). The
// file's shape is kept on write; a project's history is never converted.
type Confidence struct {
	// Scores maps a domain to its confidence.
	Scores map[string]float64
	nested bool
	top    map[string]json.RawMessage
	// orig holds the scores as read, so that an unchanged score keeps its
	// original spelling (1.0 stays 1.0) and its last_updated.
	orig map[string]float64
	// now stamps last_updated on nested entries whose score changed.
	now time.Time
	// topOrder and domainOrder are the file's keys, and its domains', in
	// the order the file has them, so a write keeps that order; domainRaw
	// is each nested domain as read, written back as it was while its
	// score is unchanged.
	topOrder, domainOrder []string
	domainRaw             map[string]json.RawMessage
	// decodeWarnings say which scores were not read as written.
	decodeWarnings []string
}

// NewConfidence is an empty confidence file; new files are written nested,
// the shape live deployments of the original use.
func NewConfidence() Confidence {
	return Confidence{Scores: map[string]float64{}, nested: true}
}

// Nested reports the file's shape.
func (c Confidence) Nested() bool { return c.nested }

// Get returns the domain's confidence and whether the file has one.
func (c Confidence) Get(domain string) (float64, bool) {
	v, ok := c.Scores[domain]
	return v, ok
}

// Set records a new score; now stamps last_updated in nested files.
func (c *Confidence) Set(domain string, v float64, now time.Time) {
	if c.Scores == nil {
		c.Scores = map[string]float64{}
	}
	c.Scores[domain] = v
	c.now = now
}

func isNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

// UnmarshalJSON applies the read rule of 2-B: a top-level "domains" key
// holding an object makes the file nested; otherwise every numeric top-level
// value is a domain's score. A null is no score. A score written as a
// string ("0.8"), or a nested domain written as a bare score, is read as
// that number; anything else is no score. Either way the value stays in
// the file as written until the score changes, and DecodeWarnings says so.
func (c *Confidence) UnmarshalJSON(b []byte) error {
	if c.unmarshalNested(b) {
		return nil
	}
	return c.unmarshalSlow(b)
}

// unmarshalChecked is UnmarshalJSON for checked bytes (see
// checkedDecoder): a nested file is split without being scanned again,
// and its domains keep slices of b, which nothing else holds, instead of
// a copy.
func (c *Confidence) unmarshalChecked(b []byte) error {
	if c.unmarshalNestedIn(b, !confidenceCheckedOff) {
		return nil
	}
	return c.unmarshalSlow(b)
}

// confidenceCheckedOff, set by the tests, reads checked bytes as
// unchecked ones: the scanning reader, kept as the oracle of the
// splitting one.
var confidenceCheckedOff bool

// objectMembersIn is the members of the JSON object b: split without a
// check when b is part of a checked document, else scanned (ok false
// when b is not an object encoding/json reads).
func objectMembersIn(b []byte, checked bool) ([]rawMember, bool) {
	if checked {
		return splitObjectInto(make([]rawMember, 0, 16), b), true
	}
	return scanMembers(b)
}

// unmarshalSlow is UnmarshalJSON through encoding/json maps: every shape
// and every malformed document. unmarshalNested reads the common shape
// in one scan and must agree with it (confidence_fast_oracle_test.go).
func (c *Confidence) unmarshalSlow(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	*c = Confidence{top: top, Scores: map[string]float64{}, orig: map[string]float64{}, topOrder: keyOrder(b)}
	if raw, ok := top["domains"]; ok {
		var inner map[string]json.RawMessage
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &inner) == nil {
			c.nested = true
			c.domainOrder, c.domainRaw = keyOrder(t), inner
			for _, d := range sortedRawKeys(inner) {
				v := inner[d]
				ptr := "/domains/" + escapePointer(d)
				var obj map[string]json.RawMessage
				if t := bytes.TrimSpace(v); isNull(t) || (t[0] == '{' && json.Unmarshal(t, &obj) == nil) {
					if s, ok := obj["score"]; ok {
						c.readScore(d, s, ptr+"/score")
					}
					continue
				}
				// Not an object: kept as it is (domainRaw), and read as the
				// score when it is one.
				c.readScore(d, v, ptr)
			}
			return nil
		}
	}
	for _, k := range sortedRawKeys(top) {
		v := top[k]
		var f float64
		switch {
		case isNull(v):
		case json.Unmarshal(v, &f) == nil:
			c.Scores[k], c.orig[k] = f, f
		case bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) && !strings.Contains(strings.ToLower(k), "version"):
			// A string is a domain's score only when it is a number
			// ("0.8"); other strings are the file's own fields.
			if f, ok := looseFloat(bytes.TrimSpace(v)); ok {
				c.Scores[k], c.orig[k] = f, f
				c.decodeWarnings = append(c.decodeWarnings, fmt.Sprintf("/%s: %s is a string, not a number; read as %s", escapePointer(k), showJSONValue(v), num(f)))
			}
		}
	}
	return nil
}

// unmarshalNested is UnmarshalJSON for a valid nested file, read with
// the package's scanner: a file of a thousand domains is otherwise
// decoded into maps twice and its keys listed by a token decoder. It
// reports false, having set nothing, for any other document (not an
// object, no "domains" object, anything the scanner does not take), which
// the slow path reads. What it keeps is what the slow path keeps: the
// last value of a repeated key, the keys in first-seen order, each value
// as written without the whitespace around it.
func (c *Confidence) unmarshalNested(b []byte) bool { return c.unmarshalNestedIn(b, false) }

// unmarshalNestedIn is unmarshalNested, for b checked or not: checked
// bytes are one valid JSON value nothing else holds or changes (see
// checkedDecoder), which it splits without checking them again and keeps
// without a copy.
func (c *Confidence) unmarshalNestedIn(b []byte, checked bool) bool {
	if !checked {
		// The file's bytes are kept (top, domainRaw) past the caller's buffer.
		b = bytes.Clone(b)
	} else if len(b) == 0 || b[0] != '{' {
		return false
	}
	tops, ok := objectMembersIn(b, checked)
	if !ok {
		return false
	}
	top := make(map[string]json.RawMessage, len(tops))
	topOrder := make([]string, 0, len(tops))
	for _, m := range tops {
		k := m.key()
		if _, dup := top[k]; !dup {
			topOrder = append(topOrder, k)
		}
		top[k] = m.val
	}
	raw, ok := top["domains"]
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return false
	}
	// One pass over the domains: each one's key, its value as written
	// and, for an object, its last "score" member.
	type domain struct {
		key        []byte
		val, score []byte
		obj        bool
	}
	var doms []domain
	if checked {
		ms := splitObjectInto(make([]rawMember, 0, 64), raw)
		doms = make([]domain, 0, len(ms))
		var inner []rawMember
		for _, m := range ms {
			d := domain{key: m.quoted, val: m.val}
			if m.val[0] == '{' {
				d.obj = true
				inner = splitObjectInto(inner[:0], m.val)
				for _, im := range inner {
					if isScoreKey(im.quoted) {
						d.score = im.val
					}
				}
			}
			doms = append(doms, d)
		}
	} else {
		doms = make([]domain, 0, 64)
		_, ok = scanContainer(raw, 0, 1, func(key, val []byte) bool {
			d := domain{key: key, val: val}
			if val[0] == '{' {
				d.obj = true
				_, ok := scanContainer(val, 0, 1, func(k, v []byte) bool {
					if isScoreKey(k) {
						d.score = v
					}
					return true
				})
				if !ok {
					return false
				}
			}
			doms = append(doms, d)
			return true
		})
		if !ok {
			return false
		}
	}
	inner := make(map[string]json.RawMessage, len(doms))
	last := make(map[string]int, len(doms))
	domainOrder := make([]string, 0, len(doms))
	for i, d := range doms {
		k, ok := unquoteKey(d.key)
		if !ok {
			return false
		}
		if _, dup := inner[k]; !dup {
			domainOrder = append(domainOrder, k)
		}
		inner[k], last[k] = d.val, i
	}
	if len(domainOrder) == 0 {
		domainOrder = nil // as keyOrder lists an empty object
	}
	*c = Confidence{top: top, Scores: make(map[string]float64, len(domainOrder)), orig: make(map[string]float64, len(domainOrder)),
		topOrder: topOrder, nested: true, domainOrder: domainOrder, domainRaw: inner}
	// Warnings come out in the order of the domains' names, as the slow
	// path reads them; each domain gives at most one.
	var warned []string
	for _, k := range domainOrder {
		d := doms[last[k]]
		s := d.val
		if d.obj || isNull(s) {
			if s = d.score; s == nil {
				continue
			}
		}
		if s[0] == '-' || ('0' <= s[0] && s[0] <= '9') {
			// A JSON number: what json.Unmarshal into a float64 reads,
			// unless it overflows, which readScore reports.
			if f, err := strconv.ParseFloat(string(s), 64); err == nil {
				c.Scores[k], c.orig[k] = f, f
				continue
			}
		}
		n := len(c.decodeWarnings)
		ptr := "/domains/" + escapePointer(k)
		if d.obj || isNull(d.val) {
			ptr += "/score"
		}
		c.readScore(k, s, ptr)
		if len(c.decodeWarnings) > n {
			warned = append(warned, k)
		}
	}
	if len(warned) > 1 {
		idx := make([]int, len(warned))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return warned[idx[a]] < warned[idx[b]] })
		ws := make([]string, len(idx))
		for i, j := range idx {
			ws[i] = c.decodeWarnings[j]
		}
		c.decodeWarnings = ws
	}
	return true
}

// isScoreKey reports whether the quoted key k is "score", however
// escaped.
func isScoreKey(k []byte) bool {
	if string(k) == `"score"` {
		return true
	}
	if len(k) < 7 || bytes.IndexByte(k, '\\') < 0 {
		return false
	}
	s, ok := unquoteKey(k)
	return ok && s == "score"
}

// readScore reads one nested score: a number, or a string or other value
// that spells one.
func (c *Confidence) readScore(d string, s json.RawMessage, ptr string) {
	if isNull(s) {
		return
	}
	var f float64
	if json.Unmarshal(s, &f) == nil {
		c.Scores[d], c.orig[d] = f, f
		return
	}
	if f, ok := looseFloat(bytes.TrimSpace(s)); ok {
		c.Scores[d], c.orig[d] = f, f
		what := "is not a number"
		if bytes.HasPrefix(bytes.TrimSpace(s), []byte(`"`)) {
			what = "is a string, not a number"
		}
		c.decodeWarnings = append(c.decodeWarnings, fmt.Sprintf("%s: %s %s; read as %s", ptr, showJSONValue(s), what, num(f)))
		return
	}
	c.decodeWarnings = append(c.decodeWarnings, fmt.Sprintf("%s: %s is not a number; not used, and kept in the file as written", ptr, showJSONValue(s)))
}

// DecodeWarnings lists the scores not read as written, each as
// "<JSON pointer>: <reason>", at most maxLooseWarnings and a count.
func (c Confidence) DecodeWarnings() []string {
	if len(c.decodeWarnings) > maxLooseWarnings {
		n := len(c.decodeWarnings) - maxLooseWarnings
		return append(c.decodeWarnings[:maxLooseWarnings:maxLooseWarnings], fmt.Sprintf("%d more values not taken as written", n))
	}
	return c.decodeWarnings
}

// sortedRawKeys returns m's keys in order, so warnings come out the same
// way every time.
func sortedRawKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MarshalJSON applies the write rule: update in place in the file's shape,
// touching only the scores that changed. The file's keys keep their order,
// at the top and inside each domain: a changed value is written where it
// was, a key the file lacked goes at the end, and a domain whose score did
// not change is written back as it was read.
func (c Confidence) MarshalJSON() ([]byte, error) {
	// The scores that changed, by name: usually a few of a thousand.
	var names []string
	for d, v := range c.Scores {
		if o, ok := c.orig[d]; !ok || o != v {
			names = append(names, d)
		}
	}
	sort.Strings(names)
	order := append(make([]string, 0, len(c.topOrder)+2), c.topOrder...)
	top := make(map[string]json.RawMessage, len(c.top)+2)
	for k, v := range c.top {
		top[k] = v
	}
	if _, ok := top["schema_version"]; !ok {
		top["schema_version"] = json.RawMessage(`"1.0.0"`)
		order = append(order, "schema_version")
	}
	if !c.nested {
		for _, d := range names {
			if _, ok := top[d]; !ok {
				order = append(order, d)
			}
			b, _ := json.Marshal(round4(c.Scores[d]))
			top[d] = b
		}
		return writeOrdered(order, top), nil
	}
	// Each domain is written where the file had it, as read unless its
	// score changed; a new one follows, in the order of the names.
	changed := make(map[string]json.RawMessage, len(names))
	var added []string
	for _, d := range names {
		raw, ok := c.domainRaw[d]
		if !ok {
			added = append(added, d)
		}
		nb, _ := json.Marshal(round4(c.Scores[d]))
		vals := map[string]json.RawMessage{"score": nb}
		if !c.now.IsZero() {
			vals["last_updated"], _ = json.Marshal(FormatTime(c.now))
		}
		changed[d] = withMembers(raw, vals, []string{"score", "last_updated"})
	}
	size := 2
	for _, v := range c.domainRaw {
		size += len(v) + 16
	}
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	first := true
	write := memberWriter(&buf, &first)
	var seen map[string]bool
	if len(added) > 0 {
		seen = make(map[string]bool, len(c.domainOrder))
	}
	for _, d := range c.domainOrder {
		v, ok := changed[d]
		if !ok {
			v, ok = c.domainRaw[d]
		}
		if ok && (seen == nil || !seen[d]) {
			if seen != nil {
				seen[d] = true
			}
			write(d, bytes.TrimSpace(v))
		}
	}
	for _, d := range added {
		if !seen[d] {
			seen[d] = true
			write(d, bytes.TrimSpace(changed[d]))
		}
	}
	buf.WriteByte('}')
	if _, ok := top["domains"]; !ok {
		order = append(order, "domains")
	}
	top["domains"] = buf.Bytes()
	return writeOrdered(order, top), nil
}

// keyOrder lists the keys of the JSON object b in file order, each once
// (decoding reads a repeated key's last value, which is the one kept).
func keyOrder(b []byte) []string {
	keys, _, err := objectMembers(b)
	if err != nil {
		return nil
	}
	seen := make(map[string]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// writeOrdered is the JSON object of vals with its keys in order, each
// once; a key of order that vals lacks is left out.
func writeOrdered(order []string, vals map[string]json.RawMessage) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	write := memberWriter(&buf, &first)
	seen := make(map[string]bool, len(order))
	for _, k := range order {
		if v, ok := vals[k]; ok && !seen[k] {
			seen[k] = true
			write(k, bytes.TrimSpace(v))
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// withMembers is the JSON object raw with the members of vals set: a key
// raw has keeps its place, the others follow in the order of keys. raw
// not an object (null, a bare score, nothing) gives an object of vals.
func withMembers(raw json.RawMessage, vals map[string]json.RawMessage, keys []string) json.RawMessage {
	var order []string
	cur := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		if ks, vs, err := objectMembers(t); err == nil {
			order = keyOrder(t)
			for i, k := range ks {
				cur[k] = vs[i]
			}
		}
	}
	for _, k := range keys {
		v, ok := vals[k]
		if !ok {
			continue
		}
		if _, had := cur[k]; !had {
			order = append(order, k)
		}
		cur[k] = v
	}
	return writeOrdered(order, cur)
}

// round4 keeps four decimals, the precision confidence is stored with.
func round4(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r := math.Round(v*1e4) / 1e4
	if math.IsInf(r, 0) {
		return v
	}
	return r
}
