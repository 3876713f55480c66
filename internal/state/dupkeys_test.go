package state

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The fast pre-check must see every duplicate the precise walk reports,
// or a duplicated key would lose its warning.
func TestHasDuplicateKeysAgreesWithTheWalk(t *testing.T) {
	for _, tc := range []struct {
		doc string
		// pre is the pre-check's answer; a key with an escape makes it
		// answer true, and the walk decides.
		pre bool
	}{
		{`{}`, false},
		{`{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]}`, false},
		{`{"a": 1, "a": 2}`, true},
		{`{"x": {"k": "v", "k": "w"}}`, true},
		{`[{"a": 1}, {"b": [1, {"c": 1, "c": 2}]}]`, true},
		{`{"s": "a,\"b\":", "b": 1}`, false},
		{`{"a\"": 1, "a": 2}`, true},
		{`{"\u0061": 1, "a": 2}`, true},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7,"k18":8,"k19":9,"k20":0,"k21":1,"k22":2,"k23":3,"k24":4,"k25":5,"k26":6,"k27":7,"k28":8,"k29":9,"k30":0,"k31":1,"k32":2,"k33":3,"k5":9}`, true},
		{`{"v": ["a", "a"], "w": "a"}`, false},
		// An object past the linear scan, holding another, and a duplicate
		// after it; an object holding one past the scan, then a duplicate.
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"n":{"a":1,"b":2,"a":3}}`, true},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"n":{"a":1,"b":2},"k7":1}`, true},
		{`{"x":1,"n":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33},"y":[{"x":1}],"x":2}`, true},
		{`{"x":1,"n":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33},"y":[{"x":1}],"z":2}`, false},
	} {
		if got := hasDuplicateKeys([]byte(tc.doc)); got != tc.pre {
			t.Errorf("hasDuplicateKeys(%s) = %v, want %v", tc.doc, got, tc.pre)
		}
		want := tc.pre && tc.doc != `{"a\"": 1, "a": 2}`
		if walk := len(duplicateKeyWarnings("f.json", []byte(tc.doc))) > 0; walk != want {
			t.Errorf("duplicateKeyWarnings(%s) found %v, want %v", tc.doc, walk, want)
		}
	}
}

func FuzzHasDuplicateKeys(f *testing.F) {
	f.Add([]byte(`{"a": {"b": 1, "b": 2}}`))
	f.Add([]byte(`[{"a": 1}, {"a": 1}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		slow := duplicateKeyWarningsSlow(b)
		if slow && !hasDuplicateKeys(b) {
			t.Fatalf("the pre-check misses a duplicate in %q", b)
		}
	})
}

// duplicateKeyWarningsSlow reports whether the precise walk, without the
// pre-check, finds a duplicate.
func duplicateKeyWarningsSlow(b []byte) bool { return len(duplicateKeyWalk("f", b)) > 0 }

// hasDuplicateKeysPerObject is the pre-check that kept a list of keys
// per object, kept as the oracle of the one that keeps one list for all.
func hasDuplicateKeysPerObject(b []byte) bool {
	type object struct {
		keys [][]byte
		set  map[string]struct{}
	}
	var stack []*object // nil entries are arrays
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{':
			stack = append(stack, &object{})
			expectKey = true
		case '[':
			stack = append(stack, nil)
			expectKey = false
		case '}', ']':
			if len(stack) == 0 {
				return false
			}
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
		case ':':
			expectKey = false
		case '"':
			start := i + 1
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return false
			}
			if !expectKey || len(stack) == 0 || stack[len(stack)-1] == nil {
				continue
			}
			o, key := stack[len(stack)-1], b[start:i]
			if bytes.IndexByte(key, '\\') >= 0 {
				return true
			}
			if o.set != nil {
				if _, dup := o.set[string(key)]; dup {
					return true
				}
				o.set[string(key)] = struct{}{}
				continue
			}
			for _, k := range o.keys {
				if bytes.Equal(k, key) {
					return true
				}
			}
			o.keys = append(o.keys, key)
			if len(o.keys) > 32 {
				o.set = make(map[string]struct{}, 2*len(o.keys))
				for _, k := range o.keys {
					o.set[string(k)] = struct{}{}
				}
				o.keys = nil
			}
		}
	}
	return false
}

// jsonDepthByBytes is jsonDepth walking strings byte by byte, its oracle.
func jsonDepthByBytes(b []byte) int {
	depth, high := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			high = max(high, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return high
}

// Whatever the bytes, valid JSON or not, the pre-check and the depth
// answer as their oracles do.
func FuzzHasDuplicateKeysMatchesPerObject(f *testing.F) {
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, s := range checkedEdgeDocs {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"a\\":1,"a\\":2}`, `{"a\"`, `{"\\\"":1}`, `"\\\\\\"`, `{"k":"\\\\\""}`, `[[[[["\]"]]]]]`} {
		f.Add([]byte(s))
	}
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := hasDuplicateKeys(b), hasDuplicateKeysPerObject(b); got != want {
			t.Fatalf("hasDuplicateKeys(%q) = %v, the oracle %v", b, got, want)
		}
		if got, want := jsonDepth(b), jsonDepthByBytes(b); got != want {
			t.Fatalf("jsonDepth(%q) = %d, the oracle %d", b, got, want)
		}
	})
}

// Past dupKeysLinear keys an object's keys are compared when it closes:
// a document cut short inside such an object (at its end, or in a string)
// still answers as the oracle, which compared every key as it came.
func TestHasDuplicateKeysLargeObjectCutShort(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"outer": 1, "big": {`)
	for i := range dupKeysLinear + 10 {
		fmt.Fprintf(&sb, `"k%d": [1], `, i)
	}
	whole := sb.String()
	for name, doc := range map[string]string{
		"closed, no duplicate":     whole + `"last": 2}}`,
		"closed, a duplicate":      whole + `"k3": 2}}`,
		"cut at the end":           whole + `"k3": 2`,
		"cut in a string":          whole + `"k3": 2, "unterminated`,
		"cut, no duplicate":        whole + `"last": 2, "unterminated`,
		"a nested large object":    `[` + whole + `"k40": {"a": 1}, "k3": 0`,
		"duplicate in the outer":   `{"big": 1, ` + whole[len(`{"outer": 1, `):] + `"x": 1}, "big": 2`,
		"mismatched close, a dup ": whole + `"k3": 2]]`,
	} {
		if got, want := hasDuplicateKeys([]byte(doc)), hasDuplicateKeysPerObject([]byte(doc)); got != want {
			t.Errorf("%s: hasDuplicateKeys = %v, the oracle %v", name, got, want)
		}
	}
}
