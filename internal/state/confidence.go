package state

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
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
	inner  map[string]map[string]json.RawMessage
	// orig holds the scores as read, so that an unchanged score keeps its
	// original spelling (1.0 stays 1.0) and its last_updated.
	orig map[string]float64
	// now stamps last_updated on nested entries whose score changed.
	now time.Time
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
// holding objects makes the file nested; otherwise every numeric top-level
// value is a domain's score. A null is no score.
func (c *Confidence) UnmarshalJSON(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	c.top, c.Scores, c.nested, c.inner, c.orig = top, map[string]float64{}, false, nil, map[string]float64{}
	if raw, ok := top["domains"]; ok {
		var inner map[string]map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil && inner != nil {
			c.nested, c.inner = true, inner
			for d, obj := range inner {
				var f float64
				if s, ok := obj["score"]; ok && !isNull(s) && json.Unmarshal(s, &f) == nil {
					c.Scores[d], c.orig[d] = f, f
				}
			}
			return nil
		}
	}
	for k, v := range top {
		var f float64
		if !isNull(v) && json.Unmarshal(v, &f) == nil {
			c.Scores[k], c.orig[k] = f, f
		}
	}
	return nil
}

// MarshalJSON applies the write rule: update in place in the file's shape,
// touching only the scores that changed.
func (c Confidence) MarshalJSON() ([]byte, error) {
	top := map[string]json.RawMessage{}
	for k, v := range c.top {
		top[k] = v
	}
	if _, ok := top["schema_version"]; !ok {
		top["schema_version"] = json.RawMessage(`"1.0.0"`)
	}
	names := make([]string, 0, len(c.Scores))
	for d := range c.Scores {
		names = append(names, d)
	}
	sort.Strings(names)
	changed := func(d string) bool {
		o, ok := c.orig[d]
		return !ok || o != c.Scores[d]
	}
	if !c.nested {
		for _, d := range names {
			if changed(d) {
				b, _ := json.Marshal(round4(c.Scores[d]))
				top[d] = b
			}
		}
		return json.Marshal(top)
	}
	inner := map[string]map[string]json.RawMessage{}
	for d, obj := range c.inner {
		cp := map[string]json.RawMessage{}
		for k, v := range obj {
			cp[k] = v
		}
		inner[d] = cp
	}
	for _, d := range names {
		if !changed(d) {
			continue
		}
		obj, ok := inner[d]
		if !ok || obj == nil {
			obj = map[string]json.RawMessage{}
			inner[d] = obj
		}
		nb, _ := json.Marshal(round4(c.Scores[d]))
		obj["score"] = nb
		if !c.now.IsZero() {
			ts, _ := json.Marshal(FormatTime(c.now))
			obj["last_updated"] = ts
		}
	}
	ib, err := json.Marshal(inner)
	if err != nil {
		return nil, err
	}
	top["domains"] = ib
	return json.Marshal(top)
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
