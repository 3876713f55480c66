package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// Decoding config.domains in one pass. A configuration of a thousand
// domains is loaded by every process, and encoding/json decodes each
// domain's object after scanning it once more to validate it, after
// scanning the whole object twice for its keys. Here one scan splits the
// object into its members and each domain's members are decoded as they
// are met, for the shape every configuration has: keys written exactly as
// the fields' names, values of the fields' own JSON types. Anything else
// — a key that differs from a field's name only by case (encoding/json
// would decode it into the field), an escape or a byte that is not ASCII
// in a key or string, a null, a number a float64 cannot hold, a value of
// another type — sends the whole object to the decoder this one stands in
// for (unmarshalDomainsSlow), which decides and words every error.

// unmarshalDomainsFast is Domains.UnmarshalJSON for the common shape; ok
// is false when unmarshalDomainsSlow must decode b. b is one JSON value,
// valid (encoding/json hands a decoder nothing else).
func unmarshalDomainsFast(b []byte) (out Domains, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	// Counted first, so that the domains are decoded into one slice of
	// their number: a thousand of them grown by doubling would cost
	// twice their size, in memory the process touches for the first time.
	n := 0
	if !eachMemberAt(b, i, func(string, int, int) bool { n++; return true }) {
		return nil, false
	}
	out = make(Domains, 0, n)
	seen := make(map[string]bool, n)
	ok = eachMember(b, i, func(key string, val []byte) bool {
		if seen[key] {
			return false // the slow decoder names it
		}
		seen[key] = true
		var d Domain
		if !decodeDomainFast(val, &d) {
			return false
		}
		d.Name, d.Index = strings.Clone(key), len(out)
		out = append(out, d)
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// domainField is a field of Domain as its JSON key names it.
type domainField int

const (
	dfNone domainField = iota
	dfWeight
	dfStateFile
	dfPrimarySkill
	dfChain
	dfBranchPrefix
	dfFallback
	dfEnabled
	dfStatus
	dfMissionAlignment
	dfDescription
	dfRotation
	dfOODAPhase
	dfMinIntervalHours
	dfGoalContribution
	dfQualityRubric
)

// domainFields are Domain's JSON keys, as its struct tags write them.
var domainFields = map[string]domainField{
	"weight": dfWeight, "state_file": dfStateFile, "primary_skill": dfPrimarySkill, "chain": dfChain,
	"branch_prefix": dfBranchPrefix, "fallback": dfFallback, "enabled": dfEnabled, "status": dfStatus,
	"mission_alignment": dfMissionAlignment, "description": dfDescription, "rotation": dfRotation,
	"ooda_phase": dfOODAPhase, "min_interval_hours": dfMinIntervalHours, "goal_contribution": dfGoalContribution,
	"quality_rubric": dfQualityRubric,
}

// decodeDomainFast decodes one domain's object into d as json.Unmarshal
// would, or reports false when it cannot be sure to.
func decodeDomainFast(b []byte, d *Domain) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	return eachMember(b, 0, func(key string, val []byte) bool {
		f, known := domainFields[key]
		if !known {
			// encoding/json matches keys without regard to case: a key
			// that only differs in case from a field's is that field.
			for name := range domainFields {
				if equalFoldASCII(name, key) {
					return false
				}
			}
			return true // ignored, as encoding/json ignores it
		}
		switch f {
		case dfWeight:
			v, ok := fastNumber(val)
			d.Weight = v
			return ok
		case dfMissionAlignment, dfMinIntervalHours, dfGoalContribution:
			v, ok := fastNumber(val)
			if !ok {
				return false
			}
			p := &v
			switch f {
			case dfMissionAlignment:
				d.MissionAlignment = p
			case dfMinIntervalHours:
				d.MinIntervalHours = p
			default:
				d.GoalContribution = p
			}
			return true
		case dfStateFile, dfPrimarySkill, dfBranchPrefix, dfStatus, dfDescription, dfOODAPhase:
			s, ok := fastString(val)
			if !ok {
				return false
			}
			switch f {
			case dfStateFile:
				d.StateFile = s
			case dfPrimarySkill:
				d.PrimarySkill = s
			case dfBranchPrefix:
				d.BranchPrefix = s
			case dfStatus:
				d.Status = s
			case dfDescription:
				d.Description = s
			default:
				d.OODAPhase = s
			}
			return true
		case dfFallback, dfEnabled:
			var v bool
			switch string(val) {
			case "true":
				v = true
			case "false":
			default:
				return false
			}
			if f == dfFallback {
				d.Fallback = v
			} else {
				d.Enabled = &v
			}
			return true
		case dfChain, dfRotation:
			list, ok := fastStrings(val)
			if !ok {
				return false
			}
			if f == dfChain {
				d.Chain = list
			} else {
				d.Rotation = list
			}
			return true
		case dfQualityRubric:
			if len(val) == 0 || val[0] == 'n' {
				return false // null: encoding/json's own rule decides
			}
			d.QualityRubric = append(json.RawMessage(nil), val...)
			return true
		}
		return false
	})
}

// fastNumber is a JSON number as encoding/json decodes it into a float64;
// false for anything else, or a number out of float64's range (which
// encoding/json refuses).
func fastNumber(val []byte) (float64, bool) {
	if len(val) == 0 || !(val[0] == '-' || ('0' <= val[0] && val[0] <= '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(val), 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// fastString is a JSON string of printable ASCII without escapes, as it
// reads (a copy); false for any other value.
func fastString(val []byte) (string, bool) {
	if !plainString(val) {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

// plainString reports whether the JSON string val (quotes included) is
// printable ASCII without escapes: what fastString takes.
func plainString(val []byte) bool {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return false
	}
	for _, c := range val[1 : len(val)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// fastStrings is a JSON array of fastString strings ([] is an empty,
// non-nil list, as encoding/json makes it).
func fastStrings(val []byte) ([]string, bool) {
	if len(val) == 0 || val[0] != '[' {
		return nil, false
	}
	out := []string{}
	i := skipWS(val, 1)
	if i < len(val) && val[i] == ']' {
		return out, true
	}
	for i < len(val) {
		end, ok := valueEnd(val, i)
		if !ok {
			return nil, false
		}
		s, ok := fastString(val[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, s)
		i = skipWS(val, end)
		if i >= len(val) {
			return nil, false
		}
		switch val[i] {
		case ',':
			i = skipWS(val, i+1)
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// eachMember calls fn with each member of the object that starts at b[i]
// (a valid JSON object): its key, unquoted, and its value as written. It
// reports false when fn does, or when a key has an escape or a byte that
// is not ASCII (its unquoting is left to encoding/json). The key is not a
// copy: it reads b's own bytes, so that looking keys up costs no
// allocation, and fn must copy it (strings.Clone) to keep it.
func eachMember(b []byte, i int, fn func(key string, val []byte) bool) bool {
	return eachMemberAt(b, i, func(key string, at, past int) bool { return fn(key, b[at:past]) })
}

// eachMemberAt is eachMember handing fn where each value starts and ends
// in b.
func eachMemberAt(b []byte, i int, fn func(key string, at, past int) bool) bool {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		kend, ok := valueEnd(b, i)
		if !ok {
			return false
		}
		if !plainString(b[i:kend]) {
			return false
		}
		key := unsafe.String(&b[i+1], kend-i-2)
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vend, ok := valueEnd(b, i)
		if !ok || !fn(key, i, vend) {
			return false
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// eachElement calls fn with each element of the array b (valid JSON, b[0]
// is '['), as written; false when fn returns false.
func eachElement(b []byte, fn func(val []byte) bool) bool {
	i := skipWS(b, 1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for i < len(b) {
		end, ok := valueEnd(b, i)
		if !ok || !fn(b[i:end]) {
			return false
		}
		i = skipWS(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return true
		default:
			return false
		}
	}
	return false
}

// valueEnd returns the index just past the JSON value starting at b[i],
// which is valid JSON: only the value's extent is found. Every member of
// a configuration of a thousand domains is delimited by it several times
// over (the key walk, the decoders), so the bytes that cannot change the
// nesting are passed over by a table, and strings are skipped in place.
func valueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			c := b[j]
			if !nesting[c] {
				continue
			}
			switch c {
			case '"':
				for j++; j < len(b) && b[j] != '"'; j++ {
					if b[j] == '\\' {
						j++
					}
				}
				if j >= len(b) {
					return 0, false
				}
			case '{', '[':
				depth++
			default: // '}', ']'
				if depth--; depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return j, j > i
}

// nesting marks the bytes valueEnd looks at inside an object or array.
var nesting = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// stringEnd is valueEnd of the string starting at b[i].
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// equalFoldASCII is strings.EqualFold for a field name (ASCII) and an
// ASCII key.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// unmarshalDomainsSlow is Domains.UnmarshalJSON by encoding/json alone.
func unmarshalDomainsSlow(b []byte) (Domains, error) {
	keys, err := objectKeys(b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			// JSON would keep the last; a duplicated domain is a mistake
			// worth naming, not a silent choice.
			return nil, &domainError{name: k, err: fmt.Errorf("domain %q is defined twice", k)}
		}
		seen[k] = true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	out := make(Domains, 0, len(keys))
	for i, k := range keys {
		var d Domain
		if err := json.Unmarshal(m[k], &d); err != nil {
			return nil, &domainError{name: k, err: err}
		}
		d.Name, d.Index = k, i
		out = append(out, d)
	}
	return out, nil
}
