package cli

import (
	"strconv"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/present"
)

// The whole --json document of `ooda cycle`, card included, written
// without encoding/json: a process that prints one document pays for
// encoding/json's reflection over every type it meets (its per-type
// caches are built anew in every process), which costs more than writing
// the document. The writer produces the bytes of encodeIndented exactly
// — two spaces a level, no HTML escaping, a final newline — and reports
// false for any value it cannot be sure to write the same way (a string
// with a control character other than \n, \r and \t, invalid UTF-8,
// U+2028 or U+2029; a number that is not finite): encodeCycleDoc then
// leaves the document to encoding/json. TestCycleDocDirectIsEncodingJSONs
// holds it to encodeIndented's bytes, and TestCycleDocDirectKnowsEveryField
// fails when a field is added to a type it writes but not to it.

// jsonWriter appends an indented JSON document.
type jsonWriter struct {
	b []byte
	// empty says, per open object or array, that no member is written yet.
	empty []bool
	ok    bool
}

func (w *jsonWriter) indent() {
	w.b = append(w.b, '\n')
	for range len(w.empty) {
		w.b = append(w.b, ' ', ' ')
	}
}

// open starts an object ('{') or an array ('[').
func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.empty = append(w.empty, true)
}

// close ends the innermost object ('}') or array (']'); an empty one is
// written {} or [], as encoding/json does.
func (w *jsonWriter) close(c byte) {
	n := len(w.empty) - 1
	was := w.empty[n]
	w.empty = w.empty[:n]
	if !was {
		w.indent()
	}
	w.b = append(w.b, c)
}

// elem starts the next member of the innermost array.
func (w *jsonWriter) elem() {
	n := len(w.empty) - 1
	if !w.empty[n] {
		w.b = append(w.b, ',')
	}
	w.empty[n] = false
	w.indent()
}

// key starts the member k of the innermost object; k is a plain name.
func (w *jsonWriter) key(k string) {
	w.elem()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':', ' ')
}

func (w *jsonWriter) null() { w.b = append(w.b, "null"...) }

func (w *jsonWriter) boolean(v bool) { w.b = strconv.AppendBool(w.b, v) }

func (w *jsonWriter) int(v int) { w.b = strconv.AppendInt(w.b, int64(v), 10) }

func (w *jsonWriter) float(v float64) {
	var good bool
	if w.b, good = appendJSONFloat(w.b, v); !good {
		w.ok = false
	}
}

func (w *jsonWriter) str(s string) {
	var good bool
	if w.b, good = appendJSONString(w.b, s); !good {
		w.ok = false
	}
}

// orNull writes *p with put, or null for a nil p.
func orNull[T any](w *jsonWriter, p *T, put func(T)) {
	if p == nil {
		w.null()
		return
	}
	put(*p)
}

func (w *jsonWriter) strp(p *string)    { orNull(w, p, w.str) }
func (w *jsonWriter) floatp(p *float64) { orNull(w, p, w.float) }
func (w *jsonWriter) intp(p *int)       { orNull(w, p, w.int) }
func (w *jsonWriter) boolp(p *bool)     { orNull(w, p, w.boolean) }

// strs writes a list of strings: null when nil, [] when empty.
func (w *jsonWriter) strs(v []string) {
	if v == nil {
		w.null()
		return
	}
	w.open('[')
	for _, s := range v {
		w.elem()
		w.str(s)
	}
	w.close(']')
}

// appendJSONString appends s quoted as encoding/json writes it without
// HTML escaping, or reports false for text it leaves to encoding/json: a
// control character other than \n, \r and \t, invalid UTF-8, U+2028 or
// U+2029.
func appendJSONString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc byte
			switch {
			case c == '"' || c == '\\':
				esc = c
			case c == '\n':
				esc = 'n'
			case c == '\r':
				esc = 'r'
			case c == '\t':
				esc = 't'
			case c < 0x20:
				return b, false
			default:
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, '\\', esc)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return b, false
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// appendCycleDoc appends doc as encodeIndented writes it, or reports
// false.
func appendCycleDoc(b []byte, doc cycleDoc) ([]byte, bool) {
	w := &jsonWriter{b: b, empty: make([]bool, 0, 6), ok: true}
	w.open('{')
	w.key("status")
	w.str(doc.Status)
	w.key("reason")
	w.strp(doc.Reason)
	w.key("cycle")
	w.intp(doc.Cycle)
	w.key("scores")
	switch {
	case len(doc.options) > 0:
		var good bool
		if w.b, good = appendOptionScores(w.b, doc.options); !good {
			return b, false
		}
	case doc.options != nil:
		w.b = append(w.b, "[]"...)
	case doc.Scores == nil:
		w.null()
	case len(doc.Scores) == 0:
		w.b = append(w.b, "[]"...)
	default:
		var good bool
		if w.b, good = appendScores(w.b, doc.Scores); !good {
			return b, false
		}
	}
	w.key("winner")
	if wd := doc.Winner; wd == nil {
		w.null()
	} else {
		w.open('{')
		w.key("domain")
		w.str(wd.Domain)
		w.key("skill")
		w.str(wd.Skill)
		w.key("score")
		w.floatp(wd.Score)
		w.key("confidence")
		w.float(wd.Confidence)
		w.key("gated")
		w.boolean(wd.Gated)
		w.key("guidance")
		w.strp(wd.Guidance)
		w.key("chain")
		w.strs(wd.Chain)
		w.close('}')
	}
	w.key("result")
	w.strp(doc.Result)
	w.key("result_type")
	w.strp(doc.ResultType)
	w.key("quality_multiplier")
	w.floatp(doc.Quality)
	w.key("pr_number")
	w.intp(doc.PRNumber)
	w.key("halt_created")
	w.boolean(doc.HaltCreated)
	w.key("notes")
	w.strs(doc.Notes)
	w.key("elapsed_seconds")
	w.float(doc.Elapsed)
	if doc.Summary != nil {
		w.key("summary")
		w.str(*doc.Summary)
	}
	if doc.Error != nil {
		w.key("error")
		w.str(*doc.Error)
	}
	if dn := doc.Decide; dn != nil {
		w.key("decide")
		w.open('{')
		w.key("score_verified")
		w.boolean(dn.ScoreVerified)
		w.key("cycle_mode")
		w.str(dn.CycleMode)
		w.key("steps")
		w.strs(dn.Steps)
		w.close('}')
	}
	w.key("card")
	writeCard(w, doc.Card)
	w.close('}')
	if !w.ok {
		return b, false
	}
	return append(w.b, '\n'), true
}

// writeCard writes the card object (present.Card's fields, in order).
func writeCard(w *jsonWriter, c *present.Card) {
	if c == nil {
		w.null()
		return
	}
	w.open('{')
	w.key("project")
	w.str(c.Project)
	w.key("cycle")
	w.int(c.Cycle)
	w.key("timestamp")
	w.strp(c.Timestamp)
	w.key("observe")
	w.open('{')
	w.key("domains_scanned")
	w.intp(c.Observe.DomainsScanned)
	w.key("notable_change")
	w.strp(c.Observe.NotableChange)
	w.close('}')
	w.key("orient")
	w.strp(c.Orient)
	d := c.Decide
	w.key("decide")
	w.open('{')
	w.key("domain")
	w.strp(d.Domain)
	w.key("skill")
	w.strp(d.Skill)
	w.key("score")
	w.floatp(d.Score)
	w.key("confidence")
	w.floatp(d.Confidence)
	w.key("gate_passed")
	w.boolp(d.GatePassed)
	w.key("guidance")
	w.strp(d.Guidance)
	w.key("reason")
	w.strp(d.Reason)
	w.close('}')
	a := c.Act
	w.key("act")
	w.open('{')
	w.key("action")
	w.strp(a.Action)
	w.key("result")
	w.strp(a.Result)
	w.key("result_type")
	w.strp(a.ResultType)
	w.key("pr_number")
	w.intp(a.PRNumber)
	w.key("risk_tier")
	w.intp(a.RiskTier)
	w.key("text")
	w.str(a.Text)
	w.close('}')
	w.key("learn")
	if c.Learn == nil {
		w.null()
	} else {
		w.open('[')
		for _, l := range c.Learn {
			w.elem()
			w.open('{')
			w.key("kind")
			w.str(l.Kind)
			w.key("text")
			w.str(l.Text)
			w.close('}')
		}
		w.close(']')
	}
	w.key("cost")
	w.open('{')
	w.key("cycle_usd")
	w.floatp(c.Cost.CycleUSD)
	w.key("today_usd")
	w.floatp(c.Cost.TodayUSD)
	w.key("cap_usd")
	w.floatp(c.Cost.CapUSD)
	w.close('}')
	w.key("halt")
	w.open('{')
	w.key("active")
	w.boolean(c.Halt.Active)
	w.key("reason")
	w.strp(c.Halt.Reason)
	w.close('}')
	w.key("level")
	w.int(c.Level)
	w.key("level_name")
	w.str(c.LevelName)
	w.key("share")
	w.str(c.Share)
	w.close('}')
}
