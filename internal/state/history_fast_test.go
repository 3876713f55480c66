package state

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// engineLine is a cycle line as the engine writes it (json.Marshal of a
// CycleLogLine).
const engineLine = `{"cycle_id":1,"timestamp":"2026-01-05T13:00:00Z","domain":"test_coverage","skill":"/check-tests","score":20.1,"confidence":0.51,"result":"success","result_type":"pr_created","quality_multiplier":0.5,"pr_number":3,"had_output":true,"cost_usd":0.02,"saturation":1,"on_mission":true,"artifact_score":null,"skill_seconds":1.234}`

// hostileLines are cycle lines the fast decoding must read exactly as
// encoding/json does, or hand on: every number form, escapes, keys in
// other case or folding onto a field, duplicates, values of the wrong
// type, blanks, truncation and trailing bytes.
func hostileLines() []string {
	// The engine line's values hold no comma or brace.
	set := func(key, val string) string {
		j := strings.Index(engineLine, `"`+key+`":`) + len(key) + 3
		k := j + strings.IndexAny(engineLine[j:], ",}")
		return engineLine[:j] + val + engineLine[k:]
	}
	rename := func(from, to string) string {
		return strings.Replace(engineLine, `"`+from+`":`, `"`+to+`":`, 1)
	}
	add := func(member string) string { return engineLine[:len(engineLine)-1] + "," + member + "}" }
	lines := []string{engineLine,
		strings.NewReplacer(`,"`, " ,\t\"", `":`, `" :  `).Replace(engineLine),
		"{\r\n" + engineLine[1:len(engineLine)-1] + "\n}",
		engineLine + " x", engineLine + "}", engineLine + ",", engineLine[:len(engineLine)-1], engineLine[:40], engineLine[:len(engineLine)/2],
		`{}`, `{"cycle_id":1}`, `{"cycle":2,"domain":"d"}`, `{"cycle_id":1,"cycle":2}`, `{"domain":"no id"}`,
		add(`"cycle_id":2`), add(`"domain":"again"`), add(`"domain":null`), add(`"Domain":"other"`), add(`"DOMAIN":5`),
		add(`"custom":"kept"`), add(`"x":{"a":1}`), add(`"x":[1,2]`), add(`"annotate":{"result_type":"pr_merged"}`),
		add(`"ſkill":"fold"`), add(`"\u0064omain":"escaped"`), add(`"résumé":1`), add(`"cycle-id":9`), add(`"resulttype":"x"`),
		add(`"":1`), add(`"del` + "\x7f" + `":1`),
		rename("cycle_id", "Cycle_ID"), rename("domain", "Domain"), rename("skill", "\u212aind"),
	}
	for _, v := range []string{"0", "-0", "-0.0", "1e2", "1E2", "1e-400", "1e400", "-1e400", "0.1e1", "123456789012345678901234567890",
		"9007199254740993", "0.30000000000000004", "1.7976931348623157e308", "4.9e-324", "2.2250738585072011e-308", "1.", ".5", "+1",
		"01", "1e", "NaN", "Infinity", "-", `"5"`, `"NaN"`, "true", "null", `{}`, `[]`, "123456789012345.6", "1234567890123456.7", "0.000000000000000000000001",
		// Too many digits for one rounding: 217.60927281388697 is not
		// float64(21760927281388697) / 1e14.
		"217.60927281388697", "226906160.1445310287", "0.1234567890123456789"} {
		for _, k := range []string{"score", "quality_multiplier", "cost_usd", "saturation", "pr_number", "cycle_id", "skill_seconds"} {
			lines = append(lines, set(k, v))
		}
	}
	for _, v := range []string{`"12"`, `"#12"`, "12.0", "-1", "1000000000", "1000000001", "99999999999", "007", "null", "1e1"} {
		lines = append(lines, set("cycle_id", v), strings.Replace(set("cycle_id", v), `"domain"`, `"cycle":4,"domain"`, 1))
	}
	for _, v := range []string{`"\u0041"`, `"\ud800"`, `"\"q\""`, `"é"`, "\"\xff\"", "\"a\x01b\"", "\"a\x7fb\"", `""`, "5", "true", "null", `"a\/b"`, `"\u2028"`} {
		lines = append(lines, set("domain", v), set("timestamp", v))
	}
	for _, v := range []string{`"true"`, "1", "0", "null", "false", "tru", "falsey"} {
		lines = append(lines, set("had_output", v), set("on_mission", v))
	}
	for _, v := range []string{`"#29"`, "12.5", "-3", "0", "1e3", "9223372036854775807", "9223372036854775808"} {
		lines = append(lines, set("pr_number", v))
	}
	for _, note := range []string{`{"result_type":"pr_merged"}`, `{}`, `null`, `"pr_merged"`, `{"cycle_id":5}`, `{"a":{"b":1}}`, `{"a":1,"a":2}`, `[]`, `{"x":1`} {
		lines = append(lines, `{"cycle_id":1,"annotate":`+note+`,"timestamp":"t"}`,
			`{"cycle_id":1,"annotate":`+note+`,"annotate":{"quality_multiplier":0.9}}`)
	}
	return lines
}

// hostileNotes are annotation lines of cycle 1.
var hostileNotes = []string{
	``,
	`{"cycle_id":1,"annotate":{"result_type":"pr_merged","quality_multiplier":0.8},"timestamp":"2026-01-07T13:00:00Z"}`,
	`{"cycle_id":1,"annotate":{"result_type":"pr_created"}}`,
	`{"cycle_id":1,"annotate":{"quality_multiplier":0.50}}`,
	`{"cycle_id":1,"annotate":{"quality_multiplier":"0.9"}}`,
	`{"cycle_id":1,"annotate":{"Result_Type":"pr_merged"}}`,
	`{"cycle_id":1,"annotate":{"new_key":1,"cycle_id":7,"cycle":8}}`,
	`{"cycle_id":1,"annotate":{"pr_number":null,"score":-0}}`,
	`{"cycle_id":1,"annotate":{"a":{"b":1}}}`,
	`{"cycle_id":1,"annotate":{"result_type":"pr_merged","result_type":"pr_merged_held"}}`,
	`{"cycle_id":1,"annotate":{"artifact_score":1e400}}`,
	`{"cycle_id":"1","annotate":{"on_mission":false}}`,
	`{"cycle_id":1,"annotate":{"domain":"\u0041"}}`,
	`{"cycle_id":1,"annotate":{}}`,
	`{"cycle_id":2,"annotate":{"result_type":"futile"}}`,
	`not json`,
}

// sameRecord compares two records exactly: floats by their bits, so
// that -0 and 0 differ.
func sameRecord(a, b CycleRecord) bool {
	f := func(p, q *float64) bool {
		return (p == nil) == (q == nil) && (p == nil || math.Float64bits(*p) == math.Float64bits(*q))
	}
	x, y := a.Line, b.Line
	return a.Annotated == b.Annotated && x.CycleID == y.CycleID && x.Timestamp == y.Timestamp && x.Domain == y.Domain &&
		x.Skill == y.Skill && f(x.Score, y.Score) && f(x.Confidence, y.Confidence) && x.Result == y.Result &&
		x.ResultType == y.ResultType && math.Float64bits(x.QualityMult) == math.Float64bits(y.QualityMult) &&
		(x.PRNumber == nil) == (y.PRNumber == nil) && (x.PRNumber == nil || *x.PRNumber == *y.PRNumber) &&
		x.HadOutput == y.HadOutput && math.Float64bits(x.CostUSD) == math.Float64bits(y.CostUSD) &&
		x.Saturation == y.Saturation && x.OnMission == y.OnMission && f(x.ArtifactScore, y.ArtifactScore) &&
		f(x.SkillSeconds, y.SkillSeconds)
}

func showRecord(r CycleRecord) string {
	p := func(v *float64) string {
		if v == nil {
			return "nil"
		}
		return fmt.Sprint(*v)
	}
	pr := "nil"
	if r.Line.PRNumber != nil {
		pr = fmt.Sprint(*r.Line.PRNumber)
	}
	l := r.Line
	return fmt.Sprintf("{%d %q %q %q score=%s conf=%s %q %q q=%v pr=%s out=%v cost=%v sat=%d mission=%v art=%s secs=%s annotated=%v}",
		l.CycleID, l.Timestamp, l.Domain, l.Skill, p(l.Score), p(l.Confidence), l.Result, l.ResultType, l.QualityMult, pr,
		l.HadOutput, l.CostUSD, l.Saturation, l.OnMission, p(l.ArtifactScore), p(l.SkillSeconds), r.Annotated)
}

// foldCollides says whether two different keys of the objects fold to
// the same field name: encoding/json's reading of such a record depends
// on the order of a map, and two readings of it may differ.
func foldCollides(objs ...string) bool {
	folds := map[string]string{}
	for _, o := range objs {
		keys, vals, err := objectMembers([]byte(o))
		if err != nil {
			continue
		}
		for i, k := range keys {
			if k == "annotate" {
				nk, _, err := objectMembers(vals[i])
				if err == nil {
					keys = append(keys, nk...)
				}
			}
		}
		for _, k := range keys {
			f := foldKey(k)
			if other, ok := folds[f]; ok && other != k {
				return true
			}
			folds[f] = k
		}
	}
	return false
}

// checkSameHistory writes the log and the annotations and compares the
// tail reader (newest first, all cycles and the last one) with
// CycleHistory, record by record.
func checkSameHistory(t *testing.T, s *Store, log, notes string, deterministic func(CycleRecord) bool) {
	t.Helper()
	writeEvolveFile(t, s, CycleLogFile, log)
	writeEvolveFile(t, s, CycleLogAnnotationsFile, notes)
	want, wst := history(t, s)
	got, gst := tailHistory(t, s, 0)
	if len(got) != len(want) || gst != wst {
		t.Fatalf("log %q notes %q:\ntail %d records %+v\nCycleHistory %d records %+v", log, notes, len(got), gst, len(want), wst)
	}
	for i := range want {
		w, g := want[len(want)-1-i], got[i]
		if g.Line.CycleID != w.Line.CycleID || (deterministic(w) && !sameRecord(w, g)) {
			t.Errorf("log %q notes %q, record %d:\ntail         %s\nCycleHistory %s", log, notes, i, showRecord(g), showRecord(w))
		}
	}
	if len(want) > 0 {
		last, _ := tailHistory(t, s, 1)
		if w := want[len(want)-1]; len(last) != 1 || last[0].Line.CycleID != w.Line.CycleID || (deterministic(w) && !sameRecord(w, last[0])) {
			t.Errorf("log %q notes %q: last record %v, want %s", log, notes, last, showRecord(w))
		}
	}
}

// The fast decoding gives, for every hostile line and annotation, the
// record encoding/json gives (CycleHistory is that reading), and takes
// the engine's own lines itself.
func TestFastDecoding_SameRecordsAsEncodingJSON(t *testing.T) {
	for _, l := range []string{engineLine, `{"cycle_id":1,"annotate":{"result_type":"pr_merged","quality_multiplier":0.8},"timestamp":"t"}`} {
		if _, _, _, _, ok := fastClassify([]byte(l), nil); !ok {
			t.Fatalf("the fast decoding does not take %s", l)
		}
	}
	s := New(t.TempDir())
	fast, lines := 0, hostileLines()
	for i, line := range lines {
		if _, _, _, _, ok := fastClassify([]byte(line), nil); ok {
			fast++
		}
		// Each line with no annotation, the engine's, and two others in
		// turn (every pair is the fuzz target's seed corpus).
		k := len(hostileNotes) - 2
		for _, note := range []string{hostileNotes[0], hostileNotes[1], hostileNotes[2+i%k], hostileNotes[2+(i+k/2)%k]} {
			collides := foldCollides(line, note)
			checkSameHistory(t, s, line+"\n", note+"\n", func(CycleRecord) bool { return !collides })
		}
	}
	// Both readings are exercised.
	if fast < 40 || fast > len(lines)-100 {
		t.Errorf("the fast decoding took %d of %d lines", fast, len(lines))
	}
}

// FuzzFastDecoding: any cycle line and two annotation lines give the
// same records from the tail reader, through the fast decoding or not,
// as from CycleHistory.
func FuzzFastDecoding(f *testing.F) {
	for i, l := range hostileLines() {
		f.Add(l, hostileNotes[i%len(hostileNotes)], hostileNotes[(i/len(hostileNotes)+1)%len(hostileNotes)])
	}
	s := New(f.TempDir())
	f.Fuzz(func(t *testing.T, line, note1, note2 string) {
		if strings.ContainsAny(line+note1+note2, "\n") {
			// One line each; several lines are the random test's.
			return
		}
		collides := foldCollides(line, note1, note2)
		checkSameHistory(t, s, line+"\n", note1+"\n"+note2+"\n", func(CycleRecord) bool { return !collides })
	})
}

// randomLine is an engine line of cycle c, often mutated: a value
// replaced by a hostile one, a member duplicated, dropped or added, a
// key in other case (only keys no annotation names, so that no record
// is read in an order of a map), blanks, a cut. Its cycle_id stays c:
// an annotation in the log is applied by the tail reader to the cycle
// lines before it only.
func randomLine(rng *rand.Rand, c int) string {
	type member struct{ k, v string }
	ms := []member{{"cycle_id", fmt.Sprint(c)}, {"timestamp", `"2026-01-05T13:00:00Z"`}, {"domain", `"api"`}, {"skill", `"/scan"`},
		{"score", "20.1"}, {"confidence", "0.51"}, {"result", `"success"`}, {"result_type", `"pr_created"`},
		{"quality_multiplier", "0.5"}, {"pr_number", fmt.Sprint(c % 50)}, {"had_output", "true"}, {"cost_usd", "0.02"},
		{"saturation", "1"}, {"on_mission", "false"}, {"artifact_score", "null"}, {"skill_seconds", "0.042"}}
	values := []string{"0", "-0", "1e400", "1.5", "-2", `"x"`, `"\u00e9"`, "null", "true", "false", `"#3"`, "12.0", "1e2",
		"0.30000000000000004", "123456789012345678901", `{}`, `[1]`, `"é"`, `""`, "007", "4.9e-324"}
	for n := rng.Intn(4); n > 0 && rng.Intn(3) > 0; n-- {
		i := rng.Intn(len(ms))
		switch rng.Intn(6) {
		case 0, 1:
			if ms[i].k != "cycle_id" {
				ms[i].v = values[rng.Intn(len(values))]
			}
		case 2:
			ms = append(ms, ms[i])
		case 3:
			if ms[i].k != "cycle_id" {
				ms = append(ms[:i], ms[i+1:]...)
			}
		case 4:
			ms = append(ms, member{[]string{"custom", "cycle", "x_y", "annotate"}[rng.Intn(4)], values[rng.Intn(len(values))]})
		case 5:
			switch ms[i].k {
			case "result_type", "quality_multiplier", "on_mission", "pr_number", "cycle_id":
			default:
				ms[i].k = strings.ToUpper(ms[i].k[:1]) + ms[i].k[1:]
			}
		}
	}
	blank := func() string { return []string{"", "", "", " ", "\t", " \r"}[rng.Intn(6)] }
	var b strings.Builder
	b.WriteString("{" + blank())
	for i, m := range ms {
		if i > 0 {
			b.WriteString("," + blank())
		}
		fmt.Fprintf(&b, `"%s"%s:%s%s%s`, m.k, blank(), blank(), m.v, blank())
	}
	b.WriteString("}")
	line := b.String()
	if rng.Intn(40) == 0 {
		line = line[:rng.Intn(len(line))]
	}
	return line
}

// A long random history (lines of every kind, annotations in the log and
// in their file) gives the same records through the tail reader as
// through CycleHistory, and exercises both readings.
func TestFastDecoding_RandomHistory(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	s := New(t.TempDir())
	noteBodies := []string{`{"result_type":"pr_merged","quality_multiplier":0.8}`, `{"result_type":"pr_merged_held","quality_multiplier":1}`,
		`{"quality_multiplier":"0.9"}`, `{"on_mission":true}`, `{"pr_number":null}`, `{"result_type":"pr_created"}`, `{"new":1}`, `{"a":{"b":1}}`, `{}`}
	for trial := 0; trial < 20; trial++ {
		var log, notes strings.Builder
		fast, slow := 0, 0
		for c := 1; c <= 300; c++ {
			line := randomLine(rng, c)
			if _, _, _, _, ok := fastClassify([]byte(bytes.TrimSpace([]byte(line))), nil); ok {
				fast++
			} else {
				slow++
			}
			log.WriteString(line + "\n")
			for rng.Intn(4) == 0 {
				note := fmt.Sprintf(`{"cycle_id":%d,"annotate":%s}`, 1+rng.Intn(c), noteBodies[rng.Intn(len(noteBodies))])
				if rng.Intn(5) == 0 {
					// The original wrote annotations into the log, after
					// the cycle.
					log.WriteString(note + "\n")
				} else {
					notes.WriteString(note + "\n")
				}
			}
		}
		if fast < 100 || slow < 10 {
			t.Fatalf("fast %d, slow %d lines: the history does not exercise both readings", fast, slow)
		}
		checkSameHistory(t, s, log.String(), notes.String(), func(CycleRecord) bool { return true })
	}
}
