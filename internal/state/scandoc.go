package state

import (
	"bytes"
	"slices"
	"sync"
)

// dupScan is the state of scanDocument: the keys of every open object,
// innermost last, and whether some object may name a key twice.
type dupScan struct {
	keys [][]byte
	dup  bool
}

// scanDocument is scanValue(b, skipSpace(b, 0), 0) followed by the check
// that only blanks follow, and hasDuplicateKeys(b) in the same walk: a
// state file read at every cycle is walked once for both instead of
// twice. ok is scanValue's verdict on the whole document; dup, meaningful
// only when ok, is hasDuplicateKeys's answer (keys compared as written, a
// key holding an escape counting as a possible duplicate for the precise
// walk to decide).
func scanDocument(b []byte) (start, end int, ok, dup bool) {
	start = skipSpace(b, 0)
	keys := dupKeys.Get().(*[][]byte)
	s := dupScan{keys: (*keys)[:0]}
	end, ok = s.value(b, start, 0)
	clear(s.keys[:cap(s.keys)])
	*keys = s.keys[:0]
	dupKeys.Put(keys)
	if !ok || skipSpace(b, end) != len(b) {
		return start, 0, false, false
	}
	return start, end, true, s.dup
}

// value is scanValue, recording the keys of the objects it meets.
func (s *dupScan) value(b []byte, i, depth int) (int, bool) {
	if i < len(b) && (b[i] == '{' || b[i] == '[') {
		return s.container(b, i, depth+1)
	}
	return scanValue(b, i, depth)
}

// dupKeys are scanDocument's key stacks: a state file of a thousand
// domains has objects of a thousand keys, read every cycle.
var dupKeys = sync.Pool{New: func() any { return new([][]byte) }}

// dupKeysLinear is how many keys an object holds before they are no
// longer compared one by one as they come (scanDocument and
// hasDuplicateKeys alike): past a few dozen, its keys are sorted when it
// closes and neighbours compared, which allocates nothing where a set of
// a thousand keys took tens of kilobytes.
const dupKeysLinear = 32

// container is scanContainer without its callback, recording keys.
func (s *dupScan) container(b []byte, i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return 0, false
	}
	obj := b[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	base := len(s.keys)
	defer func() { s.keys = s.keys[:base] }()
	large := false
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		if obj {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			end, plain, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			if !s.dup {
				s.record(b[i+1:end-1], plain, base, &large)
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
		end, ok := s.value(b, i, depth)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			if large && !s.dup {
				s.dup = sortedHasEqual(s.keys[base:])
			}
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// sortedHasEqual sorts keys and reports whether two of them are equal.
func sortedHasEqual(keys [][]byte) bool {
	slices.SortFunc(keys, bytes.Compare)
	for i := 1; i < len(keys); i++ {
		if bytes.Equal(keys[i-1], keys[i]) {
			return true
		}
	}
	return false
}

// record adds key (its content, between the quotes) to the object whose
// keys start at base, and reports a duplicate in s.dup: at once while the
// object holds dupKeysLinear keys or fewer, else when it closes (large).
func (s *dupScan) record(key []byte, plain bool, base int, large *bool) {
	// scanString's plain is false for an escape or a byte outside ASCII;
	// only an escape can make two keys written differently equal.
	if !plain && bytes.IndexByte(key, '\\') >= 0 {
		s.dup = true
		return
	}
	if *large {
		s.keys = append(s.keys, key)
		return
	}
	for _, k := range s.keys[base:] {
		if bytes.Equal(k, key) {
			s.dup = true
			return
		}
	}
	s.keys = append(s.keys, key)
	if len(s.keys)-base > dupKeysLinear {
		*large = true
	}
}
