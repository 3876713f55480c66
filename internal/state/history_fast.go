package state

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The fast decoding of the cycle logs. encoding/json costs about 9 µs a
// line, which over a long history is most of the cost of reading it. The
// engine writes each line as a flat JSON object of CycleLogLine's keys,
// so such a line is read here by hand, in one pass, and everything else
// goes to the encoding/json reading of CycleHistory. The fast decoding
// takes a line only when it is certain to read it as that path does: a
// whole, valid object; keys without escapes, in lower case, each of
// CycleLogLine's at most once; strings without escapes; every value of
// the type its field wants (or null). Any other line is not refused but
// handed on, so the results are the same for every input.

// flatMember is one member of an object as written, by offsets into the
// object's text (no pointers, so that filling a list of them is a plain
// copy): its key (the bytes between the quotes; there are no escapes in
// it) and its value.
type flatMember struct {
	ks, ke, vs, ve int32
	kind           byte // 's' string, 'n' number, 't' true, 'f' false, 'z' null, 'o' object
	field          byte // the key's: see keyField
}

func (m flatMember) key(b []byte) []byte { return b[m.ks:m.ke] }
func (m flatMember) val(b []byte) []byte { return b[m.vs:m.ve] }

// parseFlat appends the members of b, which must be exactly one JSON
// object and nothing else, to dst. Values are strings, numbers, true,
// false or null; an object is taken only as the value of a top-level
// "annotate" (when nested is true), and its own members must be flat.
// ok is false for any other text, valid JSON or not: the caller then
// reads the line with encoding/json.
func parseFlat(b []byte, dst []flatMember, nested bool) ([]flatMember, bool) {
	if len(b) > MaxHistoryLine {
		return dst, false
	}
	dst, i, ok := parseObject(b, 0, dst, nested)
	if !ok {
		return dst, false
	}
	i = skipWS(b, i)
	return dst, i == len(b)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// parseObject reads the object starting at b[i] (after blanks) and
// returns the index after its closing brace.
func parseObject(b []byte, i int, dst []flatMember, nested bool) ([]flatMember, int, bool) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return dst, i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return dst, i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return dst, i, false
		}
		// A key: ASCII only, so that no key other than the field's own
		// spelling can be matched to a field by encoding/json's case
		// folding (which folds the Kelvin sign onto k) without
		// decodeMember seeing it.
		start := i + 1
		j := start
		for j < len(b) && plainByte[b[j]] {
			j++
		}
		if j >= len(b) || b[j] != '"' {
			return dst, j, false
		}
		m := flatMember{ks: int32(start), ke: int32(j), field: keyField(b[start:j])}
		i = skipWS(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return dst, i, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return dst, i, false
		}
		vstart := i
		switch c := b[i]; {
		case c == '"':
			j := i + 1
			ascii := true
			for j < len(b) {
				if plainByte[b[j]] {
					j++
				} else if b[j] >= utf8.RuneSelf {
					ascii = false
					j++
				} else {
					break
				}
			}
			if j >= len(b) || b[j] != '"' || (!ascii && !utf8.Valid(b[i+1:j])) {
				// A control character or an escape; invalid UTF-8, read
				// as U+FFFD by encoding/json.
				return dst, j, false
			}
			m.kind, i = 's', j+1
		case c == '-' || (c >= '0' && c <= '9'):
			j, ok := scanNumber(b, i)
			if !ok {
				return dst, j, false
			}
			m.kind, i = 'n', j
		case c == 't' && bytes.HasPrefix(b[i:], litTrue):
			m.kind, i = 't', i+len(litTrue)
		case c == 'f' && bytes.HasPrefix(b[i:], litFalse):
			m.kind, i = 'f', i+len(litFalse)
		case c == 'n' && bytes.HasPrefix(b[i:], litNull):
			m.kind, i = 'z', i+len(litNull)
		case c == '{' && nested && m.field == kAnnotate:
			var ok bool
			var scratch [8]flatMember
			if _, i, ok = parseObject(b, i, scratch[:0], false); !ok {
				return dst, i, false
			}
			m.kind = 'o'
		default:
			return dst, i, false
		}
		m.vs, m.ve = int32(vstart), int32(i)
		dst = append(dst, m)
		i = skipWS(b, i)
		if i >= len(b) {
			return dst, i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return dst, i + 1, true
		default:
			return dst, i, false
		}
	}
}

// plainByte is the bytes a string holds as written: ASCII from the space
// to DEL but for the quote, which ends it, and the backslash, which
// starts an escape.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

var (
	litTrue  = []byte("true")
	litFalse = []byte("false")
	litNull  = []byte("null")
)

// scanNumber reads a JSON number at b[i] by the grammar of RFC 8259, so
// that 01, 1., .5, +1 and 1e are not taken.
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false
		}
	}
	return i, true
}

// plainCount reads a number written as digits only (no sign, fraction or
// exponent) that is a cycle number: what both cycleNumber and an int
// field read the same way.
func plainCount(b []byte, m flatMember) (int, bool) {
	v := m.val(b)
	if m.kind != 'n' || len(v) == 0 || len(v) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > MaxCounter {
		return 0, false
	}
	return n, true
}

// fastClassify is classify for a line the fast decoding takes: its kind,
// cycle, note (an annotation line's annotate member) and, for a cycle
// line, the decoded line. ok false hands the line to encoding/json.
func fastClassify(b []byte, in *interner) (kind lineKind, cycle int, note []byte, line CycleLogLine, ok bool) {
	var buf [24]flatMember
	ms, ok := parseFlat(b, buf[:0], true)
	if !ok {
		return skipLine, 0, nil, line, false
	}
	// One pass: the line decoded as a cycle's, and its cycle and note
	// members found. A value the decoding cannot take matters only if
	// the line is a cycle's.
	idAt, cycleAt, noteAt := -1, -1, -1
	seen, decoded := 0, true
	for i, m := range ms {
		switch m.field {
		case kCycle:
			if cycleAt >= 0 {
				return skipLine, 0, nil, line, false
			}
			cycleAt = i
			continue
		case kAnnotate:
			if noteAt >= 0 {
				return skipLine, 0, nil, line, false
			}
			noteAt = i
			continue
		case kCycleID:
			if idAt >= 0 {
				return skipLine, 0, nil, line, false
			}
			idAt = i
		}
		if decoded {
			decoded = decodeMember(&line, &seen, m.field, m.val(b), m.kind, in)
		}
	}
	// The cycle: cycle_id, else (in older lines) cycle. A value that is
	// not plain digits (null, "12", 12.0) is left to cycleNumber.
	switch {
	case idAt >= 0:
		if cycle, ok = plainCount(b, ms[idAt]); !ok {
			return skipLine, 0, nil, line, false
		}
	case cycleAt >= 0:
		if cycle, ok = plainCount(b, ms[cycleAt]); !ok {
			return skipLine, 0, nil, line, false
		}
	default:
		// A valid object without either key names no cycle.
		return skipLine, 0, nil, CycleLogLine{}, true
	}
	if noteAt >= 0 {
		if ms[noteAt].kind != 'o' {
			// An annotate member that is not an object annotates nothing,
			// and the line is not a cycle's either.
			return skipLine, 0, nil, CycleLogLine{}, true
		}
		return noteLine, cycle, ms[noteAt].val(b), CycleLogLine{}, true
	}
	if !decoded {
		return skipLine, 0, nil, line, false
	}
	line.CycleID = cycle
	return cycleLine, cycle, nil, line, true
}

// The keys the decoding knows: CycleLogLine's fields, then cycle and
// annotate, which are no field's.
const (
	kOther   = iota // another key, in lower case
	kUpper          // another key, with an upper-case letter
	kCycleID        // the fields, in CycleLogLine's order
	kTimestamp
	kDomain
	kSkill
	kScore
	kConfidence
	kResult
	kResultType
	kQualityMult
	kPRNumber
	kHadOutput
	kCostUSD
	kSaturation
	kOnMission
	kArtifactScore
	kSkillSeconds
	kCycle
	kAnnotate
)

// keyField is the key's kind: which field it names exactly, or whether
// encoding/json might fold it onto one (kUpper: it has an upper-case
// letter; keys are ASCII, see parseObject).
func keyField(k []byte) byte {
	var want string
	var f byte
	switch len(k) {
	case 5:
		switch k[1] {
		case 'k':
			want, f = "skill", kSkill
		case 'c':
			want, f = "score", kScore
		case 'y':
			want, f = "cycle", kCycle
		}
	case 6:
		switch k[0] {
		case 'd':
			want, f = "domain", kDomain
		case 'r':
			want, f = "result", kResult
		}
	case 8:
		switch k[0] {
		case 'c':
			if k[1] == 'y' {
				want, f = "cycle_id", kCycleID
			} else {
				want, f = "cost_usd", kCostUSD
			}
		case 'a':
			want, f = "annotate", kAnnotate
		}
	case 9:
		switch k[0] {
		case 't':
			want, f = "timestamp", kTimestamp
		case 'p':
			want, f = "pr_number", kPRNumber
		}
	case 10:
		switch k[0] {
		case 'c':
			want, f = "confidence", kConfidence
		case 'h':
			want, f = "had_output", kHadOutput
		case 's':
			want, f = "saturation", kSaturation
		case 'o':
			want, f = "on_mission", kOnMission
		}
	case 11:
		want, f = "result_type", kResultType
	case 13:
		want, f = "skill_seconds", kSkillSeconds
	case 14:
		want, f = "artifact_score", kArtifactScore
	case 18:
		want, f = "quality_multiplier", kQualityMult
	}
	if f != 0 && string(k) == want {
		return f
	}
	for _, c := range k {
		if c >= 'A' && c <= 'Z' {
			return kUpper
		}
	}
	return kOther
}

// decodeMember reads one member into l as json.Unmarshal would, or says
// it cannot be sure (false): a field named twice (seen holds the fields
// read), a key encoding/json could fold onto a field (upper case), a
// value of another type than its field's, a number its field cannot
// hold. The keys cycle and annotate are no field's and are passed over.
func decodeMember(l *CycleLogLine, seen *int, field byte, val []byte, kind byte, in *interner) bool {
	m := flatValue{val, kind}
	bit := 1 << field
	ok := false
	switch field {
	case kCycleID:
		if ok = kind == 'z'; !ok {
			l.CycleID, ok = m.int()
		}
	case kTimestamp:
		l.Timestamp, ok = m.string(nil)
	case kDomain:
		l.Domain, ok = m.string(in)
	case kSkill:
		l.Skill, ok = m.string(in)
	case kScore:
		l.Score, ok = m.floatPtr()
	case kConfidence:
		l.Confidence, ok = m.floatPtr()
	case kResult:
		l.Result, ok = m.string(in)
	case kResultType:
		l.ResultType, ok = m.string(in)
	case kQualityMult:
		l.QualityMult, ok = m.float()
	case kPRNumber:
		l.PRNumber = nil
		if ok = kind == 'z'; !ok {
			var n int
			if n, ok = m.int(); ok {
				l.PRNumber = &n
			}
		}
	case kHadOutput:
		l.HadOutput, ok = m.bool()
	case kCostUSD:
		l.CostUSD, ok = m.float()
	case kSaturation:
		if ok = kind == 'z'; !ok {
			l.Saturation, ok = m.int()
		}
	case kOnMission:
		l.OnMission, ok = m.bool()
	case kArtifactScore:
		l.ArtifactScore, ok = m.floatPtr()
	case kSkillSeconds:
		l.SkillSeconds, ok = m.floatPtr()
	case kUpper:
		return false
	default:
		// Another key (cycle and annotate too): ignored by
		// encoding/json, as a key in lower case (and ASCII, as parseFlat
		// takes) cannot fold onto a field's without being spelt as it.
		return true
	}
	if !ok || *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// flatValue is a member's value text and kind.
type flatValue struct {
	val  []byte
	kind byte
}

// string is a string value as json.Unmarshal reads it into a string
// (null leaves it empty). parseFlat took no escapes and only valid
// UTF-8, so the text between the quotes is the string.
func (m flatValue) string(in *interner) (string, bool) {
	switch m.kind {
	case 's':
		return in.str(m.val[1 : len(m.val)-1]), true
	case 'z':
		return "", true
	}
	return "", false
}

// int is an integer as json.Unmarshal reads it into an int: no
// fraction or exponent, within range.
func (m flatValue) int() (int, bool) {
	if m.kind != 'n' {
		return 0, false
	}
	if n, ok := smallInt(m.val); ok {
		return n, true
	}
	if bytes.ContainsAny(m.val, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m.val), 10, 64)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// float is a number as json.Unmarshal reads it into a float64 (null
// leaves it 0); a number out of range (1e400) is not taken.
func (m flatValue) float() (float64, bool) {
	switch m.kind {
	case 'n':
		if f, ok := exactFloat(m.val); ok {
			return f, true
		}
		f, err := strconv.ParseFloat(string(m.val), 64)
		return f, err == nil
	case 'z':
		return 0, true
	}
	return 0, false
}

// smallInt reads an integer of at most 18 digits (so that it cannot
// overflow), with its sign: what strconv.ParseInt reads the same.
func smallInt(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat reads a decimal of at most 15 significant digits without an
// exponent (0.02, -12.5) as strconv.ParseFloat does in its exact case:
// its digits and the power of ten are exact float64s, so their quotient,
// rounded once, is the correctly rounded value ParseFloat returns. It
// says nothing (ok false) of any other number.
func exactFloat(b []byte) (float64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 || frac >= len(pow10) {
		return 0, false
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

func (m flatValue) floatPtr() (*float64, bool) {
	if m.kind == 'z' {
		return nil, true
	}
	f, ok := m.float()
	if !ok {
		return nil, false
	}
	return &f, true
}

func (m flatValue) bool() (bool, bool) {
	switch m.kind {
	case 't':
		return true, true
	case 'f', 'z':
		return false, true
	}
	return false, false
}

// fastRecord is the record of a cycle line the fast decoding took, with
// its notes applied as CycleHistory applies them: every note's members
// in order, the latest value of each key kept (cycle_id excepted), then
// each compared with the line's own member (Annotated when it is new or
// written differently) and put in its place. ok false: a note or the
// result is not for the fast decoding.
func fastRecord(raw []byte, cycle int, notes []json.RawMessage, in *interner) (CycleRecord, bool) {
	var lbuf [24]flatMember
	ms, ok := parseFlat(raw, lbuf[:0], false)
	if !ok {
		return CycleRecord{}, false
	}
	// set holds the notes' members, the latest of each key.
	type noteMember struct {
		src []byte
		m   flatMember
	}
	var nbuf [16]noteMember
	set := nbuf[:0]
	for _, note := range notes {
		var buf [16]flatMember
		nm, ok := parseFlat(note, buf[:0], false)
		if !ok {
			return CycleRecord{}, false
		}
	members:
		for _, m := range nm {
			k := m.key(note)
			if m.field == kCycleID {
				continue
			}
			for i := range set {
				if bytes.Equal(set[i].m.key(set[i].src), k) {
					set[i] = noteMember{note, m}
					continue members
				}
			}
			set = append(set, noteMember{note, m})
		}
	}
	rec := CycleRecord{}
	seen := 0
	for _, m := range ms {
		k := m.key(raw)
		replaced := false
		for _, n := range set {
			if bytes.Equal(n.m.key(n.src), k) {
				replaced = true
				break
			}
		}
		if !replaced && !decodeMember(&rec.Line, &seen, m.field, m.val(raw), m.kind, in) {
			return CycleRecord{}, false
		}
	}
	for _, n := range set {
		k, v := n.m.key(n.src), n.m.val(n.src)
		// The line's member is its last of that key, as in a map.
		var old []byte
		for _, m := range ms {
			if bytes.Equal(m.key(raw), k) {
				old = m.val(raw)
			}
		}
		if old == nil || !bytes.Equal(old, v) {
			rec.Annotated = true
		}
		if !decodeMember(&rec.Line, &seen, n.m.field, v, n.m.kind, in) {
			return CycleRecord{}, false
		}
	}
	rec.Line.CycleID = cycle
	return rec, true
}

// interner shares the strings a long history repeats (domains, skills,
// results), so that a million records do not make a million copies of
// "success": a small table, each string in the slot of its length and
// first and last bytes, a newcomer taking the slot. The zero interner is
// ready; a nil one copies every string.
type interner struct {
	slots [256]string
}

func (in *interner) str(b []byte) string {
	if in == nil || len(b) == 0 {
		return string(b)
	}
	slot := &in.slots[(len(b)*31+int(b[0])*7+int(b[len(b)-1]))&255]
	if *slot == string(b) {
		return *slot
	}
	*slot = string(b)
	return *slot
}
