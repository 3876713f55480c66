package state

import "testing"

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
